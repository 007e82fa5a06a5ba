// cr_powf / repmode_pow (csrc/common/math_pow.h).
//
// pow has two arguments, so instead of the exhaustive unary check it registers custom cases:
//
//   powf           cr_powf against a correctly rounded reference on
//                    * 100 * --samples random pairs (default 10^9) from eight distributions
//                      (below), divided by --stride for quick runs;
//                    * every pair of 64 special values (4096 pairs);
//                    * every stride-th float32 x (all 2^32 at stride 1) with y = 2, and every
//                      fifth of those with y = 3, 0.5, -1, -2, against exact references: x*x,
//                      x^3 in __float128 (exact: 72 bits), sqrtf(x), 1/x, and 1/(x*x) in
//                      __float128 (one rounding of a value never closer than 2^-72 relative
//                      to a float32 midpoint, so the second rounding is exact); the y = 2 part
//                      is also the check that cr_powf(x, 2) == x*x bitwise for every float x;
//                    * exact and midpoint cases: x = b^(2^k) 2^(e 2^k) with y = n/2^k for
//                      small odd b, every binade e, n up to 15 (every odd x < 2^13 with
//                      y = 2, cubes, y = 1.5, 2.5, 0.25, 0.75, ...), powers of two with
//                      y = n/2^k (2^-150 and its neighbours included), against the exact
//                      value rounded once from __float128; and published hard cases
//                      (CORE-MATH's binary32 pow worst cases with 48-51 identical bits after
//                      the round bit, and non-regression inputs of the same list).
//                  The row's "undecided" counts pairs the reference could not decide plus
//                  pairs cr_powf sent to its path 4 (never expected: see math_pow.h).
//   powf-accurate  the accurate path alone (powf_accurate_path) on --samples random pairs that
//                  reach the fast path, against the same reference.
//   pow            repmode_pow (float64): --samples random pairs + special pairs, largest
//                  error in ulps against powq; special values and NaNs bit for bit.
//   pow-speed      single-thread ns per call: cr_powf, repmode_pow, and cr_expf, cr_logf,
//                  glibc powf in the same run for scale.
//
// Reference for a float32 pair: powl (x87, measured < 2^-63.6 relative on 2*10^7 pairs across
// the whole range) decides unless it lies within 2^-56 of a float32 rounding boundary; then
// powq (libquadmath; measured < 2^-112.9 against mpmath, 400 bits); if powq is within 2^-100
// of a boundary, the exact question "is |x|^y equal to that midpoint?" is decided with integer
// arithmetic (|x| = A 2^E, y = +-P/2^k, midpoint C 2^G: compare A^P 2^(EP) with C^(2^k)
// 2^(G 2^k), big integers if needed); equal: the exact midpoint rounds to even; not equal or
// too big to decide: counted as undecided (never seen), never guessed.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "../../common/math_pow.h"
#include "../math_verify.h"

namespace {

using namespace verify;
using repmode::math_detail::pow_detail::cr_powf_impl;

// ---------------------------------------------------------------------------------------
// Exact arithmetic for the reference

// Natural numbers as little-endian 32-bit limbs.
using Nat = std::vector<uint32_t>;

Nat nat_mul(const Nat& a, const Nat& b) {
  Nat r(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    uint64_t carry = 0;
    for (size_t j = 0; j < b.size(); ++j) {
      uint64_t t = uint64_t(a[i]) * b[j] + r[i + j] + carry;
      r[i + j] = uint32_t(t);
      carry = t >> 32;
    }
    r[i + b.size()] = uint32_t(carry);
  }
  while (r.size() > 1 && r.back() == 0) r.pop_back();
  return r;
}

// base^e by repeated squaring.
Nat nat_pow(uint32_t base, uint64_t e) {
  Nat r{1}, b{base};
  while (e) {
    if (e & 1) r = nat_mul(r, b);
    e >>= 1;
    if (e) b = nat_mul(b, b);
  }
  return r;
}

// v = m * 2^ex with m odd (v > 0, finite), for float and __float128 values.
void odd_split(long double v, uint64_t& m, int64_t& ex) {
  int e;
  long double f = frexpl(v, &e);  // v = f 2^e, f in [0.5, 1)
  m = uint64_t(ldexpl(f, 64));    // exact: v has at most 64 significant bits
  ex = e - 64;
  while ((m & 1) == 0) m >>= 1, ++ex;
}
void odd_split_q(__float128 v, uint64_t& m, int64_t& ex) {
  int e;
  __float128 f = frexpq(v, &e);
  m = uint64_t(ldexpq(f, 60));  // exact for the <= 25-bit midpoints used here
  ex = e - 60;
  while ((m & 1) == 0) m >>= 1, ++ex;
}

// Is |x|^y exactly mid (mid > 0 with at most 25 significant bits)? 1 yes, 0 no, -1 too big
// to decide. x finite nonzero, |x| != 1, y finite nonzero.
int pow_equals(float x, float y, __float128 mid) {
  uint64_t A, P, C;
  int64_t E, F, G;
  odd_split(fabsl((long double)x), A, E);
  odd_split(fabsl((long double)y), P, F);
  odd_split_q(mid, C, G);
  const bool yneg = y < 0;
  if (F >= 0) {            // y = +-Y, Y = P 2^F: compare |x|^Y with mid^(+-1)
    if (F > 40) return 0;  // Y >= 2^40: |x|^Y is 1 (excluded) or far outside any float range
    const __int128 Y = __int128(P) << F;
    if (yneg) {  // A^Y C 2^(EY + G) == 1
      return A == 1 && C == 1 && __int128(E) * Y + G == 0;
    }
    if (__int128(E) * Y != G) return 0;
    if (A == 1) return C == 1;
    if (Y > 64) return 0;  // A^Y >= 3^65 > 2^25 > C
    Nat p = nat_pow(uint32_t(A), uint64_t(Y));
    return p.size() == 1 && p[0] == C;
  }
  const int64_t k = -F;  // y = +-P / 2^k: compare |x|^(+-P) with mid^(2^k)
  if (k > 62) return 0;  // 2^k > 2^62: no float |x| != 1 and 25-bit mid can match
  const __int128 two_k = __int128(1) << k;
  if (yneg) return A == 1 && C == 1 && __int128(E) * P + __int128(G) * two_k == 0;
  if (__int128(E) * P != __int128(G) * two_k) return 0;
  if (A == 1 || C == 1) return A == C;
  // A^P == C^(2^k)? Compare sizes first.
  long double la = P * log2l((long double)A), lc = ldexpl(log2l((long double)C), int(k));
  if (fabsl(la - lc) > 1.0L) return 0;
  if (la > 1e6L) return -1;
  return nat_pow(uint32_t(A), P) == nat_pow(uint32_t(C), uint64_t(1) << k);
}

// Nearest float32 rounding boundary (midpoint) to |v| (as verify::near_f32_boundary_q uses).
__float128 nearest_midpoint(__float128 v) {
  __float128 a = fabsq(v);
  int ex = ilogbq(a);
  __float128 ulp = ldexpq((__float128)1.0, (ex < -126 ? -126 : ex) - 23);
  return (floorq(a / ulp) + (__float128)0.5) * ulp;
}

struct PowRef {
  uint64_t quad = 0, exact = 0, undecided = 0;
};

// Bits of the correctly rounded float32 x^y (canonical NaN). Special values: glibc's powl
// follows C99 Annex F (pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, zeros, infinities).
uint32_t reference_powf(float x, float y, PowRef& st) {
  long double r = powl((long double)x, (long double)y);
  if (std::isnan(r)) return repmode::kCanonicalNanBits32;
  if (!near_f32_boundary(r, ldexpl(1.0L, -56))) return bits_of((float)r);
  ++st.quad;
  __float128 q = powq((__float128)x, (__float128)y);
  if (!near_f32_boundary_q(q, ldexpq((__float128)1.0, -100))) return bits_of((float)q);
  ++st.exact;
  __float128 mid = nearest_midpoint(q);
  int eq = pow_equals(x, y, mid);
  if (eq == 1) return bits_of((float)(q < 0 ? -mid : mid));  // exact tie: nearest even
  ++st.undecided;
  return bits_of((float)q);
}

// ---------------------------------------------------------------------------------------
// Inputs

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double unit(uint64_t& s) { return double(splitmix(s) >> 11) * 0x1p-53; }
float pos_float(uint64_t& s) { return float_from_bits(1 + uint32_t(splitmix(s) % 0x7f7fffffu)); }

// x with y log x = T (rounded to float), or a random positive float when that is out of range.
float x_for(uint64_t& s, float y, double T) {
  float x = float(exp(T / double(y)));
  return (x > 0 && x <= 0x1.fffffep127f) ? x : pos_float(s);
}

// Random pair number i of stream `seed` (the same pair for any thread count). T below is
// uniform in [-110, 95], so that x^y = e^T spans the whole float32 range and both
// over/underflow edges.
//  0: |x| log-uniform over every binade (subnormals included), y = T/log|x|; x < 0 in a
//     quarter of the cases, with y rounded to an integer in most of them.
//  1: x within 2^-3 of 1 (1 + k 2^-23 or 1 - k 2^-24, k log-uniform), y = T/log x: huge |y|.
//  2: y a small integer (|y| <= 64), x = +-e^(T/y), or in a quarter of the cases any finite
//     float of either sign.
//  3: y = n/2^k, k = 1..4, |n| <= 128, x = e^(T/y) or (a quarter) any positive float.
//  4: |y| log-uniform in [2^-40, 2^40], either sign; x = e^(T/y) where that is a finite
//     nonzero float, else (and in a quarter of the cases) any positive float.
//  5: raw random bit patterns for both (NaNs, infinities, zeros, subnormals).
//  6: x = +-m 2^e with m odd < 2^12 (few significant bits), y a small integer, half or
//     quarter, e such that x^y is mostly in range: many exact results and midpoints.
//  7: results near 1: y = T'/log x with |T'| < 2^-20, or T' = log(1 + 2^-24) or log(1 - 2^-25)
//     (the two midpoints around 1) times (1 + tiny).
void gen_pair(uint64_t seed, uint64_t i, float& x, float& y) {
  uint64_t s = seed * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull;
  splitmix(s);
  const double T = -110.0 + 205.0 * unit(s);
  const bool raw = (splitmix(s) & 3) == 0;
  switch (i % 8) {
    case 0: {
      x = pos_float(s);
      y = float(T / double(logl(x)));
      if (raw) {
        x = -x;
        if (splitmix(s) % 8) y = nearbyintf(y);
      }
      break;
    }
    case 1: {
      double k = exp2(20.0 * unit(s));
      x = (splitmix(s) & 1) ? 1.0f + float(nearbyint(k)) * 0x1p-23f : 1.0f - float(nearbyint(k)) * 0x1p-24f;
      y = float(T / double(logl(x)));
      break;
    }
    case 2: {
      int n = int(splitmix(s) % 129) - 64;
      y = float(n == 0 ? 1 : n);
      x = raw ? float_from_bits(uint32_t(splitmix(s)) & 0xff7fffffu)  // finite
              : x_for(s, y, T) * ((splitmix(s) & 1) ? -1.0f : 1.0f);
      break;
    }
    case 3: {
      int n = int(splitmix(s) % 257) - 128;
      y = ldexpf(float(n == 0 ? 1 : n), -int(1 + splitmix(s) % 4));
      x = raw ? pos_float(s) : x_for(s, y, T);
      break;
    }
    case 4: {
      y = float(exp2(-40.0 + 80.0 * unit(s)));
      if (splitmix(s) & 1) y = -y;
      x = raw ? pos_float(s) : x_for(s, y, T);
      break;
    }
    case 5: {
      uint64_t b = splitmix(s);
      x = float_from_bits(uint32_t(b));
      y = float_from_bits(uint32_t(b >> 32));
      break;
    }
    case 6: {
      static const float kY[] = {2,    3,     4,     5,     6,      7,      8,     9,     10,    11,
                                 12,   13,    14,    15,    -1,     -2,     -3,    0.5f,  1.5f,  2.5f,
                                 3.5f, 0.25f, 0.75f, 1.25f, 0.125f, 0.375f, -0.5f, -1.5f, -0.25f};
      y = kY[splitmix(s) % (sizeof(kY) / sizeof(kY[0]))];
      uint32_t m = uint32_t(exp2(12.0 * unit(s))) | 1u;
      double ay = fabs(double(y)), lo = -152.0 / ay - 12.0, hi = 129.0 / ay;
      int e = int(floor(lo + (hi - lo) * unit(s)));
      x = ldexpf(float(m), e);
      if (x == 0 || std::isinf(x)) x = float(m);
      if (splitmix(s) & 1) x = -x;
      break;
    }
    default: {
      x = pos_float(s);
      double lx = double(logl(x)), Tn;
      switch (splitmix(s) % 3) {
        case 0:
          Tn = ldexp(unit(s) - 0.5, -19);
          break;
        case 1:
          Tn = 0x1.fffffcp-25 * (1.0 + ldexp(unit(s) - 0.5, -20));
          break;  // ~log(1+2^-24)
        default:
          Tn = -0x1.000001p-25 * (1.0 + ldexp(unit(s) - 0.5, -20));
          break;  // ~log(1-2^-25)
      }
      y = float(Tn / lx);
      break;
    }
  }
}

// 64 special values.
// clang-format off
const float kSpecials[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f,
    0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f, 0x1.fffffcp-127f, 0x1.fffffep+127f,
    -0x1.fffffep+127f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f, 0.25f, 1.5f, -1.5f,
    0x1.000002p+0f, 0x1.fffffep-1f, -0x1.000002p+0f, -0x1.fffffep-1f, 0x1p+24f, 0x1.000002p+24f,
    -0x1.000002p+24f, 0x1p+23f, 0x1.fffffep+22f, 0x1.000002p+23f, -0x1.fffffep+22f, 127.0f, 128.0f,
    -149.0f, -150.0f, 0x1p-33f, 0x1.fffffep-34f, -0x1p-33f, 0x1p-25f, 0x1p+31f, -0x1p+31f,
    0x1p+64f, 0x1p+100f, 0x1p-100f, 4097.0f, 10.0f, 0.1f, -0.1f, 89.0f, -104.0f,
    0x1p-75f, 0x1p+75f, 1e38f, -1e38f, 1e-38f, 7.0f, -7.0f, 0.75f, 65.0f, -65.0f};
static_assert(sizeof(kSpecials) / sizeof(kSpecials[0]) == 64, "64 special values");

// Published hard cases (CORE-MATH's binary32 pow worst cases, 48-51 identical bits after the
// round bit, and non-regression inputs from the same list).
const float kHard[][2] = {
    {0x1.767d72p-31f, 0x1.002808p+0f},  {0x1.2e9178p-119f, 0x1.023178p+0f},
    {0x1.aa25fp-122f, 0x1.04d8e4p+0f},  {0x1.49b684p-69f, 0x1.1509f6p+0f},
    {0x1.f4ff26p-81f, 0x1.2a584p+0f},   {0x1.d6a9eap-89f, 0x1.1249fcp+0f},
    {0x1.cc53e8p-96f, 0x1.1bb752p+0f},  {0x1.95c6c2p+113f, 0x1.1f771cp+0f},
    {0x1.4ec09p-72f, 0x1.27766ep+0f},   {0x1.3e29bep+3f, 0x1.09eb9ap+0f},
    {0x1.2ccb16p-12f, 0x1.0b9bdp+0f},   {0x1.9b35c6p+6f, 0x1.053cc8p+0f},
    {0x1.e695eap-26f, 0x1.06a6a2p+0f},  {0x1.8b178cp+69f, 0x1.159f0ap+0f},
    {0x1.58e756p+58f, 0x1.16d3fp+0f},   {0x1.d8c0f6p+8f, 0x1.17e80ep+0f},
    {0x1.3e4b38p+35f, 0x1.1dc21ap+0f},  {0x1.89abdep-68f, 0x1.1e783ap+0f},
    {0x1.147798p+75f, 0x1.2618d6p+0f},  {0x1.c1243cp-1f, 0x1.26ef18p+0f},
    {0x1.8029bep+15f, 0x1.2d8c12p+0f},  {0x1.cc0b74p+14f, 0x1.3076dep+0f},
    {0x1.3cd062p-107f, 0x1.326734p+0f}, {0x1.005a24p+26f, -0x1.e1e72ap-12f},
    {0x1.db511p-8f, -0x1.dc6d62p-12f},  {0x1.161fdp-37f, -0x1.da7b6cp-12f},
    {0x1.65fc9p-66f, -0x1.d70948p-12f}, {0x1.88dde8p-128f, -0x1.cc0ae4p-12f},
    {0x1.92f75p-8f, -0x1.ca7a22p-12f},  {0x1.bb06p+42f, -0x1.cab43ap-12f},
    {0x1.38a0c2p-49f, -0x1.c0ab5ap-12f}, {0x1.d15b8p-51f, -0x1.bb91cep-12f},
    {0x1.fd12b4p-1f, -0x1.d0b058p+13f}, {0x1.1058p+0f, 0x1.ap+64f},
    {-0x1.4p+0f, 0x1.c6992p+19f},       {-0x1.fe0ff8p-128f, -0x1.50732p+19f},
    {0x1.8fdb0ep-21f, 0x1.a31bp-102f},  {0x1.0dfe0ep-56f, -0x1.1c882ep-107f},
    {0x1.7240b8p+45f, -0x1.b4222p-103f}, {0x1.9a1p-20f, 0x1.ep+0f},
    {0x1.9a1p-76f, 0x1.ep+0f},          {0x1.7632cp-45f, -0x1.5f9314p-23f},
    {0x1.ffff3p-1f, 0x1.adf694p+23f},   {0x1.fffffep-1f, 0x1.67a6fp+30f},
    {0x1.000018p+0f, 0x1.40aad2p+23f},  {-0x1p-149f, -0x1.000002p+23f},
    {0x1p+8f, -0x1.06p+4f},             {0x1p+6f, -0x1.2p+3f}};

// ---------------------------------------------------------------------------------------
// The powf row

struct Tally {
  uint64_t checked = 0, bad = 0, quad = 0, ref_undecided = 0, paths[5] = {0, 0, 0, 0, 0};
};
// clang-format on

void report_bad(const char* what, float x, float y, uint32_t got, uint32_t want, int path) {
#pragma omp critical
  std::printf("  MISMATCH powf(%a, %a) [%s, path %d] = %a [0x%08x], want %a [0x%08x]\n", x, y, what, path,
              float_from_bits(got), got, float_from_bits(want), want);
}

// One pair against the general reference.
void check_pair(float x, float y, Tally& t, const char* what) {
  int path;
  uint32_t got = bits_of(cr_powf_impl(x, y, &path));
  PowRef st;
  uint32_t want = reference_powf(x, y, st);
  t.checked++, t.quad += st.quad, t.ref_undecided += st.undecided, t.paths[path]++;
  if (got != want) {
    if (t.bad < 10) report_bad(what, x, y, got, want, path);
    t.bad++;
  }
}

// One pair against a given exact reference.
void check_exact(float x, float y, uint32_t want, Tally& t, const char* what) {
  int path;
  uint32_t got = bits_of(cr_powf_impl(x, y, &path));
  if (std::isnan(float_from_bits(want))) want = repmode::kCanonicalNanBits32;
  t.checked++, t.paths[path]++;
  if (got != want) {
    if (t.bad < 10) report_bad(what, x, y, got, want, path);
    t.bad++;
  }
}

void merge(Tally& into, const Tally& t) {
#pragma omp critical
  {
    into.checked += t.checked, into.bad += t.bad, into.quad += t.quad;
    into.ref_undecided += t.ref_undecided;
    for (int k = 0; k < 5; ++k) into.paths[k] += t.paths[k];
  }
}

// x^y exactly as __float128 for the generated exact cases (b^n fits in 113 bits).
__float128 exact_q(uint32_t b, int n, int s) {
  __float128 v = 1;
  for (int i = 0; i < n; ++i) v *= b;
  return ldexpq(v, s);
}

Row run_powf(const Options& opt) {
  Row row;
  row.name = "powf";
  double t0 = omp_get_wtime();
  Tally all;
  const uint64_t stride = uint64_t(opt.stride);
  // Random pairs.
  const uint64_t n_random = (100 * opt.samples + stride - 1) / stride;
#pragma omp parallel
  {
    Tally t;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t i = 0; i < int64_t(n_random); ++i) {
      float x, y;
      gen_pair(1, uint64_t(i), x, y);
      check_pair(x, y, t, "random");
    }
    merge(all, t);
  }
  const Tally after_random = all;
  // Special pairs.
  {
    Tally t;
    for (float x : kSpecials)
      for (float y : kSpecials) check_pair(x, y, t, "special");
    merge(all, t);
  }
  // Dense x with exact references.
  const int64_t n_dense = ((int64_t(1) << 32) + opt.stride - 1) / opt.stride;
#pragma omp parallel
  {
    Tally t;
#pragma omp for schedule(dynamic, 65536)
    for (int64_t i = 0; i < n_dense; ++i) {
      float x = float_from_bits(uint32_t(i * opt.stride));
      __float128 q = x;
      check_exact(x, 2.0f, bits_of(x * x), t, "y=2 vs x*x");
      if (i % 5 != 0) continue;  // y = 2 on every x, the others on every fifth
      check_exact(x, 3.0f, bits_of((float)(q * q * q)), t, "y=3");
      float sq = x == 0 ? 0.0f : (x == -INFINITY ? INFINITY : sqrtf(x));
      check_exact(x, 0.5f, bits_of(sq), t, "y=0.5");
      check_exact(x, -1.0f, bits_of(1.0f / x), t, "y=-1");
      check_exact(x, -2.0f, bits_of((float)((__float128)1 / (q * q))), t, "y=-2");
    }
    merge(all, t);
  }
  // Exact results and midpoints: |x| = b^(2^k) 2^(e 2^k), y = n/2^k, x^y = b^n 2^(e n).
  const uint64_t before_exact = all.checked;
  for (int k = 0; k <= 3; ++k) {
#pragma omp parallel
    {
      Tally t;
#pragma omp for schedule(dynamic, 16)
      for (int64_t bi = 0; bi < 4096; ++bi) {
        const uint32_t b = uint32_t(2 * bi + 1);
        const __float128 bk = exact_q(b, 1 << k, 0);
        if (bk >= (__float128)0x1p24) continue;
        for (int n = -15; n <= 15; ++n) {
          if (n == 0 || (k > 0 && n % 2 == 0) || (n < 0 && b != 1)) continue;
          if (b > 1 && exact_q(b, n, 0) >= (__float128)0x1p100) continue;
          const float y = ldexpf(float(n), -k);
          for (int e = -160; e <= 130; ++e) {
            const __float128 xq = ldexpq(bk, e * (1 << k));
            const float x = (float)xq;
            if (x == 0 || std::isinf(x) || (__float128)x != xq || x == 1.0f) continue;
            if (e * n > 300 || e * n < -400) continue;
            const __float128 v = b == 1 ? ldexpq((__float128)1, e * n) : exact_q(b, n, e * n);
            check_exact(x, y, bits_of((float)v), t, "exact case");
            if (k == 0) check_exact(-x, y, bits_of((n & 1) ? -(float)v : (float)v), t, "exact case");
          }
        }
      }
      merge(all, t);
    }
  }
  const uint64_t n_exact = all.checked - before_exact;
  {
    Tally t;
    for (auto& h : kHard) check_pair(h[0], h[1], t, "hard case");
    merge(all, t);
  }
  row.seconds = omp_get_wtime() - t0;
  row.checked = all.checked;
  row.bad = all.bad;
  row.quad = all.quad;
  row.undecided = all.ref_undecided + all.paths[4];
  std::printf("  powf: %llu generated exact/midpoint pairs\n", (unsigned long long)n_exact);
  std::printf(
      "  powf: %llu random pairs (%llu fast, %llu accurate, %llu exact-case); all checks: "
      "paths special %llu, fast %llu, accurate %llu, exact-case %llu, undecided (4) %llu; "
      "reference undecided %llu\n",
      (unsigned long long)after_random.checked, (unsigned long long)after_random.paths[1],
      (unsigned long long)after_random.paths[2], (unsigned long long)after_random.paths[3],
      (unsigned long long)all.paths[0], (unsigned long long)all.paths[1], (unsigned long long)all.paths[2],
      (unsigned long long)all.paths[3], (unsigned long long)all.paths[4], (unsigned long long)all.ref_undecided);
  return row;
}

// ---------------------------------------------------------------------------------------
// The accurate path alone

Row run_powf_accurate(const Options& opt) {
  using namespace repmode::math_detail::pow_detail;
  Row row;
  row.name = "powf-accurate";
  double t0 = omp_get_wtime();
  const uint64_t n = (opt.samples + uint64_t(opt.stride) - 1) / uint64_t(opt.stride);
  uint64_t checked = 0, bad = 0, quad = 0, undecided = 0, p2 = 0, p3 = 0, p4 = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : checked, bad, quad, undecided, p2, p3, p4)
  for (int64_t i = 0; i < int64_t(n); ++i) {
    float x, y;
    gen_pair(2, uint64_t(i), x, y);
    int path;
    cr_powf_impl(x, y, &path);
    if (path == 0) continue;
    const uint32_t ux = bits_of(x), uy = bits_of(y), ax = ux & 0x7fffffffu;
    const uint32_t sign = ((ux >> 31) && f32_int_kind(uy & 0x7fffffffu) == 1) ? 0x80000000u : 0u;
    int e;
    double M = split_f32(ax, e);
    int apath;
    uint32_t got = bits_of(powf_accurate_path(M, e, double(y), ax, uy, sign, &apath));
    p2 += apath == 2, p3 += apath == 3, p4 += apath == 4;
    PowRef st;
    uint32_t want = reference_powf(x, y, st);
    ++checked, quad += st.quad, undecided += st.undecided;
    if (got != want) {
      if (bad < 10) report_bad("accurate path", x, y, got, want, apath);
      ++bad;
    }
  }
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked, row.bad = bad, row.quad = quad, row.undecided = undecided + p4;
  std::printf("  powf-accurate: decided by the accurate test %llu, exact-case %llu, undecided %llu\n",
              (unsigned long long)p2, (unsigned long long)p3, (unsigned long long)p4);
  return row;
}

// ---------------------------------------------------------------------------------------
// repmode_pow (float64)

Row run_pow_double(const Options& opt) {
  Row row;
  row.name = "pow";
  double t0 = omp_get_wtime();
  const uint64_t n = (opt.samples + uint64_t(opt.stride) - 1) / uint64_t(opt.stride);
  double max_ulp = 0, wx = 0, wy = 0;
  uint64_t not_cr = 0, bad = 0, checked = 0;
  auto one = [&](double x, double y, double& lmax, double& lx, double& ly, uint64_t& lnot, uint64_t& lbad) {
    double got = repmode::repmode_pow(x, y);
    __float128 q = powq((__float128)x, (__float128)y);
    if (isnanq(q)) {
      lbad += bits_of(got) != repmode::kCanonicalNanBits64;
      return;
    }
    if (isinfq(q) || q == 0 || fabsq(q) >= (__float128)0x1p1023 * 2) {  // specials, overflow
      if (bits_of(got) != bits_of((double)q)) {
        if (lbad < 5) {
#pragma omp critical
          std::printf("  MISMATCH pow(%a, %a) = %a, want %a\n", x, y, got, (double)q);
        }
        ++lbad;
      }
      return;
    }
    lnot += bits_of(got) != bits_of((double)q);
    double err = ulp_error(got, q);
    if (err > lmax) lmax = err, lx = x, ly = y;
  };
#pragma omp parallel
  {
    double lmax = 0, lx = 0, ly = 0;
    uint64_t lnot = 0, lbad = 0, lchecked = 0;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t i = 0; i < int64_t(n); ++i) {
      uint64_t s = 0x5eed + uint64_t(i) * 0x9e3779b97f4a7c15ull;
      splitmix(s);
      double x, y;
      switch (i % 5) {
        case 0: {  // |x| any binade, results across the range
          x = double_from_bits(1 + splitmix(s) % 0x7fefffffffffffffull);
          y = (-750.0 + 1460.0 * unit(s)) / double(logq(x));
          break;
        }
        case 1: {  // x near 1, huge |y|
          double k = nearbyint(exp2(40.0 * unit(s)));
          x = (splitmix(s) & 1) ? 1.0 + k * 0x1p-52 : 1.0 - k * 0x1p-53;
          if (x == 1.0) x = 1.5;
          y = (-750.0 + 1460.0 * unit(s)) / double(logq(x));
          break;
        }
        case 2: {  // integer y, x of either sign
          x = double_from_bits(splitmix(s) & 0xffefffffffffffffull);
          y = double(int(splitmix(s) % 129) - 64);
          break;
        }
        case 3: {  // |y| log-uniform
          x = double_from_bits(1 + splitmix(s) % 0x7fefffffffffffffull);
          y = exp2(-70.0 + 140.0 * unit(s));
          if (splitmix(s) & 1) y = -y;
          break;
        }
        default: {  // raw bits
          x = double_from_bits(splitmix(s));
          y = double_from_bits(splitmix(s));
          break;
        }
      }
      ++lchecked;
      one(x, y, lmax, lx, ly, lnot, lbad);
    }
#pragma omp critical
    {
      if (lmax > max_ulp) max_ulp = lmax, wx = lx, wy = ly;
      not_cr += lnot, bad += lbad, checked += lchecked;
    }
  }
  const double kSp[] = {0.0,
                        -0.0,
                        INFINITY,
                        -INFINITY,
                        NAN,
                        1.0,
                        -1.0,
                        0x1p-1074,
                        -0x1p-1074,
                        0x1p-1022,
                        0x1.fffffffffffffp+1023,
                        -0x1.fffffffffffffp+1023,
                        0.5,
                        -0.5,
                        2.0,
                        -2.0,
                        3.0,
                        -3.0,
                        0x1.0000000000001p+0,
                        0x1.fffffffffffffp-1,
                        0x1p+53,
                        0x1.0000000000001p+53,
                        -0x1.0000000000001p+53,
                        0x1p+52 + 1,
                        -(0x1p+52 + 1),
                        0x1p-64,
                        0x1p+64,
                        0x1.fffffffffffffp+63,
                        0x1p-65,
                        1023.0,
                        1024.0,
                        -1074.0,
                        -1075.0,
                        0.1,
                        10.0,
                        1e300,
                        -1e300,
                        710.0};
  for (double x : kSp)
    for (double y : kSp) {
      double dummy_x, dummy_y;
      ++checked;
      one(x, y, max_ulp, dummy_x, dummy_y, not_cr, bad);
    }
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked;
  row.bad = bad + (max_ulp >= 0.527 ? 1 : 0);  // specials / NaNs wrong, or the proven bound broken
  std::printf(
      "  pow (float64): %llu pairs, max error %.4f ulp (x = %a, y = %a), %.3f%% not "
      "correctly rounded, %llu special/NaN mismatches\n",
      (unsigned long long)checked, max_ulp, wx, wy, 100.0 * double(not_cr) / double(checked), (unsigned long long)bad);
  return row;
}

// ---------------------------------------------------------------------------------------
// Speed

Row run_pow_speed(const Options&) {
  Row row;
  row.name = "pow-speed";
  const int n = 1 << 22;
  std::vector<float> xs(n), ys(n), out(n);
  std::vector<double> xd(n), yd(n), outd(n);
  uint64_t s = 77;
  for (int i = 0; i < n; ++i) {
    xs[i] = float(exp2(-8.0 + 16.0 * unit(s)));
    ys[i] = float(-12.0 + 24.0 * unit(s));
    xd[i] = exp2(-8.0 + 16.0 * unit(s));
    yd[i] = -12.0 + 24.0 * unit(s);
  }
  auto time = [&](auto&& body) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      auto a = std::chrono::steady_clock::now();
      body();
      auto b = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::nano>(b - a).count() / n);
    }
    return best;
  };
  double t_pow = time([&] {
    for (int i = 0; i < n; ++i) out[i] = repmode::cr_powf(xs[i], ys[i]);
  });
  double t_powd = time([&] {
    for (int i = 0; i < n; ++i) outd[i] = repmode::repmode_pow(xd[i], yd[i]);
  });
  double t_exp = time([&] {
    for (int i = 0; i < n; ++i) out[i] = repmode::cr_expf(ys[i]);
  });
  double t_log = time([&] {
    for (int i = 0; i < n; ++i) out[i] = repmode::cr_logf(xs[i]);
  });
  double t_glibc = time([&] {
    for (int i = 0; i < n; ++i) out[i] = powf(xs[i], ys[i]);
  });
  std::printf(
      "  single thread, ns per call (best of 3): cr_powf %.1f, repmode_pow %.1f; cr_expf "
      "%.1f, cr_logf %.1f, glibc powf %.1f\n",
      t_pow, t_powd, t_exp, t_log, t_glibc);
  return row;
}

RegisterCustom powf_case({"powf", run_powf});
RegisterCustom powf_accurate_case({"powf-accurate", run_powf_accurate});
RegisterCustom pow_case({"pow", run_pow_double});
RegisterCustom pow_speed_case({"pow-speed", run_pow_speed});

}  // namespace

// x^y whose bits are the same on every CPU and every CUDA GPU.
//
//   float  cr_powf(float x, float y)       correctly rounded (round to nearest even) for all
//                                          2^64 pairs, C99/IEEE-754 special cases
//   double repmode_pow(double x, double y)  < 0.527 ulp proven (not always correctly rounded)
//
// Same rules as math.h (which this header builds on): only IEEE-754 basic operations and
// explicit repmode_fma, compiled with -ffp-contract=off / --fmad=false and never with
// fast-math; no libm. Subnormal inputs are decoded and subnormal outputs encoded with integer
// operations, and no intermediate double is ever subnormal (|y| < 2^-33, resp. 2^-64, is
// screened out before any arithmetic), so FTZ/DAZ modes change nothing. cr_powf's fast path
// and repmode_pow use no fma (exact products by the bit lengths of their operands, or
// Dekker's product); only cr_powf's accurate path calls repmode_fma.
//
// Method (cr_powf), x^y = exp(y log|x|) with the sign from y's parity:
//  1. fast path: log_fast (math.h, < 2^-57.4 relative), t = y*log|x| as th + tl, exp_fast(th)
//     times (1 + tl); relative error < 2^-50.6, and a rounding test that leaves about 2^-23
//     of the pairs (plus every exact midpoint) to the next path.
//  2. accurate path: log|x| split into exact or nearly exact pieces (relative error
//     < 2^-110.5), y times each piece exactly, exp_accurate (math.h, < 2^-100) of the
//     leading double times exp of the rest; relative error < 2^-99.6, rounding test against
//     2^-98 that resolves the exact position of the value (it never rounds the distance to
//     the boundary away).
//  3. exact cases: when even (2) cannot decide, x^y lies within 2^-98 (relative) of a
//     rounding boundary. pow_exact_f32 decides with integer arithmetic whether x^y is
//     exactly c * 2^s with c odd, c < 2^25 (every float32 and every midpoint between two
//     float32s is of that form), and if so rounds that exact value (ties to even). See
//     pow_exact_f32 for why every such x^y is found, and powf_accurate_path for why an
//     inexact x^y never gets there.
//
// Constants computed with mpmath at 400 bits, rounded to nearest (even):
//   log_row_lo2(j) = RN(L_j - L_hi - L_lo) for the rows of math.h's kLogTab (L_j = -log(c_j),
//                    or -log(2 c_j) for j >= 53): the table is then exact to 2^-151.
//   kQ17 = 1/17 as hi + lo (|error| < 2^-113).
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"

namespace repmode {
namespace math_detail {
namespace pow_detail {

// ---------------------------------------------------------------------------------------
// Helpers

// Kind of a finite nonzero y given as |y|'s bits: 0 not an integer, 1 odd integer,
// 2 even integer.
REPMODE_HD int f32_int_kind(uint32_t ay) {
  int ex = int(ay >> 23) - 127;  // 2^ex <= |y| < 2^(ex+1) (subnormals: ex = -127, < 0)
  if (ex < 0) return 0;
  if (ex > 23) return 2;                      // |y| >= 2^24: a multiple of 2
  uint32_t m = (ay & 0x7fffffu) | 0x800000u;  // |y| = m * 2^(ex-23)
  int frac = 23 - ex;
  if (m & ((1u << frac) - 1u)) return 0;
  return ((m >> frac) & 1u) ? 1 : 2;
}
REPMODE_HD int f64_int_kind(uint64_t ay) {
  int ex = int(ay >> 52) - 1023;
  if (ex < 0) return 0;
  if (ex > 52) return 2;
  uint64_t m = (ay & 0xfffffffffffffull) | (uint64_t(1) << 52);
  int frac = 52 - ex;
  if (m & ((uint64_t(1) << frac) - 1u)) return 0;
  return ((m >> frac) & 1u) ? 1 : 2;
}

// |x| = M * 2^e, M in [1, 2), for a finite nonzero float32 given as |x|'s bits; subnormals
// through the exact int -> double conversion (no arithmetic on a subnormal value).
REPMODE_HD double split_f32(uint32_t ax, int& e) {
  if (ax < 0x00800000u) {
    uint64_t db = bits_of(double(int32_t(ax)));  // |x| = ax * 2^-149
    e = int(db >> 52) - 1023 - 149;
    return double_from_bits((db & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  }
  e = int(ax >> 23) - 127;
  return double_from_bits((uint64_t(ax & 0x7fffffu) << 29) | (uint64_t(1023) << 52));
}

// y * v exactly, as s + e with s = RN(y*v), when y has at most 24 significant bits (a float32
// value): v's low 27 fraction bits are cut off into vl (vh keeps 26 significant bits, vl at
// most 27, vh + vl == v), so y*vh (<= 50 bits) and y*vl (<= 51 bits) are exact, and
// fast_two_sum is exact because |y*vh| >= |y*vl|. No fma, no Veltkamp split. Requires the
// products to stay normal (they do: |y| >= 2^-33 and |v| >= 2^-100 or v == 0 below).
REPMODE_HD DD two_prod_24(double y, double v) {
  double vh = double_from_bits(bits_of(v) & ~uint64_t(0x7ffffff));
  double vl = v - vh;
  return fast_two_sum(y * vh, y * vl);
}

// Third word of math.h's log table: L_j - L_hi - L_lo rounded to double (see the top).
REPMODE_HD double log_row_lo2(int j) {
  // clang-format off
  static constexpr double kLo2[128] = {
      0.0, -0x1.ecbffa987dd78p-99, -0x1.925a8d1f276f9p-104, 0x1.09e6386b8e725p-98,
      -0x1.915ee217c7d24p-99, -0x1.9fc9e836d0efap-99, -0x1.770ceafcb9f94p-98, 0x1.02c6b002dac7dp-99,
      0x1.9b96097e362c8p-103, 0x1.c08e2cba8d72bp-98, 0x1.a2fb650568662p-98, 0x1.429fe19b35ad7p-100,
      -0x1.2bd7066791ff1p-100, -0x1.96d7bb4653e68p-99, -0x1.2cf8ce45914edp-98, 0x1.8beaafb9d7407p-106,
      -0x1.a7e11980fad2cp-100, 0x1.9b96097e362c8p-102, -0x1.a42fc38895c05p-100, 0x1.4b59f9ec8093cp-100,
      -0x1.5f77b7bdb9485p-102, 0x1.f5355181dc751p-98, 0x1.d968236ee8625p-99, 0x1.0316d2c2a0e1dp-102,
      -0x1.bed4161fe2017p-100, -0x1.bfd2b78edcacfp-99, 0x1.fa61207ab3db7p-103, 0x1.2015f9812ac09p-101,
      -0x1.810c7d2839b2ap-99, 0x1.01b99b9dc622cp-100, -0x1.29a4116558f22p-98, -0x1.292f0fc636576p-99,
      0x1.a21f01fe115ecp-101, -0x1.3477ce854f635p-98, 0x1.820c9492304d3p-98, 0x1.431b60ec89db9p-102,
      -0x1.970c54175fc8fp-98, 0x1.387d0fa14d762p-100, -0x1.c237c38995c01p-99, -0x1.a42fc38895c05p-99,
      0x1.bb95eb3884a95p-98, 0x1.827221dc98495p-99, 0x1.55385461e921cp-103, -0x1.0f9cced353610p-101,
      -0x1.ee3e1f1ade78dp-99, -0x1.636a0ed7ed87ep-100, 0x1.39d42af7ac0c1p-100, -0x1.8dce49041484cp-98,
      0x1.bbbafe64d0cdep-98, 0x1.68ae10f7dc452p-100, 0x1.a1a888231891bp-99, -0x1.b18ca166aac0bp-100,
      -0x1.44ec4fd59f3b2p-101, -0x1.ca2e7226c55ddp-102, 0x1.eea60c7f4b595p-104, -0x1.82f403e2e0d0dp-98,
      0x1.50e7715858654p-98, 0x1.3cdc28d5974f3p-101, 0x1.c65df511a65b6p-101, -0x1.92985641827dap-100,
      -0x1.a11beb7a3cee8p-99, -0x1.821ee510a580bp-99, -0x1.03679bdbbd6b8p-99, -0x1.03962d6a3aaccp-98,
      -0x1.d432f4ba6ab4ep-98, 0x1.c443cc477d115p-100, -0x1.b8b823f067d05p-100, -0x1.b8b823f067d05p-100,
      0x1.9c60f598d3a32p-99, -0x1.87146f01ad7dfp-107, 0x1.6a1bbb899f344p-104, -0x1.34b282480b089p-101,
      -0x1.06429f5a50987p-100, -0x1.06429f5a50987p-100, 0x1.61eaa246b143cp-103, 0x1.5ff1e1c98c2edp-100,
      0x1.1976d471342b1p-105, -0x1.ea9e1e2c3dca4p-99, -0x1.ea9e1e2c3dca4p-99, 0x1.468989647465ap-108,
      -0x1.98c27e3f1b66ep-99, -0x1.c4b3b13282fb5p-98, -0x1.c4b3b13282fb5p-98, 0x1.b344296aa3ed2p-98,
      -0x1.820191ff85253p-101, -0x1.d0de37da32582p-98, -0x1.d0de37da32582p-98, -0x1.091dd7f35571dp-98,
      0x1.a732c9219ce25p-98, 0x1.a732c9219ce25p-98, 0x1.e1f3be9a83374p-103, -0x1.89fcba07cc9b7p-98,
      -0x1.89fcba07cc9b7p-98, 0x1.20b2ef60436f9p-100, -0x1.ae73f3bc7ec85p-99, -0x1.ae73f3bc7ec85p-99,
      0x1.ea8b8edecd2c1p-98, -0x1.9271dff48f15dp-99, -0x1.9271dff48f15dp-99, 0x1.61eaa246b143cp-104,
      0x1.e4e8962699507p-100, 0x1.e4e8962699507p-100, -0x1.d5263cd4fb3f1p-99, -0x1.d5263cd4fb3f1p-99,
      0x1.254bca8fd9fc2p-100, -0x1.9b640ce50c1efp-100, -0x1.9b640ce50c1efp-100, -0x1.7c8ac25e4e3f0p-99,
      -0x1.7c8ac25e4e3f0p-99, -0x1.344dd408683b3p-98, -0x1.325e46da42906p-100, -0x1.325e46da42906p-100,
      0x1.4cd0ece597166p-101, 0x1.4cd0ece597166p-101, 0x1.2645ad50c7673p-102, 0x1.2645ad50c7673p-102,
      -0x1.2960b1e4dfb81p-99, -0x1.7229c8d57ae1ep-98, -0x1.7229c8d57ae1ep-98, 0x1.0dd605151051fp-100,
      0x1.0dd605151051fp-100, -0x1.6bc01dcd4f103p-98, -0x1.6bc01dcd4f103p-98, 0x1.50aa4829f882ep-105,
      0x1.50aa4829f882ep-105, -0x1.dc282d2b3db2cp-100, -0x1.dc282d2b3db2cp-100, 0.0,
  };
  // clang-format on
  return kLo2[j];
}

// 1/17 = kQ17Hi + kQ17Lo.
constexpr double kQ17Hi = 0x1.e1e1e1e1e1e1ep-5;
constexpr double kQ17Lo = 0x1.e1e1e1e1e1e1ep-61;

// Relative error bounds the rounding tests assume: the fast path is proven < 2^-50.64 and
// the accurate path < 2^-99.6 (see below); factors of 3 to spare. (For normal results the
// fast path tests the bit pattern directly, see cr_powf_impl.)
constexpr double kPowFastEps = 0x1p-49;
constexpr double kPowAccurateEps = 0x1p-98;

// ---------------------------------------------------------------------------------------
// Accurate path

// x^y = (hi + lo) * 2^m, hi in [1, 2), for |x| = M * 2^e (float32, so |e| <= 150), y a
// float32 value with |y| >= 2^-33, and |y log|x|| <= 105.
//
// Error: relative < 2^-99.6.
// log|x| = H + H2 + H3 + r + w with (log_reduce, math.h) r = M c_j - 1 exact, |r| <= 2^-7:
//  * H = e*ln2_hi + L_hi: exact (math.h, log_fast). H2 = e*ln2_mid + L_lo, kept exactly as
//    a two_sum pair (e*ln2_mid is exact for |e| < 2^8). H3 = e*ln2_lo + L_lo2: the three
//    ln2 words miss ln2 by < 2^-144 and the three table words miss L by < 2^-151, and H3
//    rounds once: < 2^-135 absolute in all.
//  * w = log1p(r) - r = r^2 q(r), q = sum_{n=2..17} (-1)^(n+1) r^(n-2)/n by Horner's rule in
//    double-double. Truncation < 2^-112/18 (|r| <= 2^-7) in q; each Horner step has
//    relative error < 2^-104 and the earlier steps are damped by powers of r, and q lies in
//    [-0.504, -0.496] (no cancellation): q within 2^-103 relative; r^2 is exact (two_prod)
//    and the product adds < 2^-104: |w error| < 2^-102.9 |w|, with |w| < 0.51 r^2.
//  * Relative to log|x|: if H = 0 (e = 0, rows 0 and 127, where L = 0 and so H2 = H3 = 0),
//    log|x| = log1p(r), |log1p(r)| >= 0.99 |r|, error < 2^-102.9 * 0.52 |r|^2/|r| <
//    2^-110.8 |log x|. Otherwise |log|x|| > 2^-8 (math.h, log_fast), |w| < 2^-15: absolute
//    < 2^-117.9 + 2^-135, relative < 2^-109.9. Hence < 2^-109.9 |log|x|| either way.
// t = y log|x|: y*H, y*r, y*H2_hi, y*w_hi are exact (two_prod_24); the rest (y*H2_lo, y*H3,
//  y*w_lo: at most 2^-53 |t| + 2^-82 |y|, where |y| <= 2^8 |t| unless H = 0, when only
//  y*w_lo remains) round once, < 2^-113 |t|. The big terms are added exactly (two_sum),
//  the small ones (|d| < 2^-33) in double-double (< 2^-137 absolute), and the sum is split
//  into th + u + v with th a double, |u| <= 2^-47, |v| < 2^-86. So |t - (th+u+v)| <
//  2^-109.8 |t| <= 2^-103.1 (|t| <= 105).
// exp: exp_accurate(th) < 2^-100 (math.h; |k| <= 105*64/ln2 < 2^14 as it requires);
//  e^(u+v) = F = 1 + (u+v) + u^2/2 within 2^-131, F = fast_two_sum(1, u) plus one rounded
//  addition (< 2^-106); dd_mul(E, F) < 2^-102.7 (the dropped E_lo*F_lo <= 2^-104 and three
//  roundings < 2^-105 each, against |E F| >= 1 - 2^-46).
// Total: 2^-100 + 2^-102.7 + 2^-103.1 + 2^-106 + ... < 2^-99.6.
REPMODE_HD DD pow_accurate(double M, int e, double y, int& m) {
  LogArg a = log_reduce(M, e);
  const double r = a.r;
  const int j = int(bits_of(M) >> 45) & 127;  // the row log_reduce used
  DD q = {kQ17Hi, kQ17Lo};
  q = dd_add(dd_mul_d(q, r), DD{-0x1p-4, 0.0});  // n = 16
  for (int n = 15; n >= 2; --n) {
    const double* c = log1p_coef(n);
    q = dd_add(dd_mul_d(q, r), DD{c[0], c[1]});
  }
  DD w = dd_mul(two_prod(r, r), q);
  double H = a.e * kLn2Hi + a.row[1];        // exact
  DD H2 = two_sum(a.e * kLn2Mid, a.row[2]);  // exact
  double H3 = a.e * kLn2Lo + log_row_lo2(j);
  DD A = two_prod_24(y, H);
  DD B = two_prod_24(y, r);
  DD C = two_prod_24(y, H2.hi);
  DD D = two_prod_24(y, w.hi);
  double small = (y * H2.lo + y * H3) + y * w.lo;
  DD s1 = two_sum(A.hi, B.hi);
  DD s2 = two_sum(s1.hi, D.hi);
  DD d = dd_add(two_sum(C.hi, s1.lo), two_sum(s2.lo, D.lo));
  d = dd_add(d, two_sum(A.lo, B.lo));
  d = dd_add(d, two_sum(C.lo, small));
  DD th = two_sum(s2.hi, d.hi);  // t = th.hi + th.lo + d.lo
  DD E = exp_accurate(th.hi, m);
  DD F = fast_two_sum(1.0, th.lo);
  F.lo += d.lo + 0.5 * th.lo * th.lo;
  return normalize_1_2(dd_mul(E, F), m);
}

// Rounds v = (hi + lo) * 2^m, hi in [1, 2), |lo| <= 2^-52, to float32 (nearest even,
// gradual underflow, overflow to +inf) and returns its bits; *hard is set when v is within
// eps*v of a rounding boundary. Unlike round_scaled_to_f32 (math.h), the distance to the
// boundary is computed without rounding it to 2^-54 units, so any eps down to 2^-120 works:
// in units of the float32 spacing 2^q, t = th + tl exactly (scaling by a power of 2), n =
// RNE(th), t - n = dh + tl with dh exact (Sterbenz), = s + s_lo exactly (two_sum), and the
// gap 1/2 - |t - n| = (1/2 - |s|) - sign(s) s_lo, where the first difference is exact
// whenever it is below 1/4 and the second rounds once (relative 2^-53). A negative gap means
// t lies beyond the boundary next to th: n moves one step towards it.
REPMODE_HD uint32_t round_scaled_to_f32_fine(double hi, double lo, int m, double eps, bool* hard) {
  if (m >= 128) {
    *hard = false;
    return 0x7f800000u;
  }
  int q = (m < -126 ? -126 : m) - 23;
  double scale = pow2(m - q);  // m - q in [-4, 23] for m >= -153
  double th = hi * scale, tl = lo * scale;
  const double kShift = 0x1p52;
  double n = (th + kShift) - kShift;
  DD s = two_sum(th - n, tl);
  double sg = s.hi < 0.0 ? -1.0 : 1.0;
  double gap = (0.5 - sg * s.hi) - sg * s.lo;
  if (gap < 0.0) {
    n += sg;
    gap = -gap;
  }
  *hard = gap <= eps * 0x1p24;  // |t| <= 2^24 + 1, and eps carries a factor 3 of margin
  uint32_t bits = uint32_t(q + 149) * 0x800000u + uint32_t(n);
  return bits > 0x7f800000u ? 0x7f800000u : bits;
}

// Integer square root (floor) of v < 2^32.
REPMODE_HD uint32_t isqrt32(uint32_t v) {
  uint32_t r = 0;
  for (uint32_t bit = 1u << 30; bit != 0; bit >>= 2) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
  }
  return r;
}

// Decides with integer arithmetic whether |x|^y is exactly c * 2^s with c odd and c < 2^25,
// and if so stores its float32 rounding (nearest even) in *bits and returns true. ax = |x|'s
// bits (finite, nonzero, |x| != 1), uy = y's bits (finite, |y| >= 2^-33).
//
// Why this finds every such case: write |x| = a 2^ex (a odd, a < 2^24) and |y| = p 2^ey
// (p odd). If y is an integer Y: |x|^Y = a^Y 2^(ex Y) is dyadic iff a = 1 or Y > 0, and then
// c = a^Y, which is < 2^25 only for Y <= 15 when a >= 3 (3^16 > 2^25). If y = p/2^k, k >= 1,
// and |x|^y = z is rational, then |x|^(+-p) = z^(2^k); as gcd(p, 2^k) = 1, every prime's
// exponent in a^p 2^(ex p) must be divisible by 2^k, so a = b^(2^k) and 2^k | ex, and z =
// b^(+-p) 2^(+-ex p/2^k), dyadic iff b = 1 or y > 0. For a = 1, 2^k | ex needs 2^k <= 149;
// for a >= 3, b >= 3 and b^(2^k) < 2^24 need k <= 3, and c = b^p < 2^25 needs p <= 15. Values
// with |s| > 200 are far outside the float32 range and never reach this function.
REPMODE_HD_COLD bool pow_exact_f32(uint32_t ax, uint32_t uy, uint32_t* bits) {
  uint32_t a = ax < 0x00800000u ? ax : ((ax & 0x7fffffu) | 0x800000u);
  int ex = ax < 0x00800000u ? -149 : int(ax >> 23) - 150;
  while ((a & 1u) == 0) {
    a >>= 1;
    ++ex;
  }
  uint32_t ay = uy & 0x7fffffffu;
  uint32_t p = (ay & 0x7fffffu) | 0x800000u;  // y is normal here
  int ey = int(ay >> 23) - 150;
  while ((p & 1u) == 0) {
    p >>= 1;
    ++ey;
  }
  const bool yneg = (uy >> 31) != 0;
  uint64_t c = 1;
  int64_t s;
  if (ey >= 0) {               // y = +-p * 2^ey, an integer
    if (ey > 8) return false;  // |y| >= 2^9: |s| >= 512 (a = 1) or c > 2^25 (a >= 3)
    int64_t Y = int64_t(p) << ey;
    if (a == 1) {
      s = int64_t(ex) * Y;
    } else {
      if (yneg || Y > 15) return false;
      for (int64_t i = 0; i < Y; ++i) {
        c *= a;  // c < 2^25 and a < 2^24: no overflow
        if (c >= (uint64_t(1) << 25)) return false;
      }
      s = int64_t(ex) * Y;
    }
    if (yneg) s = -s;
  } else {  // y = +-p / 2^k
    int k = -ey;
    if (k > 7 || (a != 1 && (yneg || k > 3 || p > 15))) return false;
    int64_t div = int64_t(1) << k;
    if (int64_t(ex) % div != 0) return false;
    uint32_t b = a;
    for (int i = 0; i < k && b != 1; ++i) {
      uint32_t rt = isqrt32(b);
      if (rt * rt != b) return false;
      b = rt;
    }
    for (uint32_t i = 0; i < p && b != 1; ++i) {
      c *= b;
      if (c >= (uint64_t(1) << 25)) return false;
    }
    s = (int64_t(ex) / div) * int64_t(p);
    if (yneg) s = -s;
  }
  if (s < -200 || s > 200) return false;
  bool hard;
  *bits = round_to_f32(double(c) * pow2(int(s)), 0.0, 0.0, &hard);  // exact value, RNE
  return true;
}

// Paths 2-4 of cr_powf (see the top). |x| = M * 2^e, y = double(y) (exact), ax = |x|'s bits,
// uy = y's bits, sign = the result's sign bit.
//
// Why an inexact x^y is not expected at path 4 (the one step that rests on a search rather
// than a proof): the accurate value is within 2^-99.6 of x^y, so paths 3/4 are reached only
// when x^y lies within 2^-98 x^y (+ 2^-99.6) of a boundary, i.e. within 2^-73.4 of a float32
// ulp: an inexact x^y would need at least 72 identical bits after the round bit. CORE-MATH's
// worst-case search for binary32 pow (its list of cases with >= 44 such bits; the largest in
// the parts examined for this code: 51) shows none near; heuristically, among the fewer than
// 2^61 pairs with a finite, nonzero, non-trivial result the worst is expected around 61 bits,
// and the chance that any pair reaches 72 is about 2^-10. Even then path 4 returns the
// accurate rounding, which is wrong only if x^y is within 2^-99.6 of the boundary (>= 96
// identical bits, chance about 2^-35). csrc/verify/math_cases/pow.cpp counts path 4: 0 so far.
REPMODE_HD_COLD float powf_accurate_path(double M, int e, double y, uint32_t ax, uint32_t uy, uint32_t sign,
                                         int* path) {
  int m;
  DD z = pow_accurate(M, e, y, m);
  bool hard;
  uint32_t b = round_scaled_to_f32_fine(z.hi, z.lo, m, kPowAccurateEps, &hard);
  if (!hard) {
    if (path) *path = 2;
    return float_from_bits(b | sign);
  }
  uint32_t eb;
  if (pow_exact_f32(ax, uy, &eb)) {
    if (path) *path = 3;
    return float_from_bits(eb | sign);
  }
  if (path) *path = 4;
  return float_from_bits(b | sign);
}

// ---------------------------------------------------------------------------------------
// cr_powf

// path (diagnostics): 0 special, 1 fast, 2 accurate, 3 exact case, 4 undecided (never seen).
//
// Fast path error: relative < 2^-50.64.
//  * log_fast: l = l_hi + l_lo within 2^-57.4 |log|x||.
//  * y*l_hi = th + t_lo exactly (two_prod_24); tl = t_lo + y*l_lo rounds twice: < 2^-104 |t|.
//    So |th + tl - y log|x|| < 2^-57.39 |t| <= 2^-50.67, as |t| < 104.6 past the screens;
//    |tl| <= 2^-47 + 2^-53 |t| < 2^-45.
//  * exp_fast(th) = (E_hi + E_lo) 2^m within 2^-58.3; e^tl = 1 + tl within tl^2 < 2^-90;
//    c = E_lo + E_hi*tl rounds twice (< 2^-97 each), E_lo*tl (< 2^-97) is dropped.
//  Total: E_hi + c is within 2^-50.67 + 2^-58.3 + 2^-88.9 < 2^-50.64 (< kPowFastEps / 3) of
//  x^y / 2^m, relative.
// Overflow and underflow: th > 89.5 means t > 89.49 and x^y > 2^129; th < -104.5 means
// x^y < 2^-150.7, below half the least subnormal: +-inf / +-0 without further work.
REPMODE_HD float cr_powf_impl(float xf, float yf, int* path) {
  const uint32_t ux = bits_of(xf), uy = bits_of(yf);
  const uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
  if (path) *path = 0;
  if (ay == 0 || ux == 0x3f800000u) return 1.0f;  // x^+-0 = 1, 1^y = 1, even for NaN
  if (ax > 0x7f800000u || ay > 0x7f800000u) return Canonical<float>::nan();
  if (ay == 0x7f800000u) {               // y = +-inf
    if (ax == 0x3f800000u) return 1.0f;  // (-1)^+-inf = 1
    // |x| > 1: +inf -> inf, -inf -> 0; |x| < 1: the reverse
    return float_from_bits((ax > 0x3f800000u) == ((uy >> 31) == 0) ? 0x7f800000u : 0u);
  }
  const int kind = f32_int_kind(ay);
  const uint32_t sign = ((ux >> 31) != 0 && kind == 1) ? 0x80000000u : 0u;
  if (ax == 0 || ax == 0x7f800000u) {  // |x|^y is 0 or inf; negative only for odd y
    bool inf = (ax != 0) == ((uy >> 31) == 0);
    return float_from_bits((inf ? 0x7f800000u : 0u) | sign);
  }
  if ((ux >> 31) != 0 && kind == 0) return Canonical<float>::nan();   // x < 0, y not integer
  if (ax == 0x3f800000u) return float_from_bits(0x3f800000u | sign);  // x = -1, y integer
  // |y| < 2^-33 (y not an integer, so x > 0): |y log x| < 2^-33 * 103.3 < 2^-26, and x^y lies
  // strictly between the boundaries 1 - 2^-25 and 1 + 2^-24. Also catches subnormal y.
  if (ay < 0x2f000000u) return 1.0f;
  int e;
  const double M = split_f32(ax, e);
  const double y = double(yf);
  DD l = log_fast(M, e);
  DD t = two_prod_24(y, l.hi);
  const double th = t.hi;
  if (th > 89.5) return float_from_bits(0x7f800000u | sign);
  if (th < -104.5) return float_from_bits(sign);
  const double tl = t.lo + y * l.lo;
  int m;
  DD E = exp_fast(th, m);  // m in [-152, 130]
  const double c = E.lo + E.hi * tl;
  if (m >= -125) {
    // Normal result (or overflow): v = RN(E_hi + c) is within 2^-49.6 + 2^-52 < 2^-49.3 of
    // x^y / 2^m (< 2.0001), i.e. within 6.5 units of 2^-52, v's spacing in [1, 2). In that
    // binade the float32 boundaries are the doubles whose low 29 bits are 0x10000000 (the
    // next ones are 2^28 units away); v in [1 - 2^-44, 1) or [2, 2 + 2^-44] is 2^-25 away
    // from any. So if v's low bits are more than 16 units from that pattern, x^y rounds like
    // v * 2^m (exact, normal), which the conversion rounds (to inf above the largest float).
    double v = E.hi + c;
    int64_t off = int64_t(bits_of(v) & 0x1fffffffu) - 0x10000000;
    if (off > 16 || off < -16) {
      if (path) *path = 1;
      return float_from_bits(bits_of(float(v * pow2(m))) | sign);
    }
  } else {
    // Subnormal result (or one just above): round hi + lo by integer arithmetic.
    DD z = normalize_1_2(fast_two_sum(E.hi, c), m);
    bool hard;
    uint32_t b = round_scaled_to_f32(z.hi, z.lo, m, kPowFastEps, &hard);
    if (!hard) {
      if (path) *path = 1;
      return float_from_bits(b | sign);
    }
  }
  return powf_accurate_path(M, e, y, ax, uy, sign, path);
}

// ---------------------------------------------------------------------------------------
// repmode_pow (float64)

// Dekker's exact product without fma: a = ah + al and b = bh + bl split by Veltkamp's method
// (26 + 26 significant bits, split_53), a*b = p + e exactly (round to nearest, no overflow for
// |a|, |b| < 2^996, no underflow for the magnitudes used here: all partial products stay
// above 2^-300).
constexpr double kVeltkamp27 = 0x1.0000002p+27;  // 2^27 + 1
REPMODE_HD void split_53(double a, double& ah, double& al) {
  double c = kVeltkamp27 * a;
  ah = c - (c - a);
  al = a - ah;
}
REPMODE_HD DD two_prod_dekker(double a, double ah, double al, double b, double bh, double bl) {
  double p = a * b;
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}
REPMODE_HD DD two_prod_dekker(double a, double b) {
  double ah, al, bh, bl;
  split_53(a, ah, al);
  split_53(b, bh, bl);
  return two_prod_dekker(a, ah, al, b, bh, bl);
}

// log|x| for a double |x| = M * 2^e as H + H2 + r + w, and t = y log|x| as th + tl; see
// repmode_pow for the error. No fma: the exact products are Dekker's.
REPMODE_HD DD pow_log_times_y(double M, int e, double y) {
  LogArg a = log_reduce(M, e);
  const double r = a.r;
  double rh, rl, yh, yl;
  split_53(r, rh, rl);
  split_53(y, yh, yl);
  // w = log1p(r) - r = -r^2/2 + r^3/3 + r^4 Q(r), Q = sum_{n=4..11} (-1)^(n+1) r^(n-4)/n.
  DD r2 = two_prod_dekker(r, rh, rl, r, rh, rl);
  double r2h, r2l;
  split_53(r2.hi, r2h, r2l);
  DD r3 = two_prod_dekker(r2.hi, r2h, r2l, r, rh, rl);
  r3.lo += r2.lo * r;
  const double* c3 = log1p_coef(3);
  DD w3 = two_prod_dekker(r3.hi, c3[0]);
  w3 = fast_two_sum(w3.hi, w3.lo + (r3.hi * c3[1] + r3.lo * c3[0]));
  double r4 = r2.hi * r2.hi;
  double Q = log1p_coef(4)[0] +
             r * (log1p_coef(5)[0] +
                  r * (log1p_coef(6)[0] +
                       r * (log1p_coef(7)[0] +
                            r * (log1p_coef(8)[0] +
                                 r * (log1p_coef(9)[0] + r * (log1p_coef(10)[0] + r * log1p_coef(11)[0]))))));
  DD w = dd_add(DD{-0.5 * r2.hi, -0.5 * r2.lo}, w3);
  w = fast_two_sum(w.hi, w.lo + r4 * Q);
  double H = a.e * kLn2Hi + a.row[1];                     // exact for |e| < 2^11
  double H2 = a.e * kLn2Mid + (a.row[2] + a.e * kLn2Lo);  // < 2^-85.5 absolute error
  double Hh, Hl, wh, wl;
  split_53(H, Hh, Hl);
  split_53(w.hi, wh, wl);
  DD A = two_prod_dekker(y, yh, yl, H, Hh, Hl);
  DD B = two_prod_dekker(y, yh, yl, r, rh, rl);
  DD D = two_prod_dekker(y, yh, yl, w.hi, wh, wl);
  DD s1 = two_sum(A.hi, B.hi);
  DD s2 = two_sum(s1.hi, D.hi);
  double d = (((s1.lo + s2.lo) + (A.lo + B.lo)) + D.lo) + (y * H2 + y * w.lo);
  return two_sum(s2.hi, d);
}

}  // namespace pow_detail
}  // namespace math_detail

// Correctly rounded x^y for float32 (round to nearest even), every pair of inputs.
// pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; pow(-1, +-inf) = 1; otherwise NaN in ->
// canonical NaN; x < 0 finite with y finite non-integer -> canonical NaN; x < 0 with integer
// y -> (-1)^y |x|^y; pow(+-0, y): y < 0 -> +inf (-inf for -0 and odd y), y > 0 -> +0 (-0 for -0
// and odd y); pow(+-inf, y) likewise reversed; |x|^(+-inf) -> inf or +0 by |x| vs 1; overflow
// to +-inf, gradual underflow to +-0. See cr_powf_impl for the method and error bounds.
REPMODE_HD float cr_powf(float x, float y) { return math_detail::pow_detail::cr_powf_impl(x, y, nullptr); }

// x^y for float64, < 0.527 ulp, with the same special cases (canonical NaN 0x7ff8...).
//
// Error: log|x| within 2^-74 relative: w's r^4 Q term (<= 2^-23 |r|, relative error < 2^-51)
// < 2^-74 |r|; the double-double parts (r^2/2 exact, r^3/3 within 2^-103 relative) and the
// truncation after r^11/11 (< 2^-80 |r|) add little; when H != 0, |log|x|| > 2^-8 and the
// absolute errors (H2 < 2^-85.5, the r^4 Q term < 2^-81) give < 2^-77. y*H, y*r, y*w_hi are
// exact (Dekker's product), the other terms (< 2^-33 |t| + 2^-44) round with < 2^-85 |t|. So t is
// within 2^-73.9 |t| <= 2^-64.4 (|t| <= 746), e^tl = 1 + tl within 2^-88, and exp_fast adds
// 2^-58.3: the value hi + lo is within 2^-58.27 relative, and hi = RN(hi + lo) within
// 0.5 + 2^53 * 2^-58.27 < 0.527 ulp. Subnormal results are rounded once from hi + lo by
// integer arithmetic: 0.5 ulp plus 2^-58.27 of a value below 2^-1022, i.e. < 2^-6 ulp.
REPMODE_HD double repmode_pow(double x, double y) {
  using namespace math_detail;
  using namespace math_detail::pow_detail;
  const uint64_t ux = bits_of(x), uy = bits_of(y);
  const uint64_t ax = ux & 0x7fffffffffffffffull, ay = uy & 0x7fffffffffffffffull;
  const uint64_t kInf = 0x7ff0000000000000ull, kOne = 0x3ff0000000000000ull;
  if (ay == 0 || ux == kOne) return 1.0;
  if (ax > kInf || ay > kInf) return Canonical<double>::nan();
  if (ay == kInf) {
    if (ax == kOne) return 1.0;
    return double_from_bits((ax > kOne) == ((uy >> 63) == 0) ? kInf : 0u);
  }
  const int kind = f64_int_kind(ay);
  const uint64_t sign = ((ux >> 63) != 0 && kind == 1) ? 0x8000000000000000ull : 0u;
  if (ax == 0 || ax == kInf) {
    bool inf = (ax != 0) == ((uy >> 63) == 0);
    return double_from_bits((inf ? kInf : 0u) | sign);
  }
  if ((ux >> 63) != 0 && kind == 0) return Canonical<double>::nan();
  if (ax == kOne) return double_from_bits(kOne | sign);
  // |y| < 2^-64: |t| < 746 * 2^-64 < 2^-54.4, x^y strictly between 1 - 2^-54 and 1 + 2^-53.
  if (ay < 0x3bf0000000000000ull) return 1.0;
  // |y| >= 2^64 (an even integer): |log|x|| >= 2^-53.1 for every double |x| != 1, so
  // |t| > 2^10.9: inf when |x| > 1 and y > 0 or |x| < 1 and y < 0, else +0.
  if (ay >= 0x43f0000000000000ull) return double_from_bits((ax > kOne) == ((uy >> 63) == 0) ? kInf : 0u);
  int e;
  const double M = split_double(ax, e);
  DD t = pow_log_times_y(M, e, y);
  if (t.hi > 710.0) return double_from_bits(kInf | sign);
  if (t.hi < -746.0) return double_from_bits(sign);  // x^y < 2^-1076
  int m;
  DD E = exp_fast(t.hi, m);
  DD z = normalize_1_2(fast_two_sum(E.hi, E.lo + E.hi * t.lo), m);
  if (m >= 1024) return double_from_bits(kInf | sign);
  if (m >= -1022) return double_from_bits(bits_of(z.hi * pow2(m)) | sign);
  // Subnormal (or zero) result, as in repmode_exp: in units of 2^-1074, the nearest integer
  // of (hi + lo) * 2^(m+1074) is the bit pattern.
  double s = pow2(m + 1074);  // m >= -1078
  double dd;
  double n = round_to_integer(z.hi * s, z.lo * s, dd);
  return double_from_bits(uint64_t(n) | sign);
}

}  // namespace repmode

// atan, atan2, asin and acos with the same bits on every CPU and every CUDA GPU.
//
//   float  cr_atanf(float)            correctly rounded (round to nearest even), all inputs
//   float  cr_atan2f(float, float)    correctly rounded (proof: see below and docs/math.md)
//   float  cr_asinf(float)            correctly rounded, all inputs
//   float  cr_acosf(float)            correctly rounded, all inputs
//   double repmode_atan(double)       < 0.5 ulp + 2^-90 relative (not always correctly rounded)
//   double repmode_atan2(double, double), repmode_asin(double), repmode_acos(double): likewise
//
// The rules of math.h apply unchanged: IEEE-754 basic operations and explicit repmode_fma
// (only in the accurate paths, through two_prod), -ffp-contract=off / nvcc --fmad=false, no
// fast-math, no libm, canonical NaNs, subnormal float32 inputs decoded with integer
// operations (f32_to_double_exact) and subnormal float32 results encoded with integer
// operations (round_to_f32), so FTZ/DAZ change no float32 result.
//
// Method. All four reduce to one "ratio core": atan(a/b) for 0 <= a <= b, b > 0.
//   atan(x)     = atan2(x, 1)
//   atan2(y, x) = octant(atan(min/max)): v, pi/2 - v, pi - v or pi/2 + v, sign of y
//   asin(x)     = atan2(x, sqrt(1 - x^2))       acos(x) = atan2(sqrt(1 - x^2), x)
// The core picks c = k/64 (k = 0..64) next to a/b and uses
//   atan(a/b) = atan(c) + atan(r),   r = (a - c b) / (b + c a),   |r| < 2^-6.99,
// an identity (tan addition formula), with atan(c) from a 65-row table (double-double) and
// atan(r) from its odd Taylor series. Fast path: plain double arithmetic (no fma), proven
// relative error < 11.4 * 2^-53 (see atan_core_fast and the octant steps), then the wide
// rounding test f32_boundary_within with tol = 512 double ulps (eps = 2^-44, a factor 45 to
// spare): it fails for about 1 input in 2^19. Those go to the accurate path: the same
// reduction in double-double (dd_div, dd_sqrt) and the series to r^15, error < 2^-95,
// rounded with kAccurateEps = 2^-85. atan, asin, acos and atan2 of rational arguments are
// transcendental (Lindemann) except at 0, so the exact value is never a rounding boundary
// and the accurate path always decides; csrc/verify/math_cases/atan.cpp confirms it on
// all 2^32 inputs of atanf/asinf/acosf and on a structured sample of atan2f pairs.
//
// atan2 from atan's proof: both paths see a and b only through ratios and products of
// float-valued doubles, and scaling a and b by the same power of two scales every
// intermediate (num, den, the products) exactly (doubles cannot under/overflow here:
// float32 values lie in [2^-149, 2^128], all intermediates in [2^-1000, 2^300]), so r, k and
// the result bits are those of the unscaled pair: atan2f(y, 2^j) == atanf(y * 2^-j) bit for
// bit whenever y * 2^-j is a float32, and atan2f(2^j y, 2^j x) == atan2f(y, x) whenever both
// pairs are float32. The exhaustive atanf run thus covers every pair (y, 2^j) it reaches.
//
// The float64 versions run the accurate path (every intermediate in double-double) and
// return its high part: the value is within 2^-95 relative of the exact one before that
// last rounding, so the error is < 0.5 ulp + 2^-95 relative: correctly rounded except
// within 2^-42 ulp of a midpoint. One caveat (documented in docs/math.md): repmode_atan2
// with a quotient |y/x| < 2^-62 returns the IEEE quotient y/x (correctly rounded: the atan
// correction is < 2^-124 relative and a quotient of doubles is never within 2^-107 of a
// midpoint); when that quotient is subnormal or an input is, the IEEE division is what
// decides, so FTZ/DAZ modes (off by default) flush it.
//
// Constants (mpmath at 400 bits, rounded to nearest): kAtanTab[k] = atan(k/64) as hi + lo;
// pi, pi/2 as hi + lo; 1/3, 1/5, 1/7 as hi + lo; 1/9 .. 1/15 and the fast coefficients
// -1/3, 1/5, -1/7 rounded to double.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "math_hyperbolic.h"  // dd_div, f32_boundary_within
#include "math_log_family.h"  // f32_to_double_exact

namespace repmode {
namespace math_detail {
namespace atan_detail {

// atan(k/64) = row[0] + row[1], k = 0..64 (|error| < 2^-106 relative).
REPMODE_HD const double* atan_row(int k) {
  static constexpr double kAtanTab[65][2] = {
      {0x0.0p+0, 0x0.0p+0},
      {0x1.fff555bbb729bp-7, -0x1.220c39d4dff50p-61},
      {0x1.ffd55bba97625p-6, -0x1.5ec431444912cp-60},
      {0x1.7fb818430da2ap-5, -0x1.86ef8f794f105p-63},
      {0x1.ff55bb72cfdeap-5, -0x1.c934d86d23f1dp-60},
      {0x1.3f59f0e7c559dp-4, 0x1.ac4ce285df847p-58},
      {0x1.7ee182602f10fp-4, -0x1.cfb654c0c3d98p-58},
      {0x1.be39ebe6f07c3p-4, 0x1.f7b8f29a05987p-58},
      {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
      {0x1.1e1fafb043727p-3, -0x1.b485914dacf8cp-59},
      {0x1.3d6eee8c6626cp-3, 0x1.61a3b0ce9281bp-57},
      {0x1.5c9811e3ec26ap-3, -0x1.054ab2c010f3dp-58},
      {0x1.7b97b4bce5b02p-3, 0x1.347b0b4f881cap-58},
      {0x1.9a6a8e96c8626p-3, 0x1.cf601e7b4348ep-59},
      {0x1.b90d7529260a2p-3, 0x1.17b10d2e0e5abp-61},
      {0x1.d77d5df205736p-3, 0x1.c648d1534597ep-57},
      {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
      {0x1.09dc597d86362p-2, 0x1.62e47390cb865p-56},
      {0x1.18bf5a30bf178p-2, 0x1.30ca4748b1bf9p-57},
      {0x1.278372057ef46p-2, -0x1.077cdd36dfc81p-56},
      {0x1.362773707ebccp-2, -0x1.963a544b672d8p-57},
      {0x1.44aa436c2af0ap-2, -0x1.5d5e43c55b3bap-56},
      {0x1.530ad9951cd4ap-2, -0x1.2566480884082p-57},
      {0x1.614840309cfe2p-2, -0x1.a725715711f00p-56},
      {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
      {0x1.7d5604b63b3f7p-2, 0x1.69c885c2b249ap-56},
      {0x1.8b24d394a1b25p-2, 0x1.b6d0ba3748fa8p-56},
      {0x1.98cd5454d6b18p-2, 0x1.9e6c988fd0a77p-56},
      {0x1.a64eec3cc23fdp-2, -0x1.24dec1b50b7ffp-56},
      {0x1.b3a911da65c6cp-2, 0x1.ae187b1ca5040p-56},
      {0x1.c0db4c94ec9f0p-2, -0x1.cc1ce70934c34p-56},
      {0x1.cde53432c1351p-2, -0x1.a2cfa4418f1adp-56},
      {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
      {0x1.e77eb7f175a34p-2, 0x1.0e53dc1bf3435p-56},
      {0x1.f40dd0b541418p-2, -0x1.a3992dc382a23p-57},
      {0x1.0039c73c1a40cp-1, -0x1.b32c949c9d593p-55},
      {0x1.0657e94db30d0p-1, -0x1.d5b495f6349e6p-56},
      {0x1.0c6145b5b43dap-1, 0x1.974fa13b5404fp-58},
      {0x1.1255d9bfbd2a9p-1, -0x1.2bdaee1c0ee35p-58},
      {0x1.1835a88be7c13p-1, 0x1.c621cec00c301p-55},
      {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
      {0x1.23b71e2cc9e6ap-1, 0x1.c421c9f38224ep-57},
      {0x1.2958e59308e31p-1, -0x1.09e73b0c6c087p-56},
      {0x1.2ee628406cbcap-1, 0x1.c5d5e9ff0cf8dp-55},
      {0x1.345f01cce37bbp-1, 0x1.1021137c71102p-55},
      {0x1.39c391cd4171ap-1, -0x1.2304331d8bf46p-55},
      {0x1.3f13fb89e96f4p-1, 0x1.ecf8b492644f0p-56},
      {0x1.445065b795b56p-1, -0x1.f76d0163f79c8p-56},
      {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
      {0x1.4e8de5bb6ec04p-1, 0x1.4a33dbeb3796cp-55},
      {0x1.538f57b89061fp-1, -0x1.1bb74abda520cp-55},
      {0x1.587d81f732fbbp-1, -0x1.5e5c9d8c5a950p-56},
      {0x1.5d58987169b18p-1, 0x1.0028e4bc5e7cap-57},
      {0x1.6220d115d7b8ep-1, -0x1.2b785350ee8c1p-57},
      {0x1.66d663923e087p-1, -0x1.6ea6febe8bbbap-56},
      {0x1.6b798920b3d99p-1, -0x1.a80386188c50ep-55},
      {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
      {0x1.748978fba8e0fp-1, 0x1.7b2a6165884a1p-59},
      {0x1.78f6bbd5d315ep-1, 0x1.406a089803740p-55},
      {0x1.7d528289fa093p-1, 0x1.560821e2f3aa9p-55},
      {0x1.819d0b7158a4dp-1, -0x1.bf76229d3b917p-56},
      {0x1.85d69576cc2c5p-1, 0x1.6b66e7fc8b8c3p-57},
      {0x1.89ff5ff57f1f8p-1, -0x1.55b9a5e177a1bp-55},
      {0x1.8e17aa99cc05ep-1, -0x1.ec182ab042f61p-56},
      {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55},
  };
  return kAtanTab[k];
}

constexpr double kPiHi = 0x1.921fb54442d18p+1;
constexpr double kPiLo = 0x1.1a62633145c07p-53;
constexpr double kPio2Hi = 0x1.921fb54442d18p+0;
constexpr double kPio2Lo = 0x1.1a62633145c07p-54;
constexpr double kThirdHi = 0x1.5555555555555p-2, kThirdLo = 0x1.5555555555555p-56;
constexpr double kFifthHi = 0x1.999999999999ap-3, kFifthLo = -0x1.999999999999ap-57;
constexpr double kSeventhHi = 0x1.2492492492492p-3, kSeventhLo = 0x1.2492492492492p-57;
constexpr double kInv9 = 0x1.c71c71c71c71cp-4;
constexpr double kInv11 = 0x1.745d1745d1746p-4;
constexpr double kInv13 = 0x1.3b13b13b13b14p-4;
constexpr double kInv15 = 0x1.1111111111111p-4;

// k = round(64 q) biased down by 10^-4 (k >= 1 implies 64 q >= 0.5001), so c = k/64 lies in
// [q/1.5001, q/0.5001]: within a factor 2 of q (Sterbenz for a - c b below) and
// |a/b - c| <= 0.5001/64 (1 + 2^-52), hence |r| = |a/b - c|/(1 + c a/b) < 2^-6.99.
// q <= 1 + 2^-50 gives k <= 64.
REPMODE_HD int atan_index(double q) { return int(q * 64.0 + 0.4999); }

// Rounding test tolerance of the fast paths (double ulps; eps = 2^-44).
constexpr uint64_t kAtanFastTol = 512;
constexpr double kAtanFastEps = 0x1p-44;

// ---------------- fast path (double, no fma) ----------------

// atan(a/b) for doubles 0 <= a <= b (1 + 2^-50), b > 0, a/b >= 2^-300 or a == 0. u = 2^-53.
// Error (relative to V = atan(a/b)):
//  * num = RN(a - RN(c b)): when a and b are float-valued, c b is exact (7 + 24 bits) and
//    the subtraction exact (Sterbenz, c b in [a/1.5, a/0.5002]) -- or num = a (k = 0).
//    Otherwise |num - (a - c b)| <= u c b <= 2.0004 u a.
//  * den = RN(b + RN(c a)): relative error <= u (float-valued) or 2u.
//  * r = RN(num / den): |r - r*| <= (2u + u^2)|r*| (float-valued) plus, in general,
//    2.0004 u a / den + u |r*| more; r* = (a - c b)/(b + c a) exactly, so atan(c) + atan(r*) = V.
//  * p = r + (r z) Q, z = RN(r^2) <= 2^-13.98, Q = -1/3 + z (1/5 - z/7) in double: the
//    Taylor truncation (r^9/9 < 2^-59 |r|), Q's and the products' roundings (< 6u of a term
//    < 2^-15.5 |r|) and the coefficient roundings add < 0.03 u |r|; the final addition u |p|.
//    atan' <= 1 carries r's error into p unchanged: |p - atan(r*)| <= 3.03 u |r*| (float-
//    valued) or + 2.0004 u a/den + u |r*| (general).
//  * v = T_hi + (T_lo + p): two roundings (u |r| + u v) and the table (2^-106 V).
// With |r*| <= 1.002 V when k >= 1 (V >= atan(0.5001/64), |r*| <= 0.5001/64) and r* ~ V when
// k = 0, and a/den <= q/(1 + c q) <= 1.273 V (q <= 1): |v - V| <= 5.1 u V (float-valued) or
// 5.1 u V + 2.55 u V + 1.01 u V = 8.7 u V (general).
REPMODE_HD double atan_core_fast(double a, double b) {
  double q = a / b;
  int k = atan_index(q);
  double c = double(k) * 0.015625;
  double num = a - c * b;
  double den = b + c * a;
  double r = num / den;
  double z = r * r;
  double Q = -kThirdHi + z * (kFifthHi - z * kSeventhHi);
  double p = r + (r * z) * Q;
  const double* t = atan_row(k);
  return t[0] + (t[1] + p);
}

// The octant: v = atan(min/max) in [0, pi/4 (1 + 2^-50)] -> atan2 of (|y|, x) in [0, pi].
// swap: |y| > |x| (v = atan(|x|/|y|)); xneg: x's sign bit. Error of the result w against the
// exact octant value, given |v - V| <= e V: pi/2 - v and pi - v and pi/2 + v add two
// roundings (u |v| + u w) and the constants' truncation (2^-106 w); since w >= pi/4 >= V in
// those cases (w >= 3V, 2V when xneg), the relative error is <= e V/w + u V/w + u + 2^-100
// <= e + 2.01 u. With e = 8.7 u: < 11.4 u; the identity case keeps e.
REPMODE_HD double octant_fast(double v, bool swap, bool xneg) {
  if (!swap) return xneg ? (kPiLo - v) + kPiHi : v;
  return xneg ? (kPio2Lo + v) + kPio2Hi : (kPio2Lo - v) + kPio2Hi;
}

// ---------------- accurate path (double-double) ----------------

// sqrt(d) for d.hi > 0 normal (d normalised): s = RN(sqrt(d.hi)), the remainder d - s^2
// (d.hi - s^2 exact via two_prod and Sterbenz), Newton's correction rem / (2s). Relative
// error < 2^-103.
REPMODE_HD DD dd_sqrt(DD d) {
  double s = sqrt_of(d.hi);
  DD p = two_prod(s, s);
  double rem = ((d.hi - p.hi) - p.lo) + d.lo;
  return fast_two_sum(s, rem / (2.0 * s));
}

// 1 - x^2 as a normalised double-double for |x| < 1 (x^2 exact by two_prod, then the exact
// double-double subtraction dd_add: relative error < 2^-104).
REPMODE_HD DD one_minus_square(double x) {
  DD p = two_prod(x, x);
  return dd_add(DD{1.0, 0.0}, DD{-p.hi, -p.lo});
}

// atan(a/b) in double-double for a >= 0, b > 0 with a.hi <= b.hi (1 + 2^-50), normalised
// inputs, a.hi / b.hi >= 2^-300 or a == 0, b.hi in [2^-150, 2^300]. Relative error < 2^-95:
// num = a - c b (two_prod inside dd_mul_d, dd_add: absolute < 2^-103 b), den = b + c a
// (< 2^-104 relative), dd_div (< 2^-101.5): |R - r*| < 2^-100.9 (a/b + |r*|) <= 2^-100.5 V
// (as in the fast path). atan(R) = R + R^3 S(R^2), S = -1/3 + z/5 - z^2/7 + z^3 T, T = 1/9
// - z/11 + z^2/13 - z^3/15 (truncation r^17/17 < 2^-118 |r|), z = R^2 <= 2^-13.98: the
// double-double Horner steps each < 2^-103 of S, T in double (< 2^-50 of a term < 2^-44
// of S), so R^3 S carries < 2^-92 of itself, which is < 2^-13.98/3 of R: < 2^-107 R. Sum with
// atan(c) (table < 2^-106): < 2^-95 V in all.
REPMODE_HD DD atan_core_accurate(DD a, DD b) {
  double q = a.hi / b.hi;
  int k = atan_index(q);
  double c = double(k) * 0.015625;
  DD cb = dd_mul_d(b, c);
  DD num = dd_add(a, DD{-cb.hi, -cb.lo});
  DD den = dd_add(b, dd_mul_d(a, c));
  DD r = dd_div(num, den);
  DD z = dd_mul(r, r);
  double zh = z.hi;
  double T = kInv9 - zh * (kInv11 - zh * (kInv13 - zh * kInv15));
  DD s = dd_add(DD{-kSeventhHi, -kSeventhLo}, DD{zh * T, 0.0});
  s = dd_add(DD{kFifthHi, kFifthLo}, dd_mul(z, s));
  s = dd_add(DD{-kThirdHi, -kThirdLo}, dd_mul(z, s));
  DD at = dd_add(r, dd_mul(dd_mul(r, z), s));
  const double* t = atan_row(k);
  return dd_add(DD{t[0], t[1]}, at);
}

// octant_fast in double-double: constants pi, pi/2 to 2^-107, one dd_add (< 2^-104).
REPMODE_HD DD octant_accurate(DD v, bool swap, bool xneg) {
  DD nv = {-v.hi, -v.lo};
  if (!swap) return xneg ? dd_add(DD{kPiHi, kPiLo}, nv) : v;
  return dd_add(DD{kPio2Hi, kPio2Lo}, xneg ? v : nv);
}

// Rounds the octant result w (>= 0) of either path to float32 with y's sign; path
// diagnostics as in the other headers (1 fast, 2 accurate, 3 accurate but undecided).
REPMODE_HD_COLD float atan_accurate_round(DD w, uint32_t sign, int* path) {
  if (w.hi == 0.0) {
    if (path) *path = 2;
    return float_from_bits(sign);
  }
  bool hard;
  uint32_t bits = round_to_f32(w.hi, w.lo, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(bits | sign);
}

// One exact case: a tiny quotient q = a/b that is exactly a float32 rounding boundary. The
// quotient of two float32 values has at most 24 significant bits unless it is inexact, so
// this happens only for subnormal results (q = (2n+1) 2^-150, e.g. atan2(2^-149, 2)); then
// atan(q) = q - q^3/3 + ... lies just below the boundary (by q^3/3, far inside the accurate
// path's bound) and rounds down. Recognised exactly: q = RN(a/b) with a - q b == 0 (two_prod)
// and q equidistant from the two float32 values around it.
REPMODE_HD_COLD float atan2f_accurate_path(double a, double b, bool swap, bool xneg, uint32_t sign, int* path) {
  DD v = atan_core_accurate(DD{a, 0.0}, DD{b, 0.0});
  float out = atan_accurate_round(octant_accurate(v, swap, xneg), sign, path);
  if (path && *path != 3) return out;
  if (!path) {  // recompute the test (the diagnostics pointer is optional)
    int p;
    out = atan_accurate_round(octant_accurate(v, swap, xneg), sign, &p);
    if (p != 3) return out;
  }
  if (swap || xneg) return out;
  double d = a / b;
  DD e = two_prod(d, b);
  if (e.hi != a || e.lo != 0.0) return out;
  bool h;
  uint32_t near = round_to_f32(d, 0.0, 0.0, &h);  // d <= 1: near + 1 is finite
  uint32_t below = (near != 0 && f32_to_double_exact(near) > d) ? near - 1 : near;
  double vb = below == 0 ? 0.0 : f32_to_double_exact(below);
  if (d - vb != f32_to_double_exact(below + 1) - d) return out;
  if (path) *path = 2;
  return float_from_bits(below | sign);
}

// The fast path's rounding: w >= 0 within 11.4 u of the exact value. Returns false (and
// leaves *out alone) when the accurate path must decide.
REPMODE_HD bool atan_fast_round(double w, uint32_t sign, float* out) {
  if (w == 0.0) {  // a == 0: the exact result is 0 (or pi, pi/2, which are not 0)
    *out = float_from_bits(sign);
    return true;
  }
  if (w >= 0x1p-125) {
    if (f32_boundary_within(w, kAtanFastTol)) return false;
    *out = float_from_bits(bits_of(float(w)) | sign);
    return true;
  }
  bool hard;  // subnormal float32 results (atan2 of a tiny quotient): integer rounding
  uint32_t bits = round_to_f32(w, 0.0, kAtanFastEps, &hard);
  if (hard) return false;
  *out = float_from_bits(bits | sign);
  return true;
}

// atan2 of float32 (y, x). Special values as C99 (and torch): NaN -> canonical NaN;
// atan2(+-0, +0 or x > 0) = +-0, atan2(+-0, -0 or x < 0) = +-pi, atan2(y != 0, +-0) = +-pi/2,
// infinities as the limits (+-pi/4, +-3pi/4 for two infinities). All of them come out of
// the same octant arithmetic: an infinity is mapped to 1 and the finite operand to 0 (two
// infinities: both 1), so pi, pi/2, pi/4 and 3pi/4 are rounded by the same tested steps.
REPMODE_HD float cr_atan2f_impl(float yf, float xf, int* path) {
  uint32_t uy = bits_of(yf), ux = bits_of(xf);
  uint32_t ay = uy & 0x7fffffffu, ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ay > 0x7f800000u || ax > 0x7f800000u) return Canonical<float>::nan();
  uint32_t sign = uy & 0x80000000u;
  bool xneg = (ux >> 31) != 0;
  double A, B;
  if (ay == 0x7f800000u || ax == 0x7f800000u) {
    A = ay == 0x7f800000u ? 1.0 : 0.0;
    B = ax == 0x7f800000u ? 1.0 : 0.0;
  } else {
    A = ay == 0 ? 0.0 : f32_to_double_exact(ay);
    B = ax == 0 ? 0.0 : f32_to_double_exact(ax);
  }
  bool swap = A > B;
  double a = swap ? B : A, b = swap ? A : B;
  if (b == 0.0) return float_from_bits((xneg ? 0x40490fdbu : 0u) | sign);  // +-0 or +-pi
  double w = octant_fast(atan_core_fast(a, b), swap, xneg);
  float out;
  if (atan_fast_round(w, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return atan2f_accurate_path(a, b, swap, xneg, sign, path);
}

// asin / acos of float32: the octant arithmetic on (|x|, sqrt(1 - x^2)) or (sqrt(1 - x^2), |x|).
// For 2^-26 <= |x| < 1 (asin: 2^-12, acos: 2^-26 are the smallest reaching here), 1 - |x|
// and 1 + |x| are exact in double (at most 50 significant bits), so
// s = RN(sqrt(RN((1 - |x|)(1 + |x|)))) is within 1.5 u of sqrt(1 - x^2); the ratio
// the core sees is off by <= 1.5 u relative, which moves atan by at most 1.5 u of itself
// (t/((1 + t^2) atan t) <= 1) -- or, in the swapped octant, by <= 1.5 u/2 absolute against a
// result >= pi/4. With the core's general 8.7 u and the octant step: < 13 u < 2^-49.2.
REPMODE_HD_COLD float asinacosf_accurate_path(double ax, bool acos, bool xneg, uint32_t sign, int* path) {
  DD s = ax == 1.0 ? DD{0.0, 0.0} : dd_sqrt(one_minus_square(ax));
  DD A = acos ? s : DD{ax, 0.0};
  DD B = acos ? DD{ax, 0.0} : s;
  bool swap = A.hi > B.hi;
  DD v = swap ? atan_core_accurate(B, A) : atan_core_accurate(A, B);
  return atan_accurate_round(octant_accurate(v, swap, xneg), sign, path);
}

REPMODE_HD float asinacosf_impl(float xf, bool acos, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x3f800000u) return Canonical<float>::nan();  // |x| > 1, inf, NaN
  if (!acos) {
    // |x| < 2^-12: asin(x) = x + x^3/6 + ..., and x^3/6 < 2^-24/6 |x| is below half the
    // spacing above |x| (>= 2^-25 |x|): rounds to x. Keeps +-0 and the subnormals.
    if (ax < 0x39800000u) return xf;
  } else if (ax < 0x32800000u) {
    // |x| < 2^-26: acos(x) = pi/2 - x - ..., within 2^-26 of pi/2; RN32(pi/2) = pi/2 +
    // 4.37e-8 and the boundaries around it are 5.96e-8 away from it: rounds to RN32(pi/2).
    return float_from_bits(0x3fc90fdbu);
  }
  bool xneg = (ux >> 31) != 0;
  double a = double(float_from_bits(ax));  // normal: |x| >= 2^-26
  double s = sqrt_of((1.0 - a) * (1.0 + a));
  double A = acos ? s : a, B = acos ? a : s;
  bool swap = A > B;
  double v = swap ? atan_core_fast(B, A) : atan_core_fast(A, B);
  // asin: octant (swap, x >= 0) with y's sign = x's; acos: x's sign picks the octant, result >= 0.
  uint32_t sign = acos ? 0u : (ux & 0x80000000u);
  bool oneg = acos ? xneg : false;
  double w = octant_fast(v, swap, oneg);
  float out;
  if (atan_fast_round(w, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return asinacosf_accurate_path(a, acos, oneg, sign, path);
}

// ---------------- float64 ----------------

// |x| * 2^s exactly, for the positive bits ab of a finite double, when the result is a
// normal double (integer operations only: no DAZ dependence).
REPMODE_HD double scaled_abs(uint64_t ab, int s) {
  if ((ab >> 52) == 0) return double(int64_t(ab)) * pow2(s - 1074);  // subnormal: integer * 2^-1074
  return double_from_bits(ab + (uint64_t(int64_t(s)) << 52));
}

// The double-double octant result w >= 0 with the given sign, rounded to double.
REPMODE_HD double signed_hi(DD w, uint64_t sign) { return double_from_bits(bits_of(w.hi) | sign); }

}  // namespace atan_detail
}  // namespace math_detail

// Correctly rounded atan2 for float32 (cr_atan2f_impl).
REPMODE_HD float cr_atan2f(float y, float x) { return math_detail::atan_detail::cr_atan2f_impl(y, x, nullptr); }

// Correctly rounded atan for float32: atan(x) = atan2(x, 1) exactly. atan(+-0) = +-0,
// atan(+-inf) = +-RN(pi/2), NaN -> canonical NaN.
REPMODE_HD float cr_atanf(float x) { return math_detail::atan_detail::cr_atan2f_impl(x, 1.0f, nullptr); }

// Correctly rounded asin / acos for float32. |x| > 1 -> canonical NaN; asin(+-0) = +-0,
// acos(1) = +0, acos(-1) = RN(pi).
REPMODE_HD float cr_asinf(float x) { return math_detail::atan_detail::asinacosf_impl(x, false, nullptr); }
REPMODE_HD float cr_acosf(float x) { return math_detail::atan_detail::asinacosf_impl(x, true, nullptr); }

// atan2 for float64: the accurate path on the exact operands, rounded once (< 0.5 ulp +
// 2^-95 relative); special values as cr_atan2f; a quotient below 2^-62: see the file comment.
REPMODE_HD double repmode_atan2(double y, double x) {
  using namespace math_detail;
  using namespace math_detail::atan_detail;
  uint64_t uy = bits_of(y), ux = bits_of(x);
  uint64_t ay = uy & 0x7fffffffffffffffull, ax = ux & 0x7fffffffffffffffull;
  const uint64_t kInf = 0x7ff0000000000000ull;
  if (ay > kInf || ax > kInf) return Canonical<double>::nan();
  uint64_t sign = uy & 0x8000000000000000ull;
  bool xneg = (ux >> 63) != 0;
  bool swap;
  DD a, b;
  if (ay == kInf || ax == kInf || ay == 0 || ax == 0) {
    double A = ay == kInf ? 1.0 : (ax == kInf || ay == 0 ? 0.0 : 1.0);
    double B = ax == kInf ? 1.0 : (ay == kInf || ax == 0 ? 0.0 : 1.0);
    if (A == 0.0 && B == 0.0) return double_from_bits(bits_of(xneg ? kPiHi : 0.0) | sign);
    swap = A > B;
    a = DD{swap ? B : A, 0.0};
    b = DD{swap ? A : B, 0.0};
  } else {
    swap = ay > ax;
    uint64_t ba = swap ? ax : ay, bb = swap ? ay : ax;  // bits of min, max
    int ea = int(ba >> 52), eb = int(bb >> 52);
    if (eb - ea > 62) {
      // quotient < 2^-61: atan(q) = q (1 - q^2/3 ...) rounds like q (see the file comment);
      // the octants pi/2 -+ q, pi - q round to RN(pi/2), RN(pi).
      if (!swap && !xneg) return double_from_bits(bits_of(double_from_bits(ba) / double_from_bits(bb)) | sign);
      return double_from_bits(bits_of(swap ? kPio2Hi : kPiHi) | sign);
    }
    int s = eb == 0 ? 1074 : 1023 - eb;  // b to [1, 2) (or an integer < 2^52 if subnormal)
    if (eb == 0) {
      a = DD{double(int64_t(ba)), 0.0};
      b = DD{double(int64_t(bb)), 0.0};
    } else {
      a = DD{scaled_abs(ba, s), 0.0};
      b = DD{scaled_abs(bb, s), 0.0};
    }
  }
  DD v = atan_core_accurate(a, b);
  return signed_hi(octant_accurate(v, swap, xneg), sign);
}

// atan for float64 (< 0.5 ulp + 2^-95): |x| < 2^-27 gives x (x^3/3 is below half the
// spacing below x), |x| > 2^60 gives +-RN(pi/2) (pi/2 - 1/|x| stays within the rounding
// interval of RN(pi/2), which is 6.1e-17 below pi/2 with boundaries 1.1e-16 away).
REPMODE_HD double repmode_atan(double x) {
  using namespace math_detail;
  using namespace math_detail::atan_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  uint64_t sign = ux & 0x8000000000000000ull;
  if (ax < 0x3e40000000000000ull) return x;
  if (ax > 0x43b0000000000000ull) return double_from_bits(bits_of(kPio2Hi) | sign);
  double a = double_from_bits(ax);
  bool swap = a > 1.0;
  DD v = swap ? atan_core_accurate(DD{1.0, 0.0}, DD{a, 0.0}) : atan_core_accurate(DD{a, 0.0}, DD{1.0, 0.0});
  return signed_hi(octant_accurate(v, swap, false), sign);
}

// asin / acos for float64 (< 0.5 ulp + 2^-95): the octant arithmetic on |x| and
// sqrt(1 - x^2) (one_minus_square, dd_sqrt: < 2^-103). asin: |x| < 2^-27 gives x; acos:
// |x| < 2^-55 gives RN(pi/2). |x| > 1 and NaN give the canonical NaN.
REPMODE_HD double repmode_asinacos(double x, bool acos) {
  using namespace math_detail;
  using namespace math_detail::atan_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x3ff0000000000000ull) return Canonical<double>::nan();
  if (!acos && ax < 0x3e40000000000000ull) return x;
  if (acos && ax < 0x3c80000000000000ull) return kPio2Hi;
  bool xneg = (ux >> 63) != 0;
  double a = double_from_bits(ax);
  DD s = a == 1.0 ? DD{0.0, 0.0} : dd_sqrt(one_minus_square(a));
  DD A = acos ? s : DD{a, 0.0};
  DD B = acos ? DD{a, 0.0} : s;
  bool swap = A.hi > B.hi;
  DD v = swap ? atan_core_accurate(B, A) : atan_core_accurate(A, B);
  DD w = octant_accurate(v, swap, acos ? xneg : false);
  return signed_hi(w, acos ? 0ull : (ux & 0x8000000000000000ull));
}
REPMODE_HD double repmode_asin(double x) { return repmode_asinacos(x, false); }
REPMODE_HD double repmode_acos(double x) { return repmode_asinacos(x, true); }

}  // namespace repmode

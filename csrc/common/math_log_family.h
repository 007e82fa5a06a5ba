// log2, log1p, rsqrt, sqrt and reciprocal whose bits are the same on every CPU and GPU.
//
//   float  cr_log2f(float)          correctly rounded (round to nearest even), all inputs
//   float  cr_log1pf(float)         correctly rounded, all inputs
//   float  cr_rsqrtf(float)         correctly rounded, all inputs
//   float  cr_sqrtf(float)          IEEE square root (correctly rounded by definition)
//   float  cr_reciprocalf(float)    IEEE 1/x (correctly rounded by definition)
//   double repmode_log2(double)     < 0.56 ulp proven (exact at powers of two)
//   double repmode_log1p(double)    < 0.56 ulp proven
//   double repmode_rsqrt(double)    < 0.51 ulp proven
//   double repmode_sqrt(double)     IEEE square root
//   double repmode_reciprocal(double)  IEEE 1/x
//
// The rules of math.h apply: IEEE-754 basic operations and explicit repmode_fma only (the
// fma only on rarely taken paths and in repmode_rsqrt), -ffp-contract=off / --fmad=false,
// no fast-math, canonical NaNs, and no subnormal intermediate in any decisive operation, so
// FTZ/DAZ do not change a result: subnormal inputs are decoded with integer operations and
// subnormal outputs are encoded with integer operations (reciprocal of a huge x).
//
// Constants, computed with mpmath at 400 bits of precision:
//   kInvLn2    = 1/ln2 rounded to double;  kInvLn2Lo = (1/ln2 - kInvLn2) rounded to double
//   kInvLn2H26 = 1/ln2 rounded to 26 significant bits;
//   kInvLn2T26 = (1/ln2 - kInvLn2H26) rounded to double (|1/ln2 - H26 - T26| < 2^-87.2/ln2)
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
// (sqrt_of(float) / sqrt_of(double), the IEEE square root on host and device, is in math.h.)

namespace repmode {
namespace math_detail {

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kInvLn2Lo = 0x1.777d0ffda0d24p-56;
constexpr double kInvLn2H26 = 0x1.7154768000000p+0;
constexpr double kInvLn2T26 = -0x1.6a3e80f444178p-27;

// (hi + lo) / ln2 as a normalised double-double, without fma (the fast paths must not
// depend on -mfma). Requires hi = RN(hi + lo), |hi| < 2^1000 (no overflow in the split)
// and |hi| > 2^-900 or hi == 0 (no subnormal partial product).
//
// Veltkamp's split hi = h1 + h2 (exact; h1 has 26 significant bits, h2 at most 26 and
// |h2| <= 2^-26 |hi|) makes h1*H26 and h2*H26 exact (<= 52 bits each), and
// fast_two_sum(p1, p2) is exact (|p1| >= |p2|). What is rounded or dropped, relative to
// |(hi + lo)/ln2|: the constant split (2^-87.2), hi*T26 (|.| < 2^-26, rounding 2^-80),
// lo*kInvLn2 (constant 2^-106, rounding 2^-107), the sum of those two (< 2^-25, 2^-79)
// and its sum with s.lo (< 2^-24.9, rounding 2^-78). In all < 2^-77 relative, and the
// result is hi' = RN(hi' + lo') (the last step is fast_two_sum with |s.hi| >= |tail|).
REPMODE_HD DD div_ln2_fast(DD y) {
  double c = y.hi * 134217729.0;  // 2^27 + 1
  double h1 = c - (c - y.hi);
  double h2 = y.hi - h1;
  DD s = fast_two_sum(h1 * kInvLn2H26, h2 * kInvLn2H26);
  double tail = s.lo + (y.hi * kInvLn2T26 + y.lo * kInvLn2);
  return fast_two_sum(s.hi, tail);
}

// Rounds a nonzero double-double v = y.hi + y.lo (y.hi = RN(v), |v| in the float32 normal
// range) to float32 bits, with *hard set when v is within eps |v| of a rounding boundary.
REPMODE_HD uint32_t round_signed_to_f32(DD y, double eps, bool* hard) {
  uint64_t sign = bits_of(y.hi) & 0x8000000000000000ull;
  double hi = abs_of(y.hi);
  double lo = double_from_bits(bits_of(y.lo) ^ sign);
  return round_to_f32(hi, lo, eps, hard) | uint32_t(sign >> 32);
}

// x = M * 2^e with M in [1, 2), for a positive finite nonzero float32 x given by its bits;
// subnormals through the exact int -> double conversion (no FTZ/DAZ dependence).
REPMODE_HD double split_float(uint32_t ux, int& e) {
  if (ux < 0x00800000u) {
    double d = double(int32_t(ux));  // x = ux * 2^-149
    uint64_t db = bits_of(d);
    e = int(db >> 52) - 1023 - 149;
    return double_from_bits((db & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  }
  e = int(ux >> 23) - 127;
  return double_from_bits((uint64_t(ux & 0x7fffffu) << 29) | (uint64_t(1023) << 52));
}

// The float32 value of positive finite bits ux as an (always normal) double.
REPMODE_HD double f32_to_double_exact(uint32_t ux) {
  if (ux < 0x00800000u) return double(int32_t(ux)) * 0x1p-149;  // exact, >= 2^-149
  return double(float_from_bits(ux));
}

// ============================== log2 ==============================

REPMODE_HD_COLD float log2f_accurate_path(double M, int e, int* path) {
  // log_accurate (< 2^-88) times 1/ln2 as a double-double (constant < 2^-107, dd_mul
  // < 2^-104): < 2^-87.9 in all, inside kAccurateEps.
  DD y = dd_mul(log_accurate(M, e), DD{kInvLn2, kInvLn2Lo});
  bool hard;
  uint32_t b = round_signed_to_f32(y, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

// log2(x) = log(x) / ln2. log_fast (< 2^-57.4 relative) and div_ln2_fast (< 2^-77) give
// hi + lo within 2^-57.3 |log2 x| with hi = RN(hi + lo), inside the 2^-54 is_f32_boundary
// assumes: when hi is not a boundary, every value within the bound -- log2(x) among them --
// rounds like hi. Otherwise the accurate path decides. log2(x) is rational only at powers
// of two, where it is an integer (a float32, never a boundary, so the accurate path's test
// cannot fail there); elsewhere it is transcendental, hence never exactly a boundary, and
// csrc/verify/check_math.cpp confirms on all inputs that the accurate path always decides. The
// result is never subnormal or infinite (2^-24.5 < |log2 x| <= 149 for x != 1), and
// log2(1) = +0 comes out of the same arithmetic (r = 0, H = 0: every term is +0).
REPMODE_HD float cr_log2f_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  if (path) *path = 0;
  if ((ux & 0x7fffffffu) > 0x7f800000u) return Canonical<float>::nan();
  if ((ux & 0x7fffffffu) == 0) return float_from_bits(0xff800000u);  // log2(+-0) = -inf
  if (ux >> 31) return Canonical<float>::nan();                      // x < 0
  if (ux == 0x7f800000u) return xf;                                  // log2(+inf) = +inf
  int e;
  double M = split_float(ux, e);
  DD y = div_ln2_fast(log_fast(M, e));
  if (!is_f32_boundary(y.hi)) {
    if (path) *path = 1;
    return float(y.hi);
  }
  return log2f_accurate_path(M, e, path);
}

// ============================== log1p ==============================

REPMODE_HD_COLD float log1pf_accurate_path(double x, int* path) {
  // 1 + x = u.hi + u.lo exactly (u.lo != 0 only for x >= 2^53, where |u.lo| <= u.hi/2^53).
  // log(u.hi + u.lo) = log(u.hi) + u.lo/u.hi - t^2/2 + ..., t = u.lo/u.hi: the dropped
  // t^2/2 < 2^-107 and the rounding of the quotient < 2^-106 are below 2^-111 relative
  // (|log1p(x)| > 36 there). With log_accurate (< 2^-88) the error is < 2^-87.9.
  DD u = two_sum(1.0, x);
  int e;
  double M = split_double(bits_of(u.hi), e);
  DD y = log_accurate(M, e);
  y = dd_add(y, DD{u.lo / u.hi, 0.0});
  bool hard;
  uint32_t b = round_signed_to_f32(y, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

// log1p(x) = log(u) with u = 1 + x rounded to double.
//  * |x| < 2^-25 (also +-0 and the subnormals, returned untouched): log1p(x) = x - x^2/2 +
//    x^3/3 - ..., lies strictly between x and the midpoint next to x on the side of -x^2/2
//    (that midpoint is at least 2^-25 |x| away; the offset is below x^2/2 (1 + |x|) <
//    2^-26.9 |x|), so RN gives x.
//  * 2^-25 <= |x| < 2^53: u is exact (x is a multiple of 2^-48 and 1 + x < 2^53), so
//    log_fast(u) is within 2^-57.4 |log1p(x)|. For x < 0 near 0, u in [1/2, 1) falls in
//    row 127 (c = 1/2, table term 0): r = -|x|, no cancellation; for x > 0 near 0, row 0.
//  * x >= 2^53: u = RN(1 + x) differs from 1 + x by at most u/2^53, which moves the log by
//    at most 2^-53 < 2^-58.2 |log1p(x)|. Total < 2^-56.8, inside the 2^-54 of
//    is_f32_boundary.
// The rounding test then follows cr_logf: log1p(x) is transcendental for x != 0, so the
// accurate path (< 2^-87.9) decides what the fast test leaves, as the exhaustive check
// confirms. The result is never subnormal or infinite (2^-25.1 < |log1p x| < 89).
REPMODE_HD float cr_log1pf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  if (ax < 0x33000000u) return xf;                             // |x| < 2^-25: log1p(x) rounds to x (+-0 stay)
  if (ux == 0xbf800000u) return float_from_bits(0xff800000u);  // log1p(-1) = -inf
  if (ux > 0xbf800000u) return Canonical<float>::nan();        // x < -1 (and -inf)
  if (ux == 0x7f800000u) return xf;                            // log1p(+inf) = +inf
  double x = double(xf);                                       // normal: |x| >= 2^-25
  double u = 1.0 + x;                                          // in [2^-24, 2^128]
  int e = int(bits_of(u) >> 52) - 1023;
  double M = double_from_bits((bits_of(u) & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  DD y = log_fast(M, e);
  if (!is_f32_boundary(y.hi)) {
    if (path) *path = 1;
    return float(y.hi);
  }
  return log1pf_accurate_path(x, path);
}

// ============================== rsqrt ==============================

// The exact decision for rsqrt(x) near the float32 midpoint b (a double with 25
// significant bits): rsqrt(x) > b iff b^2 x < 1. b^2 is exact (50 bits; 2^-128 < b^2 <
// 2^149) and b^2 * x = p.hi + p.lo exactly (two_prod; b^2 x is near 1, so the fma's
// error term is far from the subnormals). Equality is impossible: b = B 2^k with B odd
// and B > 1, and B^2 * X (X the integer significand of x) is odd > 1, never a power of 2.
REPMODE_HD_COLD float rsqrtf_exact_path(double x, double y, int* path) {
  uint64_t base = bits_of(y) & ~uint64_t(0x1fffffff);
  double lo = double_from_bits(base);                 // the float32 below the midpoint (exact)
  double b = double_from_bits(base | 0x10000000ull);  // the midpoint
  DD p = two_prod(b * b, x);
  bool above = p.hi < 1.0 || (p.hi == 1.0 && p.lo < 0.0);  // rsqrt(x) > b
  if (path) *path = 2;
  return float(above ? lo + 2.0 * (b - lo) : lo);  // both are float32 values: exact
}

// rsqrt(x) = 1/sqrt(x). With X = x as an exact double (always normal), s = RN(sqrt(X)) and
// y = RN(1/s): y = rsqrt(x) (1 + d2)/(1 + d1), |d1|, |d2| <= 2^-53, so |y - rsqrt(x)| <
// 2^-52 (1 + 2^-52) y < 2 ulp(y) (y's double spacing). A float32 midpoint b (low 29 bits
// of a double equal to 0x10000000; never within 2^-25 relative of a power of two, so it
// sits in y's binade whenever it is that close) can only separate y from rsqrt(x), or
// equal y, if |y - b| < 2 ulp(y), i.e. if y's low 29 bits are within 1 of 0x10000000;
// the test takes [-2, 2] for margin. Otherwise y and rsqrt(x) lie between the same two
// midpoints and (float)y is the correctly rounded rsqrt(x). The rest (about 5 in 2^29) is
// decided exactly by rsqrtf_exact_path. Results lie in (2^-64, 2^74.5]: always normal.
REPMODE_HD float cr_rsqrtf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  if (path) *path = 0;
  if ((ux & 0x7fffffffu) > 0x7f800000u) return Canonical<float>::nan();
  if (ux == 0) return float_from_bits(0x7f800000u);            // rsqrt(+0) = +inf
  if (ux == 0x80000000u) return float_from_bits(0xff800000u);  // rsqrt(-0) = -inf
  if (ux >> 31) return Canonical<float>::nan();                // x < 0
  if (ux == 0x7f800000u) return 0.0f;                          // rsqrt(+inf) = +0
  double x = f32_to_double_exact(ux);
  double y = 1.0 / sqrt_of(x);
  uint32_t low = uint32_t(bits_of(y)) & 0x1fffffffu;
  if (low - 0x0ffffffeu > 4u) {  // low outside [0x10000000 - 2, 0x10000000 + 2]
    if (path) *path = 1;
    return float(y);
  }
  return rsqrtf_exact_path(x, y, path);
}

}  // namespace math_detail

// Correctly rounded log2 for float32. NaN and x < 0 -> canonical NaN; log2(+-0) = -inf;
// log2(+inf) = +inf; log2(2^k) = k exactly (log2(1) = +0).
REPMODE_HD float cr_log2f(float x) { return math_detail::cr_log2f_impl(x, nullptr); }

// Correctly rounded log(1 + x) for float32. NaN and x < -1 -> canonical NaN;
// log1p(-1) = -inf; log1p(+inf) = +inf; log1p(+-0) = +-0; |x| < 2^-25 gives x.
REPMODE_HD float cr_log1pf(float x) { return math_detail::cr_log1pf_impl(x, nullptr); }

// Correctly rounded 1/sqrt(x) for float32. NaN and x < 0 -> canonical NaN;
// rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0.
REPMODE_HD float cr_rsqrtf(float x) { return math_detail::cr_rsqrtf_impl(x, nullptr); }

// IEEE square root (sqrt_of). NaN and x < 0 -> canonical NaN; sqrt(-0) = -0. A subnormal
// x = n 2^-149 is taken as (2n) 2^-150: sqrt(x) = sqrt(2n) 2^-75 with 2n <= 2^24 an exact
// float32 and the scaling exact (the result is normal), so DAZ cannot flush the input.
REPMODE_HD float cr_sqrtf(float x) {
  uint32_t ux = bits_of(x);
  if (ux - 1u < 0x007fffffu)  // 0 < x < 2^-126
    return sqrt_of(float(int32_t(2 * ux))) * 0x1p-75f;
  if (ux > 0x80000000u) return Canonical<float>::nan();  // x < 0 (not left to DAZ)
  return canon(sqrt_of(x));
}

// IEEE 1/x. NaN -> canonical NaN; 1/(+-0) = +-inf; 1/(+-inf) = +-0. Inputs with a
// subnormal 1/x or a subnormal x avoid subnormal operands and results (FTZ/DAZ):
//  * 0 < |x| < 2^-126: 1/X in double, X = |x| exact and normal, rounded once to float32 by
//    the conversion (a quotient of 24-bit numbers, so rounding first to 53 bits is
//    innocuous: 53 >= 2*24 + 2); results above the float32 range give +inf as IEEE does.
//  * |x| > 2^126: q = RN53(1/X) is a normal double in (2^-128, 2^-126); it is rounded to
//    the subnormal grid 2^-149 with integer arithmetic. Again innocuous: m X is a multiple
//    of 2^-150 * 2^103 for every midpoint m of that grid, so |1/X - m| = |1 - m X|/X >=
//    2^-47/2^128 unless equal, while |q - 1/X| <= 2^-180.
REPMODE_HD float cr_reciprocalf(float x) {
  uint32_t ux = bits_of(x);
  uint32_t ax = ux & 0x7fffffffu;
  if (ax - 0x00800000u <= 0x7e800000u - 0x00800000u)  // 2^-126 <= |x| <= 2^126
    return 1.0f / x;
  uint32_t sign = ux & 0x80000000u;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  if (ax == 0) return float_from_bits(sign | 0x7f800000u);
  if (ax == 0x7f800000u) return float_from_bits(sign);
  if (ax < 0x00800000u) return float_from_bits(bits_of(float(1.0 / math_detail::f32_to_double_exact(ax))) | sign);
  // |x| >= 2^126: 1/|x| <= 2^-126.
  double q = 1.0 / double(float_from_bits(ax));
  double d;
  double n = math_detail::round_to_integer(q * 0x1p149, 0.0, d);  // n <= 2^23
  return float_from_bits(uint32_t(n) | sign);
}

// log2 for float64, < 0.56 ulp: log_fast and div_ln2_fast give hi = RN(v) with v within
// 2^-57.3 relative of log2(x) (0.5 + 2^-4.3 ulp). Powers of two return their exponent
// exactly. NaN and x < 0 -> canonical NaN; log2(+-0) = -inf; log2(+inf) = +inf.
REPMODE_HD double repmode_log2(double x) {
  uint64_t ux = bits_of(x);
  if ((ux & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if ((ux & 0x7fffffffffffffffull) == 0) return double_from_bits(0xfff0000000000000ull);
  if (ux >> 63) return Canonical<double>::nan();
  if (ux == 0x7ff0000000000000ull) return x;
  int e;
  double M = math_detail::split_double(ux, e);
  if (M == 1.0) return double(e);
  return math_detail::div_ln2_fast(math_detail::log_fast(M, e)).hi;
}

// log(1 + x) for float64, < 0.56 ulp.
//  * |x| < 2^-54: x (as for float32: log1p(x) is within x^2/2 (1 + |x|) < 2^-55 |x| of x,
//    closer than the neighbouring midpoint), returned untouched (also +-0, subnormals).
//  * |x| < 2^-26: x + x^2 (-1/2 + x/3): the dropped x^4/4 and the roundings inside the
//    correction (|correction| < 2^-26 |x|) are below 2^-77 |x|; one final rounding.
//  * otherwise 1 + x = u.hi + u.lo exactly (two_sum); log1p(x) = log(u.hi) + t - t^2/2 ...
//    with t = u.lo/u.hi, |t| <= 2^-53. log_fast(u.hi) is within 2^-57.4 |log(u.hi)|,
//    t is rounded by 2^-106, t^2/2 < 2^-107 dropped; against |log1p(x)| > 2^-26.1 these
//    come to < 2^-57.3, then one final rounding of hi + (lo + t).
// NaN and x < -1 -> canonical NaN; log1p(-1) = -inf; log1p(+inf) = +inf.
REPMODE_HD double repmode_log1p(double x) {
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3c90000000000000ull) return x;  // |x| < 2^-54
  if (ux == 0xbff0000000000000ull) return double_from_bits(0xfff0000000000000ull);
  if (ux > 0xbff0000000000000ull) return Canonical<double>::nan();
  if (ux == 0x7ff0000000000000ull) return x;
  if (ax < 0x3e50000000000000ull)  // |x| < 2^-26
    return x + (x * x) * (-0.5 + x * 0x1.5555555555555p-2);
  math_detail::DD u = math_detail::two_sum(1.0, x);
  int e = int(bits_of(u.hi) >> 52) - 1023;  // u.hi >= 2^-53: normal
  double M = double_from_bits((bits_of(u.hi) & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  math_detail::DD y = math_detail::log_fast(M, e);
  return y.hi + (y.lo + u.lo / u.hi);
}

// 1/sqrt(x) for float64, < 0.51 ulp. x = m 4^k with m in [1, 4) (exact, also for
// subnormal x); y0 = RN(1/RN(sqrt(m))) is within 2^-52 (1 + 2^-52) of rsqrt(m) in
// (1/2, 1]. One Newton step y = y0 + y0 d/2 with d = 1 - m y0^2: y0^2 = p.hi + p.lo and
// m p.hi = q.hi + q.lo exactly (two_prod), 1 - q.hi exact (Sterbenz), so d (|d| < 2^-50.9)
// is computed with absolute error < 2^-104. The step's own error is 3/2 (2^-52)^2 rsqrt(m)
// plus the roundings of d/2 * y0 and of the sum (< 2^-105): the value before the last
// rounding is within 2^-101 of rsqrt(m), 2^-48 of an ulp. Then exact scaling by 2^-k.
// NaN and x < 0 -> canonical NaN; rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(+inf) = +0.
REPMODE_HD double repmode_rsqrt(double x) {
  using math_detail::DD;
  uint64_t ux = bits_of(x);
  if ((ux & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ux == 0) return double_from_bits(0x7ff0000000000000ull);
  if (ux == 0x8000000000000000ull) return double_from_bits(0xfff0000000000000ull);
  if (ux >> 63) return Canonical<double>::nan();
  if (ux == 0x7ff0000000000000ull) return 0.0;
  int e;
  double m = math_detail::split_double(ux, e);
  if (e & 1) {
    m *= 2.0;
    e -= 1;
  }
  double y0 = 1.0 / sqrt_of(m);
  DD p = math_detail::two_prod(y0, y0);
  DD q = math_detail::two_prod(m, p.hi);
  double d = (1.0 - q.hi) - (q.lo + m * p.lo);
  double y = y0 + y0 * (0.5 * d);
  return y * math_detail::pow2(-e / 2);  // -e/2 in [-511, 537]: the result is normal
}

// IEEE square root. NaN and x < 0 -> canonical NaN; sqrt(-0) = -0. Subnormal x = M 2^e is
// taken as (M or 2M) 2^(even e): the root of the first factor, in [1, 2), scaled exactly.
REPMODE_HD double repmode_sqrt(double x) {
  uint64_t ux = bits_of(x);
  if (ux - 1u < 0x000fffffffffffffull) {  // 0 < x < 2^-1022
    int e;
    double m = math_detail::split_double(ux, e);
    if (e & 1) {
      m *= 2.0;
      e -= 1;
    }
    return sqrt_of(m) * math_detail::pow2(e / 2);  // e/2 in [-537, -512]
  }
  if (ux > 0x8000000000000000ull) return Canonical<double>::nan();  // x < 0
  return canon(sqrt_of(x));
}

namespace math_detail {
// 1/x for |x| < 2^-1022 or |x| > 2^1022 without subnormal operands or results (FTZ/DAZ):
// x = M 2^e, q = RN(1/M) in (1/2, 1], with remainder r = 1 - q M exact (fma; the remainder
// of a correctly rounded quotient is representable). Large |x|: 1/|x| = (q + r/M) 2^-e is
// rounded to the subnormal grid 2^-1074 in units t = q 2^(1074-e) + tail: t's integer
// part is exact, and the tail (|r/M| < ulp(q)/2, scaled) can only matter when q's scaled
// value is exactly halfway between two integers: then its sign decides. Small |x|: q 2^-e
// is an exact scaling of the correctly rounded q while the result is finite, and the
// scaled exact value overflows in round-to-nearest exactly when q 2^-e >= 2^1024.
REPMODE_HD_COLD double reciprocal_edge(double x) {
  uint64_t ux = bits_of(x);
  uint64_t sign = ux & 0x8000000000000000ull;
  int e;
  double M = split_double(ux & 0x7fffffffffffffffull, e);
  double q = 1.0 / M;
  if (e < 0) {                                      // |x| < 2^-1022: e in [-1074, -1023]
    double v = (q * pow2(1023)) * pow2(-e - 1023);  // -e - 1023 in [0, 51]: may overflow
    return double_from_bits(bits_of(v) | sign);
  }
  // |x| >= 2^1022, e in [1022, 1023]: 1/|x| in (2^-1024, 2^-1022].
  double r = repmode_fma(-q, M, 1.0);
  double th = q * pow2(1074 - e);  // in (2^50, 2^52]: integers and halves exact
  double n = (th + 0x1p52) - 0x1p52;
  double d = th - n;
  if (d == 0.5 && r > 0.0) n += 1.0;
  if (d == -0.5 && r < 0.0) n -= 1.0;
  return double_from_bits(uint64_t(n) | sign);
}
}  // namespace math_detail

// IEEE 1/x. NaN -> canonical NaN; 1/(+-0) = +-inf; 1/(+-inf) = +-0. Subnormal x and x
// with a subnormal 1/x go through reciprocal_edge (the same values without FTZ/DAZ).
REPMODE_HD double repmode_reciprocal(double x) {
  uint64_t ax = bits_of(x) & 0x7fffffffffffffffull;
  if (ax - 0x0010000000000000ull <= 0x7fd0000000000000ull - 0x0010000000000000ull)
    return 1.0 / x;  // 2^-1022 <= |x| <= 2^1022
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax == 0 || ax == 0x7ff0000000000000ull) return 1.0 / x;  // exact specials
  return math_detail::reciprocal_edge(x);
}

}  // namespace repmode

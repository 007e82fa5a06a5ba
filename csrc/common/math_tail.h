// sinh, cosh, tan, log10, asinh, acosh and atanh with the same bits on every CPU and GPU.
//
//   float  cr_sinhf, cr_coshf, cr_tanf, cr_log10f, cr_asinhf, cr_acoshf, cr_atanhf
//                                     correctly rounded (round to nearest even), all inputs
//   double repmode_sinh, repmode_cosh, repmode_tan, repmode_log10, repmode_asinh,
//          repmode_acosh, repmode_atanh   reproducible, not always correctly rounded; their
//                                     error bounds are next to each function
//
// The rules of math.h apply unchanged (IEEE-754 basic operations, explicit repmode_fma only in
// the accurate paths and the float64 versions; -ffp-contract=off / --fmad=false; no libm;
// canonical NaNs; no subnormal intermediate in a decisive operation: the float32 inputs that
// could produce one are answered before any arithmetic).
//
// Method (float32). Each function is a short formula over the exp, log and sin/cos building
// blocks of math.h / math_trig.h / math_hyperbolic.h:
//   cosh a  = (E + 1/E)/2,          E = e^a                     (a = |x|)
//   sinh a  = a + a^3 P(a^2) (a < 1/4),  (E - 1/E)/2 (a >= 1/4)
//   tan x   = sin x / cos x          (one exact Payne-Hanek reduction each)
//   log10 x = log x / ln 10
//   asinh a = log1p(a + a^2/(1 + sqrt(1 + a^2))) (a < 1/2),  log(a + sqrt(a^2 + 1))
//   acosh x = log1p(d + sqrt(d (x + 1))), d = x - 1 (x < 2),  log(x + sqrt(x^2 - 1))
//   atanh a = (log(1 + a) - log(1 - a))/2   (1 +- a exact in double for float a >= 2^-12)
// evaluated once in double with a proven relative error bound (next to each function), then
// the rounding test f32_boundary_within; the inputs it flags go to an accurate path: the same
// formulas in double-double over exp_accurate / log_accurate / sin_accurate (error < 2^-85.5
// in every case, argued next to each), rounded with kAccurateEps = 2^-85. Away from the
// trivial inputs these values are transcendental (Lindemann-Weierstrass; log10 x is rational
// only at x = 10^k, where it is an integer, never a rounding boundary), so the accurate path
// decides; csrc/verify/math_cases/tail.cpp confirms it over all 2^32 inputs.
//
// Constants (mpmath, 400 bits): kInvLn10 = 1/ln 10 as hi + lo.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "math_atan.h"        // dd_sqrt
#include "math_hyperbolic.h"  // exp_parts, dd_div, f32_boundary_within
#include "math_log_family.h"  // split_float, f32_to_double_exact
#include "math_trig.h"        // reduce_fast_f32, sincosf_fast, reduce_accurate, sin_accurate

namespace repmode {
namespace math_detail {
namespace tail {

constexpr double kInvLn10Hi = 0x1.bcb7b1526e50ep-2;
constexpr double kInvLn10Lo = 0x1.95355baaafad3p-57;

// Fast-path rounding test tolerance (double ulps): 512 = eps 2^-44, at least a factor 25
// above every fast bound below (the largest is sinh's 14.7 u, u = 2^-53).
constexpr uint64_t kTailFastTol = 512;

// Rounds a fast-path result v != 0 (|v| in the float32 normal range or above) with sign bits
// `sign` XOR v's; false when the accurate path must decide.
REPMODE_HD bool tail_fast_round(double v, uint32_t sign, float* out) {
  uint64_t vs = bits_of(v) & 0x8000000000000000ull;
  double a = abs_of(v);
  if (f32_boundary_within(a, kTailFastTol)) return false;
  *out = float_from_bits(bits_of(float(a)) | (sign ^ uint32_t(vs >> 32)));
  return true;
}

// Rounds an accurate double-double result y != 0 (y.hi = RN(y)) to float32 with the extra sign
// bits `sign`; path 2 (decided) or 3 (within its own bound of a boundary: never observed).
REPMODE_HD float tail_accurate_round(DD y, uint32_t sign, int* path) {
  bool hard;
  uint32_t b = round_signed_to_f32(y, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b ^ sign);
}

// log of a double-double T > 0 (T.hi = RN(T), normal): log(T.hi) + T.lo/T.hi; the dropped
// (T.lo/T.hi)^2/2 is < 2^-107. With log_accurate (< 2^-88 relative; needs |exponent| < 2^8).
REPMODE_HD DD log_dd_accurate(DD t) {
  int e;
  double M = split_double(bits_of(t.hi), e);
  return dd_add(log_accurate(M, e), DD{t.lo / t.hi, 0.0});
}
// The same with log_fast (< 2^-57.4 relative, any exponent), as a double.
REPMODE_HD DD log_dd_fast(DD t) {
  int e;
  double M = split_double(bits_of(t.hi), e);
  DD y = log_fast(M, e);
  return fast_two_sum(y.hi, y.lo + t.lo / t.hi);
}

// ============================== cosh / sinh ==============================

// e^a as a double-double times 2^m, |error| < 2^-100 relative (exp_accurate), scaled into E
// when m <= 1000 (float32: m <= 130).
REPMODE_HD DD exp_dd(double a) {
  int m;
  DD e = exp_accurate(a, m);
  double s = pow2(m);
  return DD{e.hi * s, e.lo * s};
}

// cosh, 2^-12 <= a <= 89.5: E = exp_dd(a) (< 2^-100), 1/E by dd_div (< 2^-101.5), the sum
// (no cancellation, < 2^-104): < 2^-99 relative. sinh: E - 1/E cancels by at most
// coth(a) <= 1/a + a/3 < 2^12.01 (a >= 2^-12): < 2^-86.9 relative.
REPMODE_HD_COLD float sinhcoshf_accurate_path(double a, bool cosh, uint32_t sign, int* path) {
  DD E = exp_dd(a);
  DD Ei = dd_div(DD{1.0, 0.0}, E);
  DD s = dd_add(E, cosh ? Ei : DD{-Ei.hi, -Ei.lo});
  return tail_accurate_round(DD{s.hi * 0.5, s.lo * 0.5}, sign, path);
}

// Coefficients 1/3!, 1/5!, ..., 1/11! (rounded to double) of (sinh a - a)/a^3 in z = a^2.
REPMODE_HD double sinh_poly(double z) {
  return inv_factorial(3)[0] +
         z * (inv_factorial(5)[0] + z * (inv_factorial(7)[0] + z * (inv_factorial(9)[0] + z * inv_factorial(11)[0])));
}

// Fast path errors (u = 2^-53). E = s + s p from exp_parts (sigmoid's argument in
// math_hyperbolic.h: < 2.35 u), 1/E: < 3.35 u.
//  * cosh: E + 1/E adds no cancellation: <= 3.35 u + u = 4.35 u.
//  * sinh, a >= 1/4: |error of E - 1/E| <= 3.35 u (E + 1/E), relative 3.35 u coth(a) <=
//    3.35 u * 4.083 (a >= 1/4) plus the subtraction's rounding: < 14.7 u.
//  * sinh, a < 1/4: a + a (z P(z)) with z = RN(a^2), P's Horner steps (< 3 u of P) and the
//    truncation after a^11/11! (< a^12/13! < 2^-56.5 relative): the term a z P < 0.0105 a
//    carries < 6 u of itself, the final addition u: < 1.07 u.
// Results >= 2^-12 (normal). Overflow: a <= 89.5 keeps E < 2^129.2 (no double overflow); a
// result above FLT_MAX + ulp/2 converts to +-inf, the correctly rounded overflow.
REPMODE_HD float sinhcoshf_impl(float xf, bool cosh, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = cosh ? 0u : (ux & 0x80000000u);
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-12: cosh = 1 + x^2/2 + ... < 1 + 2^-25 (the boundary above 1 is 1 + 2^-24):
  // 1. sinh = x + x^3/6 + ...: x^2/6 < 2^-26.5 relative, below half the spacing above |x|
  // (>= 2^-25 |x|): x. Keeps +-0 and subnormals without arithmetic.
  if (ax < 0x39800000u) return cosh ? 1.0f : xf;
  // |x| > 89.5 (and inf): e^a/2 > 2^128: +-inf.
  if (ax > 0x42b30000u) return float_from_bits(0x7f800000u | sign);
  double a = double(float_from_bits(ax));
  double v;
  if (!cosh && a < 0.25) {
    double z = a * a;
    v = a + a * (z * sinh_poly(z));
  } else {
    ExpParts e = exp_parts(a);
    double E = e.s + e.s * e.p;
    double Ei = 1.0 / E;
    v = 0.5 * (cosh ? E + Ei : E - Ei);
  }
  float out;
  if (tail_fast_round(v, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return sinhcoshf_accurate_path(a, cosh, sign, path);
}

// ============================== tan ==============================

// tan from one accurate reduction: sin_accurate(n, f) and sin_accurate(n + 16, f) (cos),
// each < 2^-91.6 relative, and dd_div (< 2^-101.5): < 2^-90.5 relative.
REPMODE_HD_COLD float tanf_accurate_path(uint32_t ax, uint32_t sign, int* path) {
  int n;
  DD f = trig::reduce_accurate((ax & 0x7fffffu) | 0x800000u, trig::window_start_f32(ax), n);
  DD s = trig::sin_accurate(n, f);
  DD c = trig::sin_accurate(n + 16, f);
  return tail_accurate_round(dd_div(s, c), sign, path);
}

// Fast: sin|x| and cos|x| from sincosf_fast (each < 2^-49.6 relative, math_trig.h), one
// division: < 2^-48.6 + 2^-53 < 2^-48.5 relative (< 23 u). |tan x| >= |x| > 2^-12 for
// |x| < pi/2 and, for float32 x, |tan x| > 2^-25 everywhere (|sin x| > 2^-25 at every
// float32, math_trig.h's reduction bound), so the result is normal; |tan x| < 2^25.
REPMODE_HD float cr_tanf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = ux & 0x80000000u;
  if (path) *path = 0;
  if (ax >= 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-12: tan x = x + x^3/3 + ...: x^2/3 < 2^-25.58 relative, below half the spacing
  // above |x|: x (+-0 and subnormals included).
  if (ax < 0x39800000u) return xf;
  double s = trig::sincosf_fast(ax, 0);
  double c = trig::sincosf_fast(ax, 16);
  float out;
  if (tail_fast_round(s / c, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return tanf_accurate_path(ax, sign, path);
}

// ============================== log10 ==============================

// log_accurate (< 2^-88) times 1/ln10 in double-double (constant < 2^-107, dd_mul < 2^-104).
REPMODE_HD_COLD float log10f_accurate_path(double M, int e, int* path) {
  DD y = dd_mul(log_accurate(M, e), DD{kInvLn10Hi, kInvLn10Lo});
  return tail_accurate_round(y, 0u, path);
}

// Fast: log_fast (< 2^-57.4), then y.hi/ln10 as RN(RN(y.hi I) + (y.lo I + y.hi I_lo)): the
// product's rounding u/2 of it, the correction (< 2^-52 of the result, rounded twice) and
// the final addition u/2: < 1.2 u relative. |log10 x| > 2^-25 for x != 1 (normal).
REPMODE_HD float cr_log10f_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  if (path) *path = 0;
  if ((ux & 0x7fffffffu) > 0x7f800000u) return Canonical<float>::nan();
  if ((ux & 0x7fffffffu) == 0) return float_from_bits(0xff800000u);  // log10(+-0) = -inf
  if (ux >> 31) return Canonical<float>::nan();                      // x < 0
  if (ux == 0x7f800000u) return xf;                                  // log10(+inf) = +inf
  if (ux == 0x3f800000u) return 0.0f;                                // log10(1) = +0
  int e;
  double M = split_float(ux, e);
  DD y = log_fast(M, e);
  double v = y.hi * kInvLn10Hi + (y.lo * kInvLn10Hi + y.hi * kInvLn10Lo);
  float out;
  if (tail_fast_round(v, 0u, &out)) {
    if (path) *path = 1;
    return out;
  }
  return log10f_accurate_path(M, e, path);
}

// ============================== asinh / acosh / atanh ==============================

// asinh a = log(T), T = a + sqrt(a^2 + 1) as a double-double: a^2 exact (two_prod), + 1 and
// dd_sqrt and + a (< 2^-102 relative in all); log_dd_accurate: < 2^-88 of log T plus T's
// error 2^-102 absolute, against log T = asinh a >= asinh(2^-12) > 2^-12.01: < 2^-87.9.
REPMODE_HD DD asinh_t(double a) {
  DD q = two_prod(a, a);
  DD s = atan_detail::dd_sqrt(dd_add(q, DD{1.0, 0.0}));
  return dd_add(s, DD{a, 0.0});
}
// acosh x = log(T), T = x + sqrt(x^2 - 1): x^2 - 1 in double-double (two_prod, dd_add: <
// 2^-104 of the difference, which is >= 2^-22 for x >= 1 + 2^-23), dd_sqrt, + x; log as
// above against acosh x >= acosh(1 + 2^-23) > 2^-11.5: < 2^-87.9.
REPMODE_HD DD acosh_t(double x) {
  DD q = two_prod(x, x);
  DD s = atan_detail::dd_sqrt(dd_add(q, DD{-1.0, 0.0}));
  return dd_add(s, DD{x, 0.0});
}

REPMODE_HD_COLD float asinhf_accurate_path(double a, uint32_t sign, int* path) {
  return tail_accurate_round(log_dd_accurate(asinh_t(a)), sign, path);
}
REPMODE_HD_COLD float acoshf_accurate_path(double x, int* path) {
  return tail_accurate_round(log_dd_accurate(acosh_t(x)), 0u, path);
}
// atanh a = (log(1 + a) - log(1 - a))/2 with 1 +- a exact: two log_accurate (< 2^-88 each,
// opposite signs: no cancellation), dd_add (< 2^-104): < 2^-87.9.
REPMODE_HD_COLD float atanhf_accurate_path(double a, uint32_t sign, int* path) {
  int e1, e2;
  double M1 = split_double(bits_of(1.0 + a), e1);
  double M2 = split_double(bits_of(1.0 - a), e2);
  DD l1 = log_accurate(M1, e1), l2 = log_accurate(M2, e2);
  DD d = dd_add(l1, DD{-l2.hi, -l2.lo});
  return tail_accurate_round(DD{d.hi * 0.5, d.lo * 0.5}, sign, path);
}

// log(1 + u) for a double u >= 0 (1 + u exact as a double-double), as a double:
// log_fast(RN(1 + u)) + lo/hi, < 2^-57.3 relative to log1p(u) (log_fast is relative-accurate
// near 1: row 0, r exact) plus 2^-53 of the correction (< 2^-53 of the result).
REPMODE_HD double log1p_fast_d(double u) {
  DD t = two_sum(1.0, u);
  DD y = log_dd_fast(t);
  return y.hi + y.lo;
}

// Fast asinh (a = |x| >= 2^-12):
//  * a < 1/2: w = a + a^2/(1 + sqrt(1 + a^2)) (a^2 exact; 1 + a^2, sqrt, 1 + s, the division
//    and the sum: the second term is < a/4 and carries < 4 u of itself, the sum u): w within
//    2 u of the exact argument; log1p's condition number w/((1 + w) log1p w) <= 1 keeps it
//    2 u; log1p_fast_d adds < 1.1 u: < 3.2 u.
//  * a >= 1/2: T = a + sqrt(a^2 + 1) within 2.5 u (a^2 exact; + 1, sqrt, + a), log T >= 0.48:
//    2.5 u / 0.48 + 1.1 u < 6.4 u.
REPMODE_HD float cr_asinhf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = ux & 0x80000000u;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  if (ax == 0x7f800000u) return xf;  // asinh(+-inf) = +-inf
  // |x| < 2^-12: asinh = x - x^3/6 + ...: x^2/6 < 2^-26.5, below half the spacing below |x|
  // (>= 2^-25 |x|): x.
  if (ax < 0x39800000u) return xf;
  double a = double(float_from_bits(ax));
  double q = a * a;
  double v;
  if (a < 0.5) {
    v = log1p_fast_d(a + q / (1.0 + sqrt_of(1.0 + q)));
  } else {
    double t = a + sqrt_of(q + 1.0);
    int e;
    double M = split_double(bits_of(t), e);
    DD y = log_fast(M, e);
    v = y.hi + y.lo;
  }
  float out;
  if (tail_fast_round(v, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return asinhf_accurate_path(a, sign, path);
}

// Fast acosh (x > 1):
//  * x < 2: d = x - 1 and x + 1 exact; w = d + sqrt(d (x + 1)) within 2 u (product, sqrt,
//    sum of positive terms); log1p as for asinh: < 3.2 u.
//  * x >= 2: T = x + sqrt(x^2 - 1) (x^2 exact, - 1 rounds by u of x^2 - 1 >= 3, sqrt, sum):
//    within 2.5 u; log T >= 1.31: < 3.1 u.
REPMODE_HD float cr_acoshf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  if (path) *path = 0;
  if ((ux & 0x7fffffffu) > 0x7f800000u) return Canonical<float>::nan();
  if (ux < 0x3f800000u || (ux >> 31)) return Canonical<float>::nan();  // x < 1 (and -0, -inf)
  if (ux == 0x3f800000u) return 0.0f;                                  // acosh(1) = +0
  if (ux == 0x7f800000u) return xf;                                    // acosh(+inf) = +inf
  double x = double(xf);
  double v;
  if (x < 2.0) {
    double d = x - 1.0;
    v = log1p_fast_d(d + sqrt_of(d * (x + 1.0)));
  } else {
    double t = x + sqrt_of(x * x - 1.0);
    int e;
    double M = split_double(bits_of(t), e);
    DD y = log_fast(M, e);
    v = y.hi + y.lo;
  }
  float out;
  if (tail_fast_round(v, 0u, &out)) {
    if (path) *path = 1;
    return out;
  }
  return acoshf_accurate_path(x, path);
}

// Fast atanh (2^-12 <= a < 1): log_fast(1 + a) and log_fast(1 - a) (< 2^-57.4 each, opposite
// signs), the difference of the high parts and of the low parts, one more addition: < 1.2 u.
// Results >= 2^-12 and <= atanh(1 - 2^-24) < 8.7 (normal).
REPMODE_HD float cr_atanhf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = ux & 0x80000000u;
  if (path) *path = 0;
  if (ax > 0x3f800000u) return Canonical<float>::nan();               // |x| > 1, inf, NaN
  if (ax == 0x3f800000u) return float_from_bits(0x7f800000u | sign);  // atanh(+-1) = +-inf
  // |x| < 2^-12: atanh = x + x^3/3 + ...: x^2/3 < 2^-25.58 relative: x.
  if (ax < 0x39800000u) return xf;
  double a = double(float_from_bits(ax));
  int e1, e2;
  double M1 = split_double(bits_of(1.0 + a), e1);
  double M2 = split_double(bits_of(1.0 - a), e2);
  DD l1 = log_fast(M1, e1), l2 = log_fast(M2, e2);
  double v = 0.5 * ((l1.hi - l2.hi) + (l1.lo - l2.lo));
  float out;
  if (tail_fast_round(v, sign, &out)) {
    if (path) *path = 1;
    return out;
  }
  return atanhf_accurate_path(a, sign, path);
}

}  // namespace tail
}  // namespace math_detail

// Correctly rounded float32 functions (the error arguments are next to each _impl above).
// sinh(+-inf) = +-inf, cosh(+-inf) = +inf, tan(+-inf) = NaN, log10(x < 0) = NaN, log10(0) =
// -inf, acosh(x < 1) = NaN, atanh(+-1) = +-inf, atanh(|x| > 1) = NaN; odd functions keep -0;
// NaN -> canonical NaN.
REPMODE_HD float cr_sinhf(float x) { return math_detail::tail::sinhcoshf_impl(x, false, nullptr); }
REPMODE_HD float cr_coshf(float x) { return math_detail::tail::sinhcoshf_impl(x, true, nullptr); }
REPMODE_HD float cr_tanf(float x) { return math_detail::tail::cr_tanf_impl(x, nullptr); }
REPMODE_HD float cr_log10f(float x) { return math_detail::tail::cr_log10f_impl(x, nullptr); }
REPMODE_HD float cr_asinhf(float x) { return math_detail::tail::cr_asinhf_impl(x, nullptr); }
REPMODE_HD float cr_acoshf(float x) { return math_detail::tail::cr_acoshf_impl(x, nullptr); }
REPMODE_HD float cr_atanhf(float x) { return math_detail::tail::cr_atanhf_impl(x, nullptr); }

// ---- float64: fixed sequences of IEEE operations (measured bounds: docs/math.md) ----

// sinh / cosh: |x| < 2^-26: x (sinh; x^2/6 < 2^-54.5) or 1 (cosh; x^2/2 < 2^-53, half the
// spacing above 1). |x| <= 40: E = e^a and 1/E in double-double (exp_accurate for the double
// argument: the reduction error grows to < 2^-98 for |k| < 2^16; dd_div), their sum or
// difference, halved, rounded once: < 0.5 ulp + 2^-70 (sinh's cancellation coth(a) < 2^26).
// |x| > 40: e^a/2 (e^-a below 2^-115 of it): the double-double e^a scaled by 2^(m-1) in two
// exact steps, rounded once (overflow to +-inf past the largest double).
REPMODE_HD double repmode_sinhcosh(double x, bool cosh) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  uint64_t sign = cosh ? 0ull : (ux & 0x8000000000000000ull);
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3e50000000000000ull) return cosh ? 1.0 : x;
  double a = double_from_bits(ax);
  if (a > 720.0) return double_from_bits(0x7ff0000000000000ull | sign);
  double r;
  if (a > 40.0) {
    int m;
    DD e = exp_accurate(a, m);  // e^a = (hi + lo) 2^m, hi in [1, 2), m <= 1039
    double h = e.hi + e.lo;
    r = (h * pow2(m - 1 - 20)) * 0x1p20;  // exact scaling, then one rounding (or overflow)
  } else {
    DD E = math_detail::tail::exp_dd(a);
    DD Ei = dd_div(DD{1.0, 0.0}, E);
    DD s = dd_add(E, cosh ? Ei : DD{-Ei.hi, -Ei.lo});
    r = (s.hi + s.lo) * 0.5;
  }
  return double_from_bits(bits_of(r) | sign);
}
REPMODE_HD double repmode_sinh(double x) { return repmode_sinhcosh(x, false); }
REPMODE_HD double repmode_cosh(double x) { return repmode_sinhcosh(x, true); }

// tan: the accurate reduction (f within 2^-71 relative for doubles), sin_accurate for sin
// and cos (their relative errors are then < 2^-70), dd_div, rounded once: < 0.5 ulp + 2^-16
// ulp. |x| < 2^-27: x (x^2/3 < 2^-55.6). inf/NaN -> canonical NaN.
REPMODE_HD double repmode_tan(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax >= 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3e40000000000000ull) return x;
  int n;
  DD f = trig::reduce_accurate((ax & 0xfffffffffffffull) | 0x10000000000000ull, trig::window_start_f64(ax), n);
  DD s = trig::sin_accurate(n, f);
  DD c = trig::sin_accurate(n + 16, f);
  DD t = dd_div(s, c);
  return double_from_bits(bits_of(t.hi + t.lo) ^ (ux & 0x8000000000000000ull));
}

// log10: log_fast (< 2^-57.4) times 1/ln10 in double-double, rounded once: < 0.5 + 2^-4.3
// ulp; log10(10^k) = k exactly for the powers of ten that are doubles (the value is within
// 2^-57 of the integer k). NaN, x < 0 -> NaN; +-0 -> -inf; +inf -> +inf; subnormals through
// split_double.
REPMODE_HD double repmode_log10(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  if ((ux & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if ((ux & 0x7fffffffffffffffull) == 0) return double_from_bits(0xfff0000000000000ull);
  if (ux >> 63) return Canonical<double>::nan();
  if (ux == 0x7ff0000000000000ull) return x;
  if (ux == 0x3ff0000000000000ull) return 0.0;
  int e;
  double M = split_double(ux, e);
  DD y = dd_mul(log_fast(M, e), DD{math_detail::tail::kInvLn10Hi, math_detail::tail::kInvLn10Lo});
  return y.hi + y.lo;
}

// asinh / acosh: log of T = a + sqrt(a^2 +- 1) in double-double (log_dd_fast: < 2^-57.4 of
// log T plus T's 2^-102 absolute error). asinh: |x| < 2^-26 gives x; |x| > 2^500: log(2a)
// (the dropped 1/(4 a^2) < 2^-1000). acosh: x > 2^500: log(2x); x == 1: +0; x < 1: NaN.
// Near acosh's x = 1 + 2^-52 the result is >= 2^-25.5 and T's error stays < 2^-76 of it.
REPMODE_HD double repmode_asinh(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  uint64_t sign = ux & 0x8000000000000000ull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax == 0x7ff0000000000000ull || ax < 0x3e50000000000000ull) return x;
  double a = double_from_bits(ax);
  DD y;
  if (a > 0x1p500) {
    int e;
    double M = split_double(ax, e);
    y = log_fast(M, e + 1);
  } else {
    y = math_detail::tail::log_dd_fast(math_detail::tail::asinh_t(a));
  }
  return double_from_bits(bits_of(y.hi + y.lo) | sign);
}
REPMODE_HD double repmode_acosh(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  if ((ux & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ux < 0x3ff0000000000000ull || (ux >> 63)) return Canonical<double>::nan();
  if (ux == 0x3ff0000000000000ull) return 0.0;
  if (ux == 0x7ff0000000000000ull) return x;
  DD y;
  if (x > 0x1p500) {
    int e;
    double M = split_double(ux, e);
    y = log_fast(M, e + 1);
  } else {
    y = math_detail::tail::log_dd_fast(math_detail::tail::acosh_t(x));
  }
  return y.hi + y.lo;
}

// atanh: (log(1 + a) - log(1 - a))/2 with 1 +- a as exact double-doubles (two_sum) and
// log_dd_fast (< 2^-57.4 each; opposite signs, no cancellation): < 0.5 + 2^-4 ulp. |x| <
// 2^-27: x (x^2/3 < 2^-55.6, below half the spacing above |x|). |x| == 1: +-inf; |x| > 1,
// NaN: NaN.
REPMODE_HD double repmode_atanh(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  uint64_t sign = ux & 0x8000000000000000ull;
  if (ax > 0x3ff0000000000000ull) return Canonical<double>::nan();
  if (ax == 0x3ff0000000000000ull) return double_from_bits(0x7ff0000000000000ull | sign);
  if (ax < 0x3e40000000000000ull) return x;
  double a = double_from_bits(ax);
  DD l1 = math_detail::tail::log_dd_fast(two_sum(1.0, a));
  DD l2 = math_detail::tail::log_dd_fast(two_sum(1.0, -a));
  DD d = dd_add(l1, DD{-l2.hi, -l2.lo});
  return double_from_bits(bits_of((d.hi + d.lo) * 0.5) | sign);
}

}  // namespace repmode

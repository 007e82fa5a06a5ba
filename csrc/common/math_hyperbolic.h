// tanh and the logistic sigmoid, with the same bits on every CPU and every CUDA GPU.
//
//   float  cr_tanhf(float)          correctly rounded (round to nearest even) for all inputs
//   float  cr_sigmoidf(float)       correctly rounded 1/(1+e^-x) for all inputs
//   double repmode_tanh(double)     reproducible, not always correctly rounded (see below)
//   double repmode_sigmoid(double)  likewise
//
// The rules of math.h apply unchanged: only IEEE-754 basic operations and explicit
// repmode_fma, compiled with -ffp-contract=off / nvcc --fmad=false and without fast-math;
// no libm; no subnormal intermediate in any decisive computation, so FTZ/DAZ change nothing.
// csrc/cpu/vec_math_hyperbolic_avx2.h evaluates the same fast paths 8 floats at a time.
//
// Method (float32). Both functions are built on one cheap evaluation of e^y in plain
// double arithmetic (exp_parts: e^y ~ s * (1 + p), s = 2^m * 2^(j/64) exact), then
//   tanh|x|   = N / (2 - N),  N = 1 - e^(-2|x|) = (1 - s) - s*p,
//   sigmoid x = 1 / (1 + E),  E = e^(-x)      = s + s*p,
// one double division each. The result carries a proven relative error bound (< 2^-45.0
// for tanh, < 2^-50.8 for sigmoid), and a wide rounding test (f32_boundary_within) checks
// whether every value within that bound rounds to the same float32; it fails for about
// one input in 2^18 (tanh) / 2^23 (sigmoid). Those inputs go to an accurate path built on
// math.h's exp_accurate (double-double, < 2^-100) with a double-double division, error
// < 2^-87.8 (tanh) / < 2^-99 (sigmoid), rounded with kAccurateEps = 2^-85. tanh x and
// 1/(1+e^-x) are transcendental for every float32 x != 0 (Lindemann: e^y is
// transcendental for algebraic y != 0), so no exact rounding boundary is ever hit; the
// exhaustive check (csrc/verify/math_cases/hyperbolic.cpp) confirms the accurate path always
// decides.
//
// Constants: kTanhP[] (float64 tanh, |x| < 1/4) is mpmath's chebyfit of
// (tanh(a) - a)/a^3 as a polynomial in z = a^2 on [0, 1/16], degree 8, computed at 300 bits
// and rounded to nearest double (fit error 2^-66.5; relative error of a + a z P(z) in
// tanh, coefficients rounded, 2^-59.6). All other constants are math.h's.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"

namespace repmode {
namespace math_detail {

// ---- shared pieces ----

// True when v (positive, normal) lies within tol double ulps of a float32 rounding
// boundary. Write v = F + w * ulp(v), F = v with its low 29 bits cleared (a float32 value)
// and w = the low 29 bits (float32 keeps 24 of the 53 significant bits). The boundaries
// near v are F + 2^28 ulp(v) (the midpoint above F), the ones below F (at least 2^27
// ulps away, the binade edge included) and the ones above F + 2^29 ulp(v) (farther).
// So for tol < 2^27, a false result means every boundary is at least tol + 1 ulps from v,
// and any w' with |w' - v| <= tol ulp(v) rounds to float32 like v does: to (float)v.
// For a relative error bound eps (|v - exact| <= eps |exact|), tol = eps * 2^53 suffices:
// |v - exact| <= eps |v| / (1 - eps) < eps 2^53 / (1 - eps) ulp(v) < (tol + 1) ulp(v).
// The test is |w - 2^28| <= tol, computed without branches as
// (w + tol - 2^28) mod 2^29 <= 2 tol (only the low 29 bits of the sum matter).
REPMODE_HD bool f32_boundary_within(double v, uint64_t tol) {
  return ((bits_of(v) + (tol - 0x10000000ull)) & 0x1fffffffull) <= 2 * tol;
}

// e^y = s * (1 + p) + error, for a float32-valued y with |y| <= 104 (|k| < 2^14 below),
// in plain double arithmetic. With k = round(y * 64/ln2) = 64 m + j (exp_reduce: r is
// RN(y - k*ln2_hi - k*ln2_mid), the first subtraction exact), s = 2^m * RN(2^(j/64))
// (exact scaling: s is normal) and p = r + r^2 * q the degree-5 Taylor polynomial of
// e^r - 1. Writing E = e^y = 2^m T (1 + p*), p* = e^(r*) - 1, r* = y - k ln2/64 exactly,
// |r*| < 0.005416, and s = 2^m T (1 + tau), |tau| <= 2^-53:
//   |p - p*| <= r^6/720 e^|r| (truncation, < 2^-54.65)
//             + 1.006 |r - r*| (<= 2^-61 rounding + |k| 2^-81.2 for ln2_lo, < 2^-60.97)
//             + 2^-61 (last addition, |p| < 2^-7.5) + 2^-67 (r^2 q < 2^-16, error < 4 ulp)
//             < 0.33 * 2^-53 =: dp.
// When k == 0, r = r* = y exactly, s = 1, and p alone approximates e^y - 1 with relative
// error < |r|^5/720 * 1.009 + 2^-53 + 2^-53 |r| < 2^-47.1 + 1.02 * 2^-53 (no reduction
// error).
struct ExpParts {
  double s, p;
};
REPMODE_HD ExpParts exp_parts(double y) {
  using namespace consts;
  ExpArg a = exp_reduce(y);  // only a.r, a.j, a.m are used (a.rl is dead code)
  double s = exp2_row(a.j)[0] * pow2(a.m);
  double r = a.r;
  double r2 = r * r;
  double q = (0.5 + kC3 * r) + r2 * (kC4 + kC5 * r);
  return {s, r + r2 * q};
}

// a / b in double-double, relative error < 2^-101.5, for a, b with b.hi != 0, |b.lo| <=
// ulp(b.hi)/2, |a.lo| <= ulp(a.hi)/2 and no subnormal intermediate (checked by each user).
// q1 = RN(a.hi/b.hi); b*q1 = p.hi + p.lo within 2^-105 |a| (dd_mul_d); a.hi - p.hi is
// exact (Sterbenz: p.hi is within a few ulps of a.hi); the remainder a - b*q1 (< 4 ulp(a))
// is formed with two more roundings (< 2^-103 |a|); dividing it by b.hi instead of b and
// rounding the quotient adds < 2^-103 |a/b|. fast_two_sum is exact since |q2| < |q1|.
REPMODE_HD DD dd_div(DD a, DD b) {
  double q1 = a.hi / b.hi;
  DD p = dd_mul_d(b, q1);
  double rem = ((a.hi - p.hi) - p.lo) + a.lo;
  return fast_two_sum(q1, rem / b.hi);
}

// (a.hi + a.lo) / (b.hi + b.lo) rounded to double, for the float64 versions: the exact
// remainder a.hi - q1*b.hi (one fma: the remainder of a correctly rounded division is
// representable) corrected by the low parts; error < 0.5 ulp + 2^-100 relative.
REPMODE_HD double dd_div_to_double(DD a, DD b) {
  double q1 = a.hi / b.hi;
  double rem = repmode_fma(-q1, b.hi, a.hi);
  rem = (rem + a.lo) - q1 * b.lo;
  return q1 + rem / b.hi;
}

// Bounds the rounding tests assume (see cr_tanhf_impl / cr_sigmoidf_impl): 4 times the
// proven relative errors 2^-45.0 and 2^-50.8, and the matching tol = eps * 2^53.
constexpr double kTanhFastEps = 0x1p-43;
constexpr uint64_t kTanhFastTol = 1024;
constexpr double kSigmoidFastEps = 0x1p-48;
constexpr uint64_t kSigmoidFastTol = 32;

// Input thresholds (float32 bit patterns of |x| for tanh).
constexpr uint32_t kTanhTinyBits = 0x39000000u;     // 2^-13: below, tanh(x) rounds to x
constexpr uint32_t kTanhSatBits = 0x41140000u;      // 9.25: above, tanh(|x|) rounds to 1
constexpr float kSigmoidSat = 17.5f;                // above, sigmoid rounds to 1
constexpr float kSigmoidNormal = -87.33f;           // at or above, the result is >= 2^-126
constexpr float kSigmoidZero = -104.0f;             // below, sigmoid rounds to +0
constexpr uint32_t kSigmoidHalfBits = 0x33800000u;  // 2^-24: up to, sigmoid rounds to 1/2

// ============================== tanh ==============================

// tanh(a) for 2^-13 <= a <= 9.25, relative error < 2^-87.8: E = e^(-2a) = (H + L) 2^m from
// exp_accurate (< 2^-100; the scaling by 2^m >= 2^-27 is exact), N = 1 - E and D = 1 + E
// in double-double (dd_add, < 2^-104), N / D by dd_div (< 2^-101.5). The cancellation in
// N multiplies E's error by E/N = 1/(e^(2a) - 1) < 2^12: 2^-88 relative at a = 2^-13.
REPMODE_HD_COLD float tanhf_accurate_path(double a, uint32_t sign, int* path) {
  int m;
  DD e = exp_accurate(-2.0 * a, m);
  double sc = pow2(m);
  DD E = {e.hi * sc, e.lo * sc};
  DD N = dd_add(DD{1.0, 0.0}, DD{-E.hi, -E.lo});
  DD D = dd_add(DD{1.0, 0.0}, E);
  DD v = dd_div(N, D);
  bool hard;
  uint32_t b = round_to_f32(v.hi, v.lo, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b | sign);
}

// Error of the fast path, 2^-13 <= a <= 9.25 (u = 2^-53; exp_parts for s, p, dp; E =
// e^(-2a) = 2^m T (1 + p*) with 2^m T < E/0.9946):
//  * N = RN(c - d), c = RN(1 - s), d = RN(s p). s <= 1 (y <= 0), and 1 - s is exact while
//    s >= 1/2 (Sterbenz). Against N* = 1 - E:
//      c - d - N* = 2^m T ((p* - p) - tau (1 + p)) - RN-error(s p) [+ RN-error(1 - s)],
//      |c - d - N*| <= 2^m T (dp + u (1 + |p|) + u |p|) [+ u] <= 1.351 u E [+ u].
//    While s >= 1/2: eps_N <= 1.351 u E/N* + u. If k != 0, then RN(2a * 64/ln2) >= 1/2,
//    so 2a >= 0.0054152 and E/N* = 1/(e^(2a) - 1) <= 184.2. If k == 0, N = -p exactly and
//    the exp_parts remark gives eps_N < 2^-47.1 + 1.02 u < 61 u.
//    When s < 1/2: E < 0.503 and N* > 0.497, so eps_N <= 1.351 u 1.02 + 2.02 u + u < 4.4 u.
//  * D = RN(2 - N), D* = 1 + E: eps_D <= eps_N N*/D* + u = eps_N tanh(a) + u.
//  * v = RN(N/D): eps <= eps_N + eps_D + u (+ second order) <= eps_N (1 + tanh a) + 2u,
//    for k != 0 at most (1.351 u/(e^(2a) - 1) + u)(1 + tanh a) + 2 u, which decreases
//    with a: < 253 u < 2^-45.0 at 2a = 0.0054152 (k == 0: < 64 u; s < 1/2: < 11 u).
// kTanhFastEps = 2^-43 leaves a factor 4. The result lies in [2^-13.01, 1), so (float)v is
// a normal float32 and rounds like the exact value whenever the test passes.
REPMODE_HD float cr_tanhf_impl(float xf, int* path) {
  // path (diagnostics for csrc/verify/math_cases/hyperbolic.cpp): 0 special, 1 fast,
  // 2 accurate, 3 accurate but within its own bound of a boundary (never observed).
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = ux & 0x80000000u;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-13: tanh(a) = a - a^3/3 + ..., and a^3/3 < a 2^-26 (2/3) < half the spacing
  // below a (>= 2^(e-25) for 2^e <= a), so tanh(a) rounds to a. Keeps +-0, subnormals.
  if (ax < kTanhTinyBits) return xf;
  // |x| > 9.25 (and +-inf): 1 - tanh(a) = 2E/(1+E) < 2 e^-18.5 < 2^-25, half the spacing
  // below 1, so tanh(a) rounds to 1.
  if (ax > kTanhSatBits) return float_from_bits(0x3f800000u | sign);
  double a = double(float_from_bits(ax));
  ExpParts e = exp_parts(a * -2.0);
  double n = (1.0 - e.s) - e.s * e.p;
  double d = 2.0 - n;
  double v = n / d;
  if (!f32_boundary_within(v, kTanhFastTol)) {
    if (path) *path = 1;
    return float_from_bits(bits_of(float(v)) | sign);
  }
  return tanhf_accurate_path(a, sign, path);
}

// ============================== sigmoid ==============================

// 1/(1 + e^-x) for -104 <= x <= 17.5, relative error < 2^-99: E = e^(-x) = (H + L) 2^m
// from exp_accurate (< 2^-100; 2^m in [2^-26, 2^151], exact scaling), D = 1 + E with no
// cancellation (< 2^-104), 1/D by dd_div (< 2^-101.5). The result is >= 2^-151, so no
// intermediate comes near the subnormal range (a run of every input with FTZ/DAZ set
// gives the same bits). round_to_f32 rounds subnormal results by integer arithmetic.
REPMODE_HD_COLD float sigmoidf_accurate_path(double x, int* path) {
  int m;
  DD e = exp_accurate(-x, m);
  double sc = pow2(m);
  DD D = dd_add(DD{1.0, 0.0}, DD{e.hi * sc, e.lo * sc});
  DD v = dd_div(DD{1.0, 0.0}, D);
  bool hard;
  uint32_t b = round_to_f32(v.hi, v.lo, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

// Error of the fast path (u = 2^-53): E = RN(s + RN(s p)) against 2^m T (1 + p*):
// eps_E <= (u + dp + u |p|)/0.9946 + u < 2.35 u; D = RN(1 + E): eps_D <= eps_E E/(1+E) + u
// < 3.35 u; v = RN(1/D): eps < 4.36 u < 2^-50.8. kSigmoidFastEps = 2^-48 leaves a factor
// 7.3. No cancellation anywhere; E ranges over [e^-17.5, e^104] (normal doubles).
// For x >= -87.33 the exact result is >= 2^-126 e^0.0065 and v (within 2^-50.8) is too,
// so (float)v is a normal float32; below, the result is subnormal or just above 2^-126,
// and round_to_f32 rounds v by integer arithmetic (no FTZ dependence) with its own test.
REPMODE_HD float cr_sigmoidf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| <= 2^-24: sigmoid(x) rounds to 1/2. For x > 0, 1/2 < sigmoid(x) < 1/2 + x/4 <=
  // 1/2 + 2^-26 (sigmoid is concave there), below the midpoint 1/2 + 2^-25 above 1/2; for
  // x < 0, sigmoid(x) = 1 - sigmoid(-x) > 1/2 - |x|/4 >= 1/2 - 2^-26, the midpoint below
  // 1/2. x = -2^-24 is thus a near-exact case (sigmoid(x) exceeds the midpoint by only
  // 2^-77.6, and the accurate path's rounding test, which allows 2^-52 of the spacing for
  // its own last rounding, could not certify it); it is decided here. Also catches
  // subnormal inputs.
  if (ax <= kSigmoidHalfBits) return 0.5f;
  // x > 17.5 (and +inf): 1 - sigmoid(x) < e^-x < 2^-25 (17.5 > 25 ln2 = 17.33): 1.
  if (xf > kSigmoidSat) return 1.0f;
  // x < -104 (and -inf): sigmoid(x) < e^x < e^-104 < 2^-150, half the least subnormal: +0.
  if (xf < kSigmoidZero) return 0.0f;
  double x = double(xf);
  ExpParts e = exp_parts(-x);
  double E = e.s + e.s * e.p;
  double v = 1.0 / (1.0 + E);
  if (xf >= kSigmoidNormal) {
    if (!f32_boundary_within(v, kSigmoidFastTol)) {
      if (path) *path = 1;
      return float(v);
    }
  } else {
    bool hard;
    uint32_t b = round_to_f32(v, 0.0, kSigmoidFastEps, &hard);
    if (!hard) {
      if (path) *path = 1;
      return float_from_bits(b);
    }
  }
  return sigmoidf_accurate_path(x, path);
}

// ---- float64 ----

// Coefficients of (tanh(a) - a)/a^3 ~ P(z), z = a^2 in [0, 1/16] (see the top of the file).
namespace hyp_consts {
constexpr double kTanhP0 = -0x1.5555555555555p-2;
constexpr double kTanhP1 = 0x1.1111111111110p-3;
constexpr double kTanhP2 = -0x1.ba1ba1ba1b41ep-5;
constexpr double kTanhP3 = 0x1.664f488245e56p-6;
constexpr double kTanhP4 = -0x1.226e350f0cce6p-7;
constexpr double kTanhP5 = 0x1.d6d39755b2859p-9;
constexpr double kTanhP6 = -0x1.7d971c140d5d9p-10;
constexpr double kTanhP7 = 0x1.33cf3deecb286p-11;
constexpr double kTanhP8 = -0x1.bff153c36cb39p-13;
}  // namespace hyp_consts

}  // namespace math_detail

// Correctly rounded tanh for float32 (see cr_tanhf_impl for the error argument).
// Odd: tanh(-0) = -0; tanh(+-inf) = +-1; NaN -> canonical NaN.
REPMODE_HD float cr_tanhf(float x) { return math_detail::cr_tanhf_impl(x, nullptr); }

// Correctly rounded logistic function 1/(1 + e^-x) for float32 (cr_sigmoidf_impl).
// sigmoid(+-0) = 1/2 exactly; sigmoid(+inf) = 1; sigmoid(-inf) = +0, reached through the
// subnormals (gradual underflow); NaN -> canonical NaN.
REPMODE_HD float cr_sigmoidf(float x) { return math_detail::cr_sigmoidf_impl(x, nullptr); }

// tanh for float64, a fixed sequence of IEEE operations (reproducible, not always
// correctly rounded). |x| < 2^-27: x (a^3/3 < half an ulp). |x| > 19.1: +-1 (1 - tanh <
// 2 e^-38.2 < 2^-54). |x| < 1/4: a + a z P(z) (relative error 2^-59.6 before the last two
// roundings). Otherwise N/D with E = e^(-2a) from exp_fast (< 2^-58.3), N = 1 - E and
// D = 1 + E in double-double (N's error grows by E/N <= 1.55 for a >= 1/4), divided with
// an fma-corrected quotient. Measured (csrc/verify/math_cases/hyperbolic.cpp, 10^7 random
// inputs + specials vs __float128): see docs/math.md. NaN -> canonical NaN; tanh(-0) = -0.
REPMODE_HD double repmode_tanh(double x) {
  using namespace math_detail;
  using namespace math_detail::hyp_consts;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  uint64_t sign = ux & 0x8000000000000000ull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3e40000000000000ull) return x;  // |x| < 2^-27
  double a = double_from_bits(ax);
  if (a > 19.1) return double_from_bits(0x3ff0000000000000ull | sign);
  double t;
  if (a < 0.25) {
    double z = a * a;
    double z2 = z * z;
    double z4 = z2 * z2;
    double P = ((kTanhP0 + kTanhP1 * z) + z2 * (kTanhP2 + kTanhP3 * z)) +
               z4 * (((kTanhP4 + kTanhP5 * z) + z2 * (kTanhP6 + kTanhP7 * z)) + z4 * kTanhP8);
    t = a + a * (z * P);
  } else {
    int m;
    DD e = exp_fast(a * -2.0, m);  // m >= -56: the scaling below is exact
    double sc = pow2(m);
    DD E = {e.hi * sc, e.lo * sc};
    DD N = dd_add(DD{1.0, 0.0}, DD{-E.hi, -E.lo});
    DD D = dd_add(DD{1.0, 0.0}, E);
    t = dd_div_to_double(N, D);
  }
  return double_from_bits(bits_of(t) | sign);
}

// The logistic function for float64, a fixed sequence of IEEE operations (reproducible,
// not always correctly rounded). With E = e^(-|x|) from exp_fast (< 2^-58.3) and D = 1 + E
// in double-double: sigmoid(x) = 1/D for x >= 0 and E/D for x < 0 (no overflow, no
// cancellation), divided with an fma-corrected quotient. x < -40: repmode_exp(x) (< 0.53
// ulp; sigmoid(x) = e^x (1 - e^x + ...) differs by < e^-40 < 2^-57.7 relative, including
// gradual underflow to +0). x > 37.5: 1 (1 - sigmoid < e^-37.5 < 2^-54). |x| < 2^-55:
// 1/2. NaN -> canonical NaN. Measured bound: see docs/math.md.
REPMODE_HD double repmode_sigmoid(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3c80000000000000ull) return 0.5;  // |x| < 2^-55
  if (x > 37.5) return 1.0;
  if (x < -40.0) return repmode_exp(x);
  double a = double_from_bits(ax);
  int m;
  DD e = exp_fast(-a, m);  // m >= -59: the scaling below is exact
  double sc = pow2(m);
  DD E = {e.hi * sc, e.lo * sc};
  DD D = dd_add(DD{1.0, 0.0}, E);
  return dd_div_to_double(x < 0.0 ? E : DD{1.0, 0.0}, D);
}

// sigmoid(x) and sigmoid(-x) together, bit for bit repmode_sigmoid(x) and repmode_sigmoid(-x):
// where both take repmode_sigmoid's general path (2^-55 <= |x| <= 37.5) they share a = |x|,
// E = e^-a and D = 1 + E, and differ only in the last division's numerator (E for the negative
// argument, 1 for the other); elsewhere (NaN, tiny, large |x|) the two calls themselves. For the
// formulas that need both (silu_backward, gelu_tanh_backward): one exp and one DD sum less.
struct SigmoidPair {
  double s, sn;  // sigmoid(x), sigmoid(-x)
};
REPMODE_HD SigmoidPair repmode_sigmoid_pair(double x) {
  using namespace math_detail;
  const uint64_t ax = bits_of(x) & 0x7fffffffffffffffull;
  const double a = double_from_bits(ax);
  if (ax > 0x7ff0000000000000ull || ax < 0x3c80000000000000ull || !(a <= 37.5))
    return SigmoidPair{repmode_sigmoid(x), repmode_sigmoid(-x)};
  int m;
  DD e = exp_fast(-a, m);  // as repmode_sigmoid: m >= -59, the scaling is exact
  double sc = pow2(m);
  DD E = {e.hi * sc, e.lo * sc};
  DD D = dd_add(DD{1.0, 0.0}, E);
  const double of_pos = dd_div_to_double(DD{1.0, 0.0}, D), of_neg = dd_div_to_double(E, D);
  return x < 0.0 ? SigmoidPair{of_neg, of_pos} : SigmoidPair{of_pos, of_neg};
}

}  // namespace repmode

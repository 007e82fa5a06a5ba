// 2^x and e^x - 1 whose bits are the same on every CPU and every CUDA GPU.
//
//   float  cr_exp2f(float)        correctly rounded (round to nearest even) for all inputs
//   float  cr_expm1f(float)       correctly rounded for all inputs
//   double repmode_exp2(double)   < 0.53 ulp proven (not always correctly rounded)
//   double repmode_expm1(double)  < 0.545 ulp proven (likewise)
//
// Same rules as math.h (which this header builds on): only IEEE-754 basic operations and
// explicit repmode_fma, compiled with -ffp-contract=off / --fmad=false and never with
// fast-math; no libm; subnormal inputs and outputs handled by integer operations and no
// intermediate double ever subnormal, so FTZ/DAZ modes change nothing. The fast paths use
// no fma (every exact product below is exact because of the bit lengths of its operands).
//
// Constants computed with mpmath at 400 bits, rounded to nearest (even):
//   kLn2Hi29  = ln2 rounded to 29 significant bits   kLn2Mid = RN(ln2 - kLn2Hi29)
//   kLn2Lo    = RN(ln2 - kLn2Hi29 - kLn2Mid)          (ln2 - the three < 2^-143)
//   kC21      = ln2/64 rounded to 24 significant bits (it happens to need only 21)
//   kC21Lo    = RN(ln2/64 - kC21)                      (|ln2/64 - both| < 2^-88)
//   kC7       = RN(1/7!)
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"

namespace repmode {
namespace math_detail {
namespace expfam {

constexpr double kLn2Hi29 = 0x1.62e42ff000000p-1;
constexpr double kLn2Mid = -0x1.718432a1b0e26p-35;
constexpr double kLn2Lo = -0x1.9ff0342542fc3p-90;
constexpr double kC21 = 0x1.62e4300000000p-7;
constexpr double kC21Lo = -0x1.05c610ca86c39p-35;
constexpr double kC7 = 0x1.a01a01a01a01ap-13;
// Veltkamp splitters: x*(2^s + 1) splits a double into a high part of 53 - s bits and an
// exact remainder (no overflow for the magnitudes below).
constexpr double kSplit24 = 0x1.000001p+24;    // high part: 29 bits
constexpr double kSplit29 = 0x1.00000008p+29;  // high part: 24 bits

REPMODE_HD double veltkamp_high(double a, double splitter) {
  double c = a * splitter;
  return c - (c - a);
}

// ============================== 2^x ==============================
//
// 2^x = 2^m * 2^(j/64) * e^(r ln2) with k = 64m + j = round(64x), r = x - k/64 exact,
// |r| <= 1/128. r ln2 = z + zl is then the same reduced argument exp_fast works with.

// For |x| <= 1075. `kShortR`: the caller guarantees r has at most 24 significant bits (true
// for float32 x with |x| >= 2^-25: r is a multiple of ulp(x) below 2^-7 in magnitude when
// |x| >= 2^-7, and r = x otherwise); else r is split (Veltkamp) into 24 + 29 bits.
// r - k/64 is exact: a multiple of min(ulp(x), 2^-6) below 2^-7 in magnitude, or x itself.
// rh*kLn2Hi29 is exact (24 + 29 bits); the rest, rl*kLn2Hi29 + r*kLn2Mid (< 2^-31 and
// < 2^-41), rounds with error < 2^-84, and dropping kLn2Lo costs < 2^-96. fast_two_sum
// normalizes, so |zl| <= ulp(z)/2 < 2^-60 as exp_reduce leaves it: |z + zl - r ln2| < 2^-83.
template <bool kShortR>
REPMODE_HD ExpArg exp2_reduce(double x) {
  double kd = (x * 64.0 + consts::kShift) - consts::kShift;
  int k = int(kd);
  double r = x - kd * 0x1p-6;
  DD z;
  if (kShortR) {
    z = fast_two_sum(r * kLn2Hi29, r * kLn2Mid);
  } else {
    double rh = veltkamp_high(r, kSplit29);
    z = fast_two_sum(rh * kLn2Hi29, (r - rh) * kLn2Hi29 + r * kLn2Mid);  // r - rh exact
  }
  int j = k & 63;
  return {z.hi, z.lo, j, (k - j) / 64};
}

// exp_fast after its reduction, for an argument reduced elsewhere (|r| <= ln2/128 *
// (1 + 2^-40), |rl| < 2^-60): the same operations, so exp_fast's error argument applies
// word for word (< 2^-58.3 relative; the reduction error it allows for, 2^-105, is here
// < 2^-83 absolute, still below 2^-80 of the total and invisible at that precision).
REPMODE_HD DD exp_fast_reduced(ExpArg a, int& m) {
  using namespace consts;
  const double* t = exp2_row(a.j);
  double r = a.r;
  double r2 = r * r;
  double q = (0.5 + kC3 * r) + r2 * ((kC4 + kC5 * r) + r2 * kC6);
  double em1 = r + (a.rl + r2 * q);
  m = a.m;
  return normalize_1_2(fast_two_sum(t[0], t[1] + t[0] * em1), m);
}

// e^(r + rl) - 1 = r P(r) in double-double for |r + rl| < 2^-7.4, relative error < 2^-101:
// P = sum_{n=0..10} r^n/(n+1)! by Horner's rule in double-double (truncation < 2^-110;
// each step < 2^-104 relative, nothing cancels since P is dominated by its constant 1),
// then one dd_mul by r.
REPMODE_HD DD expm1_accurate_reduced(DD r) {
  const double* c = inv_factorial(11);
  DD p = {c[0], c[1]};
  for (int n = 10; n >= 1; --n) {
    c = inv_factorial(n);
    p = dd_add(dd_mul(p, r), DD{c[0], c[1]});
  }
  return dd_mul(p, r);
}

// 2^x as (hi + lo) * 2^m, hi in [1, 2), relative error < 2^-100, for float32 x in
// (-150, 128): z + zl = r ln2 within 2^-113 absolute (rh*kLn2Hi29 exact, r*kLn2Mid exact
// by two_prod, r*kLn2Lo < 2^-96 rounds by < 2^-149, the two final additions < 2^-113),
// e^z - 1 < 2^-101 relative, 1 + that and the product with 2^(j/64) (2^-106) < 2^-104 each.
REPMODE_HD DD exp2_accurate(double x, int& m) {
  double kd = (x * 64.0 + consts::kShift) - consts::kShift;
  int k = int(kd);
  double r = x - kd * 0x1p-6;  // exact, <= 24 bits (see exp2_reduce)
  DD p = two_prod(r, kLn2Mid);
  DD z = fast_two_sum(r * kLn2Hi29, p.hi);
  z.lo += p.lo + r * kLn2Lo;
  DD e = dd_add(DD{1.0, 0.0}, expm1_accurate_reduced(z));
  int j = k & 63;
  const double* t = exp2_row(j);
  m = (k - j) / 64;
  return normalize_1_2(dd_mul(DD{t[0], t[1]}, e), m);
}

REPMODE_HD_COLD float exp2f_accurate_path(double x, int* path) {
  int m;
  DD y = exp2_accurate(x, m);
  bool hard;
  uint32_t b = round_scaled_to_f32(y.hi, y.lo, m, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

REPMODE_HD float cr_exp2f_impl(float xf, int* path) {
  // path (diagnostics for the verifiers): 0 special, 1 fast, 2 accurate, 3 accurate but
  // still within its error bound of a boundary (never observed).
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-25: 2^x lies strictly between the boundaries 1 - 2^-25 and 1 + 2^-24
  // (|2^x - 1| < 0.7 * 2^-25). Also catches subnormal inputs.
  if (ax < 0x33000000u) return 1.0f;
  if (xf >= 128.0f) return float_from_bits(0x7f800000u);  // 2^128 and up, includes +inf
  // 2^-150 is the midpoint between 0 and the least subnormal: ties to even give +0.
  if (xf <= -150.0f) return 0.0f;
  // Fast path: relative error < 2^-58.3 (exp_fast_reduced), inside what is_f32_boundary
  // (2^-54) and kFastEps (2^-55) assume, so a passed rounding test gives the correctly
  // rounded result. For integer x, r = 0 and the evaluation is exact (hi = 1, lo = 0):
  // 2^x is returned exactly. For other x, 2^x is irrational (2^(p/q) with q > 1 is not
  // rational), hence never a rounding boundary, and the accurate path (< 2^-100 vs
  // kAccurateEps = 2^-85) decides; the exhaustive check confirms it always does.
  double x = double(xf);
  int m;
  DD y = exp_fast_reduced(exp2_reduce<true>(x), m);  // m in [-151, 128]
  if (m >= -126) {
    if (!is_f32_boundary(y.hi)) {
      if (path) *path = 1;
      return float(y.hi * pow2(m));  // exact scaling; (float) rounds, to +inf above the top
    }
  } else {
    bool hard;
    uint32_t b = round_scaled_to_f32(y.hi, y.lo, m, kFastEps, &hard);
    if (!hard) {
      if (path) *path = 1;
      return float_from_bits(b);
    }
  }
  return exp2f_accurate_path(x, path);
}

// ============================== e^x - 1 ==============================
//
// With k = 64m + j = round(x * 64/ln2), R = x - k ln2/64 (|R| < 0.00542) and T = 2^(j/64):
//   e^x - 1 = 2^m * [ (T - 2^-m) + T (e^R - 1) ].
// T = h + l with h = T_hi rounded to 29 bits; R = rh + rl with rh of at most 24 bits. Then
// h - 2^-m (two_sum) and h*rh (29 + 24 bits) are exact, so the leading parts are summed
// exactly and every rounding error is relative to a small term, never to e^x: this keeps
// the error relative to the result even where e^x - 1 is much smaller than e^x.

// e^x - 1 = (hi + lo) * 2^m, hi = RN(hi + lo), for x in [-38, 710], |x| >= 2^-54, given
// k = 64m + j, R = rh + rl (up to the error of rl) with rh of at most 24 bits, |R| <=
// ln2/128 * (1 + 2^-40) and |rl| < 2^-21.
//
// Error: < 2^-57.5 relative. The computed value is b.hi + tail with
//   b.hi + b.lo + a.lo = (h - 2^-m) + h*rh                     (exact)
//   tail ~ a.lo + b.lo + h*(rl + E) + l*(1 + P),   P = e^R - 1, E = P - R,
// so only the tail's terms carry errors, and they are small: let F = 2^m / |e^x - 1| turn
// absolute errors inside the brackets into relative ones (F = 1/|P| for k = 0, at most 185
// for k != 0, reached at k = 1).
//  * E = R^2 Q(R), Q = 1/2 + R/6 + ...: r = RN(rh + rl) and r2 give r2 within 3.01 * 2^-53
//    relative (plus 2|R| times the error of rl), q within 1.02 * 2^-53 absolute of Q
//    (0.5 + kC3*r and the last addition round by <= 2^-54 each, the rest < 2^-62,
//    truncation after R^5/7! < 2^-60.5) -- 2.05 * 2^-53 relative as Q > 0.499 -- and the
//    product rounds once: r2*q is within 6.1 * 2^-53 relative of E <= 1.002 R^2/2.
//  * u = rl + r2*q, h*u, rh + u, 1 + (...), l*(...) and the three additions of the tail
//    each round by 2^-53 of a term below 2^-8.4 |e^x - 1|/2^m (F |tail| < 2^-8.5); the
//    l-term's errors are < 3 * 2^-53 * 2^-28. l itself rounds by < 2^-82, T's table by
//    2^-106 relative; rl (float32: -kd*kC21Lo) is within |k| 2^-87.9 of its true value.
//  * k = 0 (|x| < 0.0055: h = 1, l = 0, a = 0, b.hi = rh): relative to |P| >= 0.997|R|,
//    (6.1 + 3) * 2^-53 * 1.002 |R|/2 < 2^-58.3.
//  * k != 0: the sum of the terms above times F, evaluated per k over the float32 range
//    (|k| <= 8218) and the float64 range (|k| <= 65552), is largest at k = 1: < 2^-58.0.
// fast_two_sum is exact: |b.hi| > |tail| since F |tail| < 2^-8.5.
REPMODE_HD DD expm1_fast_reduced(double rh, double rl, int j, int m) {
  using namespace consts;
  const double* t = exp2_row(j);
  double h = veltkamp_high(t[0], kSplit24);  // T_hi rounded to 29 bits, exact
  double l = (t[0] - h) + t[1];              // T - h, |l| <= 2^-29 + 2^-53, rounding < 2^-82
  // 2^-m; for m > 1000 (float64 only) 2^-1000 stands in for it: a relative change
  // < 2^-1000 of the result, and no subnormal intermediate.
  double s = pow2(m > 1000 ? -1000 : -m);
  DD a = two_sum(h, -s);         // exact
  DD b = two_sum(a.hi, h * rh);  // exact: h*rh has at most 53 bits
  double r = rh + rl;
  double r2 = r * r;
  double q = (0.5 + kC3 * r) + r2 * ((kC4 + kC5 * r) + r2 * (kC6 + kC7 * r));
  double u = rl + r2 * q;  // ~ e^R - 1 - rh
  double tail = (h * u + l * (1.0 + (rh + u))) + (a.lo + b.lo);
  return fast_two_sum(b.hi, tail);
}

// e^x - 1 = (hi + lo) * 2^m with relative error < 2^-95 for float32 x in [-18, 89],
// |x| >= 2^-26: the reduced argument of exp_reduce is within 2^-105 absolute (exact for
// k = 0), e^R - 1 within 2^-101 relative, T within 2^-106; T - 2^-m is exact before T_lo
// is added. Absolute errors inside the brackets times F <= 185 (see expm1_fast_reduced),
// plus the double-double additions and product (< 2^-103 relative each, |T(e^R - 1)| and
// |T - 2^-m| being at most 2.1 times the result): < 2^-95.
REPMODE_HD DD expm1_accurate(double x, int& m) {
  ExpArg a = exp_reduce(x);
  DD p = expm1_accurate_reduced(DD{a.r, a.rl});
  const double* t = exp2_row(a.j);
  m = a.m;
  DD c = dd_add(two_sum(t[0], -pow2(-m)), DD{t[1], 0.0});
  return dd_add(c, dd_mul(DD{t[0], t[1]}, p));
}

REPMODE_HD_COLD float expm1f_accurate_path(double x, int* path) {
  int m;
  DD y = expm1_accurate(x, m);
  uint64_t sign = bits_of(y.hi) & 0x8000000000000000ull;
  double sc = pow2(m);  // exact scaling: |result| in [2^-26, 2^130), no subnormal part
  double hi = abs_of(y.hi) * sc, lo = double_from_bits(bits_of(y.lo) ^ sign) * sc;
  bool hard;
  uint32_t b = round_to_f32(hi, lo, kAccurateEps, &hard) | uint32_t(sign >> 32);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

REPMODE_HD float cr_expm1f_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-26: e^x - 1 - x lies in (0, x^2/2 (1 + |x|)), less than half the spacing
  // of the float32 numbers next to x on the side of zero, so x is the correctly rounded
  // result (also for subnormal x and +-0, returned untouched).
  if (ax < 0x32800000u) return xf;
  if (xf > 89.0f) return float_from_bits(0x7f800000u);  // e^89 > 2^128, includes +inf
  // x <= -18: 0 < e^x < 2^-25.9, below half the spacing 2^-24 under 1: the result
  // rounds to -1 (includes -inf).
  if (xf <= -18.0f) return -1.0f;
  // Fast path: relative error < 2^-57.5 (expm1_fast_reduced), inside the 2^-54 that
  // is_f32_boundary assumes. The result is a normal float32 or overflows (2^-26 <=
  // |e^x - 1| < 2^130), so (float) of the exactly scaled hi rounds it. e^x - 1 is
  // transcendental for x != 0 (Lindemann), hence never a rounding boundary, and the
  // accurate path (< 2^-95 vs kAccurateEps = 2^-85) decides the rest; the exhaustive
  // check confirms it always does.
  //
  // Reduction: kd*kC21 is exact (|k| <= 8218 < 2^14, kC21 has 21 bits) and so is
  // x - kd*kC21: both are multiples of 2^-31 (x is, for |x| >= 2^-8; for smaller |x|,
  // k = 0) and the difference is below 2^-7, so rh has at most 24 bits. |rh| <=
  // ln2/128 + 2^-21, |rl| < 2^-21; rl = -kd*kC21Lo is within |k| 2^-87 of its true value.
  double x = double(xf);
  double kd = (x * consts::kInvC + consts::kShift) - consts::kShift;
  int k = int(kd);
  double rh = x - kd * kC21;
  double rl = -(kd * kC21Lo);
  int j = k & 63;
  int m = (k - j) / 64;
  DD y = expm1_fast_reduced(rh, rl, j, m);
  if (!is_f32_boundary(y.hi)) {
    if (path) *path = 1;
    return float(y.hi * pow2(m));
  }
  return expm1f_accurate_path(x, path);
}

}  // namespace expfam
}  // namespace math_detail

// Correctly rounded 2^x for float32 (see cr_exp2f_impl for the error argument); exact for
// integer x. NaN -> canonical NaN; exp2(-inf) = +0; exp2(+inf) = +inf; exp2(+-0) = 1.
REPMODE_HD float cr_exp2f(float x) { return math_detail::expfam::cr_exp2f_impl(x, nullptr); }

// Correctly rounded e^x - 1 for float32 (see cr_expm1f_impl). NaN -> canonical NaN;
// expm1(+-0) = +-0; expm1(-inf) = -1; expm1(+inf) = +inf.
REPMODE_HD float cr_expm1f(float x) { return math_detail::expfam::cr_expm1f_impl(x, nullptr); }

// 2^x for float64, < 0.53 ulp: exp_fast_reduced's hi is one rounding of a value within
// 2^-58.3 relative of 2^x, then scaled exactly by 2^m; subnormal results are rounded once,
// from hi + lo, by integer arithmetic. Exact for integer x (r = 0). NaN -> canonical NaN;
// exp2(-inf) = +0; exp2(+inf) = +inf; overflow to +inf from x = 1024.
REPMODE_HD double repmode_exp2(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  // |x| < 2^-54: 2^x is strictly between the boundaries 1 - 2^-54 and 1 + 2^-53.
  if (ax < 0x3c90000000000000ull) return 1.0;
  if (x >= 1024.0) return double_from_bits(0x7ff0000000000000ull);
  if (x <= -1075.0) return 0.0;  // 2^-1075: half the least subnormal, ties to even
  int m;
  DD y = expfam::exp_fast_reduced(expfam::exp2_reduce<false>(x), m);
  if (m >= 1024) return double_from_bits(0x7ff0000000000000ull);
  if (m >= -1022) return y.hi * pow2(m);
  // Subnormal (or zero) result, as in repmode_exp: in units of 2^-1074 the value is below
  // 2^52 and its nearest integer is the bit pattern.
  double s = pow2(m + 1074);  // m >= -1077
  double d;
  double n = round_to_integer(y.hi * s, y.lo * s, d);
  return double_from_bits(uint64_t(n));
}

// e^x - 1 for float64, < 0.545 ulp: expm1_fast_reduced's hi is one rounding of a value
// within 2^-57.5 relative of e^x - 1 (the float64 reduction: exp_reduce within 2^-105,
// r split exactly into 24 + 29 bits, so |rl| < 2^-31), scaled exactly by 2^m. NaN ->
// canonical NaN; |x| < 2^-54 returns x (e^x - 1 - x < x^2 is below half an ulp of x),
// including +-0; x < -38 gives -1 (e^x < 2^-54); overflow to +inf above ~709.78.
REPMODE_HD double repmode_expm1(double x) {
  using namespace math_detail;
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3c90000000000000ull) return x;
  if (x > 710.0) return double_from_bits(0x7ff0000000000000ull);
  if (x < -38.0) return -1.0;
  ExpArg a = exp_reduce(x);
  double rh = expfam::veltkamp_high(a.r, expfam::kSplit29);
  double rl = (a.r - rh) + a.rl;
  DD y = expfam::expm1_fast_reduced(rh, rl, a.j, a.m);
  // m <= 1024: scale in two exact steps so 2^m is never formed; overflow gives +inf.
  return (y.hi * pow2(a.m - 1)) * 2.0;
}

}  // namespace repmode

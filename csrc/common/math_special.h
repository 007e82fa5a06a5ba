// The gamma and error-function half of the special functions (issue 26), with the same bits on
// every CPU and GPU: lgamma, digamma, polygamma, mvlgamma, the Hurwitz zeta function, erfinv,
// ndtri, log_ndtr, erfcx and entr.
//
//   double special_lgamma(x), special_digamma(x), special_polygamma(n, x), special_mvlgamma(x, p),
//          special_zeta(s, q), special_erfinv(x), special_ndtri(p), special_log_ndtr(x),
//          special_erfcx(x), special_entr(x)                      (the float64 definitions)
//   double special_lgamma_for_float(x), special_mvlgamma_for_float(x, p),
//          special_erfinv_for_float(x), special_ndtri_for_float(p)   (cheaper double formulas
//          whose result the float32 kernels round once; the other functions share one formula)
//
// Each is ONE fixed formula of IEEE-754 basic operations (round to nearest even), explicit
// repmode_fma, and repmode's own exp/log/sin/cos/erf/erfc/pow (math.h and its siblings) —
// never libm or CUDA math — so every device computes the same sequence. They are not
// correctly rounded: the float32 kernels evaluate these double formulas and round the result
// once to float32 (errors measured in docs/math.md); the float64 kernels return the double
// result. Contract (issue 26): the measured max-ulp error against mpmath is at most native
// torch's on the same random and adversarial inputs (benchmarks/accuracy_special.py).
//
// Subnormal inputs and results go through ordinary double arithmetic here (unlike the
// correctly rounded float32 routines of math.h, which decode them with integers): repmode
// refuses to run while the CPU flushes subnormals, and the CUDA build keeps them
// (--ftz=false), so these formulas see IEEE gradual underflow on every device.
//
// Constants: mpmath at 300 bits, rounded to nearest (benchmarks/special_constants.py prints
// every table below).
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "math_erf.h"
#include "math_exact.h"
#include "math_hyperbolic.h"  // dd_div
#include "math_log_family.h"
#include "math_pow.h"
#include "math_trig.h"

namespace repmode {
namespace special_detail {

using math_detail::DD;
using math_detail::dd_add;
using math_detail::dd_mul;
using math_detail::dd_mul_d;
using math_detail::fast_two_sum;
using math_detail::two_prod;
using math_detail::two_sum;

// +inf (its bits) and the canonical NaN.
REPMODE_HD double inf64() { return double_from_bits(0x7ff0000000000000ull); }

// Constants as hi (+ lo), each the nearest double(s) to the exact value.
constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kLnPi = 0x1.250d048e7a1bdp+0, kLnPiLo = 0x1.7abf2ad8d5088p-57;
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1, kLn2Lo = 0x1.abc9e3b39803fp-56;
constexpr double kSqrtHalfHi = 0x1.6a09e667f3bcdp-1, kSqrtHalfLo = -0x1.bdd3413b26456p-55;
constexpr double kSqrt2Hi = 0x1.6a09e667f3bcdp+0, kSqrt2Lo = -0x1.bdd3413b26456p-54;
constexpr double kTwoOverSqrtPi = 0x1.20dd750429b6dp+0;
constexpr double kInvSqrtPi = 0x1.20dd750429b6dp-1;
constexpr double kSqrtPiOver2 = 0x1.c5bf891b4ef6bp-1;
constexpr double kSqrtPiOver2Lo = -0x1.618f13eb7ca89p-55;
// log(2 pi)/2 - 1/2 (Stirling's constant term in the form used below)
constexpr double kHalfLog2PiMinusHalfHi = 0x1.acfe390c97d69p-2, kHalfLog2PiMinusHalfLo = 0x1.3494bc9001442p-56;
// x0, the positive zero of digamma, and x0 - 1, as hi + lo
constexpr double kPsiRootHi = 0x1.762d86356be3fp+0, kPsiRootLo = 0x1.b86a722197829p-54;
constexpr double kPsiRootM1Hi = 0x1.d8b618d5af8fep-2, kPsiRootM1Lo = -0x1.1e563779a1f5bp-56;

REPMODE_HD bool is_nan(double x) { return x != x; }
REPMODE_HD bool is_integer(double x) { return round_even_of(x) == x; }

// log x for a finite x > 0 as a double-double (math.h's log_fast: < 2^-57.4 relative).
REPMODE_HD DD log_dd(double x) {
  int e;
  double M = math_detail::split_double(bits_of(x), e);
  return math_detail::log_fast(M, e);
}
// log of a double-double t > 0 (t.hi normal, 2^-255 < t.hi < 2^255): log_accurate(t.hi)
// (< 2^-88 relative) + t.lo / t.hi (the dropped (t.lo/t.hi)^2/2 < 2^-105).
REPMODE_HD DD log_dd_accurate(DD t) {
  int e;
  double M = math_detail::split_double(bits_of(t.hi), e);
  return dd_add(math_detail::log_accurate(M, e), DD{t.lo / t.hi, 0.0});
}

// Horner's rule for z * (c[0] + c[1] z + ... + c[n-1] z^(n-1)), no fma.
REPMODE_HD double series(const double* c, int n, double z) {
  double p = c[n - 1];
  for (int k = n - 2; k >= 0; --k) p = p * z + c[k];
  return p * z;
}

// ============================== lgamma ==============================

// lgamma(2 + z) = sum_(k>=1) c_k z^k, c_1 = 1 - gamma, c_k = (-1)^k (zeta(k) - 1)/k, used for
// |z| <= 3/4: the 40 terms leave < 2^-59 relative (mpmath: 1.4e-18 at z = -3/4).
REPMODE_HD const double* lgamma2_coef() {
  // clang-format off
  static constexpr double k[40] = {
      0x1.b0ee6072093cep-2, 0x1.4a34cc4a60fa6p-2, -0x1.13e001a557607p-4, 0x1.51322ac7d8483p-6,
      -0x1.e404fc218f5f2p-8, 0x1.7add6eadb6c30p-9, -0x1.38ac5c2bf8e08p-10, 0x1.0b36af86396e9p-11,
      -0x1.d3fd4c76d2fc8p-13, 0x1.a127b0f17d65ap-14, -0x1.78de5bd7c81efp-15, 0x1.580dcee66eb02p-16,
      -0x1.3cbc963ce2243p-17, 0x1.2597a39f34aacp-18, -0x1.11b2eb7679541p-19, 0x1.0064cdeb22f0fp-20,
      -0x1.e2600d93cfd2fp-22, 0x1.c76bbb3f07a4dp-23, -0x1.af5a6cbbf8a97p-24, 0x1.99b93c2070b0fp-25,
      -0x1.862c734df3eacp-26, 0x1.7469daccfadcdp-27, -0x1.6434a8447aeadp-28, 0x1.555a877ffd2c3p-29,
      -0x1.47b1679258d0ep-30, 0x1.3b15d2b2fc10cp-31, -0x1.2f69a9fabe3e0p-32, 0x1.24932a337434cp-33,
      -0x1.1a7c26ec2523cp-34, 0x1.11116e693ed98p-35, -0x1.08424cbc543d8p-36, 0x1.000026e3f644fp-37,
      -0x1.f07c514fc9f0ap-39, 0x1.e1e2026aafcd8p-40, -0x1.d41d56e5ee2e2p-41, 0x1.c71c7f6f10e37p-42,
      -0x1.bacf9a27bc89bp-43, 0x1.af28718a10d6ep-44, -0x1.a41a45603e5b6p-45, 0x1.99999c0716ee9p-46,
  };
  // clang-format on
  return k;
}
// The same coefficients as hi + lo pairs, for the double-double evaluation of the negative axis.
REPMODE_HD const double* lgamma2_coef_dd() {
  // clang-format off
  static constexpr double k[80] = {
      0x1.b0ee6072093cep-2, 0x1.6cb90701fbfabp-58, 0x1.4a34cc4a60fa6p-2, 0x1.1873d8912200cp-56, -0x1.13e001a557607p-4, 0x1.fb68be2f8821fp-58,
      0x1.51322ac7d8483p-6, 0x1.afc89088cb729p-60, -0x1.e404fc218f5f2p-8, 0x1.e4a627cf1eb34p-62, 0x1.7add6eadb6c30p-9, -0x1.5b7828c7fd7f4p-64,
      -0x1.38ac5c2bf8e08p-10, 0x1.8a4c1cfd9cec8p-65, 0x1.0b36af86396e9p-11, -0x1.0698d6c892967p-65, -0x1.d3fd4c76d2fc8p-13, 0x1.c7c55cfccbb83p-68,
      0x1.a127b0f17d65ap-14, 0x1.9d309aa700268p-69, -0x1.78de5bd7c81efp-15, 0x1.a20541cde47a6p-72, 0x1.580dcee66eb02p-16, 0x1.260574b258f72p-71,
      -0x1.3cbc963ce2243p-17, 0x1.ea56e6c7d5329p-71, 0x1.2597a39f34aacp-18, -0x1.bf911462a7d81p-72, -0x1.11b2eb7679541p-19, -0x1.c76b0e65ac63ap-75,
      0x1.0064cdeb22f0fp-20, 0x1.d0156affdbc11p-75, -0x1.e2600d93cfd2fp-22, 0x1.130ac39e5c106p-76, 0x1.c76bbb3f07a4dp-23, 0x1.d9a2b77769b52p-77,
      -0x1.af5a6cbbf8a97p-24, -0x1.95f227e96d83ep-78, 0x1.99b93c2070b0fp-25, 0x1.0327164736428p-79, -0x1.862c734df3eacp-26, -0x1.b32802bec0da0p-80,
      0x1.7469daccfadcdp-27, -0x1.369d388cebaa9p-81, -0x1.6434a8447aeadp-28, -0x1.af72edf876fcdp-87, 0x1.555a877ffd2c3p-29, -0x1.875065f26a43bp-83,
      -0x1.47b1679258d0ep-30, -0x1.04f36e0e854e4p-84, 0x1.3b15d2b2fc10cp-31, -0x1.d79f6feeeb28bp-86, -0x1.2f69a9fabe3e0p-32, 0x1.a162ab374c789p-86,
      0x1.24932a337434cp-33, 0x1.060829c24508fp-87, -0x1.1a7c26ec2523cp-34, -0x1.4f4ebdb4a04b5p-88, 0x1.11116e693ed98p-35, -0x1.c7034d49e7fc7p-89,
      -0x1.08424cbc543d8p-36, -0x1.40ef820dbc9eap-91, 0x1.000026e3f644fp-37, 0x1.3546a6054c889p-91, -0x1.f07c514fc9f0ap-39, -0x1.75b6be545ac09p-96,
      0x1.e1e2026aafcd8p-40, -0x1.62a8586538620p-94, -0x1.d41d56e5ee2e2p-41, 0x1.43894d27ced5ep-96, 0x1.c71c7f6f10e37p-42, -0x1.01074764d33f2p-96,
      -0x1.bacf9a27bc89bp-43, 0x1.4a5a215e0508ep-98, 0x1.af28718a10d6ep-44, 0x1.40d7f1b842cb8p-99, -0x1.a41a45603e5b6p-45, 0x1.62be9cf212d90p-99,
      0x1.99999c0716ee9p-46, -0x1.39e10f90435bbp-100,
  };
  // clang-format on
  return k;
}
// lgamma(1 + z) = -gamma z + sum_(k>=2) (-1)^k zeta(k)/k z^k for |z| <= 1/4 (30 terms:
// truncation < 2^-58 relative).
REPMODE_HD const double* lgamma1_coef() {
  // clang-format off
  static constexpr double k[30] = {
      -0x1.2788cfc6fb619p-1, 0x1.a51a6625307d3p-1, -0x1.9a4d55beab2d7p-2, 0x1.151322ac7d848p-2,
      -0x1.a8b9c17aa6149p-3, 0x1.5b40cb100c306p-3, -0x1.2703a1dcea3aep-3, 0x1.010b36af86397p-3,
      -0x1.c806706d57db4p-4, 0x1.9a01e385d5f8fp-4, -0x1.748c33114c6d6p-4, 0x1.556ad63243bc4p-4,
      -0x1.3b1d971fc5985p-4, 0x1.2496df8320c5fp-4, -0x1.11133476e7fe0p-4, 0x1.00010064cdeb2p-4,
      -0x1.e1e2d311e8abdp-5, 0x1.c71ce3a20b419p-5, -0x1.af28a1b5688a0p-5, 0x1.9999b3352d5bap-5,
      -0x1.86186db77bfbfp-5, 0x1.745d1d1778df9p-5, -0x1.642c88591b66dp-5, 0x1.555556aaafdcdp-5,
      -0x1.47ae151eb9fb7p-5, 0x1.3b13b189d925ep-5, -0x1.2f684c00002bcp-5, 0x1.24924936db7bcp-5,
      -0x1.1a7b961a7b9aap-5, 0x1.111111155556dp-5,
  };
  // clang-format on
  return k;
}
// Stirling: lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) x^(2k-1)).
REPMODE_HD const double* stirling_coef() {
  static constexpr double k[10] = {
      0x1.5555555555555p-4,  -0x1.6c16c16c16c17p-9,  0x1.a01a01a01a01ap-11, -0x1.3813813813814p-11,
      0x1.b951e2b18ff23p-11, -0x1.f6ab0d9993c7dp-10, 0x1.a41a41a41a41ap-8,  -0x1.e4286cb0f5398p-6,
      0x1.6fe96381e0680p-3,  -0x1.6476701181f3ap+0,
  };
  return k;
}

// z (c[0] + c[1] z + ... + c[n-1] z^(n-1)) for an even n as z (E(z^2) + z O(z^2)), the even and odd
// coefficients by two independent Horner chains (half the dependency chain of `series`).
REPMODE_HD double series2(const double* c, int n, double z) {
  double y = z * z;
  double e = c[n - 2], o = c[n - 1];
  for (int k = n - 4; k >= 0; k -= 2) {
    e = e * y + c[k];
    o = o * y + c[k + 1];
  }
  return z * (e + z * o);
}
// The float32 definition's series (the float64 one: lgamma2_wide, lgamma1_wide).
REPMODE_HD double lgamma2(double z) { return series2(lgamma2_coef(), 40, z); }
REPMODE_HD double lgamma1(double z) { return series2(lgamma1_coef(), 30, z); }

// lgamma(2 + z) as a double-double (Horner's rule in double-double on the hi + lo
// coefficients: < 2^-100 relative), z exact.
REPMODE_HD DD lgamma2_dd(double z) {
  const double* c = lgamma2_coef_dd();
  DD p = {c[78], c[79]};
  for (int k = 38; k >= 0; --k) p = dd_add(dd_mul_d(p, z), DD{c[2 * k], c[2 * k + 1]});
  return dd_mul_d(p, z);
}

// lgamma1's first 12 coefficients as hi + lo.
REPMODE_HD const double* lgamma1_head_dd() {
  // clang-format off
  static constexpr double k[24] = {
      -0x1.2788cfc6fb619p-1, 0x1.6cb90701fbfabp-58, 0x1.a51a6625307d3p-1, 0x1.1873d8912200cp-56,
      -0x1.9a4d55beab2d7p-2, 0x1.4c26d1b465993p-59, 0x1.151322ac7d848p-2, 0x1.b5f91211196e5p-57,
      -0x1.a8b9c17aa6149p-3, -0x1.2e826a4fdae1ap-58, 0x1.5b40cb100c306p-3, 0x1.4a79940f15696p-59,
      -0x1.2703a1dcea3aep-3, -0x1.6307fd0794ac4p-57, 0x1.010b36af86397p-3, -0x1.741a635b224a6p-59,
      -0x1.c806706d57db4p-4, -0x1.56aa806fdd3eep-58, 0x1.9a01e385d5f8fp-4, 0x1.813418f3768cdp-59,
      -0x1.748c33114c6d6p-4, -0x1.ea57624080720p-61, 0x1.556ad63243bc4p-4, 0x1.5de8580fae81dp-62,
  };
  // clang-format on
  return k;
}

// The float64 evaluations of the two series: the terms of degree >= 13 by Horner's rule in
// double (< 2^-17 of the sum for |z| <= 3/4, lgamma2; < 2^-24, lgamma1 at |z| <= 1/4), the
// first 12 in double-double on the hi + lo coefficients, z exact: < 2^-100 + 2^-70 relative.
REPMODE_HD DD series_hybrid_dd(const double* c, int n, const double* head_dd, double z) {
  double tail = c[n - 1];
  for (int k = n - 2; k >= 12; --k) tail = tail * z + c[k];
  DD p = {tail, 0.0};
  for (int k = 11; k >= 0; --k) p = dd_add(dd_mul_d(p, z), DD{head_dd[2 * k], head_dd[2 * k + 1]});
  return dd_mul_d(p, z);
}
REPMODE_HD DD lgamma2_wide(double z) { return series_hybrid_dd(lgamma2_coef(), 40, lgamma2_coef_dd(), z); }
REPMODE_HD DD lgamma1_wide(double z) { return series_hybrid_dd(lgamma1_coef(), 30, lgamma1_head_dd(), z); }
REPMODE_HD DD dd_neg(DD a) { return DD{-a.hi, -a.lo}; }
// log of a double-double t > 0 with log_fast: < 2^-57.4 relative (+ (t.lo/t.hi)^2/2 < 2^-105).
REPMODE_HD DD log_dd_fast_of(DD t) {
  int e;
  double M = math_detail::split_double(bits_of(t.hi), e);
  return dd_add(math_detail::log_fast(M, e), DD{t.lo / t.hi, 0.0});
}

// The float64 lgamma for a finite x > 0 as a double-double: the regions of lgamma_pos with
// every series in the hybrid double-double form, every log by log_fast (double-double, < 2^-57.4
// relative), and the sums in double-double; the caller rounds hi + lo once.
REPMODE_HD DD lgamma_pos_wide(double x) {
  if (x == 1.0 || x == 2.0) return DD{0.0, 0.0};  // +0, as torch (the series would give -0 at 1)
  if (x < 0.25) return dd_add(lgamma1_wide(x), dd_neg(log_dd(x)));
  if (x < 0.5) {
    DD l1p = log_dd_fast_of(two_sum(1.0, x));
    return dd_add(dd_add(lgamma2_wide(x), dd_neg(l1p)), dd_neg(log_dd(x)));
  }
  if (x < 0.75) return dd_add(lgamma2_wide(x - 1.0), dd_neg(log_dd(x)));  // log1p(x - 1) = log x
  if (x <= 1.25) return lgamma1_wide(x - 1.0);
  if (x < 2.75) return lgamma2_wide(x - 2.0);
  if (x < 12.0) {
    double m = round_even_of(x);
    int n = int(m) - 2;
    DD p = {x - 1.0, 0.0};
    for (int k = 2; k <= n; ++k) p = dd_mul_d(p, x - double(k));
    return dd_add(log_dd_fast_of(p), lgamma2_wide(x - m));
  }
  if (x == inf64()) return DD{inf64(), 0.0};
  DD l = log_dd(x);
  DD lm1 = dd_add(l, DD{-1.0, 0.0});
  DD r = dd_add(dd_mul_d(lm1, x), DD{-0.5 * lm1.hi, -0.5 * lm1.lo});
  r = dd_add(r, DD{kHalfLog2PiMinusHalfHi, kHalfLog2PiMinusHalfLo});
  double ix = 1.0 / x;
  double s = ix * series(stirling_coef() + 1, 9, ix * ix) + ix * stirling_coef()[0];
  if (r.hi == inf64()) return DD{inf64(), 0.0};
  return dd_add(r, DD{s, 0.0});
}

// lgamma for a finite x > 0. Regions (every subtraction x - 1, x - k below is exact):
//   x < 1/4:        lgamma1(x) - log x                          (lgamma(x) = lgamma(1 + x) - log x)
//   1/4 <= x < 3/4: (lgamma2(z) - log1p(z)) - log(x) with z = x  (x < 1/2), or
//                   lgamma2(z) - log1p(z) with z = x - 1          (x >= 1/2)
//   3/4 <= x <= 5/4: lgamma1(x - 1)        (the zero at 1: relative accuracy kept)
//   5/4 < x < 11/4: lgamma2(x - 2)         (the zero at 2 and the minimum at 1.4616)
//   11/4 <= x < 12: lgamma2(z) + log((x - 1)(x - 2)...(x - n)), z = x - round(x), n = round(x) - 2,
//                   the product in double-double (exact factors), its log_fast
//   x >= 12:        Stirling with log x in double-double: (x - 1/2)(log x - 1) + (log(2 pi) - 1)/2
//                   + x^-1 P(x^-2), the first product in double-double.
REPMODE_HD double lgamma_pos(double x) {
  if (x == 1.0 || x == 2.0) return 0.0;  // +0, as torch (the series would give -0 at 1)
  if (x < 0.25) return lgamma1(x) - repmode_log(x);
  if (x < 0.5) return (lgamma2(x) - repmode_log1p(x)) - repmode_log(x);
  if (x < 0.75) {
    double z = x - 1.0;
    return lgamma2(z) - repmode_log1p(z);
  }
  if (x <= 1.25) return lgamma1(x - 1.0);
  if (x < 2.75) return lgamma2(x - 2.0);
  if (x < 12.0) {
    double m = round_even_of(x);
    double z = x - m;
    int n = int(m) - 2;
    DD p = {x - 1.0, 0.0};
    for (int k = 2; k <= n; ++k) p = dd_mul_d(p, x - double(k));
    int e;
    double M = math_detail::split_double(bits_of(p.hi), e);
    DD l = math_detail::log_fast(M, e);
    return l.hi + (l.lo + p.lo / p.hi + lgamma2(z));
  }
  if (x == inf64()) return inf64();
  DD l = log_dd(x);
  DD lm1 = dd_add(l, DD{-1.0, 0.0});
  DD r = dd_add(dd_mul_d(lm1, x), DD{-0.5 * lm1.hi, -0.5 * lm1.lo});
  r = dd_add(r, DD{kHalfLog2PiMinusHalfHi, kHalfLog2PiMinusHalfLo});
  double ix = 1.0 / x;
  double s = ix * series(stirling_coef() + 1, 9, ix * ix) + ix * stirling_coef()[0];
  if (r.hi == inf64()) return inf64();
  return r.hi + (r.lo + s);
}

}  // namespace special_detail

// lgamma: NaN -> NaN; +-inf -> +inf; +-0 and the non-positive integers -> +inf (torch).
// Negative x > -16 (the region of the zeros of lgamma on the negative axis): lgamma(x) =
// lgamma(2 + r) - log|x (x + 1) ... (x + n - 1)| with r = x - round(x) (exact), n = 2 - round(x),
// every factor x + k an exact double-double (two_sum), the product in double-double, log_accurate
// and lgamma2 in double-double, so the result keeps its relative accuracy next to the zeros.
// x <= -16: the reflection log(pi) - log|x sin(pi r)| - lgamma(-x) (no zeros there: |lgamma| > 27).
REPMODE_HD double special_lgamma_def(double x, bool wide);

namespace special_detail {
// lgamma(x) for x < 0, not an integer, as a double-double (see special_lgamma).
REPMODE_HD DD lgamma_neg_dd(double x, bool wide) {
  // -2^-60 < x < 0: lgamma(x) = -log|x| - gamma x + O(x^2), the rest below 2^-60 of the result
  // (and log_accurate below needs a product above 2^-255)
  if (x > -0x1p-60) return dd_neg(log_dd(-x));
  double m = round_even_of(x);
  double r = x - m;
  if (x > -16.0) {
    int n = 2 - int(m);
    DD p = {x, 0.0};
    for (int k = 1; k < n; ++k) p = dd_mul(p, two_sum(x, double(k)));
    if (p.hi < 0.0) p = DD{-p.hi, -p.lo};
    DD l = log_dd_accurate(p);
    return dd_add(lgamma2_dd(r), dd_neg(l));
  }
  double s = repmode_sin(kPi * r);
  double t = x * s;
  if (t < 0.0) t = -t;
  DD lp = wide ? lgamma_pos_wide(-x) : DD{lgamma_pos(-x), 0.0};
  return dd_add(DD{kLnPi - repmode_log(t), 0.0}, dd_neg(lp));
}
}  // namespace special_detail

REPMODE_HD double special_lgamma_def(double x, bool wide) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  if (x > 0.0) {
    if (!wide) return lgamma_pos(x);
    DD d = lgamma_pos_wide(x);
    return d.hi + d.lo;
  }
  if (x == 0.0 || x == -inf64() || is_integer(x)) return inf64();
  DD d = lgamma_neg_dd(x, wide);
  return d.hi + d.lo;
}
// The float64 definition (double-double series and sums) and the float32 one (double).
REPMODE_HD double special_lgamma(double x) { return special_lgamma_def(x, true); }
REPMODE_HD double special_lgamma_for_float(double x) { return special_lgamma_def(x, false); }

namespace special_detail {

// ============================== digamma ==============================

// digamma(x0 + t) = sum_(k>=1) psi^(k)(x0)/k! t^k around the positive zero x0 = 1.4616...,
// used for t in [-0.4617, 0.5384] (radius of convergence x0): 40 terms leave < 2^-57.
REPMODE_HD const double* digamma_root_coef() {
  // clang-format off
  static constexpr double k[40] = {
      0x1.ef72bc8ee38acp-1, -0x1.c563b54aa1a35p-2, 0x1.08b4294d50381p-2, -0x1.4fc1317257da8p-3,
      0x1.b9a5b6370f3abp-4, -0x1.27baba261cc2cp-4, 0x1.8fce02b239ca7p-5, -0x1.0fa7ec36a7d8fp-5,
      0x1.723d6807edcc0p-6, -0x1.f970508e1b6a2p-7, 0x1.5955caaa962f3p-7, -0x1.d828079282eb8p-8,
      0x1.42e1acf81d8dcp-8, -0x1.b9afc7cee8a14p-9, 0x1.2e23345f79aafp-9, -0x1.9d626f71d1f7ap-10,
      0x1.1acebbd761089p-10, -0x1.82f6345c65b35p-11, 0x1.08bdae1a261d4p-11, -0x1.6a3fddea11304p-12,
      0x1.efacab6fb8985p-13, -0x1.531f5dc5eb563p-13, 0x1.d0080f810fab5p-14, -0x1.3d7972688af67p-14,
      0x1.b2691182c5c34p-15, -0x1.29357f7d6cb86p-15, 0x1.96ae4a8e32b49p-16, -0x1.163cc7373be8bp-16,
      0x1.7cb8b3916fd29p-17, -0x1.047a1894e0fdep-17, 0x1.646b54f410bdfp-18, -0x1.e7b34a5b78a3cp-19,
      0x1.4dab173747443p-19, -0x1.c891c9fca61dep-20, 0x1.385e9fcb1c6a8p-20, -0x1.ab6cff79188aap-21,
      0x1.246e3329dab55p-21, -0x1.902471b2c8ebdp-22, 0x1.11c399dbd8e73p-22, -0x1.7699ba6292b3ep-23,
  };
  // clang-format on
  return k;
}
// digamma(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k), x >= 10.
REPMODE_HD const double* digamma_asym_coef() {
  static constexpr double k[10] = {
      0x1.5555555555555p-4,  -0x1.1111111111111p-7, 0x1.0410410410410p-8,  -0x1.1111111111111p-8, 0x1.f07c1f07c1f08p-8,
      -0x1.5995995995996p-6, 0x1.5555555555555p-4,  -0x1.c5e5e5e5e5e5ep-2, 0x1.86e7f9b9fe6e8p+1,  -0x1.a74ca514ca515p+4,
  };
  return k;
}

REPMODE_HD double digamma_root(double t) { return series(digamma_root_coef(), 40, t); }

// 1/d as a double-double: q = RN(1/d), the remainder 1 - q d exact (fma).
REPMODE_HD DD recip_dd(double d) {
  double q = 1.0 / d;
  return DD{q, repmode_fma(-q, d, 1.0) / d};
}

// digamma for a finite x > 0:
//   x < 1:       S(t) - 1/x with t = (x - (x0 - 1)_hi) - (x0 - 1)_lo   (digamma(x) = digamma(x + 1) - 1/x)
//   1 <= x <= 2: S(t), t = (x - x0_hi) - x0_lo
//   2 < x < 10:  S(y - x0) + sum_(k=1..n) 1/(x - k), y = x - n in [1, 2) (exact), the sum in
//                double-double from k = 1 (the smallest term) to n
//   x >= 10:     log x - (1/(2x) + x^-2 P(x^-2)), log x in double-double
REPMODE_HD double digamma_pos(double x) {
  if (x < 1.0) {
    double t = (x - kPsiRootM1Hi) - kPsiRootM1Lo;
    DD q = recip_dd(x);
    return (digamma_root(t) - q.lo) - q.hi;
  }
  if (x <= 2.0) return digamma_root((x - kPsiRootHi) - kPsiRootLo);
  if (x < 10.0) {
    int n = int(floor_of(x)) - 1;
    DD s = recip_dd(x - 1.0);
    for (int k = 2; k <= n; ++k) s = dd_add(s, recip_dd(x - double(k)));
    double y = x - double(n);
    s = dd_add(s, DD{digamma_root((y - kPsiRootHi) - kPsiRootLo), 0.0});
    return s.hi + s.lo;
  }
  if (x == inf64()) return inf64();
  DD l = log_dd(x);
  double ix2 = 1.0 / (x * x);
  double corr = 0.5 / x + series(digamma_asym_coef(), 10, ix2);
  return l.hi + (l.lo - corr);
}

}  // namespace special_detail

// digamma: NaN -> NaN; +inf -> +inf; -inf -> NaN; +0 -> -inf, -0 -> +inf; negative integers ->
// NaN (torch); 0 < |x| < 2^-60: -1/x. x < 0: digamma(-x) - 1/x - pi cos(pi r)/sin(pi r), r = x - round(x) (exact).
REPMODE_HD double special_digamma(double x) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  if (x == 0.0) return (bits_of(x) >> 63) ? inf64() : -inf64();
  // |x| < 2^-60: digamma(x) = -1/x - gamma + O(x), the rest below 2^-60 of -1/x (also the overflow
  // of 1/x to +-inf for the smallest subnormals)
  if ((x < 0.0 ? -x : x) < 0x1p-60) return -1.0 / x;
  if (x > 0.0) return digamma_pos(x);
  if (x == -inf64() || is_integer(x)) return Canonical<double>::nan();
  double r = x - round_even_of(x);
  double a = kPi * r;
  double cot = kPi * repmode_cos(a) / repmode_sin(a);
  DD q = recip_dd(x);
  return ((digamma_pos(-x) - q.lo) - q.hi) - cot;
}

namespace special_detail {

// ============================== Hurwitz zeta ==============================

// B_2j / (2j)!, j = 1..12: the Euler-Maclaurin correction terms.
REPMODE_HD const double* euler_maclaurin_coef() {
  static constexpr double k[12] = {
      0x1.5555555555555p-4,  -0x1.6c16c16c16c17p-10, 0x1.1566abc011567p-15, -0x1.bbd779334ef0bp-21,
      0x1.66a8f2bf70ebep-26, -0x1.22805d644267fp-31, 0x1.d6db2c4e09162p-37, -0x1.7da4e1f79955cp-42,
      0x1.355871d652e9ep-47, -0x1.f57d968caacf1p-53, 0x1.967e1f09c376fp-58, -0x1.497d9033a2b5cp-63,
  };
  return k;
}

// (h + l)^-s for a double-double base h + l (|l| <= ulp(h)/2) and s >= 1, with the sign of
// h when s is an odd integer: |h|^-s (repmode_pow, < 0.53 ulp) times (1 - s l/h).
REPMODE_HD double pow_neg_dd(DD a, double s, bool odd) {
  double ah = a.hi < 0.0 ? -a.hi : a.hi;
  double v = repmode_pow(ah, -s);
  v = v - v * (s * (a.lo / a.hi));
  return (a.hi < 0.0 && odd) ? -v : v;
}

// (q + k)^-s for an integer 2 <= s <= 64 as a double-double: h = q + k exact (two_sum), h^s
// by s - 1 double-double products, 1/h^s by dd_div: < 2^-98 relative, so the direct sum of
// terms of both signs (q < 0, s odd) keeps the accuracy its cancellation allows. |q + k| <= 60
// here, so h^s < 2^378 does not overflow.
REPMODE_HD DD inv_pow_int_dd(double q, double k, int s) {
  DD h = two_sum(q, k);
  DD p = h;
  for (int i = 1; i < s; ++i) p = dd_mul(p, h);
  return math_detail::dd_div(DD{1.0, 0.0}, p);
}

}  // namespace special_detail

// Hurwitz zeta(s, q) = sum_(k>=0) (q + k)^-s, torch's special_zeta(x = s, q). Special values
// as torch (Cephes): NaN in either -> NaN; s == 1 -> +inf; s < 1 -> NaN; q a non-positive
// integer (and -inf) -> +inf; q < 0 with s not an integer -> NaN; s = +inf: 1 (q = 1), +inf
// (0 < q < 1), NaN (q > 1); q = +inf -> NaN (Cephes' tail evaluates 0 * inf there).
// Order: N = the least n >= 0 with a = q + N >= A = 10 + min(s, 50) (a as an exact double-double
// two_sum(q, N)).
// The Euler-Maclaurin tail at a first:
//   T = sum_(j=12..1) B_2j/(2j)! s(s+1)...(s+2j-2) a^(-s-2j+1)  +  a^-s / 2  +  a^(1-s)/(s - 1)
// (j from 12 down), then the direct terms (q + k)^-s for k = N-1 down to 0 (smallest first): for
// an integer s <= 64 each term and the running sum in double-double (inv_pow_int_dd), otherwise
// in double (pow_neg_dd).
// q < -2^26 (more than 2^26 direct terms; torch's loop would run as long) -> NaN.
REPMODE_HD double special_zeta(double s, double q) {
  using namespace special_detail;
  if (is_nan(s) || is_nan(q)) return Canonical<double>::nan();
  if (s == 1.0) return inf64();
  if (s < 1.0) return Canonical<double>::nan();
  bool s_int = is_integer(s);
  if (q <= 0.0) {
    if (is_integer(q)) return inf64();
    if (!s_int) return Canonical<double>::nan();
  }
  if (s == inf64()) return q == 1.0 ? 1.0 : (q < 1.0 ? inf64() : Canonical<double>::nan());
  if (q == inf64()) return Canonical<double>::nan();
  if (q < -0x1p26) return Canonical<double>::nan();
  bool odd = s_int && !is_integer(s * 0.5);
  const double A = 10.0 + (s < 50.0 ? s : 50.0);  // the tail's start: its terms shrink like ((s + 2j)/(2 pi a))^2
  double nd = q >= A ? 0.0 : floor_of(A - q) + 1.0;
  if (nd > 0.0 && q + (nd - 1.0) >= A) nd = nd - 1.0;  // the least N with q + N >= A (floor may overshoot by one)
  DD a = two_sum(q, nd);
  double ah = a.hi;
  double w = pow_neg_dd(a, s, false);  // a^-s, a >= A
  double inv_a = 1.0 / ah;
  double inv_a2 = inv_a * inv_a;
  const double* b = euler_maclaurin_coef();
  double f[12];
  double fac = s * w * inv_a;  // s a^(-s-1)
  for (int j = 0; j < 12; ++j) {
    f[j] = b[j] * fac;
    fac = fac * ((s + double(2 * j + 1)) * (s + double(2 * j + 2))) * inv_a2;
  }
  double t = f[11];
  for (int j = 10; j >= 0; --j) t = t + f[j];
  t = t + 0.5 * w;
  t = t + (w * ah) / (s - 1.0);
  if (s_int && s <= 64.0) {  // the direct terms in double-double
    DD acc = {t, 0.0};
    for (double k = nd - 1.0; k >= 0.0; k = k - 1.0) acc = dd_add(acc, inv_pow_int_dd(q, k, int(s)));
    return acc.hi + acc.lo;
  }
  for (double k = nd - 1.0; k >= 0.0; k = k - 1.0) t = t + pow_neg_dd(two_sum(q, k), s, odd);
  return t;
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (n! a product of doubles, exact
// up to 22!), digamma for n = 0.
// At x = +-inf as torch: polygamma(1, +inf) = 0 and polygamma(1, -inf) = NaN (its trigamma), n >= 2
// through zeta (NaN at +inf, -+inf at -inf).
REPMODE_HD double special_polygamma(double n, double x) {
  if (n == 0.0) return special_digamma(x);
  if (n == 1.0 && (x == special_detail::inf64() || x == -special_detail::inf64()))
    return x > 0.0 ? 0.0 : Canonical<double>::nan();
  double f = 1.0;
  for (double k = 2.0; k <= n; k = k + 1.0) f = f * k;
  bool odd = !special_detail::is_integer(n * 0.5);
  return (odd ? f : -f) * special_zeta(n + 1.0, x);
}

// mvlgamma(x, p) = sum_(j=0..p-1) lgamma(x - j/2) (in this order) + (p (p - 1)/4) log(pi).
// float32 definition: the double lgamma of each term summed in double; float64: each term's
// double-double lgamma summed in double-double with log(pi) as hi + lo, rounded once. A pole or
// NaN in any term gives that term's value (the double sum of the rounded terms).
REPMODE_HD double special_mvlgamma_def(double x, double p, bool wide) {
  using namespace special_detail;
  double c = p * (p - 1.0) * 0.25;  // exact for p < 2^26
  if (!wide) {
    double s = 0.0;
    for (double j = 0.0; j < p; j = j + 1.0) s = s + special_lgamma_for_float(x - 0.5 * j);
    return s + c * kLnPi;
  }
  DD s = {0.0, 0.0};
  bool finite = true;
  double plain = 0.0;
  for (double j = 0.0; j < p; j = j + 1.0) {
    double y = x - 0.5 * j;
    double v = special_lgamma(y);
    plain = plain + v;
    if (v - v != 0.0) {  // inf or NaN
      finite = false;
      continue;
    }
    DD d = (y > 0.0) ? lgamma_pos_wide(y) : lgamma_neg_dd(y, true);
    s = dd_add(s, d);
  }
  if (!finite) return plain + c * kLnPi;
  s = dd_add(s, dd_mul_d(DD{kLnPi, kLnPiLo}, c));
  return s.hi + s.lo;
}
REPMODE_HD double special_mvlgamma(double x, double p) { return special_mvlgamma_def(x, p, true); }
REPMODE_HD double special_mvlgamma_for_float(double x, double p) { return special_mvlgamma_def(x, p, false); }

// ============================== erfcx ==============================

// erfcx(x) = exp(x^2) erfc(x): NaN -> NaN; +inf -> +0; -inf (and x < -26.64, overflow) -> +inf.
//   x < 1/2:      e^h (erfc(x) (1 + l)), x^2 = h + l exact (two_prod); repmode_erfc
//   1/2 <= x < 20: math_erf.h's erfcx polynomials (< 2^-51.86 relative; the last row, up to 28,
//                 loses accuracy above 27.5, so it is not used)
//   x >= 20:      (1/sqrt(pi))/x (1 - z/2 + 3z^2/4 - ... - 34459425 z^9/512), z = 1/x^2 (the
//                 asymptotic series; the first omitted term < 2^-67)
REPMODE_HD double special_erfcx(double x) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  if (x < 0.5) {
    DD sq = two_prod(x, x);
    if (sq.hi == inf64()) return inf64();
    double r = repmode_erfc(x);
    return repmode_exp(sq.hi) * (r + r * sq.lo);
  }
  if (x < 20.0) return erf_detail::erfcx_poly(x, int(bits_of(x) >> 49) - 0x1ff0);
  double z = 1.0 / x;
  z = z * z;
  double p = -34459425.0 / 512.0;
  p = p * z + 2027025.0 / 256.0;
  p = p * z - 135135.0 / 128.0;
  p = p * z + 10395.0 / 64.0;
  p = p * z - 945.0 / 32.0;
  p = p * z + 105.0 / 16.0;
  p = p * z - 15.0 / 8.0;
  p = p * z + 3.0 / 4.0;
  p = p * z - 0.5;
  return kInvSqrtPi / x + (kInvSqrtPi / x) * (p * z);
}

namespace special_detail {

// ============================== erfinv / ndtri ==============================

// erfinv(x) = sum_k a_k x^(2k+1) (the Maclaurin series, a_k = c_k/(2k+1) (sqrt(pi)/2)^(2k+1),
// c_0 = 1, c_k = sum_m c_m c_(k-1-m) / ((m+1)(2m+1))), 60 terms for |x| <= 3/4: truncation
// < 2^-56 relative (mpmath: 7.7e-18 at 3/4); every term positive, so Horner's rule adds no
// cancellation.
REPMODE_HD const double* erfinv_coef() {
  // clang-format off
  static constexpr double k[60] = {
      0x1.c5bf891b4ef6bp-1, 0x1.db29fb2fee5e4p-3, 0x1.053c2c0ab91c5p-3, 0x1.62847c47dda48p-4,
      0x1.0a13189c6ef7ap-4, 0x1.a7c85c89bb08bp-5, 0x1.5eeb1d488e312p-5, 0x1.2aba98b98c6bcp-5,
      0x1.0398a906bd082p-5, 0x1.ca6f47e062dc7p-6, 0x1.99f7081a343aap-6, 0x1.7270a3e16373ep-6,
      0x1.519f19f3734f1p-6, 0x1.35f4c1190186fp-6, 0x1.1e5536014bb5dp-6, 0x1.09efd97a0dec9p-6,
      0x1.f0507fecfff79p-7, 0x1.d10dc68aea61ap-7, 0x1.b55dce5b9ce6dp-7, 0x1.9cae2b86260a9p-7,
      0x1.8689e9a2ab53ep-7, 0x1.72928460d1068p-7, 0x1.607aca717a023p-7, 0x1.500315e9b331bp-7,
      0x1.40f676b929c34p-7, 0x1.33288b81e9211p-7, 0x1.2673d9e56925dp-7, 0x1.1ab8853af3679p-7,
      0x1.0fdb4c1126469p-7, 0x1.05c4bb5ede75bp-7, 0x1.f8c115aeaf390p-8, 0x1.e73a3224cb866p-8,
      0x1.d6d6011b93997p-8, 0x1.c779807c8f750p-8, 0x1.b90ce74c0baa5p-8, 0x1.ab7b2ea5325f1p-8,
      0x1.9eb1aead83d20p-8, 0x1.929fcbb473733p-8, 0x1.8736b080f504bp-8, 0x1.7c69136c699e1p-8,
      0x1.722b046478cd3p-8, 0x1.6871c24ca2a88p-8, 0x1.5f33968323329p-8, 0x1.5667b587d964fp-8,
      0x1.4e0623f2df03cp-8, 0x1.46079f0e0cc38p-8, 0x1.3e658882d5bb0p-8, 0x1.3719d4a647ebfp-8,
      0x1.301efb00cbd91p-8, 0x1.296fe8bf62febp-8, 0x1.2307f4c95feb0p-8, 0x1.1ce2d54075850p-8,
      0x1.16fc9639f98d2p-8, 0x1.11519187ac314p-8, 0x1.0bde676c8ca46p-8, 0x1.069ff81f735fep-8,
      0x1.01935e0184db0p-8, 0x1.f96bd0e471ccap-9, 0x1.f00a2e5b9421ep-9, 0x1.e6fd2c4afcc34p-9,
  };
  // clang-format on
  return k;
}
// The float32 definition, 0 <= a <= 3/4: the first 48 terms (truncation < 2^-47 relative at 3/4,
// far below a float32 half-ulp) as a (E(z^2) + z O(z^2)), z = a^2, E and O the even and odd
// coefficients by two independent Horner chains (half the dependency chain of one).
REPMODE_HD double erfinv_series(double a) {
  const double* c = erfinv_coef();
  double z = a * a, y = z * z;
  double e = c[46], o = c[47];
  for (int k = 44; k >= 0; k -= 2) {
    e = e * y + c[k];
    o = o * y + c[k + 1];
  }
  return a * (e + z * o);
}
// a_0 ... a_15 as hi + lo.
REPMODE_HD const double* erfinv_head_dd() {
  // clang-format off
  static constexpr double k[32] = {
      0x1.c5bf891b4ef6bp-1, -0x1.618f13eb7ca89p-55, 0x1.db29fb2fee5e4p-3, -0x1.3ea2ef8dde075p-60,
      0x1.053c2c0ab91c5p-3, 0x1.cec68daff0d80p-61, 0x1.62847c47dda48p-4, -0x1.0e9d101c608a2p-58,
      0x1.0a13189c6ef7ap-4, -0x1.23650dd1d38d3p-58, 0x1.a7c85c89bb08bp-5, 0x1.7891291139022p-59,
      0x1.5eeb1d488e312p-5, 0x1.a340a045a76acp-59, 0x1.2aba98b98c6bcp-5, 0x1.95302078d6ea7p-60,
      0x1.0398a906bd082p-5, 0x1.19a2949561881p-60, 0x1.ca6f47e062dc7p-6, 0x1.6a59ca75ae1bbp-62,
      0x1.99f7081a343aap-6, -0x1.5aca95c367c6bp-60, 0x1.7270a3e16373ep-6, -0x1.ae1c44a3d5827p-60,
      0x1.519f19f3734f1p-6, 0x1.72edade085789p-61, 0x1.35f4c1190186fp-6, 0x1.fa92ad376ad72p-61,
      0x1.1e5536014bb5dp-6, -0x1.9a343b84ed8a0p-60, 0x1.09efd97a0dec9p-6, -0x1.54ac1c62c95fap-60,
  };
  // clang-format on
  return k;
}
// The float64 series: the terms k >= 16 (< 2^-14 of the sum at a = 3/4) by Horner's rule in
// double on z = RN(a^2) (its rounding moves term k by k u: < 2^-63 of the sum), then the head
// a_15 ... a_0 by Horner's rule in double-double on z = a^2 exact (two_prod), times a: < 2^-62
// relative before the final rounding.
REPMODE_HD DD erfinv_series_dd(double a) {
  DD z = two_prod(a, a);
  const double* c = erfinv_coef();
  double tail = c[59];
  for (int k = 58; k >= 16; --k) tail = tail * z.hi + c[k];
  const double* h = erfinv_head_dd();
  DD p = {tail, 0.0};
  for (int k = 15; k >= 0; --k) p = dd_add(dd_mul(p, z), DD{h[2 * k], h[2 * k + 1]});
  return dd_mul_d(p, a);
}

// Giles' single-precision approximation of erfinv(x)/x in w = -log((1 - x)(1 + x)) (M. Giles,
// "Approximating the erfinv function", GPU Computing Gems, 2011), as a starting point only: for
// w < 5, P_lo(w - 5/2); otherwise P_hi(sqrt(w) - 3), each by Horner's rule p = c_k + p w from the
// coefficients below (highest degree first). The AVX2/AVX-512 array code (csrc/cpu/vec_special*)
// reads the same tables.
REPMODE_HD const double* giles_coef(bool high) {
  // clang-format off
  static constexpr double k[18] = {
      2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
      -0.00125372503, -0.00417768164, 0.246640727, 1.50140941,
      -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
      -0.0076224613, 0.00943887047, 1.00167406, 2.83297682,
  };
  // clang-format on
  return high ? k + 9 : k;
}
REPMODE_HD double giles(double w) {
  const bool high = !(w < 5.0);
  const double* c = giles_coef(high);
  w = high ? sqrt_of(w) - 3.0 : w - 2.5;
  double p = c[0];
  for (int k = 1; k < 9; ++k) p = c[k] + p * w;
  return p;
}

// erfcinv(y) for 0 < y <= 1/2: the t >= 0.4769 with erfc(t) = y. Start: Giles at x = 1 - y
// (exact) while w = -log(y (2 - y)) <= 16, else the asymptotic u = L - log(pi u)/2 (two
// fixed-point steps from u = L = -log y), t = sqrt(u). Then 2 (Giles) or 4 Newton steps on
// g(t) = log erfc(t) - log y = log erfcx(t) - t^2 - log y, g'(t) = -(2/sqrt(pi))/erfcx(t):
// t += g erfcx(t) sqrt(pi)/2, with t^2 (two_prod) and log y (log_fast) in double-double so
// that g keeps its absolute accuracy when t^2 ~ -log y ~ 745.
REPMODE_HD double erfcinv_core(double y) {
  DD ly = log_dd(y);
  double w = -repmode_log(y * (2.0 - y));
  double t;
  if (w <= 16.0) {
    t = giles(w) * (1.0 - y);
  } else {
    double L = -ly.hi;
    double u = L - 0.5 * repmode_log(kPi * L);
    u = L - 0.5 * repmode_log(kPi * u);
    t = sqrt_of(u);
  }
  // Giles' start is within 1.1e-7 relative (measured against mpmath for y >= 1e-7): two quadratic
  // steps; the asymptotic start (w > 16) within ~1e-3: four.
  const int steps = w <= 16.0 ? 2 : 4;
  for (int i = 0; i < steps; ++i) {
    double E = special_erfcx(t);
    DD d = dd_add(two_prod(t, t), ly);
    double g = repmode_log(E) - (d.hi + d.lo);
    t = t + g * (E * kSqrtPiOver2);
  }
  return t;
}

// The float64 refinement of t ~ erfcinv(y) (within 2^-40 relative): one Halley step from
// t' = t rounded to float32 (24 bits, so t'^2 is exact and math_erf.h's erf_accurate applies):
// f = erfc(t') - y in double-double (erf_accurate: < 2^-94 relative), f' = -(2/sqrt(pi)) e^-t'^2,
// d = f/f', t'' = t' - d/(1 + t' d) (f''/f' = -2t'), as the exact double-double two_sum(t', -c).
// |t' - erfcinv(y)| < 2^-23 t', so the step's cubic remainder is < 2^-66 t and the rounding
// errors of d (< 2^-50 of d) are < 2^-73 t. Needs 0 < t' < 10.0625 (erf_accurate's domain:
// y > 2^-150); otherwise t is returned as it is.
REPMODE_HD DD erfcinv_refine(double t, double y) {
  double tp = double(float(t));
  if (!(tp > 0.0 && tp < 10.0)) return DD{t, 0.0};
  DD E = erf_detail::erf_accurate(tp, erf_detail::ErfKind::erfc);
  DD f = dd_add(E, DD{-y, 0.0});
  double fp = -kTwoOverSqrtPi * repmode_exp(-(tp * tp));
  double d = (f.hi + f.lo) / fp;
  return two_sum(tp, -(d / (1.0 + tp * d)));
}

}  // namespace special_detail

// erfinv: NaN, |x| > 1 -> NaN; +-1 -> +-inf; +-0 -> +-0 (odd: the sign of x).
//   |x| <= 3/4 (float32) or 5/8 (float64): the Maclaurin series of |x| (the 60 terms leave
//                < 2^-56.8 relative at 3/4, < 2^-88 at 5/8)
//   above:       erfcinv(1 - |x|)   (1 - |x| exact)
// Two definitions: `wide` = false is the float32 kernel's (the series and erfcinv_core in double,
// the result rounded once to float32 by the caller); `wide` = true the float64 kernel's
// (erfinv_series_dd, and erfcinv_core followed by erfcinv_refine).
REPMODE_HD double special_erfinv_def(double x, bool wide) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  double a = x < 0.0 ? -x : x;
  if (a > 1.0) return Canonical<double>::nan();
  if (a == 0.0) return x;
  double r;
  if (a == 1.0) {
    r = inf64();
  } else if (wide && a <= 0.625) {
    DD s = erfinv_series_dd(a);
    r = s.hi + s.lo;
  } else if (!wide && a <= 0.75) {
    r = erfinv_series(a);
  } else {
    double y = 1.0 - a;
    r = erfcinv_core(y);
    if (wide) {
      DD s = erfcinv_refine(r, y);
      r = s.hi + s.lo;
    }
  }
  return x < 0.0 ? -r : r;
}
REPMODE_HD double special_erfinv(double x) { return special_erfinv_def(x, true); }
REPMODE_HD double special_erfinv_for_float(double x) { return special_erfinv_def(x, false); }

// ndtri(p) = sqrt(2) erfinv(2p - 1): NaN, p < 0, p > 1 -> NaN; 0 -> -inf; 1 -> +inf.
//   1/4 <= p <= 3/4: sqrt(2) erfinv(2p - 1) by the series (2p - 1 exact)
//   p < 1/4:         -sqrt(2) erfcinv(2p)
//   p > 3/4:         sqrt(2) erfcinv(2 (1 - p))   (1 - p exact)
// `wide` as for erfinv; the float64 definition multiplies the double-double erfinv by sqrt(2)
// as a double-double and rounds once, the float32 one rounds v sqrt2_hi + v sqrt2_lo.
REPMODE_HD double special_ndtri_def(double p, bool wide) {
  using namespace special_detail;
  if (is_nan(p) || p < 0.0 || p > 1.0) return Canonical<double>::nan();
  if (p == 0.0) return -inf64();
  if (p == 1.0) return inf64();
  DD v;
  bool neg;
  if (p >= 0.25 && p <= 0.75) {
    double u = 2.0 * p - 1.0;
    neg = u < 0.0;
    double au = neg ? -u : u;
    if (au == 0.0) return 0.0;
    v = wide ? erfinv_series_dd(au) : DD{erfinv_series(au), 0.0};
  } else {
    neg = p < 0.25;
    double y = neg ? 2.0 * p : 2.0 * (1.0 - p);
    double t = erfcinv_core(y);
    v = wide ? erfcinv_refine(t, y) : DD{t, 0.0};
  }
  double r;
  if (wide) {
    DD s = dd_mul(v, DD{kSqrt2Hi, kSqrt2Lo});
    r = s.hi + s.lo;
  } else {
    r = v.hi * kSqrt2Hi + v.hi * kSqrt2Lo;
  }
  return neg ? -r : r;
}
REPMODE_HD double special_ndtri(double p) { return special_ndtri_def(p, true); }
REPMODE_HD double special_ndtri_for_float(double p) { return special_ndtri_def(p, false); }

// log_ndtr(x) = log(Phi(x)), Phi the standard normal distribution function. NaN -> NaN;
// -inf -> -inf; +inf -> -0 (log1p(-0), as torch). t = x/sqrt(2) as an exact-enough
// double-double th + tl (fma).
//   x < -1:  log(erfcx(-t)/2) - x^2/2 with erfcx(-th - tl) = E - tl E', E' = 2uE - 2/sqrt(pi) (u = -th;
//            u >= 20: E (-1/u + 1/u^3), free of that formula's cancellation),
//            and x^2/2 = h + l exact (two_prod(x/2, x)): ((log E - ln2_hi) - (l + ln2_lo)) - h
//   x >= -1: log1p(-erfc(t)/2) with erfc(th + tl) = erfc(th) - tl (2/sqrt(pi)) exp(-th^2)
REPMODE_HD double special_log_ndtr(double x) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  if (x == -inf64()) return -inf64();
  if (x == inf64()) return -0.0;
  double th = x * kSqrtHalfHi;
  double tl = repmode_fma(x, kSqrtHalfHi, -th) + x * kSqrtHalfLo;
  if (x < -1.0) {
    DD sq = two_prod(0.5 * x, x);
    if (sq.hi == inf64()) return -inf64();
    double u = -th;
    double E = special_erfcx(u);
    // erfcx'(u) = 2u erfcx(u) - 2/sqrt(pi) cancels for large u: there erfcx(u) (-1/u + 1/u^3), its
    // asymptotic form (the correction tl erfcx' is ~2^-53 of erfcx, so 2^-16 relative is plenty)
    double dE = u < 20.0 ? 2.0 * u * E - kTwoOverSqrtPi : E * (-1.0 / u + 1.0 / (u * u * u));
    E = E - tl * dE;
    double a = repmode_log(E) - kLn2Hi;
    return (a - (sq.lo + kLn2Lo)) - sq.hi;
  }
  double e = repmode_erfc(th) - tl * (kTwoOverSqrtPi * repmode_exp(-(th * th)));
  return repmode_log1p(-0.5 * e);
}

// entr(x) = -x log x: NaN -> NaN; x > 0: -(x log x) with log x in double-double (log_fast) and
// the product in double-double, rounded once; +inf -> -inf; +-0 -> +0; x < 0 -> -inf (torch).
REPMODE_HD double special_entr(double x) {
  using namespace special_detail;
  if (is_nan(x)) return Canonical<double>::nan();
  if (x == inf64()) return -inf64();
  if (x > 0.0) {
    DD p = dd_mul_d(log_dd(x), x);
    return -(p.hi + p.lo);
  }
  if (x == 0.0) return 0.0;
  return -inf64();
}

}  // namespace repmode

// Per-element formulas: the exact sequence of IEEE-754 roundings of each elementwise op
// (docs/semantics.md, "Elementwise"). Shared by the CPU and CUDA kernels. Every result
// passes through canon() so a NaN output has one bit pattern on every device.
//
// Operands a, b, c are elements of the (converted, broadcast) inputs; p0, p1, p2 are the
// op's number arguments (alpha, negative_slope, ...).
// Formulas with more than one rounding evaluate in double (`Wide`) and round once to T: for
// float32 that keeps every such op within one float32 ulp of the exact value (the double
// steps carry ~2^-50 relative error, far below a float32 half-ulp), and the bits are fixed
// because the double steps are repmode's fixed sequences. For float64 T the same
// double sequence is the result.
#pragma once

#include "defs.h"
#include "math_exact.h"
#include "math_overloads.h"
#include "math_special.h"
#include "math_bessel.h"
#include "math_igamma.h"

namespace repmode {

// The elementwise op codes, defined here once (an X-macro list: X(name, code)): the enum EwOp, the
// kernels' dispatch switches, and Python's table (_C.codes()["EwOp"], the names upper-cased;
// repmode/kernels/elementwise.py).
// clang-format off
#define REPMODE_EW_OPS(X) \
  X(add, 0)                     /* a + p0*b */                                           \
  X(sub, 1)                     /* a - p0*b */                                           \
  X(mul, 2)                     /* a * b */                                              \
  X(div, 3)                     /* a / b */                                              \
  X(threshold_backward, 4)      /* b <= p0 ? +0 : a            (a = grad, b = input) */  \
  X(pow, 5)                     /* a ** b, correctly rounded for float32 */              \
  X(minimum, 6)                 /* IEEE 754-2019 minimum: NaN wins, -0 < +0 */           \
  X(maximum, 7)                 /* IEEE 754-2019 maximum */                              \
  X(clamp, 8)                   /* minimum(maximum(a, b), c) */                          \
  X(neg, 10)                                                                             \
  X(relu, 11)                                                                            \
  X(exp, 12)                                                                             \
  X(log, 13)                                                                             \
  X(abs, 14)                                                                             \
  X(log1p, 15)                                                                           \
  X(expm1, 16)                                                                           \
  X(log2, 17)                                                                            \
  X(exp2, 18)                                                                            \
  X(tanh, 19)                                                                            \
  X(sigmoid, 20)                                                                         \
  X(erf, 21)                                                                             \
  X(erfc, 22)                                                                            \
  X(sin, 23)                                                                             \
  X(cos, 24)                                                                             \
  X(rsqrt, 25)                                                                           \
  X(sqrt, 26)                                                                            \
  X(reciprocal, 27)                                                                      \
  X(sign, 28)                                                                            \
  X(leaky_relu, 30)             /* p0 = negative_slope */                                \
  X(leaky_relu_backward, 31)    /* a = grad, b = input */                                \
  X(elu, 32)                    /* p0 = alpha, p1 = scale, p2 = input_scale */           \
  X(elu_backward_input, 33)     /* a = grad, b = input */                                \
  X(elu_backward_result, 34)    /* a = grad, b = the forward result */                   \
  X(hardtanh_backward, 35)      /* a = grad, b = input, p0 = min_val, p1 = max_val */    \
  X(gelu, 36)                                                                            \
  X(gelu_tanh, 37)                                                                       \
  X(gelu_backward, 38)          /* a = grad, b = input */                                \
  X(gelu_tanh_backward, 39)                                                              \
  X(silu, 40)                                                                            \
  X(silu_backward, 41)                                                                   \
  X(mish, 42)                                                                            \
  X(mish_backward, 43)                                                                   \
  X(softplus, 44)               /* p0 = beta, p1 = threshold */                          \
  X(softplus_backward, 45)                                                               \
  X(tanh_backward, 46)          /* a = grad, b = the forward result */                   \
  X(sigmoid_backward, 47)       /* a = grad, b = the forward result */                   \
  X(addcmul, 48)                /* a + p0*b*c */                                         \
  X(addcdiv, 49)                /* a + p0*b/c */                                         \
  X(lerp, 50)                   /* a + c*(b - a), c = weight */                           \
  X(copysign, 51)               /* |a| with b's sign */                                  \
  X(fmod, 52)                   /* exact C fmod */                                       \
  X(remainder, 53)              /* fmod, + b when its sign differs from b's (torch) */   \
  X(floor_divide, 54)           /* torch's div_floor_floating sequence */                \
  X(fmax, 55)                   /* NaN ignored; equal: a */                              \
  X(fmin, 56)                                                                            \
  X(heaviside, 57)              /* a == 0 ? b : (a > 0) */                               \
  X(nextafter, 58)                                                                       \
  X(frac, 59)                   /* a - trunc(a) */                                       \
  X(nan_to_num, 60)             /* p0 = nan, p1 = posinf, p2 = neginf (values of T) */   \
  X(round_decimals, 61)         /* p0 = 10^|d| (double), p1 = 1 when d < 0 */            \
  X(frexp_mantissa, 62)                                                                  \
  X(frexp_exponent, 63)         /* the exponent as a value of T (exact) */               \
  X(logaddexp, 64)                                                                       \
  X(logaddexp2, 65)                                                                      \
  X(logit, 66)                  /* p0 = lo, p1 = hi (values of T), p2 = 1: clamp */      \
  X(logit_backward, 67)         /* a = grad, b = input; params as logit */               \
  X(xlog1py, 68)                                                                         \
  X(sinc, 69)                                                                            \
  X(hypot, 70)                                                                           \
  X(ldexp, 71)                  /* a * 2^b, b an integer (exact, rounded once) */        \
  X(hardswish, 72)                                                                       \
  X(hardswish_backward, 73)     /* a = grad, b = input */                                \
  X(hardsigmoid, 74)                                                                     \
  X(hardsigmoid_backward, 75)   /* a = grad, b = input */                                \
  X(softshrink, 76)             /* p0 = lambd */                                         \
  X(log_sigmoid, 77)                                                                     \
  X(log_sigmoid_backward, 78)   /* a = grad, b = input */                                \
  X(glu, 79)                    /* a * sigmoid(b), a and b the halves */                 \
  X(atan, 80)                   /* correctly rounded for float32 (math_atan.h) */        \
  X(atan2, 81)                  /* atan2(a, b), correctly rounded for float32 */         \
  X(asin, 82)                                                                            \
  X(acos, 83)                                                                            \
  X(sinh, 84)                   /* correctly rounded for float32 (math_tail.h) */        \
  X(cosh, 85)                                                                            \
  X(tan, 86)                                                                             \
  X(log10, 87)                                                                           \
  X(asinh, 88)                                                                           \
  X(acosh, 89)                                                                           \
  X(atanh, 90)                                                                           \
  X(lgamma, 91)                 /* csrc/common/math_special.h: double, rounded once */   \
  X(digamma, 92)                                                                         \
  X(polygamma, 93)              /* p0 = n (an integer >= 0) */                           \
  X(mvlgamma, 94)               /* p0 = p (an integer >= 1) */                           \
  X(erfinv, 95)                                                                          \
  X(zeta, 96)                   /* Hurwitz zeta(a, b) */                                 \
  X(ndtri, 97)                                                                           \
  X(log_ndtr, 98)                                                                        \
  X(erfcx, 99)                                                                           \
  X(entr, 100)                                                                           \
  /* Bessel functions and orthogonal polynomials (math_bessel.h; codes 110-139) */        \
  X(i0, 110)                    /* modified Bessel I0 (= special.modified_bessel_i0) */  \
  X(i0e, 111)                   /* e^-|x| I0(x) */                                       \
  X(i1, 112)                    /* modified Bessel I1 (= special.modified_bessel_i1) */  \
  X(i1e, 113)                   /* e^-|x| I1(x) */                                       \
  X(bessel_k0, 114)             /* modified Bessel K0 */                                 \
  X(bessel_k1, 115)                                                                      \
  X(bessel_k0e, 116)            /* e^x K0(x) */                                          \
  X(bessel_k1e, 117)            /* e^x K1(x) */                                          \
  X(spherical_bessel_j0, 118)   /* sin(x)/x */                                           \
  X(chebyshev_t, 119)           /* (a, b) = (x, n): torch's recurrences */               \
  X(chebyshev_u, 120)                                                                    \
  X(chebyshev_v, 121)                                                                    \
  X(chebyshev_w, 122)                                                                    \
  X(shifted_chebyshev_t, 123)                                                            \
  X(shifted_chebyshev_u, 124)                                                            \
  X(shifted_chebyshev_v, 125)                                                            \
  X(shifted_chebyshev_w, 126)                                                            \
  X(hermite_h, 127)                                                                      \
  X(hermite_he, 128)                                                                     \
  X(laguerre_l, 129)                                                                     \
  X(legendre_p, 130)                                                                     \
  X(kaiser_window, 131)         /* a = k; p0 = beta, p1 = (N - 1)/2 */                   \
  X(bessel_j0, 132)             /* Bessel J0 (Cephes, double-double) */                  \
  X(bessel_j1, 133)                                                                      \
  X(bessel_y0, 134)             /* Bessel Y0 (Cephes, double-double) */                  \
  X(bessel_y1, 135)                                                                      \
  /* incomplete gamma and Airy Ai (math_igamma.h; codes 140-149) */                      \
  X(igamma, 140)                /* P(a, x), regularized lower incomplete gamma */        \
  X(igammac, 141)               /* Q(a, x) = 1 - P(a, x) */                              \
  X(airy_ai, 142)
// clang-format on

enum class EwOp : int {
#define REPMODE_X(name, code) name = code,
  REPMODE_EW_OPS(REPMODE_X)
#undef REPMODE_X
};

// The op's number arguments as given (Python floats are doubles). Formulas in T round them
// to T once (T(p.p0)); the double formulas use them unrounded.
template <typename T>
struct EwParams {
  double p0, p1, p2;
};

namespace ew_detail {

using Wide = double;

// Round a double result once to T and canonicalise NaN.
template <typename T>
REPMODE_HD T narrow(Wide r) {
  return canon(static_cast<T>(r));
}

REPMODE_HD bool sign_bit(float x) { return bits_of(x) >> 31; }
REPMODE_HD bool sign_bit(double x) { return bits_of(x) >> 63; }

template <typename T>
REPMODE_HD T minimum(T a, T b) {
  if (a != a || b != b) return Canonical<T>::nan();
  if (a < b) return a;
  if (b < a) return b;
  return sign_bit(a) ? a : b;  // equal: -0 if either is -0
}
template <typename T>
REPMODE_HD T maximum(T a, T b) {
  if (a != a || b != b) return Canonical<T>::nan();
  if (a > b) return a;
  if (b > a) return b;
  return sign_bit(a) ? b : a;  // equal: +0 if either is +0
}

// Constants, each the double nearest to the exact value.
constexpr Wide kSqrtHalf = 0x1.6a09e667f3bcdp-1;     // 1/sqrt(2)
constexpr Wide kInvSqrt2Pi = 0x1.9884533d43651p-2;   // 1/sqrt(2 pi)
constexpr Wide kSqrt2OverPi = 0x1.9884533d43651p-1;  // sqrt(2/pi)
constexpr Wide kGeluKappa = 0.044715;                // tanh-gelu's cubic coefficient
constexpr Wide kGeluKappa3 = 0.134145;               // 3 * 0.044715
constexpr Wide kPi = 0x1.921fb54442d18p1;            // pi
constexpr Wide kInvLn2 = 0x1.71547652b82fep0;        // 1/ln(2)

template <typename T>
REPMODE_HD T abs_bits(T x) {  // |x| by clearing the sign bit (exact, also for -0)
  return exact_detail::Layout<T>::from(bits_of(x) & ~exact_detail::sign_mask<T>());
}

}  // namespace ew_detail

// apply(a, b, c, p) for one op; unary ops ignore b and c.
template <typename T, EwOp op>
struct EwFormula;

#define REPMODE_EW(op_name, ...)                                     \
  template <typename T>                                              \
  struct EwFormula<T, EwOp::op_name> {                               \
    static REPMODE_HD T apply(T a, T b, T c, const EwParams<T>& p) { \
      using namespace ew_detail;                                     \
      (void)a;                                                       \
      (void)b;                                                       \
      (void)c;                                                       \
      (void)p;                                                       \
      __VA_ARGS__                                                    \
    }                                                                \
  };

// ---- arithmetic (one or two roundings in T) ----
REPMODE_EW(add, return canon(a + T(p.p0) * b);)
REPMODE_EW(sub, return canon(a - T(p.p0) * b);)
REPMODE_EW(mul, return canon(a * b);)
REPMODE_EW(div, return canon(a / b);)
REPMODE_EW(neg, return canon(-a);)
REPMODE_EW(abs, return canon(a <= T(0) ? T(0) - a : a);)
REPMODE_EW(reciprocal, return canon(reciprocal_of(a));)
REPMODE_EW(sqrt, return canon(sqrt_of(a));)
REPMODE_EW(pow, return canon(pow_of(a, b));)

// ---- comparisons and selections (exact) ----
REPMODE_EW(minimum, return minimum(a, b);)
REPMODE_EW(maximum, return maximum(a, b);)
REPMODE_EW(clamp, return minimum(maximum(a, b), c);)
REPMODE_EW(sign, return a > T(0) ? T(1) : a < T(0) ? T(-1) : a == T(0) ? T(0) : Canonical<T>::nan();)
REPMODE_EW(relu, return a > T(0) ? a : (a != a ? Canonical<T>::nan() : T(0));)
REPMODE_EW(threshold_backward, return b <= T(p.p0) ? T(0) : canon(a);)
REPMODE_EW(hardtanh_backward, return (b <= T(p.p0) || b >= T(p.p1)) ? T(0) : canon(a);)
REPMODE_EW(leaky_relu, return a > T(0) ? a : canon(a * T(p.p0));)
REPMODE_EW(leaky_relu_backward, return b > T(0) ? canon(a) : canon(a * T(p.p0));)

// ---- repmode's math routines (float32: correctly rounded) ----
REPMODE_EW(exp, return canon(exp_of(a));)
REPMODE_EW(log, return canon(log_of(a));)
REPMODE_EW(log1p, return canon(log1p_of(a));)
REPMODE_EW(expm1, return canon(expm1_of(a));)
REPMODE_EW(log2, return canon(log2_of(a));)
REPMODE_EW(exp2, return canon(exp2_of(a));)
REPMODE_EW(tanh, return canon(tanh_of(a));)
REPMODE_EW(sigmoid, return canon(sigmoid_of(a));)
REPMODE_EW(erf, return canon(erf_of(a));)
REPMODE_EW(erfc, return canon(erfc_of(a));)
REPMODE_EW(sin, return canon(sin_of(a));)
REPMODE_EW(cos, return canon(cos_of(a));)
REPMODE_EW(rsqrt, return canon(rsqrt_of(a));)

// ---- multi-step formulas: evaluated in double, rounded once to T ----
REPMODE_EW(elu, {
  const Wide x = a;
  if (a > T(0)) return narrow<T>(x * p.p1);
  return narrow<T>(expm1_of(x * p.p2) * (p.p0 * p.p1));
})
REPMODE_EW(elu_backward_input, {
  const Wide g = a, x = b;
  if (b > T(0)) return narrow<T>(g * p.p1);
  const Wide is = p.p2;
  return narrow<T>(g * is * (p.p0 * p.p1) * exp_of(x * is));
})
REPMODE_EW(elu_backward_result, {
  const Wide g = a, y = b;
  if (b > T(0)) return narrow<T>(g * p.p1);
  return narrow<T>(g * p.p2 * (y + p.p0 * p.p1));
})
REPMODE_EW(gelu, {
  const Wide x = a;
  return narrow<T>((x * 0.5) * erfc_of(x * -kSqrtHalf));
})
REPMODE_EW(gelu_backward, {
  const Wide g = a, x = b;
  const Wide cdf = 0.5 * erfc_of(x * -kSqrtHalf);
  const Wide pdf = exp_of(-0.5 * (x * x)) * kInvSqrt2Pi;
  return narrow<T>(g * (cdf + x * pdf));
})
// 0.5 x (1 + tanh(u)) = x sigmoid(2u), which does not cancel for negative x.
REPMODE_EW(gelu_tanh, {
  const Wide x = a;
  const Wide u = kSqrt2OverPi * (x + kGeluKappa * (x * x * x));
  return narrow<T>(x * sigmoid_of(u + u));
})
// d/dx [x sigmoid(2u)] = s + 2 x s (1 - s) u' with s = sigmoid(2u), 1 - s = sigmoid(-2u).
REPMODE_EW(gelu_tanh_backward, {
  const Wide g = a, x = b;
  const Wide x2 = x * x;
  const Wide u = kSqrt2OverPi * (x + kGeluKappa * (x2 * x));
  const SigmoidPair sp = repmode_sigmoid_pair(u + u);  // sigmoid_of(u + u), sigmoid_of(-(u + u))
  const Wide s = sp.s, sn = sp.sn;
  const Wide du = kSqrt2OverPi * (1.0 + kGeluKappa3 * x2);
  return narrow<T>(g * (s + 2.0 * x * s * sn * du));
})
REPMODE_EW(silu, {
  const Wide x = a;
  return narrow<T>(x * sigmoid_of(x));
})
REPMODE_EW(silu_backward, {
  const Wide g = a, x = b;
  const SigmoidPair sp = repmode_sigmoid_pair(x);  // sigmoid_of(x), sigmoid_of(-x)
  return narrow<T>(g * (sp.s * (1.0 + x * sp.sn)));
})
REPMODE_EW(mish, {
  const Wide x = a;
  return narrow<T>(x * tanh_of(log1p_of(exp_of(x))));
})
REPMODE_EW(mish_backward, {
  const Wide g = a, x = b;
  const Wide t = tanh_of(log1p_of(exp_of(x)));
  return narrow<T>(g * (t + x * sigmoid_of(x) * (1.0 - t * t)));
})
REPMODE_EW(softplus, {
  const Wide x = a, z = x * p.p0;
  if (z > p.p1) return canon(a);
  return narrow<T>(log1p_of(exp_of(z)) / p.p0);
})
REPMODE_EW(softplus_backward, {
  const Wide g = a, z = Wide(b) * p.p0;
  if (z > p.p1) return canon(a);
  return narrow<T>(g * sigmoid_of(z));
})
REPMODE_EW(tanh_backward, {
  const Wide g = a, y = b;
  return narrow<T>(g * (1.0 - y * y));
})
REPMODE_EW(sigmoid_backward, {
  const Wide g = a, y = b;
  return narrow<T>(g * ((1.0 - y) * y));
})
REPMODE_EW(addcmul, return narrow<T>(Wide(a) + p.p0 * Wide(b) * Wide(c));)
REPMODE_EW(addcdiv, return narrow<T>(Wide(a) + p.p0 * Wide(b) / Wide(c));)
REPMODE_EW(lerp, {
  const Wide s = a, e = b, w = c;
  const Wide aw = w < 0 ? -w : w;
  return narrow<T>(aw < 0.5 ? s + w * (e - s) : e - (e - s) * (1.0 - w));
})

// ---- more elementwise functions (docs/semantics.md "More elementwise functions") ----
// Exact: one IEEE result per element (csrc/common/math_exact.h for fmod, nextafter, frexp).
REPMODE_EW(copysign, return a != a ? Canonical<T>::nan() : exact_detail::with_sign_of(abs_bits(a), b);)
REPMODE_EW(fmod, return fmod_of(a, b);)
// torch's remainder: m = fmod(a, b), then m + b (one rounding) when m != 0 and its sign differs from b's.
REPMODE_EW(remainder, {
  const T m = fmod_of(a, b);
  return canon((m != T(0) && ((b < T(0)) != (m < T(0)))) ? m + b : m);
})
// torch's div_floor_floating, step for step: b == 0 -> a / b; m = fmod(a, b); q = (a - m) / b,
// minus 1 when m != 0 and its sign differs from b's; then floor(q), plus 1 when q - floor(q) > 0.5;
// a zero quotient takes the sign of a / b.
REPMODE_EW(floor_divide, {
  if (b == T(0)) return canon(a / b);
  const T m = fmod_of(a, b);
  T q = (a - m) / b;
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) q = q - T(1);
  if (q != T(0)) {
    T f = floor_of(q);
    if (q - f > T(0.5)) f = f + T(1);
    return canon(f);
  }
  return exact_detail::with_sign_of(T(0), a / b);
})
REPMODE_EW(fmax, {
  if (a != a) return canon(b);
  if (b != b) return a;
  return a < b ? b : a;
})
REPMODE_EW(fmin, {
  if (a != a) return canon(b);
  if (b != b) return a;
  return b < a ? b : a;
})
REPMODE_EW(heaviside, return a == T(0) ? canon(b) : (a > T(0) ? T(1) : T(0));)
REPMODE_EW(nextafter, return nextafter_of(a, b);)
REPMODE_EW(frac, return canon(a - trunc_of(a));)
REPMODE_EW(nan_to_num, {
  if (a != a) return canon(T(p.p0));
  if (a - a != T(0)) return a > T(0) ? T(p.p1) : T(p.p2);  // +-inf
  return a;
})
// torch's round(decimals=d): d > 0: rint(a * 10^d) / 10^d; d < 0: rint(a / 10^-d) * 10^-d, with
// 10^|d| rounded to T once; rint ties to even.
REPMODE_EW(round_decimals, {
  const T tp = T(p.p0);
  return canon(p.p1 != 0 ? round_even_of(a / tp) * tp : round_even_of(a * tp) / tp);
})
REPMODE_EW(frexp_mantissa, {
  int e;
  return frexp_mantissa_of(a, &e);
})
REPMODE_EW(frexp_exponent, {
  int e;
  frexp_mantissa_of(a, &e);
  return T(e);
})

// Built from repmode's routines: evaluated in double, rounded once to T.
// logaddexp(a, b) = max + log1p(exp(-|a - b|)); equal infinities give themselves.
REPMODE_EW(logaddexp, {
  if (a != a || b != b) return Canonical<T>::nan();
  if (a == b && a - a != T(0)) return a;  // both +inf or both -inf
  const Wide x = a, y = b;
  const Wide m = x < y ? y : x, d = x - y;
  return narrow<T>(m + log1p_of(exp_of(-(d < 0 ? -d : d))));
})
// logaddexp2(a, b) = max + log2(1 + exp2(-|a - b|)).
REPMODE_EW(logaddexp2, {
  if (a != a || b != b) return Canonical<T>::nan();
  if (a == b && a - a != T(0)) return a;
  const Wide x = a, y = b;
  const Wide m = x < y ? y : x, d = x - y;
  const Wide t = exp2_of(-(d < 0 ? -d : d));
  // log2(1 + t): directly for t > 1/2 (1 + t is rounded with relative error 2^-53 and log2(2) = 1
  // exactly, so logaddexp2(x, x) = x + 1 without a trace of 1/ln 2); through log1p for smaller t
  return narrow<T>(m + (t > 0.5 ? log2_of(1.0 + t) : log1p_of(t) * kInvLn2));
})
// logit(z) with z = clamp(a, lo, hi) when eps is given: log(z / (1 - z)) for z < 1/4, else
// log1p((2z - 1) / (1 - z)) (2z - 1 exact there, so no cancellation near z = 1/2).
REPMODE_EW(logit, {
  T z = a;
  if (p.p2 != 0) z = a < T(p.p0) ? T(p.p0) : (a > T(p.p1) ? T(p.p1) : a);
  if (z != z) return Canonical<T>::nan();
  const Wide x = z;
  if (x < 0.25) return narrow<T>(log_of(x / (1.0 - x)));
  return narrow<T>(log1p_of((x + x - 1.0) / (1.0 - x)));
})
// grad / (x (1 - x)); 0 outside [lo, hi] when eps is given (torch's logit_backward).
REPMODE_EW(logit_backward, {
  if (p.p2 != 0 && (b < T(p.p0) || b > T(p.p1))) return T(0);
  const Wide g = a, x = b;
  return narrow<T>(g / (x * (1.0 - x)));
})
// x log1p(y); 0 where x == 0 unless y is NaN (torch's definition).
REPMODE_EW(xlog1py, {
  if (b != b) return Canonical<T>::nan();
  if (a == T(0)) return T(0);
  return narrow<T>(Wide(a) * log1p_of(Wide(b)));
})
// sinc(x) = sin(pi x) / (pi x), 1 at 0. sin(pi x) from the exact reduction x = n + r
// (n = rint(x), r = x - n exact, |r| <= 1/2): (-1)^n sin(pi r); integers give exactly 0.
REPMODE_EW(sinc, {
  if (a == T(0)) return T(1);
  if (a - a != T(0)) return Canonical<T>::nan();  // inf, NaN
  const Wide x = a;
  const Wide n = round_even_of(x), r = x - n;
  if (r == 0) return T(0);  // a nonzero integer: exactly +0
  const Wide h = n * 0.5;
  Wide s = sin_of(kPi * r);
  if (round_even_of(h) != h) s = -s;  // n odd
  return narrow<T>(s / (kPi * x));
})
REPMODE_EW(hypot, return canon(hypot_of(a, b));)

// ---- inverse trigonometric functions (csrc/common/math_atan.h: correctly rounded float32,
// float64 within 0.5 ulp + 2^-95) ----
REPMODE_EW(atan, return canon(atan_of(a));)
REPMODE_EW(atan2, return canon(atan2_of(a, b));)
REPMODE_EW(asin, return canon(asin_of(a));)
REPMODE_EW(acos, return canon(acos_of(a));)

// ---- hyperbolic functions, tan, log10 (csrc/common/math_tail.h: correctly rounded float32,
// float64 within the bounds of docs/math.md) ----
REPMODE_EW(sinh, return canon(sinh_of(a));)
REPMODE_EW(cosh, return canon(cosh_of(a));)
REPMODE_EW(tan, return canon(tan_of(a));)
REPMODE_EW(log10, return canon(log10_of(a));)
REPMODE_EW(asinh, return canon(asinh_of(a));)
REPMODE_EW(acosh, return canon(acosh_of(a));)
REPMODE_EW(atanh, return canon(atanh_of(a));)
REPMODE_EW(ldexp, return canon(ldexp_of(a, b));)

// ---- special functions, gamma and error-function family (csrc/common/math_special.h): one double
// formula each, the float32 result rounded once from it; erfinv and ndtri have a cheaper double
// formula for float32 (sizeof(T) == 4) and a refined one for float64, as do lgamma and mvlgamma ----
REPMODE_EW(lgamma, return narrow<T>(sizeof(T) == 4 ? special_lgamma_for_float(Wide(a)) : special_lgamma(Wide(a)));)
REPMODE_EW(digamma, return narrow<T>(special_digamma(Wide(a)));)
REPMODE_EW(polygamma, return narrow<T>(special_polygamma(p.p0, Wide(a)));)
REPMODE_EW(mvlgamma, return narrow<T>(sizeof(T) == 4 ? special_mvlgamma_for_float(Wide(a), p.p0)
                                                     : special_mvlgamma(Wide(a), p.p0));)
REPMODE_EW(erfinv, return narrow<T>(sizeof(T) == 4 ? special_erfinv_for_float(Wide(a)) : special_erfinv(Wide(a)));)
REPMODE_EW(zeta, return narrow<T>(special_zeta(Wide(a), Wide(b)));)
REPMODE_EW(ndtri, return narrow<T>(sizeof(T) == 4 ? special_ndtri_for_float(Wide(a)) : special_ndtri(Wide(a)));)
REPMODE_EW(log_ndtr, return narrow<T>(special_log_ndtr(Wide(a)));)
REPMODE_EW(erfcx, return narrow<T>(special_erfcx(Wide(a)));)
REPMODE_EW(entr, return narrow<T>(special_entr(Wide(a)));)

// ---- mobile activations: torch's own chains of single operations in T (docs/semantics.md,
// "Activations and small layers"); log_sigmoid in double, rounded once ----
// min(max(a + 3, 0), 6) without branches: a + 3 is never −0 (−3 + 3 = +0), and NaN passes through
// both selections, so this is IEEE minimum(maximum(a + 3, 0), 6) exactly.
template <typename T>
REPMODE_HD T relu6_of_shift3(T a) {
  const T s = a + T(3);
  const T lo = s < T(0) ? T(0) : s;
  return lo > T(6) ? T(6) : lo;
}
REPMODE_EW(hardswish, return canon(a * relu6_of_shift3(a) / T(6));)
REPMODE_EW(hardswish_backward, {                 // written without branches, so the AVX2 copy vectorizes
  const T mid = canon(a * (b / T(3) + T(0.5)));  // NaN input: NaN
  const T g = canon(a);
  return b <= T(-3) ? T(0) : (b >= T(3) ? g : mid);
})
REPMODE_EW(hardsigmoid, return canon(relu6_of_shift3(a) / T(6));)
REPMODE_EW(hardsigmoid_backward, {
  const T v = canon(a * T(1.0 / 6.0));
  return (b > T(-3) && b < T(3)) ? v : T(0);
})
REPMODE_EW(softshrink, {
  const T l = T(p.p0);
  const T hi = canon(a - l), lo = canon(a + l);
  const T r = a > l ? hi : lo;
  return (a >= -l && a <= l) ? T(0) : r;
})
REPMODE_EW(log_sigmoid, {
  const Wide x = a;
  return narrow<T>(minimum(x, Wide(0)) - log1p_of(exp_of(-(x <= 0 ? 0.0 - x : x))));
})
REPMODE_EW(log_sigmoid_backward, return canon(a * T(sigmoid_of(T(-b))));)
REPMODE_EW(glu, return canon(a * T(sigmoid_of(b)));)

// ---- Bessel functions and orthogonal polynomials (csrc/common/math_bessel.h: the float64 formula,
// rounded once for float32; the polynomials run torch's recurrences in T) ----
REPMODE_EW(i0, return bessel_i0_of(a);)
REPMODE_EW(i0e, return bessel_i0e_of(a);)
REPMODE_EW(i1, return bessel_i1_of(a);)
REPMODE_EW(i1e, return bessel_i1e_of(a);)
REPMODE_EW(bessel_k0, return bessel_k0_of(a);)
REPMODE_EW(bessel_k1, return bessel_k1_of(a);)
REPMODE_EW(bessel_k0e, return bessel_k0e_of(a);)
REPMODE_EW(bessel_k1e, return bessel_k1e_of(a);)
REPMODE_EW(spherical_bessel_j0, return spherical_bessel_j0_of(a);)
REPMODE_EW(chebyshev_t, return chebyshev_t_of(a, b);)
REPMODE_EW(chebyshev_u, return chebyshev_u_of(a, b);)
REPMODE_EW(chebyshev_v, return chebyshev_v_of(a, b);)
REPMODE_EW(chebyshev_w, return chebyshev_w_of(a, b);)
REPMODE_EW(shifted_chebyshev_t, return shifted_chebyshev_t_of(a, b);)
REPMODE_EW(shifted_chebyshev_u, return shifted_chebyshev_u_of(a, b);)
REPMODE_EW(shifted_chebyshev_v, return shifted_chebyshev_v_of(a, b);)
REPMODE_EW(shifted_chebyshev_w, return shifted_chebyshev_w_of(a, b);)
REPMODE_EW(hermite_h, return hermite_h_of(a, b);)
REPMODE_EW(hermite_he, return hermite_he_of(a, b);)
REPMODE_EW(laguerre_l, return laguerre_l_of(a, b);)
REPMODE_EW(legendre_p, return legendre_p_of(a, b);)
REPMODE_EW(kaiser_window, return canon(T(repmode_kaiser(double(a), p.p0, p.p1)));)
REPMODE_EW(bessel_j0, return bessel_j0_of(a);)
REPMODE_EW(bessel_j1, return bessel_j1_of(a);)
REPMODE_EW(bessel_y0, return bessel_y0_of(a);)
REPMODE_EW(bessel_y1, return bessel_y1_of(a);)

// ---- incomplete gamma P/Q (a = a, b = x) and Airy Ai (csrc/common/math_igamma.h): one double
// formula each, the float32 result that double rounded once.
REPMODE_EW(igamma, return narrow<T>(special_igamma(Wide(a), Wide(b)));)
REPMODE_EW(igammac, return narrow<T>(special_igammac(Wide(a), Wide(b)));)
REPMODE_EW(airy_ai, return narrow<T>(special_airy_ai(Wide(a)));)

#undef REPMODE_EW

// (REPMODE_EW_OPS at the top of this file lists every op code for the dispatch switches of the
// kernels too: X(name, code).)

}  // namespace repmode

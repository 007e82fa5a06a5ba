// Exact operations on float32/float64 built from IEEE-754 basic operations and integer
// operations on the bit patterns (no libm): rounding to an integral value, fmod, nextafter,
// frexp, and repmode's hypot. Each result but hypot's is exact (the unique IEEE result);
// hypot is a fixed formula with its bound next to it. Shared by the CPU and CUDA kernels
// (docs/semantics.md "More elementwise functions"; docs/math.md).
#pragma once

#include "defs.h"
#include "math.h"

namespace repmode {
namespace exact_detail {

template <typename T>
struct Layout;
template <>
struct Layout<float> {
  using U = uint32_t;
  static constexpr int kBits = 32, kMant = 23, kExpMax = 0xff, kBias = 127;
  static REPMODE_HD float from(U u) { return float_from_bits(u); }
  static constexpr float kTwoPowMant = 8388608.0f;  // 2^23: from here on every float is an integer
  static constexpr float kNormalize = 33554432.0f;  // 2^25: makes any subnormal normal, exactly
  static constexpr int kNormalizeExp = 25;
};
template <>
struct Layout<double> {
  using U = uint64_t;
  static constexpr int kBits = 64, kMant = 52, kExpMax = 0x7ff, kBias = 1023;
  static REPMODE_HD double from(U u) { return double_from_bits(u); }
  static constexpr double kTwoPowMant = 4503599627370496.0;  // 2^52
  static constexpr double kNormalize = 18014398509481984.0;  // 2^54
  static constexpr int kNormalizeExp = 54;
};

template <typename T>
REPMODE_HD typename Layout<T>::U sign_mask() {
  return typename Layout<T>::U(1) << (Layout<T>::kBits - 1);
}

// |r| with the sign bit of x (r >= +0).
template <typename T>
REPMODE_HD T with_sign_of(T r, T x) {
  return Layout<T>::from(bits_of(r) | (bits_of(x) & sign_mask<T>()));
}

}  // namespace exact_detail

// x rounded to an integral value, ties to even (IEEE roundToIntegralTiesToEven); the sign of
// x is kept (-0.3 -> -0). For |x| < 2^p (p = 23 / 52), |x| + 2^p lies in [2^p, 2^(p+1)) where
// the spacing is 1, so that one addition rounds |x| to an integer, ties to even, and
// subtracting 2^p again is exact. Larger |x|, inf and NaN are returned as they are.
template <typename T>
REPMODE_HD T round_even_of(T x) {
  using L = exact_detail::Layout<T>;
  const T ax = x < T(0) ? -x : x;
  if (!(ax < L::kTwoPowMant)) return x;
  const T r = (ax + L::kTwoPowMant) - L::kTwoPowMant;
  return exact_detail::with_sign_of(r, x);
}

// x rounded toward zero (roundToIntegralTowardZero), sign kept.
template <typename T>
REPMODE_HD T trunc_of(T x) {
  using L = exact_detail::Layout<T>;
  const T ax = x < T(0) ? -x : x;
  if (!(ax < L::kTwoPowMant)) return x;
  T r = (ax + L::kTwoPowMant) - L::kTwoPowMant;
  if (r > ax) r = r - T(1);  // exact: r is an integer below 2^p
  return exact_detail::with_sign_of(r, x);
}

// x rounded toward -inf (roundToIntegralTowardNegative), sign of zero kept.
template <typename T>
REPMODE_HD T floor_of(T x) {
  const T r = round_even_of(x);
  return r > x ? r - T(1) : r;  // exact: r is an integer of at most p bits
}

// Leading zero bits of v != 0 (an exact integer operation on both devices).
REPMODE_HD int clz64(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// fmod(x, y) = x - n*y with n = trunc(x/y) taken exactly: the result is always representable,
// so it is exact (C99 F.9.7.1). Integer arithmetic on the significands: with x = mx 2^ex and
// y = my 2^ey (mx, my integers of p + 1 bits, subnormals normalised), the result is
// (mx 2^(ex-ey) mod my) 2^ey, and the modulo is taken in steps of at most 63 - (p + 1) bits
// (r < my, so r 2^s stays below 2^63): r = (r << s) % my, exact 64-bit integer operations.
// fmod(x, ±0), fmod(±inf, y) and NaN operands give the canonical NaN; fmod(x, ±inf) = x for
// finite x; a zero result has the sign of x.
template <typename T>
REPMODE_HD T fmod_of(T x, T y) {
  using L = exact_detail::Layout<T>;
  using U = typename L::U;
  constexpr int kShift = L::kBits - L::kMant;  // sign + exponent bits
  constexpr int kStep = 63 - (L::kMant + 1);   // bits of quotient per modulo step
  const U implicit = U(1) << L::kMant;
  U ux = bits_of(x), uy = bits_of(y);
  int ex = int((ux >> L::kMant) & U(L::kExpMax));
  int ey = int((uy >> L::kMant) & U(L::kExpMax));
  const U sx = ux & exact_detail::sign_mask<T>();
  if (U(uy << 1) == 0 || y != y || ex == L::kExpMax) return Canonical<T>::nan();
  if (U(ux << 1) <= U(uy << 1)) {
    if (U(ux << 1) == U(uy << 1)) return L::from(sx);  // |x| == |y|: a zero with x's sign
    return x;                                          // |x| < |y| (y = ±inf included)
  }
  // Significands as integers with the implicit bit at position kMant; a subnormal is shifted up
  // to put its leading bit there, its exponent lowered to match (it may become <= 0).
  uint64_t mx, my;
  if (ex == 0) {
    const int lead = clz64(uint64_t(ux & (~U(0) >> kShift))) - (63 - L::kMant);
    mx = uint64_t(ux & (~U(0) >> kShift)) << lead;
    ex = 1 - lead;
  } else {
    mx = uint64_t((ux & (~U(0) >> kShift)) | implicit);
  }
  if (ey == 0) {
    const int lead = clz64(uint64_t(uy & (~U(0) >> kShift))) - (63 - L::kMant);
    my = uint64_t(uy & (~U(0) >> kShift)) << lead;
    ey = 1 - lead;
  } else {
    my = uint64_t((uy & (~U(0) >> kShift)) | implicit);
  }
  // |x| > |y| here, so ex >= ey.
  uint64_t r = mx % my;
  for (int gap = ex - ey; gap > 0 && r != 0;) {
    const int s = gap < kStep ? gap : kStep;
    r = (r << s) % my;
    gap -= s;
  }
  if (r == 0) return L::from(sx);
  // r 2^ey with r < my < 2^(kMant+1): normalise the leading bit to position kMant.
  const int up = clz64(r) - (63 - L::kMant);
  r <<= up;
  int e = ey - up;
  U out;
  if (e > 0) {
    out = (U(r) - implicit) | (U(e) << L::kMant);
  } else {
    out = U(r >> (-e + 1));  // subnormal result: the bits shifted out are zero (the result is exact)
  }
  return L::from(out | sx);
}

// nextafter(x, y): the float next to x in the direction of y (C99): y itself when x == y,
// the canonical NaN when either is NaN, ±(smallest subnormal) from a zero.
template <typename T>
REPMODE_HD T nextafter_of(T x, T y) {
  using L = exact_detail::Layout<T>;
  using U = typename L::U;
  if (x != x || y != y) return Canonical<T>::nan();
  if (x == y) return y;
  if (x == T(0)) return exact_detail::with_sign_of(L::from(U(1)), y);
  U u = bits_of(x);
  // Away from zero when y is further out on x's side, else toward zero.
  if ((x < y) == (x > T(0)))
    ++u;
  else
    --u;
  return L::from(u);
}

// frexp(x) = (m, e) with x = m * 2^e and 0.5 <= |m| < 1; zeros, infinities and NaN (canonical)
// give (x, 0), as glibc's frexp and torch do. Exact: only the exponent field changes
// (a subnormal is first made normal by an exact multiplication by 2^25 / 2^54).
template <typename T>
REPMODE_HD T frexp_mantissa_of(T x, int* exponent) {
  using L = exact_detail::Layout<T>;
  using U = typename L::U;
  *exponent = 0;
  if (x != x) return Canonical<T>::nan();
  if (x == T(0) || x - x != T(0)) return x;  // zero or infinite
  int adjust = 0;
  U u = bits_of(x);
  if (((u >> L::kMant) & U(L::kExpMax)) == 0) {
    u = bits_of(x * L::kNormalize);
    adjust = L::kNormalizeExp;
  }
  const int biased = int((u >> L::kMant) & U(L::kExpMax));
  *exponent = biased - (L::kBias - 1) - adjust;
  u = (u & ~(U(L::kExpMax) << L::kMant)) | (U(L::kBias - 1) << L::kMant);
  return L::from(u);
}

// ldexp(x, e) = x * 2^e rounded once (exact unless the result leaves the normal range), for an
// integral e given as a value of the float type (|e| beyond the range saturates). float32: the
// product in double is exact for |e| <= 400 and rounded once to float32 (any |e| > 400 gives 0 or
// inf there anyway). float64: musl's scalbn steps (2^1023 at a time upward; downward
// 2^-1022 * 2^53 at a time, so the final multiplication is the only inexact one).
REPMODE_HD double pow2_of(int e) {  // 2^e for -1022 <= e <= 1023, exact
  return double_from_bits(uint64_t(e + 1023) << 52);
}
REPMODE_HD float ldexp_of(float x, float e) {
  if (x != x || e != e) return Canonical<float>::nan();
  const int n = e > 400.0f ? 400 : (e < -400.0f ? -400 : int(e));
  return float(double(x) * pow2_of(n));
}
REPMODE_HD double ldexp_of(double x, double e) {
  if (x != x || e != e) return Canonical<double>::nan();
  int n = e > 3000.0 ? 3000 : (e < -3000.0 ? -3000 : int(e));
  double y = x;
  if (n > 1023) {
    y *= pow2_of(1023);
    n -= 1023;
    if (n > 1023) {
      y *= pow2_of(1023);
      n -= 1023;
      if (n > 1023) n = 1023;
    }
  } else if (n < -1022) {
    y *= pow2_of(-1022) * pow2_of(53);
    n += 1022 - 53;
    if (n < -1022) {
      y *= pow2_of(-1022) * pow2_of(53);
      n += 1022 - 53;
      if (n < -1022) n = -1022;
    }
  }
  return y * pow2_of(n);
}

// hypot(x, y) = sqrt(x^2 + y^2); hypot(±inf, NaN) = +inf (C99); a NaN otherwise gives the
// canonical NaN.
//
// float32: in double, x^2 and y^2 are exact (48-bit products, far inside double's range), their
// sum is rounded once (relative error <= 2^-53), the square root once; the one rounding to
// float32 then gives an error below 0.5 ulp + 2^-28 ulp (correctly rounded except when the
// double result lies within 2^-29 ulp of a float32 midpoint).
REPMODE_HD float hypot_of(float x, float y) {
  if (x - x != x - x || y - y != y - y) {  // an infinity or a NaN
    if (x == 1.0f / 0.0f || x == -1.0f / 0.0f || y == 1.0f / 0.0f || y == -1.0f / 0.0f) return 1.0f / 0.0f;
    return Canonical<float>::nan();
  }
  const double a = x, b = y;
  return float(sqrt_of(a * a + b * b));
}

// float64: |x| >= |y| scaled by a power of two (exact) so that x^2 neither overflows nor
// underflows; x^2 + y^2 as an unevaluated sum s + t (exact products by fma, a Fast2Sum and the
// three error terms, relative error < 2^-100 when y^2 does not underflow, and when it does,
// y^2 < 2^-860 x^2 does not matter), h = sqrt(s) and one Newton correction
// h + (s - h^2 + t) / (2h) with s - h^2 exact by fma: the result is within 0.5 ulp + 2^-50 ulp
// of the exact value, then scaled back (exact unless the result is subnormal).
REPMODE_HD double hypot_of(double x, double y) {
  if (x - x != x - x || y - y != y - y) {
    if (x == 1.0 / 0.0 || x == -1.0 / 0.0 || y == 1.0 / 0.0 || y == -1.0 / 0.0) return 1.0 / 0.0;
    return Canonical<double>::nan();
  }
  double ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
  if (ax < ay) {
    const double t = ax;
    ax = ay;
    ay = t;
  }
  if (ay == 0) return ax;
  const int e = int((bits_of(ax) >> 52) & 0x7ff);
  double scale = 1.0, unscale = 1.0;
  if (e > 1023 + 500) {
    scale = 0x1p-600;
    unscale = 0x1p600;
  } else if (e < 1023 - 500) {
    scale = 0x1p600;
    unscale = 0x1p-600;
  }
  const double a = ax * scale, b = ay * scale;
  const double p = a * a, ep = repmode_fma(a, a, -p);
  const double q = b * b, eq = repmode_fma(b, b, -q);
  const double s = p + q;
  const double t = ((p - s) + q) + (ep + eq);  // Fast2Sum error of p + q (p >= q) plus the product errors
  double h = sqrt_of(s);
  const double d = repmode_fma(-h, h, s) + t;
  h = h + d / (h + h);
  return h * unscale;
}

}  // namespace repmode

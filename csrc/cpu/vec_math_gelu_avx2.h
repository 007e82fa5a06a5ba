// AVX2 + FMA array version of float32 gelu (approximate='none'), bit for bit equal to its
// definition, the scalar formula of csrc/common/elementwise.h,
//
//   D(x) = RN((x * 0.5) * repmode_erfc(RN(x * -kSqrtHalf))),  gelu(x) = (float)D(x)
//
// (all in double, one rounding to float32 at the end, NaN canonical), on every input.
//
//   gelu_array_avx2(in, out, n): out[i] = EwFormula<float, EwOp::gelu>::apply(in[i], ...)
//   for 0 <= i < n; in and out may be the same array (in == out); partial overlap is not
//   allowed.
//
// Callers must check that the CPU has AVX2 and FMA first (isa.h: best_isa() >= avx2).
// The function carries __attribute__((target("avx2,fma"))), so no -mavx2 flag is needed.
//
// Method. Unlike the other array paths, the lanes do NOT replay the scalar operations:
// they evaluate a different, faster approximation F of G(x) = x Phi(x) (Phi the normal
// CDF), whose own bits do not matter, and keep (float)F only where that provably equals
// (float)D. With bounds eps_F and eps_D on |F - G| / |G| and |D - G| / |G|,
// |D - F| <= (eps_F + eps_D) |G|; if F lies farther than that from every float32
// rounding boundary, D lies in the same open interval between two adjacent boundaries and
// rounds to the same float. Lanes failing that test, and special lanes, call the scalar
// formula.
//
// F, with a = min(|x|, 13) (exact; min also maps NaN to 13), "(=)" marking exact steps:
//   Q(a) = Phi(-a) = e^(-a^2/2) R(a),  R(a) = e^(a^2/2) erfc(a/sqrt 2) / 2 ~ P(a) / S(a)
//   (rational, degrees 6 and 7, all coefficients positive);
//   s = a * a (=, a has 24 bits);  t = fma(s, RN(1/(2 ln2)), 1.5*2^52) = 1.5*2^52 + n,
//   nd = t - 1.5*2^52 (=),  v = fma(nd, -2 ln2_hi, s) ~ a^2 - 2 n ln2 = 2 r,
//   e^(-a^2/2) = 2^-n e^(-v/2),  e^(-v/2) ~ E2(v) = E(v/2) (E: degree 8 in r; E2's
//   coefficients are E's times 2^-k, exact);
//   q = (E2(v) * P(a)) / S(a), then Q = q 2^-n by an integer subtraction on q's exponent
//   field (=), n << 52 = bits(t) << 52 (mod 2^64);
//   F = x * (x < 0 ? Q : 1 - Q),
// with fma and Horner's rule for P, S, E2 (fma is fine here: F only has to obey its bound).
//
// eps_F < 2^-39.10 (15226 units of u = 2^-53), for |x| <= 13. Measured on dense grids
// at 40 digits with the coefficients as stored (grid maxima refined around each local
// maximum) and enlarged by 5%, as for math_erf.h's tables: |P/S / R - 1| < 1.05 * 2^-40.26
// on [0, 13]; |E(r) e^r - 1| < 1.05 * 2^-40.10 on [-0.35, 0.35] (together 15182 u); running
// error bounds of the Horner evaluations (e_k <= |t| e_(k+1) + u (|p_k| + |t| e_(k+1))):
// P < 2^-50.53, S < 2^-50.29, E < 2^-52.40 relative (13.6 u). n is the nearest integer to
// s RN(1/(2 ln2)), within 2^-46 of s / (2 ln2), so |s - 2 n ln2| < ln2 + 2^-45 and
// |v/2| < 0.35; v rounds once (< 2^-54) and drops 2 n (ln2 - ln2_hi) < 2 * 122 * 2^-55.3
// (n <= 122 for a <= 13): e^(-v/2) is within 2^-48.31 (25.8 u) relative of
// e^(-(a^2/2 - n ln2)). The product E2*P and the division round once each. For x >= 0,
// 1 - Q >= 1/2 >= Q, so Q's absolute error is at most its relative error times (1 - Q),
// and 1 - Q and x * Phi add one rounding each (4 u in all). Measured with a scalar
// replica of F against __float128 over all floats in [-13, -11]: 14472 u.
//
// eps_D < 2^-44.84 (285.3 u) for |x| <= 13. D = RN(h E), h = x/2 (exact), E =
// repmode_erfc(u'), u' = RN(x * -kSqrtHalf) = w (1 + eta) with w = -x/sqrt 2 exact,
// |eta| <= 2^-53 + 2^-53.70 + 2^-106 < 2^-52.30 (kSqrtHalf = RN(1/sqrt 2) is 2^-53.70 relative
// above it; mpmath).
//  * The argument error: erfc(u') - erfc(w) = erfc'(xi) w eta, |erfc'(xi)| = (2/sqrt pi)
//    e^(-xi^2) <= (2/sqrt pi) e^(-w^2) (1 + 2^-40). For w >= 0 (x <= 0) the Mills-ratio
//    bound erfc(w) > (2/sqrt pi) e^(-w^2) / (w + sqrt(w^2 + 2)) and sqrt(w^2 + 2) <=
//    w + 1/w give a relative change below w (2w + 1/w) |eta| = (x^2 + 1) |eta|; for
//    w < 0, erfc(w) >= 1 and (2/sqrt pi) |w| e^(-w^2) <= 0.49. So < 170 * 2^-52.30 < 2^-44.89
//    for |x| <= 13 (274.7 u).
//  * repmode_erfc's own error (from the component bounds stated in math_erf.h, for
//    |u'| <= 9.2): |u'| < 2^-55 -> 1: < 2^-54.8; u' <= -5.86 -> 2: < 2^-54; u' < 0:
//    1 + erf_poly (2^-50.03 of erf <= 1, the sum in [1, 2] rounds once): < 2^-50.7;
//    0 < u' < 1/2: 1 - erf_poly with erf/erfc < 1.086 there: < 2^-49.91 + 2^-53 < 2^-49.74;
//    u' >= 1/2: exp_fast (2^-58.3) times erfcx_poly (2^-51.87 for u' < 10.5),
//    r - r*sq.lo (2^-53; the dropped sq.lo^2/2 < 2^-92) and the two-term product
//    (2 * 2^-53 + 2^-106): < 2^-50.62. So < 2^-49.74 (9.6 u), and h * E rounds once more.
//    (Measured with __float128 over all floats in [-13, -11]: 254.5 u.)
//
// The test: (eps_F + eps_D) / (1 - eps_F) < 15520 u relative to |F|, and |F| u < ulp(F).
// A lane is kept unless the low 29 bits of F's bits lie within kGeluUlps = 2^16 of
// 0x10000000 (the float32 rounding boundaries of F's binade, as in math_erf.h's
// fast_path_is_hard); otherwise the nearest boundary in F's binade is more than 2^16
// ulp(F) away (4.2 times the bound), and those of the neighbouring binades lie farther
// still (2^27 ulp from the binade's ends). |F| > 2^-126 (G(-13) = -2^-123.24, and
// |G(x)| >= |x| (1/2 - 0.4 |x|) for |x| >= 2^-124), so F's binade is a normal float32 binade whose boundaries are the
// doubles with low 29 bits 0x10000000, and (float)F, one IEEE conversion, is the float both
// F and D round to. About 2^-12 of the lanes fail the test.
//
// Lanes with x > 13 (and +inf) come out as x itself, like D: there a = 13 makes
// Q < 2^-120, so 1 - Q = 1 and F = x exactly (a float, far from any boundary), while
// u' <= -9.19 < -5.8636 makes repmode_erfc(u') = 2 exactly and D = (x * 0.5) * 2 = x.
// NaN, x < -13 (results subnormal or underflowing, and gelu(-inf) = NaN by the formula)
// and |x| < 2^-124 (zeros, subnormals, tiny results) are recomputed by calling the scalar
// formula, as is the n % 16 tail. Inputs there compute garbage without traps (FP
// exceptions masked; a is finite).
//
// Compile with -ffp-contract=off and without fast-math, like the rest (the fmas here are
// explicit). MXCSR: round to nearest assumed as everywhere in repmode; FTZ/DAZ do not
// matter: kept lanes have normal inputs, every intermediate is a normal double (a^2 >=
// 2^-248, v = s when n = 0 and otherwise 0 or a nonzero multiple of 2^-52, the Horner
// steps end near their constant terms, q 2^-n >= Q(13) / 2 > 2^-129), F is a normal float32 value, and the scalar calls
// are the definition itself.
//
// Verified against the scalar formula on all 2^32 inputs by csrc/verify/check_math.cpp (case
// "gelu-simd" in csrc/verify/math_cases/gelu.cpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/elementwise.h"
#include "vec_math_avx2.h"

#define REPMODE_GELU_AVX2_FN __attribute__((target("avx2,fma")))
#define REPMODE_GELU_AVX2_INLINE inline __attribute__((target("avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_math_gelu_detail {

using vec_math_detail::c;
using vec_math_detail::half_ps;
using vec_math_detail::mul;
using vec_math_detail::PD;
using vec_math_detail::store_with_fixups;
using vec_math_detail::sub;

// Constants (mpmath, 40 digits): RN(1/(2 ln2)); 2 * RN(ln2) (the dropped 2 (ln2 - RN(ln2))
// is < 2^-54.3).
constexpr double kGeluInvLn2x2 = 0x1.71547652b82fep-1;
constexpr double kGeluLn2x2 = 0x1.62e42fefa39efp+0;
constexpr double kGeluShift = 0x1.8p52;
// Rounding-test half width in double ulps (see above).
constexpr int64_t kGeluUlps = 65536;

// P (a^0 .. a^6) and S (a^0 .. a^7): R(a) = e^(a^2/2) erfc(a/sqrt 2) / 2 ~ P(a) / S(a) on
// [0, 13], relative error 2^-40.26 with these coefficients. E2 (v^0 .. v^8): e^(-v/2)
// ~ E2(v) on [-0.7, 0.7], relative error 2^-40.10 (E(r) ~ e^-r on [-0.35, 0.35], the k-th
// coefficient scaled by 2^-k). Fitted with mpmath at 60 digits (linearized least squares
// on 500 / 300 Chebyshev nodes with Lawson reweighting: near minimax), rounded to double.
constexpr double kGeluP[7] = {0x1.0000000000d59p-1, 0x1.22475e5d7a9a7p-1, 0x1.43e821c0be0c8p-2, 0x1.b2e7c74b4c48dp-4,
                              0x1.6e9ae849b8075p-6, 0x1.708184aea3593p-9, 0x1.5eaa64016890ap-13};
constexpr double kGeluS[8] = {0x1.0000000000000p+0, 0x1.ee8987fc85526p+0, 0x1.ac897910ca13dp+0, 0x1.b23521461d8b4p-1,
                              0x1.17c20f222dc0ap-2, 0x1.cee72ca3b202cp-5, 0x1.cddaa7dd7737bp-8, 0x1.b77e7a028bfdap-12};
constexpr double kGeluE2[9] = {0x1.ffffffffff6c7p-1,  -0x1.ffffffffd1f00p-2,  0x1.00000000930f4p-3,
                               -0x1.555555a50a429p-6, 0x1.555553f0a5315p-9,   -0x1.11107d017d03ep-12,
                               0x1.6c18c7353cb08p-16, -0x1.a1affbb9c116dp-20, 0x1.9ed4338f58271p-24};

// a * b + c per lane, one rounding.
template <int K>
REPMODE_GELU_AVX2_INLINE PD<K> fmadd(PD<K> a, PD<K> b, PD<K> cc) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_fmadd_pd(a.v[h], b.v[h], cc.v[h]);
  return r;
}
template <int K>
REPMODE_GELU_AVX2_INLINE PD<K> fmadd(PD<K> a, double b, double cc) {
  return fmadd(a, c<K>(b), c<K>(cc));
}

// Horner's rule with fma: coef[0] + t (coef[1] + t (... + t coef[N-1])).
template <int K, int N>
REPMODE_GELU_AVX2_INLINE PD<K> horner(PD<K> t, const double (&coef)[N]) {
  PD<K> p = fmadd(t, coef[N - 1], coef[N - 2]);
#pragma GCC unroll 16
  for (int j = N - 3; j >= 0; --j) p = fmadd(p, t, c<K>(coef[j]));
  return p;
}

// F (see above) for the 4K floats xf[0..K/2): stores (float)F to y and returns a bit mask
// of the lanes whose rounding test failed. Only lanes with 2^-124 <= |x| <= 13 or x > 13
// are meaningful; the caller recomputes the others.
template <int K>
REPMODE_GELU_AVX2_INLINE unsigned gelu_fast_lanes(const __m256* xf, __m256* y) {
  PD<K> x, a;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    x.v[h] = _mm256_cvtps_pd(half_ps<K>(xf, h));  // exact
    // min(|x|, 13); vminpd returns its second operand when the first is NaN.
    a.v[h] = _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x.v[h]), _mm256_set1_pd(13.0));
  }
  PD<K> s = mul(a, a);  // exact
  PD<K> t = fmadd(s, kGeluInvLn2x2, kGeluShift);
  PD<K> nd = sub(t, kGeluShift);
  PD<K> v = fmadd(nd, c<K>(-kGeluLn2x2), s);
  PD<K> e = horner(v, kGeluE2);
  PD<K> p = horner(a, kGeluP);
  PD<K> d = horner(a, kGeluS);
  PD<K> q = mul(e, p);
  unsigned bad = 0;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    __m256d qd = _mm256_div_pd(q.v[h], d.v[h]);
    // Q = qd 2^-n: bits(t) = bits(1.5*2^52) + n with n < 2^11, whose << 52 is n << 52.
    __m256d Q = _mm256_castsi256_pd(
        _mm256_sub_epi64(_mm256_castpd_si256(qd), _mm256_slli_epi64(_mm256_castpd_si256(t.v[h]), 52)));
    // Phi(x) = Q for x < 0 (sign bit set), 1 - Q otherwise.
    __m256d phi = _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), Q), Q, x.v[h]);
    __m256d F = _mm256_mul_pd(x.v[h], phi);
    // Rounding test: the low 29 bits of F within kGeluUlps of 0x10000000.
    __m256i w = _mm256_and_si256(_mm256_add_epi64(_mm256_castpd_si256(F), _mm256_set1_epi64x(kGeluUlps - 0x10000000ll)),
                                 _mm256_set1_epi64x(0x1fffffffll));
    __m256i near = _mm256_cmpgt_epi64(_mm256_set1_epi64x(2 * kGeluUlps + 1), w);
    bad |= unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(near))) << (4 * h);
    __m128 f = _mm256_cvtpd_ps(F);
    if (h & 1)
      y[h >> 1] = _mm256_insertf128_ps(y[h >> 1], f, 1);
    else
      y[h >> 1] = _mm256_castps128_ps256(f);
  }
  return bad;
}

// The definition (also for the lanes the fast path does not keep).
inline float gelu_scalar(float x) {
  return EwFormula<float, EwOp::gelu>::apply(x, 0.0f, 0.0f, EwParams<float>{0.0, 0.0, 0.0});
}

// Vectors of 8 floats per loop iteration (measured: 2 faster than 1 and 4 on Zen 3).
constexpr int kGeluGroups = 2;

}  // namespace vec_math_gelu_detail

REPMODE_GELU_AVX2_FN inline void gelu_array_avx2(const float* in, float* out, int64_t n) {
  using namespace vec_math_gelu_detail;
  constexpr int G = kGeluGroups;
  const int64_t n_main = n > 0 ? n - n % (8 * G) : 0;
  int64_t i = 0;
  for (; i < n_main; i += 8 * G) {
    __m256 xf[G], y[G];
    unsigned special = 0;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      xf[g] = _mm256_loadu_ps(in + i + 8 * g);
      // Kept: |x| >= 2^-124 (integer compare of the bits, so DAZ cannot matter) and
      // x >= -13 (false for NaN).
      __m256i ax = _mm256_and_si256(_mm256_castps_si256(xf[g]), _mm256_set1_epi32(0x7fffffff));
      __m256 ok = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x017fffff))),
                                _mm256_cmp_ps(xf[g], _mm256_set1_ps(-13.0f), _CMP_GE_OQ));
      special |= unsigned(_mm256_movemask_ps(ok) ^ 0xff) << (8 * g);
    }
    unsigned bad = gelu_fast_lanes<2 * G>(xf, y) | special;
    store_with_fixups<G>(out + i, xf, y, bad, [](float v) { return gelu_scalar(v); });
  }
  for (; i < n; ++i) out[i] = vec_math_gelu_detail::gelu_scalar(in[i]);
}

}  // namespace repmode::cpu

#undef REPMODE_GELU_AVX2_INLINE
#undef REPMODE_GELU_AVX2_FN

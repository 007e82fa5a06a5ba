// AVX-512 array versions of cr_tanhf, cr_sigmoidf (csrc/common/math_hyperbolic.h), cr_erff
// (csrc/common/math_erf.h) and float32 gelu (approximate='none', csrc/common/elementwise.h): the
// AVX2 routines of csrc/cpu/vec_math_hyperbolic_avx2.h, vec_math_erf_avx2.h and
// vec_math_gelu_avx2.h on 16 floats per vector,
// bit for bit equal to them and to the scalar definitions on every input.
//
//   tanh_array_avx512, sigmoid_array_avx512, erf_array_avx512, gelu_array_avx512 (in, out, n)
//   in and out may be the same array (in == out); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX-512 first (isa.h: active_isa() == avx512).
//
// Each lane runs the per-lane operations of the AVX2 routine (whose comments have the error
// analyses; they are verified against the scalar definitions on all 2^32 inputs): the same IEEE
// double operations in the same order, fma exactly where the AVX2 code has one, the same table
// entries (read with a gather: the same values), the same rounding tests, the same blends for
// the special inputs and the same scalar fallback for every lane the fast path does not settle.
// So every lane gives the AVX2 lane's bits. Only the vector width differs: 16 float lanes, each
// widened to one lane of two 8-lane double vectors. tests/families/elementwise compare the
// scalar, AVX2 and AVX-512 paths bit for bit, and csrc/verify/check_vec_math_avx512.cpp compares
// this file with the AVX2 routines on all 2^32 inputs (docs/evidence.md).
//
// Compile with -ffp-contract=off and without fast-math, like the rest.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/elementwise.h"
#include "../common/math_erf.h"
#include "../common/math_hyperbolic.h"
#include "vec_math_avx512.h"
#include "vec_math_erf_avx2.h"
#include "vec_math_gelu_avx2.h"
#include "vec_math_hyperbolic_avx2.h"

namespace repmode::cpu {
namespace vec_math512_detail {

REPMODE_AVX512_INLINE __m512d cst(double v) { return _mm512_set1_pd(v); }

// exp_parts(y) per lane (vec_math_hyperbolic_avx2.h's exp_parts_lanes): e^y ~ s (1 + p).
REPMODE_AVX512_INLINE void exp_parts8(__m512d y, __m512d& s, __m512d& p) {
  using namespace math_detail::consts;
  // exp_reduce: kd = (y * kInvC + kShift) - kShift; r = (y - kd * kCHi) + (-(kd * kCMid))
  const __m512d t = _mm512_add_pd(_mm512_mul_pd(y, cst(kInvC)), cst(kShift));
  const __m512d kd = _mm512_sub_pd(t, cst(kShift));
  const __m512d r = _mm512_add_pd(_mm512_sub_pd(y, _mm512_mul_pd(kd, cst(kCHi))), _mm512_mul_pd(kd, cst(-kCMid)));
  // s = exp2_row(j)[0] * pow2(m), j = k & 63, m = k >> 6, as an integer addition on the bits
  const __m512i tb = _mm512_castpd_si512(t);
  const __m512i row = _mm512_slli_epi64(_mm512_and_si512(tb, _mm512_set1_epi64(63)), 1);  // 2j
  const __m512i th = _mm512_castpd_si512(_mm512_i64gather_pd(row, math_detail::exp2_row(0), 8));
  s = _mm512_castsi512_pd(_mm512_add_epi64(th, _mm512_slli_epi64(_mm512_srli_epi64(tb, 6), 52)));
  // q = (0.5 + kC3 * r) + r2 * (kC4 + kC5 * r); p = r + r2 * q
  const __m512d r2 = _mm512_mul_pd(r, r);
  const __m512d q = _mm512_add_pd(_mm512_add_pd(cst(0.5), _mm512_mul_pd(cst(kC3), r)),
                                  _mm512_mul_pd(r2, _mm512_add_pd(cst(kC4), _mm512_mul_pd(cst(kC5), r))));
  p = _mm512_add_pd(r, _mm512_mul_pd(r2, q));
}

// f32_boundary_within(v, tol) per lane as a mask, and (float)v.
REPMODE_AVX512_INLINE unsigned round8(__m512d v, int64_t tol, __m256* f) {
  const __m512i w = _mm512_and_si512(_mm512_add_epi64(_mm512_castpd_si512(v), _mm512_set1_epi64(tol - 0x10000000ll)),
                                     _mm512_set1_epi64(0x1fffffffll));
  *f = _mm512_cvtpd_ps(v);
  return _mm512_cmpgt_epi64_mask(_mm512_set1_epi64(2 * tol + 1), w);
}

// cr_tanhf's fast path on a = |x| (tanh_fast_lanes): results (positive) to y, returns the
// lanes whose rounding test failed.
REPMODE_AVX512_INLINE unsigned tanh_fast16(__m512 af, __m512* y) {
  unsigned near = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m512d a = _mm512_cvtps_pd(half_ps(af, h));
    __m512d s, p;
    exp_parts8(_mm512_mul_pd(a, cst(-2.0)), s, p);
    // n = (1.0 - s) - s * p; v = n / (2.0 - n)
    const __m512d n = _mm512_sub_pd(_mm512_sub_pd(cst(1.0), s), _mm512_mul_pd(s, p));
    const __m512d v = _mm512_div_pd(n, _mm512_sub_pd(cst(2.0), n));
    near |= round8(v, int64_t(math_detail::kTanhFastTol), &f[h]) << (8 * h);
  }
  *y = join_ps(f[0], f[1]);
  return near;
}

// cr_sigmoidf's fast path (sigmoid_fast_lanes).
REPMODE_AVX512_INLINE unsigned sigmoid_fast16(__m512 xf, __m512* y) {
  const __m512 negf = _mm512_xor_ps(xf, _mm512_set1_ps(-0.0f));
  unsigned near = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m512d s, p;
    exp_parts8(_mm512_cvtps_pd(half_ps(negf, h)), s, p);  // y = -x
    // E = s + s * p; v = 1.0 / (1.0 + E)
    const __m512d v = _mm512_div_pd(cst(1.0), _mm512_add_pd(cst(1.0), _mm512_add_pd(s, _mm512_mul_pd(s, p))));
    near |= round8(v, int64_t(math_detail::kSigmoidFastTol), &f[h]) << (8 * h);
  }
  *y = join_ps(f[0], f[1]);
  return near;
}

// Horner's rule with fma, as vec_math_gelu_avx2.h's horner.
template <int N>
REPMODE_AVX512_INLINE __m512d horner8(__m512d t, const double (&coef)[N]) {
  __m512d p = _mm512_fmadd_pd(t, cst(coef[N - 1]), cst(coef[N - 2]));
#pragma GCC unroll 16
  for (int j = N - 3; j >= 0; --j) p = _mm512_fmadd_pd(p, t, cst(coef[j]));
  return p;
}

// gelu_fast_lanes of vec_math_gelu_avx2.h on 16 lanes.
REPMODE_AVX512_INLINE unsigned gelu_fast16(__m512 xf, __m512* y) {
  using namespace vec_math_gelu_detail;
  unsigned bad = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m512d x = _mm512_cvtps_pd(half_ps(xf, h));  // exact
    // min(|x|, 13); vminpd returns its second operand when the first is NaN.
    const __m512d a = _mm512_min_pd(_mm512_andnot_pd(cst(-0.0), x), cst(13.0));
    const __m512d s = _mm512_mul_pd(a, a);  // exact
    const __m512d t = _mm512_fmadd_pd(s, cst(kGeluInvLn2x2), cst(kGeluShift));
    const __m512d nd = _mm512_sub_pd(t, cst(kGeluShift));
    const __m512d v = _mm512_fmadd_pd(nd, cst(-kGeluLn2x2), s);
    const __m512d e = horner8(v, kGeluE2);
    const __m512d p = horner8(a, kGeluP);
    const __m512d d = horner8(a, kGeluS);
    const __m512d q = _mm512_mul_pd(e, p);
    const __m512d qd = _mm512_div_pd(q, d);
    // Q = qd 2^-n: bits(t) = bits(1.5*2^52) + n with n < 2^11, whose << 52 is n << 52.
    const __m512d Q =
        _mm512_castsi512_pd(_mm512_sub_epi64(_mm512_castpd_si512(qd), _mm512_slli_epi64(_mm512_castpd_si512(t), 52)));
    // Phi(x) = Q for x < 0 (sign bit set), 1 - Q otherwise.
    const __m512d phi =
        _mm512_mask_blend_pd(_mm512_movepi64_mask(_mm512_castpd_si512(x)), _mm512_sub_pd(cst(1.0), Q), Q);
    const __m512d F = _mm512_mul_pd(x, phi);
    bad |= round8(F, kGeluUlps, &f[h]) << (8 * h);
  }
  *y = join_ps(f[0], f[1]);
  return bad;
}

// erf_row's table (32 rows of 10 coefficients) by columns: cols[32 m + k] = erf_row(k)[m].
inline const double* erf_columns() {
  static const double* cols = [] {
    alignas(64) static double c[320];
    for (int k = 0; k < 32; ++k)
      for (int m = 0; m < 10; ++m) c[32 * m + k] = erf_detail::erf_row(0)[10 * k + m];
    return c;
  }();
  return cols;
}

// cr_erff's fast path (vec_math_erf_avx2.h's erf_fast_lanes) on 16 lanes |x| = axf: the row
// of erf_row_offsets, t = |x| - ((|x| + 2^20) - 2^20), erf_eval operation for operation, and
// the fast_path_is_hard test. Returns the lanes whose test failed.
REPMODE_AVX512_INLINE unsigned erf_fast16(__m512 axf, __m512* y) {
  using erf_detail::kFastUlps;
  const double* cols = erf_columns();
  const __m512 s = _mm512_add_ps(axf, _mm512_set1_ps(0x1p20f));
  // Row k, clamped to 31 by the unsigned minimum (inf and NaN included).
  __m512i k = _mm512_sub_epi32(_mm512_castps_si512(s), _mm512_set1_epi32(0x49800000));
  k = _mm512_min_epu32(k, _mm512_set1_epi32(31));
  const __m512 tf = _mm512_sub_ps(axf, _mm512_sub_ps(s, _mm512_set1_ps(0x1p20f)));
  unsigned bad = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    // Coefficient m of row k for the 8 lanes: two 16-entry permutes of the column (rows 0..15
    // and 16..31) and a blend on bit 4 of k (the same values a gather would read).
    const __m512i k64 = _mm512_cvtepu32_epi64(half_si(k, h));
    const __mmask8 upper = _mm512_test_epi64_mask(k64, _mm512_set1_epi64(16));
    const __m512d t = _mm512_cvtps_pd(half_ps(tf, h));  // exact
    __m512d r[10];
#pragma GCC unroll 10
    for (int m = 0; m < 10; ++m) {
      const double* c = cols + 32 * m;
      const __m512d lo = _mm512_permutex2var_pd(_mm512_load_pd(c), k64, _mm512_load_pd(c + 8));
      const __m512d hi = _mm512_permutex2var_pd(_mm512_load_pd(c + 16), k64, _mm512_load_pd(c + 24));
      r[m] = _mm512_mask_blend_pd(upper, lo, hi);
    }
    const __m512d t2 = _mm512_mul_pd(t, t);
    const __m512d q0 = _mm512_add_pd(r[0], _mm512_mul_pd(r[1], t));
    const __m512d q1 = _mm512_add_pd(r[2], _mm512_mul_pd(r[3], t));
    const __m512d q2 = _mm512_add_pd(r[4], _mm512_mul_pd(r[5], t));
    const __m512d q3 = _mm512_add_pd(r[6], _mm512_mul_pd(r[7], t));
    const __m512d t4 = _mm512_mul_pd(t2, t2);
    const __m512d u0 = _mm512_add_pd(q0, _mm512_mul_pd(t2, q1));
    const __m512d u1 = _mm512_add_pd(q2, _mm512_mul_pd(t2, q3));
    const __m512d t8 = _mm512_mul_pd(t4, t4);
    const __m512d v = _mm512_add_pd(u0, _mm512_mul_pd(t4, u1));
    const __m512d w = _mm512_add_pd(v, _mm512_mul_pd(t8, r[8]));
    const __m512d p = _mm512_add_pd(r[9], _mm512_mul_pd(t, w));
    bad |= round8(p, int64_t(kFastUlps), &f[h]) << (8 * h);
  }
  *y = join_ps(f[0], f[1]);
  return bad;
}

REPMODE_AVX512_INLINE unsigned erf16(__m512 x, __m512* y) {
  const __m512i ux = _mm512_castps_si512(x);
  const __m512i sign = _mm512_and_si512(ux, _mm512_set1_epi32(int32_t(0x80000000u)));
  const __m512i ax = _mm512_and_si512(ux, _mm512_set1_epi32(0x7fffffff));
  // As in cr_erff_impl: NaN and |x| < 2^-125 go to the scalar function; |x| >= x0 = 0x407ad445
  // (and +-inf) give +-1.
  const unsigned sp = _mm512_cmpgt_epi32_mask(ax, _mm512_set1_epi32(0x7f800000)) |
                      _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(0x01000000), ax);
  const __mmask16 sat = _mm512_cmpgt_epi32_mask(ax, _mm512_set1_epi32(0x407ad444));
  const unsigned bad = erf_fast16(_mm512_castsi512_ps(ax), y);
  // Sign of x back on (float)y, then +-1 on the saturated lanes.
  const __m512i yb = _mm512_or_si512(_mm512_castps_si512(*y), sign);
  const __m512i one = _mm512_or_si512(sign, _mm512_set1_epi32(0x3f800000));
  *y = _mm512_castsi512_ps(_mm512_mask_blend_epi32(sat, yb, one));
  return sp | (bad & ~unsigned(sat));
}

// The special-lane handling of the AVX2 array loops, per 16-float vector: fast path, blends,
// and the lanes left for the scalar function (returned).
REPMODE_AVX512_INLINE unsigned tanh16(__m512 x, __m512* y) {
  const __m512i ux = _mm512_castps_si512(x);
  const __m512i ax = _mm512_and_si512(ux, _mm512_set1_epi32(0x7fffffff));
  const __m512 af = _mm512_castsi512_ps(ax);
  const __m512 sign = _mm512_castsi512_ps(_mm512_xor_si512(ux, ax));
  // As in cr_tanhf_impl: NaN -> scalar; |x| < 2^-13 -> x; |x| > 9.25 (inf too) -> +-1.
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(ax, _mm512_set1_epi32(0x7f800000));
  const __mmask16 tiny = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(int32_t(math_detail::kTanhTinyBits)), ax);
  const __mmask16 sat =
      __mmask16(~nan) & _mm512_cmpgt_epi32_mask(ax, _mm512_set1_epi32(int32_t(math_detail::kTanhSatBits)));
  const unsigned keep = ~unsigned(nan | tiny | sat) & 0xffffu;
  const unsigned near = tanh_fast16(af, y);
  *y = _mm512_or_ps(*y, sign);
  *y = _mm512_mask_blend_ps(tiny, *y, x);
  *y = _mm512_mask_blend_ps(sat, *y, _mm512_or_ps(_mm512_set1_ps(1.0f), sign));
  return (near & keep) | nan;
}

REPMODE_AVX512_INLINE unsigned sigmoid16(__m512 x, __m512* y) {
  const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  // As in cr_sigmoidf_impl: |x| <= 2^-24 -> 1/2; x > 17.5 -> 1; x < -104 -> +0 (ordered
  // compares: NaN is in none of them); fast path for -87.33 <= x <= 17.5 otherwise; the rest
  // (NaN, -104 <= x < -87.33) -> scalar.
  const __mmask16 half = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(int32_t(math_detail::kSigmoidHalfBits + 1)), ax);
  const __mmask16 one = _mm512_cmp_ps_mask(x, _mm512_set1_ps(math_detail::kSigmoidSat), _CMP_GT_OQ);
  const __mmask16 zero = _mm512_cmp_ps_mask(x, _mm512_set1_ps(math_detail::kSigmoidZero), _CMP_LT_OQ);
  const __mmask16 ok = __mmask16(~half) & _mm512_cmp_ps_mask(x, _mm512_set1_ps(math_detail::kSigmoidSat), _CMP_LE_OQ) &
                       _mm512_cmp_ps_mask(x, _mm512_set1_ps(math_detail::kSigmoidNormal), _CMP_GE_OQ);
  const unsigned scalar = ~unsigned(ok | half | one | zero) & 0xffffu;
  const unsigned near = sigmoid_fast16(x, y);
  *y = _mm512_mask_blend_ps(half, *y, _mm512_set1_ps(0.5f));
  *y = _mm512_mask_blend_ps(one, *y, _mm512_set1_ps(1.0f));
  *y = _mm512_mask_blend_ps(zero, *y, _mm512_setzero_ps());  // +0
  return (near & unsigned(ok)) | scalar;
}

REPMODE_AVX512_INLINE unsigned gelu16(__m512 x, __m512* y) {
  // Kept: |x| >= 2^-124 (integer compare of the bits) and x >= -13 (false for NaN).
  const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  const unsigned ok = _mm512_cmpgt_epi32_mask(ax, _mm512_set1_epi32(0x017fffff)) &
                      _mm512_cmp_ps_mask(x, _mm512_set1_ps(-13.0f), _CMP_GE_OQ);
  return gelu_fast16(x, y) | (ok ^ 0xffffu);
}

// out[i] = f(in[i]): two vectors per iteration (their fast paths interleave), lanes left over
// and the n % 16 tail by the scalar function.
template <unsigned (*fast)(__m512, __m512*), float (*scalar)(float)>
REPMODE_AVX512_INLINE void array16(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 x0 = _mm512_loadu_ps(in + i), x1 = _mm512_loadu_ps(in + i + 16);
    __m512 y0, y1;
    const unsigned b0 = fast(x0, &y0), b1 = fast(x1, &y1);
    if (__builtin_expect(b0 != 0, 0)) y0 = fix_lanes(x0, y0, b0, scalar);
    if (__builtin_expect(b1 != 0, 0)) y1 = fix_lanes(x1, y1, b1, scalar);
    _mm512_storeu_ps(out + i, y0);
    _mm512_storeu_ps(out + i + 16, y1);
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 x0 = _mm512_loadu_ps(in + i);
    __m512 y0;
    const unsigned b0 = fast(x0, &y0);
    if (__builtin_expect(b0 != 0, 0)) y0 = fix_lanes(x0, y0, b0, scalar);
    _mm512_storeu_ps(out + i, y0);
  }
  for (; i < n; ++i) out[i] = scalar(in[i]);
}

}  // namespace vec_math512_detail

REPMODE_AVX512_FN inline void tanh_array_avx512(const float* in, float* out, int64_t n) {
  vec_math512_detail::array16<vec_math512_detail::tanh16, cr_tanhf>(in, out, n);
}

REPMODE_AVX512_FN inline void sigmoid_array_avx512(const float* in, float* out, int64_t n) {
  vec_math512_detail::array16<vec_math512_detail::sigmoid16, cr_sigmoidf>(in, out, n);
}

REPMODE_AVX512_FN inline void erf_array_avx512(const float* in, float* out, int64_t n) {
  vec_math512_detail::array16<vec_math512_detail::erf16, cr_erff>(in, out, n);
}

REPMODE_AVX512_FN inline void gelu_array_avx512(const float* in, float* out, int64_t n) {
  vec_math512_detail::array16<vec_math512_detail::gelu16, vec_math_gelu_detail::gelu_scalar>(in, out, n);
}

}  // namespace repmode::cpu

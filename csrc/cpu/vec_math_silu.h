// AVX2 and AVX-512 array versions of float32 silu, bit for bit equal to its definition in
// csrc/common/elementwise.h,
//
//   silu(x) = (float)(X * repmode_sigmoid(X))      X = (double)x
//
//   silu_array_avx2 / silu_array_avx512 (in, out, n)
//
// (The activation gradients silu_backward, gelu_backward and gelu_tanh_backward have their own
// array versions: csrc/cpu/vec_activation_backward.cpp.)
//
// Method: unlike vec_math_gelu_avx2.h (a different approximation kept behind a rounding
// test), every lane here REPLAYS the scalar double sequence operation by operation, in
// 4 (AVX2) or 8 (AVX-512) double lanes: exp_fast(-|X|, m) of csrc/common/math.h (reduction,
// table 2^(j/64) read by a gather from the very table exp2_row serves, Estrin polynomial,
// fast_two_sum, normalize_1_2 as a blend of the factors 2, 1/2 or 1 and of m - 1, m + 1 or m),
// the exact scaling by 2^m, dd_add(1, E) and dd_div_to_double of csrc/common/math_hyperbolic.h.
// Each + - * / is the same IEEE double operation with the same operands (round to nearest
// even, no contraction: this file is compiled with -ffp-contract=off like the rest); the one
// fma (dd_div_to_double's remainder) is an explicit fma in both. So each lane's result is
// the scalar result, and the conversion to float32 is the same single IEEE conversion.
// Lanes outside repmode_sigmoid's general path (NaN, |X| < 2^-55 (zeros, subnormals),
// |X| > 37.5, infinities) and the n % width tail call the scalar formula itself.
//
// Where the scalar code reads k = int(kd): kd = (X' * 64/ln2 + 1.5*2^52) - 1.5*2^52 with the
// sum t in [2^52, 2^53) (|X'| <= 37.5 so |k| <= 3463), where doubles are the integers, so
// k = bits(t) - bits(1.5*2^52) exactly. j = k & 63 and m = (k - j) / 64 (exact division of a
// multiple of 64) are computed on those 64-bit integers; 2^m is built from its exponent field
// (m + 1023) << 52, as pow2 does (m >= -60 here: a normal double).
//
// Tested bitwise against the scalar path on every ISA (tests/families/elementwise/
// test_activation_isa_paths.py) and over float32 inputs (all 2^32, or every N-th) by
// csrc/verify/check_activation_simd.cpp (docs/evidence.md).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

#include "../common/elementwise.h"

#define REPMODE_SILU_AVX2_FN __attribute__((target("avx2,fma")))
#define REPMODE_SILU_AVX2_INLINE inline __attribute__((target("avx2,fma"), always_inline))
#define REPMODE_SILU_AVX512_FN __attribute__((target("avx512f,avx512dq,avx2,fma")))
#define REPMODE_SILU_AVX512_INLINE inline __attribute__((target("avx512f,avx512dq,avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_silu_detail {

// ---- the lane types: the same operations on 4 or 8 doubles ----

struct Avx2Lanes {
  static constexpr int W = 4;
  using D = __m256d;
  using I = __m256i;
  using M = __m256d;  // all-ones lanes
  static REPMODE_SILU_AVX2_INLINE D set(double v) { return _mm256_set1_pd(v); }
  static REPMODE_SILU_AVX2_INLINE D add(D a, D b) { return _mm256_add_pd(a, b); }
  static REPMODE_SILU_AVX2_INLINE D sub(D a, D b) { return _mm256_sub_pd(a, b); }
  static REPMODE_SILU_AVX2_INLINE D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static REPMODE_SILU_AVX2_INLINE D div(D a, D b) { return _mm256_div_pd(a, b); }
  static REPMODE_SILU_AVX2_INLINE D fma(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static REPMODE_SILU_AVX2_INLINE D neg(D a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
  static REPMODE_SILU_AVX2_INLINE D abs(D a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  static REPMODE_SILU_AVX2_INLINE M lt(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
  static REPMODE_SILU_AVX2_INLINE M ge(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
  static REPMODE_SILU_AVX2_INLINE M le(D a, D b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
  static REPMODE_SILU_AVX2_INLINE M mand(M a, M b) { return _mm256_and_pd(a, b); }
  static REPMODE_SILU_AVX2_INLINE unsigned bitsof(M m) { return unsigned(_mm256_movemask_pd(m)); }
  // m ? t : f
  static REPMODE_SILU_AVX2_INLINE D sel(M m, D t, D f) { return _mm256_blendv_pd(f, t, m); }
  static REPMODE_SILU_AVX2_INLINE I seli(M m, I t, I f) {
    return _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(f), _mm256_castsi256_pd(t), m));
  }
  static REPMODE_SILU_AVX2_INLINE I bits(D a) { return _mm256_castpd_si256(a); }
  static REPMODE_SILU_AVX2_INLINE D from_bits(I a) { return _mm256_castsi256_pd(a); }
  static REPMODE_SILU_AVX2_INLINE I seti(int64_t v) { return _mm256_set1_epi64x(v); }
  static REPMODE_SILU_AVX2_INLINE I addi(I a, I b) { return _mm256_add_epi64(a, b); }
  static REPMODE_SILU_AVX2_INLINE I subi(I a, I b) { return _mm256_sub_epi64(a, b); }
  static REPMODE_SILU_AVX2_INLINE I andi(I a, I b) { return _mm256_and_si256(a, b); }
  template <int S>
  static REPMODE_SILU_AVX2_INLINE I shl(I a) {
    return _mm256_slli_epi64(a, S);
  }
  template <int S>
  static REPMODE_SILU_AVX2_INLINE I shr(I a) {  // logical
    return _mm256_srli_epi64(a, S);
  }
  static REPMODE_SILU_AVX2_INLINE D gather(const double* base, I idx) { return _mm256_i64gather_pd(base, idx, 8); }
  static REPMODE_SILU_AVX2_INLINE D load_f(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  // W floats copied from p to the aligned array dst by one vector load and store.
  static REPMODE_SILU_AVX2_INLINE void keep_f(float* dst, const float* p) { _mm_store_ps(dst, _mm_loadu_ps(p)); }
  // (float)v for every lane, NaN lanes replaced by the canonical NaN.
  static REPMODE_SILU_AVX2_INLINE void store_f(float* p, D v) {
    __m128 f = _mm256_cvtpd_ps(v);
    __m128 nan = _mm_cmp_ps(f, f, _CMP_UNORD_Q);
    f = _mm_blendv_ps(f, _mm_castsi128_ps(_mm_set1_epi32(int(kCanonicalNanBits32))), nan);
    _mm_storeu_ps(p, f);
  }
};

struct Avx512Lanes {
  static constexpr int W = 8;
  using D = __m512d;
  using I = __m512i;
  using M = __mmask8;
  static REPMODE_SILU_AVX512_INLINE D set(double v) { return _mm512_set1_pd(v); }
  static REPMODE_SILU_AVX512_INLINE D add(D a, D b) { return _mm512_add_pd(a, b); }
  static REPMODE_SILU_AVX512_INLINE D sub(D a, D b) { return _mm512_sub_pd(a, b); }
  static REPMODE_SILU_AVX512_INLINE D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  static REPMODE_SILU_AVX512_INLINE D div(D a, D b) { return _mm512_div_pd(a, b); }
  static REPMODE_SILU_AVX512_INLINE D fma(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static REPMODE_SILU_AVX512_INLINE D neg(D a) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(int64_t(1) << 63)));
  }
  static REPMODE_SILU_AVX512_INLINE D abs(D a) {
    return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(INT64_MAX)));
  }
  static REPMODE_SILU_AVX512_INLINE M lt(D a, D b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
  static REPMODE_SILU_AVX512_INLINE M ge(D a, D b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
  static REPMODE_SILU_AVX512_INLINE M le(D a, D b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
  static REPMODE_SILU_AVX512_INLINE M mand(M a, M b) { return M(a & b); }
  static REPMODE_SILU_AVX512_INLINE unsigned bitsof(M m) { return unsigned(m); }
  static REPMODE_SILU_AVX512_INLINE D sel(M m, D t, D f) { return _mm512_mask_blend_pd(m, f, t); }
  static REPMODE_SILU_AVX512_INLINE I seli(M m, I t, I f) { return _mm512_mask_blend_epi64(m, f, t); }
  static REPMODE_SILU_AVX512_INLINE I bits(D a) { return _mm512_castpd_si512(a); }
  static REPMODE_SILU_AVX512_INLINE D from_bits(I a) { return _mm512_castsi512_pd(a); }
  static REPMODE_SILU_AVX512_INLINE I seti(int64_t v) { return _mm512_set1_epi64(v); }
  static REPMODE_SILU_AVX512_INLINE I addi(I a, I b) { return _mm512_add_epi64(a, b); }
  static REPMODE_SILU_AVX512_INLINE I subi(I a, I b) { return _mm512_sub_epi64(a, b); }
  static REPMODE_SILU_AVX512_INLINE I andi(I a, I b) { return _mm512_and_si512(a, b); }
  template <int S>
  static REPMODE_SILU_AVX512_INLINE I shl(I a) {
    return _mm512_slli_epi64(a, S);
  }
  template <int S>
  static REPMODE_SILU_AVX512_INLINE I shr(I a) {
    return _mm512_srli_epi64(a, S);
  }
  static REPMODE_SILU_AVX512_INLINE D gather(const double* base, I idx) { return _mm512_i64gather_pd(idx, base, 8); }
  static REPMODE_SILU_AVX512_INLINE D load_f(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static REPMODE_SILU_AVX512_INLINE void keep_f(float* dst, const float* p) {
    _mm256_store_ps(dst, _mm256_loadu_ps(p));
  }
  static REPMODE_SILU_AVX512_INLINE void store_f(float* p, D v) {
    __m256 f = _mm512_cvtpd_ps(v);
    __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    f = _mm256_blendv_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32(int(kCanonicalNanBits32))), nan);
    _mm256_storeu_ps(p, f);
  }
};

inline float silu_scalar(float x) {
  return EwFormula<float, EwOp::silu>::apply(x, 0.0f, 0.0f, EwParams<float>{0.0, 0.0, 0.0});
}

}  // namespace vec_silu_detail

namespace vec_silu_avx2 {
using V = vec_silu_detail::Avx2Lanes;
using D = V::D;
using I = V::I;
#define REPMODE_SILU_LANE_FN inline __attribute__((target("avx2,fma"), always_inline))
#define REPMODE_SILU_ARRAY_FN inline __attribute__((target("avx2,fma")))
#include "vec_math_silu_lanes.inc"
#undef REPMODE_SILU_LANE_FN
#undef REPMODE_SILU_ARRAY_FN
}  // namespace vec_silu_avx2

namespace vec_silu_avx512 {
using V = vec_silu_detail::Avx512Lanes;
using D = V::D;
using I = V::I;
#define REPMODE_SILU_LANE_FN inline __attribute__((target("avx512f,avx512dq,avx2,fma"), always_inline))
#define REPMODE_SILU_ARRAY_FN inline __attribute__((target("avx512f,avx512dq,avx2,fma")))
#include "vec_math_silu_lanes.inc"
#undef REPMODE_SILU_LANE_FN
#undef REPMODE_SILU_ARRAY_FN
}  // namespace vec_silu_avx512

// out[i] = silu(in[i]); in == out allowed.
inline void silu_array_avx2(const float* in, float* out, int64_t n) { vec_silu_avx2::silu_array(in, out, n); }
inline void silu_array_avx512(const float* in, float* out, int64_t n) { vec_silu_avx512::silu_array(in, out, n); }

}  // namespace repmode::cpu

#undef REPMODE_SILU_AVX2_FN
#undef REPMODE_SILU_AVX2_INLINE
#undef REPMODE_SILU_AVX512_FN
#undef REPMODE_SILU_AVX512_INLINE

#endif  // __x86_64__

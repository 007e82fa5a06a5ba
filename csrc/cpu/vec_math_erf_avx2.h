// AVX2 + FMA array version of cr_erff (csrc/common/math_erf.h), bit for bit equal to the
// scalar function on every input.
//
//   erf_array_avx2(in, out, n): out[i] = cr_erff(in[i]) for 0 <= i < n
//   in and out may be the same array (in == out); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX2 and FMA first (isa.h: best_isa() >= avx2).
// The functions carry __attribute__((target("avx2,fma"))), so no -mavx2 flag is needed.
//
// How the bits stay equal (the scheme of vec_math_avx2.h, whose helpers this file uses):
// 8 floats at a time, each lane running cr_erff's fast path -- erf_poly_f (row k from
// s = |x| + 2^20, t = |x| - (s - 2^20) in float, exact) and erf_eval (Estrin's scheme
// over the row's ten coefficients, in double, t widened exactly), then the
// fast_path_is_hard rounding test -- with the same IEEE operations in the same order, one
// vector instruction per scalar operation (two 4-lane double vectors per 8 floats) and no
// fma (the scalar path has none). The rows are read from the very table the scalar code
// uses (erf_row(0)). The float result is (float)y, one IEEE conversion, with the sign bit
// of x put back, as in the scalar code. Lanes with |x| >= 3.9192059 (including +-inf) get
// +-1 as in the scalar code. Lanes the fast path does not finish -- NaN, |x| < 2^-125
// (zeros, subnormals, the lowest normal binade) and lanes whose rounding test fails -- are
// recomputed by calling cr_erff, as is the n % 8 tail.
//
// Speed: the row offsets of a block of 64 floats are computed first and read back from
// memory by the evaluation pass, so the table loads (five 16-byte pairs per lane,
// transposed with unpack instructions) do not wait on a long dependency chain.
//
// Like math.h, this file must be compiled with -ffp-contract=off and without fast-math
// (GCC could otherwise contract the _mm256_mul_pd/_mm256_add_pd pairs into FMAs). FTZ/DAZ
// do not matter: the kept lanes have normal inputs (|x| >= 2^-125), no subnormal
// intermediate (|t| >= 2^-125 or 0, so t^8 >= 2^-1000; coefficients and partial sums are
// far above 2^-1022), and normal float results.
//
// Verified against cr_erff on all 2^32 inputs by csrc/verify/check_math.cpp (case "erff").
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/math_erf.h"
#include "vec_math_avx2.h"

#define REPMODE_ERF_AVX2_FN __attribute__((target("avx2,fma")))
#define REPMODE_ERF_AVX2_INLINE inline __attribute__((target("avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_math_detail {

// fast_path_is_hard(y) per lane, as an all-ones / all-zeros 64-bit mask:
// ((bits + kFastUlps - 2^28) & (2^29 - 1)) <= 2 kFastUlps.
REPMODE_ERF_AVX2_INLINE __m256i erf_hard_mask(__m256d y) {
  using erf_detail::kFastUlps;
  __m256i v = _mm256_add_epi64(_mm256_castpd_si256(y), _mm256_set1_epi64x(int64_t(kFastUlps) - 0x10000000ll));
  v = _mm256_and_si256(v, _mm256_set1_epi64x(0x1fffffffll));
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(int64_t(2 * kFastUlps + 1)), v);
}

// Coefficients 2j and 2j+1 of the rows of 4K lanes (row[h][l] for lane l of vector h),
// read as one pair per lane and transposed (cheaper than two gathers).
template <int K>
REPMODE_ERF_AVX2_INLINE void erf_coef_pair(const double* const (*row)[4], int j, PD<K>& lo, PD<K>& hi) {
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    __m256d a02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[h][0] + 2 * j)),
                                       _mm_loadu_pd(row[h][2] + 2 * j), 1);
    __m256d a13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[h][1] + 2 * j)),
                                       _mm_loadu_pd(row[h][3] + 2 * j), 1);
    lo.v[h] = _mm256_unpacklo_pd(a02, a13);
    hi.v[h] = _mm256_unpackhi_pd(a02, a13);
  }
}

// Row offsets (in doubles) for 8 floats, as erf_poly_f picks rows: k = the low bits of
// s = |x| + 2^20 (erf_row_index), 10 doubles per row. Lanes outside |x| < 3.9375 (also
// inf and NaN, whose s has larger bits) are clamped to row 31 by the unsigned minimum.
REPMODE_ERF_AVX2_INLINE __m256i erf_row_offsets(__m256 axf) {
  __m256 s = _mm256_add_ps(axf, _mm256_set1_ps(0x1p20f));
  __m256i k = _mm256_sub_epi32(_mm256_castps_si256(s), _mm256_set1_epi32(0x49800000));
  k = _mm256_min_epu32(k, _mm256_set1_epi32(31));
  return _mm256_add_epi32(_mm256_slli_epi32(k, 3), _mm256_slli_epi32(k, 1));  // 10 k
}

// cr_erff's fast path for the 4K floats |x| in axf[0..K/2) (sign bits clear), whose row
// offsets (erf_row_offsets) are off[0..4K): stores (float)erf_poly_f(|x|) to y and returns
// a bit mask of the lanes whose rounding test failed. Lanes with inputs outside
// 2^-125 <= |x| < 3.9192059 compute garbage (no traps: FP exceptions are masked, and the
// rows stay inside the table) and are replaced by the caller.
template <int K>
REPMODE_ERF_AVX2_INLINE unsigned erf_fast_lanes(const __m256* axf, const int32_t* off, __m256* y) {
  const double* tab = erf_detail::erf_row(0);
  const double* row[K][4];
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h)
#pragma GCC unroll 8
    for (int l = 0; l < 4; ++l) row[h][l] = tab + off[4 * h + l];
  // erf_poly_f: s = |x| + 2^20, t = |x| - (s - 2^20) (float operations, exact but the first).
  __m256 tf[K / 2];
#pragma GCC unroll 8
  for (int g = 0; g < K / 2; ++g) {
    __m256 s = _mm256_add_ps(axf[g], _mm256_set1_ps(0x1p20f));
    tf[g] = _mm256_sub_ps(axf[g], _mm256_sub_ps(s, _mm256_set1_ps(0x1p20f)));
  }
  PD<K> t;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) t.v[h] = _mm256_cvtps_pd(half_ps<K>(tf, h));  // exact
  // erf_eval, operation for operation.
  PD<K> r0, r1, r2, r3, r4, r5, r6, r7, r8, r9;
  erf_coef_pair<K>(row, 0, r0, r1);
  erf_coef_pair<K>(row, 1, r2, r3);
  erf_coef_pair<K>(row, 2, r4, r5);
  erf_coef_pair<K>(row, 3, r6, r7);
  erf_coef_pair<K>(row, 4, r8, r9);
  PD<K> t2 = mul(t, t);
  PD<K> q0 = add(r0, mul(r1, t));
  PD<K> q1 = add(r2, mul(r3, t));
  PD<K> q2 = add(r4, mul(r5, t));
  PD<K> q3 = add(r6, mul(r7, t));
  PD<K> t4 = mul(t2, t2);
  PD<K> u0 = add(q0, mul(t2, q1));
  PD<K> u1 = add(q2, mul(t2, q3));
  PD<K> t8 = mul(t4, t4);
  PD<K> v = add(u0, mul(t4, u1));
  PD<K> w = add(v, mul(t8, r8));
  PD<K> p = add(r9, mul(t, w));
  unsigned bad = 0;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    bad |= unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(erf_hard_mask(p.v[h])))) << (4 * h);
    __m128 f = _mm256_cvtpd_ps(p.v[h]);
    if (h & 1)
      y[h >> 1] = _mm256_insertf128_ps(y[h >> 1], f, 1);
    else
      y[h >> 1] = _mm256_castps128_ps256(f);
  }
  return bad;
}

// Floats per block: the row offsets of a whole block are computed first and read back
// from memory by the second pass, so the table loads do not wait on a long dependency
// chain (measured: about 1.7x faster than computing each vector's rows just before use).
constexpr int kErfBlock = 64;

}  // namespace vec_math_detail

REPMODE_ERF_AVX2_FN inline void erf_array_avx2(const float* in, float* out, int64_t n) {
  using namespace vec_math_detail;
  const int64_t n_main = n > 0 ? n - n % 8 : 0;
  int64_t i = 0;
  while (i < n_main) {
    const int64_t m = n_main - i < kErfBlock ? n_main - i : kErfBlock;
    alignas(32) int32_t off[kErfBlock];
    for (int64_t j = 0; j < m; j += 8) {
      __m256 axf = _mm256_and_ps(_mm256_loadu_ps(in + i + j), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(off + j), erf_row_offsets(axf));
    }
    for (int64_t j = 0; j < m; j += 8) {
      __m256 xf = _mm256_loadu_ps(in + i + j);
      __m256i ux = _mm256_castps_si256(xf);
      __m256i sign = _mm256_and_si256(ux, _mm256_set1_epi32(int32_t(0x80000000u)));
      __m256i ax = _mm256_and_si256(ux, _mm256_set1_epi32(0x7fffffff));
      __m256 axf = _mm256_castsi256_ps(ax);
      // As in cr_erff_impl: NaN and |x| < 2^-125 go to the scalar function; |x| >= x0 =
      // 0x407ad445 (and +-inf) give +-1. Signed compares: ax < 2^31.
      __m256i sp = _mm256_or_si256(_mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x7f800000)),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x01000000), ax));
      __m256i sat = _mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x407ad444));
      __m256 y;
      unsigned bad = erf_fast_lanes<2>(&axf, off + j, &y);
      // Sign of x back on (float)y, then +-1 on the saturated lanes.
      __m256i yb = _mm256_or_si256(_mm256_castps_si256(y), sign);
      __m256i one = _mm256_or_si256(sign, _mm256_set1_epi32(0x3f800000));
      y = _mm256_castsi256_ps(_mm256_blendv_epi8(yb, one, sat));
      bad = unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(sp))) |
            (bad & ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(sat))));
      store_with_fixups<1>(out + i + j, &xf, &y, bad, [](float v) { return cr_erff(v); });
    }
    i += m;
  }
  for (; i < n; ++i) out[i] = cr_erff(in[i]);
}

}  // namespace repmode::cpu

#undef REPMODE_ERF_AVX2_INLINE
#undef REPMODE_ERF_AVX2_FN

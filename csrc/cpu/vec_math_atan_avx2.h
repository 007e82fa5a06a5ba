// AVX2 array versions of cr_atan2f / cr_atanf (csrc/common/math_atan.h), bit for bit equal to
// the scalar functions on every input.
//
//   atan2_array_avx2(y, x, sx, out, n): out[i] = cr_atan2f(y[i], x[i * sx]), sx = 1 or 0
//                                        (0: one x for all)
//   atan_array_avx2(in, out, n):        out[i] = cr_atanf(in[i])   (= cr_atan2f(in[i], 1))
//   out may be y (in place); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX2 first (isa.h: active_isa() >= avx2).
//
// Each group of 8 pairs is widened to two 4-lane double vectors, and each lane runs the scalar
// fast path (atan_core_fast, octant_fast, the f32_boundary_within test of atan_fast_round) with
// the same IEEE double operations in the same order, one vector instruction per scalar
// operation, no fma (as in the scalar code); the table is the very same array (atan_row(0)),
// read per lane by a gather. The octant's four candidate values are all computed and the
// lane's one selected by blends (each candidate is the scalar expression itself). k =
// int(q * 64 + 0.4999) is the same truncating conversion (cvttpd). Lanes that the scalar code
// handles differently are recomputed by calling cr_atan2f: an operand that is zero, subnormal,
// infinite or NaN (exponent field 0 or 255), a result below 2^-125 (rounded by integer
// arithmetic in the scalar code) and a failed rounding test; so is the n % 8 tail. Garbage in
// those lanes never reaches memory: k is clamped to [0, 64] before the gather.
//
// FTZ/DAZ do not matter: subnormal operands go to the scalar code, no intermediate of a kept
// lane is subnormal (math_atan.h), and kept results are normal float32 values. Compile with
// -ffp-contract=off and without fast-math (the package's flags).
//
// Checked against the scalar functions by csrc/verify/math_cases/atan.cpp (atanf's array path,
// every input of a run) and tests/families/mathtail/test_transcendental.py (forced ISA paths).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/math_atan.h"

#define REPMODE_ATAN_AVX2_FN __attribute__((target("avx2")))

namespace repmode::cpu {
namespace vec_math_atan_detail {

// The fast path for 4 pairs (Y, X as exact doubles of normal, finite, nonzero floats).
// Returns the candidate result w per lane; *flag gets the lanes the scalar code must decide.
REPMODE_ATAN_AVX2_FN inline __m256d atan2_fast4(__m256d Y, __m256d X, int* flag) {
  using namespace math_detail::atan_detail;
  const __m256d sign_mask = _mm256_set1_pd(-0.0);
  __m256d A = _mm256_andnot_pd(sign_mask, Y);
  __m256d B = _mm256_andnot_pd(sign_mask, X);
  __m256d swap = _mm256_cmp_pd(A, B, _CMP_GT_OQ);  // A > B
  __m256d xneg = _mm256_cmp_pd(X, _mm256_setzero_pd(), _CMP_LT_OQ);
  __m256d a = _mm256_blendv_pd(A, B, swap);
  __m256d b = _mm256_blendv_pd(B, A, swap);
  // atan_core_fast
  __m256d q = _mm256_div_pd(a, b);
  __m256d kd = _mm256_add_pd(_mm256_mul_pd(q, _mm256_set1_pd(64.0)), _mm256_set1_pd(0.4999));
  __m128i k = _mm256_cvttpd_epi32(kd);
  k = _mm_min_epi32(_mm_max_epi32(k, _mm_setzero_si128()), _mm_set1_epi32(64));
  __m256d c = _mm256_mul_pd(_mm256_cvtepi32_pd(k), _mm256_set1_pd(0.015625));
  __m256d num = _mm256_sub_pd(a, _mm256_mul_pd(c, b));
  __m256d den = _mm256_add_pd(b, _mm256_mul_pd(c, a));
  __m256d r = _mm256_div_pd(num, den);
  __m256d z = _mm256_mul_pd(r, r);
  __m256d Q = _mm256_add_pd(
      _mm256_set1_pd(-kThirdHi),
      _mm256_mul_pd(z, _mm256_sub_pd(_mm256_set1_pd(kFifthHi), _mm256_mul_pd(z, _mm256_set1_pd(kSeventhHi)))));
  __m256d p = _mm256_add_pd(r, _mm256_mul_pd(_mm256_mul_pd(r, z), Q));
  const double* tab = atan_row(0);
  __m128i k2 = _mm_add_epi32(k, k);
  __m256d t0 = _mm256_i32gather_pd(tab, k2, 8);
  __m256d t1 = _mm256_i32gather_pd(tab + 1, k2, 8);
  __m256d v = _mm256_add_pd(t0, _mm256_add_pd(t1, p));
  // octant_fast
  __m256d w_id = v;
  __m256d w_pi = _mm256_add_pd(_mm256_sub_pd(_mm256_set1_pd(kPiLo), v), _mm256_set1_pd(kPiHi));
  __m256d w_p2m = _mm256_add_pd(_mm256_sub_pd(_mm256_set1_pd(kPio2Lo), v), _mm256_set1_pd(kPio2Hi));
  __m256d w_p2p = _mm256_add_pd(_mm256_add_pd(_mm256_set1_pd(kPio2Lo), v), _mm256_set1_pd(kPio2Hi));
  __m256d w_noswap = _mm256_blendv_pd(w_id, w_pi, xneg);
  __m256d w_swap = _mm256_blendv_pd(w_p2m, w_p2p, xneg);
  __m256d w = _mm256_blendv_pd(w_noswap, w_swap, swap);
  // atan_fast_round: w < 2^-125 (or 0) -> scalar; f32_boundary_within(w, kAtanFastTol)
  __m256d small = _mm256_cmp_pd(w, _mm256_set1_pd(0x1p-125), _CMP_LT_OQ);
  __m256i t = _mm256_add_epi64(_mm256_castpd_si256(w), _mm256_set1_epi64x(int64_t(kAtanFastTol - 0x10000000ull)));
  t = _mm256_and_si256(t, _mm256_set1_epi64x(0x1fffffff));
  __m256i far = _mm256_cmpgt_epi64(t, _mm256_set1_epi64x(int64_t(2 * kAtanFastTol)));
  __m256d near = _mm256_andnot_pd(_mm256_castsi256_pd(far), _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
  *flag = _mm256_movemask_pd(_mm256_or_pd(small, near));
  return w;
}

}  // namespace vec_math_atan_detail

REPMODE_ATAN_AVX2_FN inline void atan2_array_avx2(const float* y, const float* x, int64_t sx, float* out, int64_t n) {
  using namespace vec_math_atan_detail;
  int64_t i = 0;
  const int64_t n_main = n > 0 ? n - n % 8 : 0;
  for (; i < n_main; i += 8) {
    __m256 yf = _mm256_loadu_ps(y + i);
    __m256 xf = sx ? _mm256_loadu_ps(x + i) : _mm256_set1_ps(x[0]);
    __m256i uy = _mm256_castps_si256(yf), ux = _mm256_castps_si256(xf);
    __m256i ey = _mm256_and_si256(_mm256_srli_epi32(uy, 23), _mm256_set1_epi32(0xff));
    __m256i ex = _mm256_and_si256(_mm256_srli_epi32(ux, 23), _mm256_set1_epi32(0xff));
    __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi32(0xff);
    __m256i special = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(ey, zero), _mm256_cmpeq_epi32(ey, top)),
                                      _mm256_or_si256(_mm256_cmpeq_epi32(ex, zero), _mm256_cmpeq_epi32(ex, top)));
    unsigned flag = unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(special)));
    int f0, f1;
    __m256d w0 =
        atan2_fast4(_mm256_cvtps_pd(_mm256_castps256_ps128(yf)), _mm256_cvtps_pd(_mm256_castps256_ps128(xf)), &f0);
    __m256d w1 =
        atan2_fast4(_mm256_cvtps_pd(_mm256_extractf128_ps(yf, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1)), &f1);
    flag |= unsigned(f0) | (unsigned(f1) << 4);
    __m256 res = _mm256_set_m128(_mm256_cvtpd_ps(w1), _mm256_cvtpd_ps(w0));
    __m256i sign = _mm256_and_si256(uy, _mm256_set1_epi32(int32_t(0x80000000u)));
    res = _mm256_castsi256_ps(_mm256_or_si256(_mm256_castps_si256(res), sign));
    if (flag) {
      alignas(32) float tmp[8];
      _mm256_store_ps(tmp, res);
      for (int l = 0; l < 8; ++l)
        if (flag >> l & 1) tmp[l] = cr_atan2f(y[i + l], sx ? x[i + l] : x[0]);
      _mm256_storeu_ps(out + i, _mm256_load_ps(tmp));
    } else {
      _mm256_storeu_ps(out + i, res);
    }
  }
  for (; i < n; ++i) out[i] = cr_atan2f(y[i], sx ? x[i] : x[0]);
}

REPMODE_ATAN_AVX2_FN inline void atan_array_avx2(const float* in, float* out, int64_t n) {
  const float one = 1.0f;
  atan2_array_avx2(in, &one, 0, out, n);
}

}  // namespace repmode::cpu

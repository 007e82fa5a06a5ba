// AVX-512 array versions of cr_expf / cr_logf (csrc/common/math.h): the AVX2 routines of
// csrc/cpu/vec_math_avx2.h on 16 floats per vector, bit for bit equal to them and to the scalar
// functions on every input.
//
//   exp_array_avx512(in, out, n): out[i] = cr_expf(in[i]) for 0 <= i < n
//   log_array_avx512(in, out, n): out[i] = cr_logf(in[i]) for 0 <= i < n
//   in and out may be the same array (in == out); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX-512 first (isa.h: active_isa() == avx512). The
// functions carry __attribute__((target(...avx512...))), so no -mavx512f flag is needed.
//
// Each lane runs exactly the per-lane operations of the AVX2 routine (which are verified against
// the scalar functions on all 2^32 inputs): the same IEEE double operations in the same order,
// the same fma where the AVX2 code has _mm256_fmadd_pd and none where it has a separate
// multiply and add, the same table entries (read with a gather instead of scalar loads: the
// same values), the same rounding tests, the same blends for the overflow/underflow ranges and
// the same scalar fallback (cr_expf / cr_logf) for every lane the fast path does not settle.
// Only the vector width differs: 16 float lanes, each widened to one lane of two 8-lane double
// vectors. A correctly rounded function has one result per input, so every path gives the same
// bits; tests/families/elementwise compare the scalar, AVX2 and AVX-512 paths bit for bit, and
// csrc/verify/check_vec_math_avx512.cpp compares this file with the AVX2 routines on all 2^32
// inputs (docs/evidence.md).
//
// As for vec_math_avx2.h: compile with -ffp-contract=off and without fast-math; round-to-nearest
// is assumed.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/math.h"
#include "vec_math_avx2.h"

#define REPMODE_AVX512_FN __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))
#define REPMODE_AVX512_INLINE \
  inline __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_math512_detail {

// The 8-float halves of a 16-float vector, and back.
REPMODE_AVX512_INLINE __m256 half_ps(__m512 x, int h) {
  return h ? _mm512_extractf32x8_ps(x, 1) : _mm512_castps512_ps256(x);
}
REPMODE_AVX512_INLINE __m256i half_si(__m512i x, int h) {
  return h ? _mm512_extracti32x8_epi32(x, 1) : _mm512_castsi512_si256(x);
}
REPMODE_AVX512_INLINE __m512 join_ps(__m256 lo, __m256 hi) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

// y with the lanes whose bit is set in bad recomputed by f from x.
template <typename F>
REPMODE_AVX512_INLINE __m512 fix_lanes(__m512 x, __m512 y, unsigned bad, F f) {
  alignas(64) float xs[16], ys[16];
  _mm512_store_ps(xs, x);
  _mm512_store_ps(ys, y);
  for (int l = 0; l < 16; ++l)
    if (bad & (1u << l)) ys[l] = f(xs[l]);
  return _mm512_load_ps(ys);
}

// exp_fast_lanes of vec_math_avx2.h on 16 lanes (its comment has the error analysis): a = x
// rounded to a multiple of 1/64, b = x - a, r = (double)b, q = fma(r, fma(r, 1/24, 1/6), 1/2),
// p = fma(r*r, q, r), hi = fma(T, p, T) with T = e^a from the table, the rounding test on hi's
// low 29 bits, y = (float)hi. Returns the lanes whose rounding test failed.
REPMODE_AVX512_INLINE unsigned exp_fast_lanes(__m512 x, __m512* y) {
  using vec_math_detail::kExpTableLo;
  using vec_math_detail::kExpTableSize;
  const double* tab = vec_math_detail::exp_by_64ths() - kExpTableLo;
  const __m512 sh = _mm512_add_ps(x, _mm512_set1_ps(0x1.8p17f));
  const __m512 a = _mm512_sub_ps(sh, _mm512_set1_ps(0x1.8p17f));
  const __m512 b = _mm512_sub_ps(x, a);
  const __m512i idx =
      _mm512_min_epi32(_mm512_max_epi32(_mm512_sub_epi32(_mm512_castps_si512(sh), _mm512_set1_epi32(0x48400000)),
                                        _mm512_set1_epi32(kExpTableLo)),
                       _mm512_set1_epi32(kExpTableLo + kExpTableSize - 1));
  unsigned bad = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m512d r = _mm512_cvtps_pd(half_ps(b, h));
    const __m512d q =
        _mm512_fmadd_pd(r, _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 24), _mm512_set1_pd(1.0 / 6)), _mm512_set1_pd(0.5));
    const __m512d p = _mm512_fmadd_pd(_mm512_mul_pd(r, r), q, r);
    const __m512d T = _mm512_i32gather_pd(half_si(idx, h), tab, 8);
    const __m512d hi = _mm512_fmadd_pd(T, p, T);
    const __m512i low = _mm512_and_si512(_mm512_add_epi64(_mm512_castpd_si512(hi), _mm512_set1_epi64(4096)),
                                         _mm512_set1_epi64(0x1fffe000ll));
    bad |= unsigned(_mm512_cmpeq_epi64_mask(low, _mm512_set1_epi64(0x10000000ll))) << (8 * h);
    f[h] = _mm512_cvtpd_ps(hi);
  }
  *y = join_ps(f[0], f[1]);
  return bad;
}

// log_fast_lanes of vec_math_avx2.h on 16 lanes (cr_logf's fast path, same operations and
// order; its comment has the rewrites that keep the bits). The lanes must be positive normal
// finite x != 1 for the result to be kept. Returns the lanes whose rounding test failed.
REPMODE_AVX512_INLINE unsigned log_fast_lanes(__m512 xf, __m512* y) {
  using namespace math_detail::consts;
  const double* tab = math_detail::log_row(0);
  const __m512i ux = _mm512_castps_si512(xf);
  const __m512i j = _mm512_and_si512(_mm512_srli_epi32(ux, 16), _mm512_set1_epi32(127));
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(ux, 23), _mm512_set1_epi32(127));
  e = _mm512_mask_add_epi32(e, _mm512_cmpgt_epi32_mask(j, _mm512_set1_epi32(52)), e, _mm512_set1_epi32(1));
  const __m512i mant = _mm512_and_si512(ux, _mm512_set1_epi32(0x7fffff));
  const __m512i row = _mm512_mullo_epi32(j, _mm512_set1_epi32(3));  // row offsets 3j
  unsigned bad = 0;
  __m256 f[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m512d M = _mm512_castsi512_pd(_mm512_or_si512(
        _mm512_slli_epi64(_mm512_cvtepu32_epi64(half_si(mant, h)), 29), _mm512_set1_epi64(int64_t(1023) << 52)));
    const __m512d ae = _mm512_cvtepi32_pd(half_si(e, h));  // double(e), exact
    const __m256i rj = half_si(row, h);
    const __m512d cj = _mm512_i32gather_pd(rj, tab, 8);
    const __m512d Lhi = _mm512_i32gather_pd(rj, tab + 1, 8);
    const __m512d Llo = _mm512_i32gather_pd(rj, tab + 2, 8);
    // r = M * c - 1.0 (log_reduce for float32 inputs, see vec_math_avx2.h)
    const __m512d r = _mm512_sub_pd(_mm512_mul_pd(M, cj), _mm512_set1_pd(1.0));
    // h = e * kLn2Hi + L_hi; lo = e * kLn2Mid + L_lo
    const __m512d hh = _mm512_add_pd(_mm512_mul_pd(ae, _mm512_set1_pd(math_detail::kLn2Hi)), Lhi);
    const __m512d lo = _mm512_add_pd(_mm512_mul_pd(ae, _mm512_set1_pd(math_detail::kLn2Mid)), Llo);
    const __m512d r2 = _mm512_mul_pd(r, r);
    const __m512d r4 = _mm512_mul_pd(r2, r2);
    // q = ((-0.5 + kP3 * r) + r2 * (kP4 + kP5 * r)) + r4 * ((kP6 + kP7 * r) + r2 * (kP8 + kP9 * r))
    const __m512d t1 = _mm512_add_pd(_mm512_set1_pd(-0.5), _mm512_mul_pd(_mm512_set1_pd(kP3), r));
    const __m512d t2 = _mm512_mul_pd(r2, _mm512_add_pd(_mm512_set1_pd(kP4), _mm512_mul_pd(_mm512_set1_pd(kP5), r)));
    const __m512d t3 = _mm512_add_pd(_mm512_set1_pd(kP6), _mm512_mul_pd(_mm512_set1_pd(kP7), r));
    const __m512d t4 = _mm512_mul_pd(r2, _mm512_add_pd(_mm512_set1_pd(kP8), _mm512_mul_pd(_mm512_set1_pd(kP9), r)));
    const __m512d q = _mm512_add_pd(_mm512_add_pd(t1, t2), _mm512_mul_pd(r4, _mm512_add_pd(t3, t4)));
    // s = fast_two_sum(h, r); hi = fast_two_sum(s.hi, s.lo + (r2 * q + lo)).hi
    const __m512d s = _mm512_add_pd(hh, r);
    const __m512d sl = _mm512_sub_pd(r, _mm512_sub_pd(s, hh));
    const __m512d hi = _mm512_add_pd(s, _mm512_add_pd(sl, _mm512_add_pd(_mm512_mul_pd(r2, q), lo)));
    // is_f32_boundary(hi)
    const __m512i low29 = _mm512_and_si512(_mm512_castpd_si512(hi), _mm512_set1_epi64(0x1fffffffll));
    bad |= unsigned(_mm512_cmpeq_epi64_mask(low29, _mm512_set1_epi64(0x10000000ll))) << (8 * h);
    f[h] = _mm512_cvtpd_ps(hi);
  }
  *y = join_ps(f[0], f[1]);
  return bad;
}

}  // namespace vec_math512_detail

// cr_expf of 16 floats: exp8_avx2's sequence per lane, in two steps so that a loop can
// interleave the fast paths of several vectors: exp16_fast returns the lanes left to settle,
// exp16_settle settles them (the overflow/underflow blends, then cr_expf).
REPMODE_AVX512_INLINE unsigned exp16_fast(__m512 x, __m512* y) {
  const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  const unsigned in_range = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(0x42aea8f6), ax);  // |x| < 87.33f
  return vec_math512_detail::exp_fast_lanes(x, y) | (in_range ^ 0xffffu);
}
REPMODE_AVX512_INLINE __m512 exp16_settle(__m512 x, __m512 y, unsigned bad) {
  if (__builtin_expect(bad != 0, 0)) {
    const __mmask16 zero = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_LE_OQ);
    const __mmask16 inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(89.0f), _CMP_GT_OQ);
    y = _mm512_mask_blend_ps(zero, y, _mm512_setzero_ps());
    y = _mm512_mask_blend_ps(inf, y, _mm512_set1_ps(__builtin_inff()));
    bad &= ~unsigned(zero | inf);
    if (bad != 0) y = vec_math512_detail::fix_lanes(x, y, bad, [](float v) { return cr_expf(v); });
  }
  return y;
}
REPMODE_AVX512_INLINE __m512 exp16_avx512(__m512 x) {
  __m512 y;
  const unsigned bad = exp16_fast(x, &y);
  return exp16_settle(x, y, bad);
}

// cr_logf of 16 floats: log_array_avx2's sequence per lane, in two steps as for exp.
REPMODE_AVX512_INLINE unsigned log16_fast(__m512 x, __m512* y) {
  // Fast-path inputs, as in cr_logf_impl: positive normal finite x != 1 (signed compares).
  const __m512i ux = _mm512_castps_si512(x);
  const unsigned ok = _mm512_cmpgt_epi32_mask(ux, _mm512_set1_epi32(0x007fffff)) &
                      _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(0x7f800000), ux) &
                      _mm512_cmpneq_epi32_mask(ux, _mm512_set1_epi32(0x3f800000));
  return (ok ^ 0xffffu) | vec_math512_detail::log_fast_lanes(x, y);
}
REPMODE_AVX512_INLINE __m512 log16_settle(__m512 x, __m512 y, unsigned bad) {
  if (__builtin_expect(bad != 0, 0)) y = vec_math512_detail::fix_lanes(x, y, bad, [](float v) { return cr_logf(v); });
  return y;
}
REPMODE_AVX512_INLINE __m512 log16_avx512(__m512 x) {
  __m512 y;
  const unsigned bad = log16_fast(x, &y);
  return log16_settle(x, y, bad);
}

REPMODE_AVX512_FN inline void exp_array_avx512(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two vectors' fast paths interleaved
    const __m512 x0 = _mm512_loadu_ps(in + i), x1 = _mm512_loadu_ps(in + i + 16);
    __m512 y0, y1;
    const unsigned b0 = exp16_fast(x0, &y0), b1 = exp16_fast(x1, &y1);
    _mm512_storeu_ps(out + i, exp16_settle(x0, y0, b0));
    _mm512_storeu_ps(out + i + 16, exp16_settle(x1, y1, b1));
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, exp16_avx512(_mm512_loadu_ps(in + i)));
  for (; i < n; ++i) out[i] = cr_expf(in[i]);
}

REPMODE_AVX512_FN inline void log_array_avx512(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two vectors' fast paths interleaved
    const __m512 x0 = _mm512_loadu_ps(in + i), x1 = _mm512_loadu_ps(in + i + 16);
    __m512 y0, y1;
    const unsigned b0 = log16_fast(x0, &y0), b1 = log16_fast(x1, &y1);
    _mm512_storeu_ps(out + i, log16_settle(x0, y0, b0));
    _mm512_storeu_ps(out + i + 16, log16_settle(x1, y1, b1));
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, log16_avx512(_mm512_loadu_ps(in + i)));
  for (; i < n; ++i) out[i] = cr_logf(in[i]);
}

}  // namespace repmode::cpu

// AVX2 versions of the two float64 functions of the Box-Muller transform
// (csrc/common/random.h), four lanes at a time, bit for bit equal to the scalar ones:
//
//   log4_avx2(x, out)            out[k] = repmode_log(x[k]) for positive normal finite x[k]
//   sincos_turns4_avx2(u, s, c)  (s[k], c[k]) = sincos_turns(u[k]) for 0 <= u[k] < 1
//
// Each lane runs the scalar code's IEEE operations in the same order (a multiply and an add
// stay two operations: this file is compiled with -ffp-contract=off, and no fma intrinsic is
// used) and reads the same table (log_row); the scalar code's bit selections become blends.
// tests/test_random.py compares the scalar and AVX2 paths bit for bit.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/math.h"
#include "../common/math_trig.h"

namespace repmode::cpu {

// a + b r per lane (the scalar code's `a + b * r`).
__attribute__((target("avx2"), always_inline)) inline __m256d lin_avx2(double a, double b, __m256d r) {
  return _mm256_add_pd(_mm256_set1_pd(a), _mm256_mul_pd(_mm256_set1_pd(b), r));
}

// repmode_log = log_fast(M, e).hi with x = M 2^e, for positive normal finite x only.
__attribute__((target("avx2"))) inline void log4_avx2(const double* x, double* out) {
  using namespace math_detail;
  using namespace math_detail::consts;
  const __m256i ux = _mm256_castpd_si256(_mm256_loadu_pd(x));
  // split_double for normal x: M = 1.fraction, e = biased exponent - 1023
  const __m256i mb = _mm256_or_si256(_mm256_and_si256(ux, _mm256_set1_epi64x(0x000fffffffffffffll)),
                                     _mm256_set1_epi64x(0x3ff0000000000000ll));
  const __m256d M = _mm256_castsi256_pd(mb);
  alignas(32) int64_t biased[4], jj[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(biased), _mm256_srli_epi64(ux, 52));
  _mm256_store_si256(reinterpret_cast<__m256i*>(jj),
                     _mm256_and_si256(_mm256_srli_epi64(mb, 45), _mm256_set1_epi64x(127)));
  // log_reduce: row j of the table, ae = e + (j >= 53)
  alignas(32) double c[4], lhi[4], llo[4], ae[4];
  for (int k = 0; k < 4; ++k) {
    const double* row = log_row(int(jj[k]));
    c[k] = row[0];
    lhi[k] = row[1];
    llo[k] = row[2];
    ae[k] = double(int(biased[k]) - 1023 + (jj[k] >= 53 ? 1 : 0));
  }
  const __m256d vc = _mm256_load_pd(c);
  const __m256d mhi = _mm256_castsi256_pd(_mm256_and_si256(mb, _mm256_set1_epi64x(~int64_t(0x1ff))));
  const __m256d r = _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(mhi, vc), _mm256_set1_pd(1.0)),
                                  _mm256_mul_pd(_mm256_sub_pd(M, mhi), vc));
  const __m256d va = _mm256_load_pd(ae);
  const __m256d h = _mm256_add_pd(_mm256_mul_pd(va, _mm256_set1_pd(kLn2Hi)), _mm256_load_pd(lhi));
  const __m256d lo = _mm256_add_pd(_mm256_mul_pd(va, _mm256_set1_pd(kLn2Mid)), _mm256_load_pd(llo));
  const __m256d r2 = _mm256_mul_pd(r, r);
  const __m256d r4 = _mm256_mul_pd(r2, r2);
  const __m256d q =
      _mm256_add_pd(_mm256_add_pd(lin_avx2(-0.5, kP3, r), _mm256_mul_pd(r2, lin_avx2(kP4, kP5, r))),
                    _mm256_mul_pd(r4, _mm256_add_pd(lin_avx2(kP6, kP7, r), _mm256_mul_pd(r2, lin_avx2(kP8, kP9, r)))));
  // fast_two_sum(h, r), then fast_two_sum(s.hi, s.lo + (r2 q + lo)).hi
  const __m256d s_hi = _mm256_add_pd(h, r);
  const __m256d s_lo = _mm256_sub_pd(r, _mm256_sub_pd(s_hi, h));
  const __m256d tail = _mm256_add_pd(s_lo, _mm256_add_pd(_mm256_mul_pd(r2, q), lo));
  _mm256_storeu_pd(out, _mm256_add_pd(s_hi, tail));
}

// sincos_turns (csrc/common/math_trig.h), its selections as blends.
__attribute__((target("avx2"))) inline void sincos_turns4_avx2(const double* u, double* s, double* c) {
  const __m256d t = _mm256_mul_pd(_mm256_set1_pd(4.0), _mm256_loadu_pd(u));
  const __m128i q32 = _mm256_cvttpd_epi32(t);  // int(t) for t >= 0
  const __m256d f = _mm256_sub_pd(t, _mm256_cvtepi32_pd(q32));
  const __m256d swap = _mm256_cmp_pd(f, _mm256_set1_pd(0.5), _CMP_GT_OQ);
  const __m256d g = _mm256_blendv_pd(f, _mm256_sub_pd(_mm256_set1_pd(1.0), f), swap);
  const __m256d g2 = _mm256_mul_pd(g, g);
  const double* kS = sin_turns_coef();
  const double* kC = cos_turns_coef();
  __m256d ps = _mm256_set1_pd(kS[8]);
  for (int k = 7; k >= 0; --k) ps = _mm256_add_pd(_mm256_mul_pd(ps, g2), _mm256_set1_pd(kS[k]));
  __m256d pc = _mm256_set1_pd(kC[9]);
  for (int k = 8; k >= 0; --k) pc = _mm256_add_pd(_mm256_mul_pd(pc, g2), _mm256_set1_pd(kC[k]));
  const __m256d sg = _mm256_mul_pd(g, ps);
  const __m256d sn = _mm256_blendv_pd(sg, pc, swap), cs = _mm256_blendv_pd(pc, sg, swap);
  const __m256i q = _mm256_cvtepi32_epi64(q32);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256d odd = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, one), one));
  const __m256d sign_s = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(_mm256_srli_epi64(q, 1), one), 63));
  const __m256d sign_c =
      _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(_mm256_xor_si256(q, _mm256_srli_epi64(q, 1)), one), 63));
  _mm256_storeu_pd(s, _mm256_xor_pd(_mm256_blendv_pd(sn, cs, odd), sign_s));
  _mm256_storeu_pd(c, _mm256_xor_pd(_mm256_blendv_pd(cs, sn, odd), sign_c));
}

}  // namespace repmode::cpu

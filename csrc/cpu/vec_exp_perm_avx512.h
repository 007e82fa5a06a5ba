// cr_expf of 16 floats without a table gather (AVX-512), for the softmax / log_softmax rows of
// exp_sum.h. Same results as exp16_avx512 (vec_math_avx512.h), bit for bit, on every input:
// both return the correctly rounded e^x, which is unique. Only the fast evaluation differs; the
// lanes its rounding test cannot settle, and every lane with |x| >= 87.33, go through the same
// exp16_settle (the overflow/underflow blends, then cr_expf).
//
// Why another fast path: exp_fast_lanes reads e^(i/64) from a 90 KB table with two 8-lane
// gathers per 16 floats, and on the AVX-512 hosts measured (Xeon, 2026-11) a gather costs about
// as much as the rest of the evaluation. Here the table has 16 entries, 2^(j/16), held in two
// zmm registers and read with one permute (vpermt2pd) per 8 lanes.
//
// The evaluation, per lane, in double (x widened exactly):
//   t  = fma(x, InvL, 1.5 2^52)       InvL = RN(16 / ln 2); t - 1.5 2^52 = k = the integer
//                                     nearest x InvL (the ulp of t is 1), |k| <= 2048
//   r  = fma(-k, C1, x)               C1 = RN(ln 2 / 16), |C1 - ln2/16| < 2^-59.2
//   q  = fma(fma(fma(r, 1/120, 1/24), r, 1/6), r, 1/2)   (coefficients RN(1/n!))
//   p  = fma(r * r, q, r)             ~ e^r - 1
//   S  = 2^(k/16) as a double: the table entry 2^(j/16), j = k mod 16 (the low 4 bits of t),
//        with floor(k/16) added to its exponent field by integer arithmetic (see below)
//   hi = fma(S, p, S)
// Error: |x InvL - k| <= 1/2, so the exact reduced argument r* = x - k ln2/16 has
// |r*| <= ln2/32 + 2^-45 < 0.0217. r - r* is below 2048 * 2^-59.2 (C1) + 2^-53 * 0.0217 (the
// rounding of r) < 2^-48. Taylor's remainder of the degree-5 polynomial is at most
// 0.0217^6 / 720 * e^0.0217 < 2^-42.6; the roundings inside q and p add less than 2^-57, the
// table entry (correctly rounded) 2^-53 and hi's rounding 2^-53. In all |hi - e^x| < 2^-42.4 hi,
// under 4096 ulps of hi (an ulp of hi exceeds 2^-53 hi): the rounding test of exp_fast_lanes
// (hi's low 29 bits within [0x10000000 - 4096, 0x10000000 + 4095] flags the lane) is therefore
// valid here too, and a lane it passes holds (float)hi = the correctly rounded e^x (a normal
// float: |x| < 87.33). The test is written as ((bits + 4096 - 2^28) & 0x1fffe000) == 0, the same
// predicate as (bits + 4096) & 0x1fffe000 == 2^28 (subtracting 2^28 flips bit 28 and changes no
// lower bit).
//
// The scaling: t's bits are 0x4338000000000000 + k (two's complement k, |k| < 2^51), so
// t_bits << 48 = k << 48 = (floor(k/16) << 52) + (j << 48) modulo 2^64. The registers hold the
// table entries with j << 48 subtracted from their bits, so one shift and one integer add give
// the bits of 2^(j/16) 2^floor(k/16) (exponent field 1023 + floor(k/16) in [895, 1151], normal).
//
// Checked against exp16_avx512 on all 2^32 inputs by csrc/verify/check_exp_perm_avx512.cpp
// (docs/evidence.md), which makes the argument above a theorem for this code.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "vec_math_avx512.h"

namespace repmode::cpu {

// The 16 table entries 2^(j/16) (correctly rounded doubles), in two registers, with j << 48
// subtracted from their bits. Built once per row (hoisted out of the loops by the callers).
struct ExpPermTable {
  __m512d lo, hi;
};

REPMODE_AVX512_INLINE ExpPermTable exp_perm_table() {
  const __m512i j_lo = _mm512_slli_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), 48);
  const __m512i j_hi = _mm512_slli_epi64(_mm512_set_epi64(15, 14, 13, 12, 11, 10, 9, 8), 48);
  const __m512d t_lo =
      _mm512_set_pd(0x1.5ab07dd485429p+0, 0x1.4bfdad5362a27p+0, 0x1.3dea64c123422p+0, 0x1.306fe0a31b715p+0,
                    0x1.2387a6e756238p+0, 0x1.172b83c7d517bp+0, 0x1.0b5586cf9890fp+0, 0x1.0000000000000p+0);
  const __m512d t_hi =
      _mm512_set_pd(0x1.ea4afa2a490dap+0, 0x1.d5818dcfba487p+0, 0x1.c199bdd85529cp+0, 0x1.ae89f995ad3adp+0,
                    0x1.9c49182a3f090p+0, 0x1.8ace5422aa0dbp+0, 0x1.7a11473eb0187p+0, 0x1.6a09e667f3bcdp+0);
  return {_mm512_castsi512_pd(_mm512_sub_epi64(_mm512_castpd_si512(t_lo), j_lo)),
          _mm512_castsi512_pd(_mm512_sub_epi64(_mm512_castpd_si512(t_hi), j_hi))};
}

namespace exp_perm_detail {

// The evaluation above for 8 lanes (x exactly widened); returns hi.
REPMODE_AVX512_INLINE __m512d hi8(__m512d x, const ExpPermTable& tab) {
  const __m512d magic = _mm512_set1_pd(0x1.8p52);
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(0x1.71547652b82fep+4), magic);
  const __m512d k = _mm512_sub_pd(t, magic);
  const __m512d r = _mm512_fnmadd_pd(k, _mm512_set1_pd(0x1.62e42fefa39efp-5), x);
  const __m512d q = _mm512_fmadd_pd(
      _mm512_fmadd_pd(_mm512_fmadd_pd(r, _mm512_set1_pd(0x1.1111111111111p-7), _mm512_set1_pd(0x1.5555555555555p-5)), r,
                      _mm512_set1_pd(0x1.5555555555555p-3)),
      r, _mm512_set1_pd(0.5));
  const __m512d p = _mm512_fmadd_pd(_mm512_mul_pd(r, r), q, r);
  const __m512i tb = _mm512_castpd_si512(t);
  const __m512d T = _mm512_permutex2var_pd(tab.lo, tb, tab.hi);  // entry j = the low 4 bits of t
  const __m512d S = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(T), _mm512_slli_epi64(tb, 48)));
  return _mm512_fmadd_pd(S, p, S);
}

// The lanes of hi whose rounding test fails, as 8 mask bits.
REPMODE_AVX512_INLINE unsigned near_midpoint8(__m512d hi) {
  const __m512i u = _mm512_add_epi64(_mm512_castpd_si512(hi), _mm512_set1_epi64(4096 - 0x10000000ll));
  return unsigned(_mm512_testn_epi64_mask(u, _mm512_set1_epi64(0x1fffe000ll)));
}

}  // namespace exp_perm_detail

// exp16_fast's contract (vec_math_avx512.h): y = the fast results, returns the lanes to settle
// with exp16_settle (rounding test failed, or |x| >= 87.33 or NaN).
REPMODE_AVX512_INLINE unsigned exp16_perm_fast(__m512 x, __m512* y, const ExpPermTable& tab) {
  using namespace exp_perm_detail;
  const __m512i ax = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  const unsigned in_range = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(0x42aea8f6), ax);  // |x| < 87.33f
  const __m512d h0 = hi8(_mm512_cvtps_pd(_mm512_castps512_ps256(x)), tab);
  const __m512d h1 = hi8(_mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)), tab);
  *y = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(h0)), _mm512_cvtpd_ps(h1), 1);
  return near_midpoint8(h0) | (near_midpoint8(h1) << 8) | (in_range ^ 0xffffu);
}

REPMODE_AVX512_INLINE __m512 exp16_perm(__m512 x, const ExpPermTable& tab) {
  __m512 y;
  const unsigned bad = exp16_perm_fast(x, &y, tab);
  return exp16_settle(x, y, bad);
}

}  // namespace repmode::cpu

// AVX2 + FMA array versions of cr_tanhf / cr_sigmoidf (csrc/common/math_hyperbolic.h), bit
// for bit equal to the scalar functions on every input.
//
//   tanh_array_avx2(in, out, n):    out[i] = cr_tanhf(in[i])    for 0 <= i < n
//   sigmoid_array_avx2(in, out, n): out[i] = cr_sigmoidf(in[i]) for 0 <= i < n
//   in and out may be the same array (in == out); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX2 and FMA first (isa.h: best_isa() >= avx2).
//
// The pattern of csrc/cpu/vec_math_avx2.h, whose helpers (PD packs and their operations,
// half_ps, store_with_fixups) are used here: groups of 8 floats (kHypGroups = 2 groups
// per iteration), each widened to two 4-lane double vectors, each lane running the scalar
// fast path (exp_parts, then the tanh or sigmoid formula and the f32_boundary_within
// test) with the same IEEE double operations in the same order, one vector instruction
// per scalar operation; the table is the very same array (exp2_row(0)), read per lane.
// No fma, as in the scalar code.
// Special inputs whose result is a constant or x itself (tanh: |x| < 2^-13 -> x,
// |x| > 9.25 -> +-1; sigmoid: |x| <= 2^-24 -> 1/2, x > 17.5 -> 1, x < -104 -> +0) take the
// scalar function's value by a blend; NaN, sigmoid inputs in [-104, -87.33) (results
// subnormal or near it, rounded by integer arithmetic in the scalar code) and lanes whose
// rounding test fails are recomputed by calling the scalar function, as is the n % 16 tail.
//
// Three rewrites of the scalar code change no bit:
//  * k's row j and m come from the bits of t = y * kInvC + kShift = 1.5*2^52 + k:
//    bits(t) = 0x4338000000000000 + k as a 64-bit integer, so j = k & 63 = bits(t) & 63
//    and ((bits(t) >> 6) << 52) = m << 52 (mod 2^64), m = k >> 6 (the constant shifts out).
//  * -(kd * kCMid) is computed as kd * -kCMid, and -x as x with its sign bit flipped.
//  * s = T_hi * pow2(m) is exact (s is a normal double for every kept lane: m >= -27), so
//    its bits are bits(T_hi) + (m << 52): one integer addition instead of the product.
//
// Compile with -ffp-contract=off and without fast-math (see vec_math_avx2.h): GCC would
// otherwise be free to contract the _mm256_mul_pd/_mm256_add_pd pairs into FMAs. FTZ/DAZ
// do not matter: no intermediate of a lane that is kept is subnormal, and the results
// kept from (float) conversions are normal float32 values.
//
// Verified against the scalar functions on all 2^32 inputs by csrc/verify/check_math.cpp
// (csrc/verify/math_cases/hyperbolic.cpp registers these as the array paths).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "../common/math_hyperbolic.h"
#include "vec_math_avx2.h"

#define REPMODE_HYP_AVX2_FN __attribute__((target("avx2,fma")))
#define REPMODE_HYP_AVX2_INLINE inline __attribute__((target("avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_math_hyp_detail {

using vec_math_detail::add;
using vec_math_detail::half_ps;
using vec_math_detail::mul;
using vec_math_detail::PD;
using vec_math_detail::store_with_fixups;
using vec_math_detail::sub;

// Vectors of 8 floats per loop iteration (2 * kHypGroups interleaved 4-lane chains): 2
// measured about 8 % faster than 1 on Zen 3 for tanh (the division's latency overlaps).
constexpr int kHypGroups = 2;

template <int K>
REPMODE_HYP_AVX2_INLINE PD<K> sub(double a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_sub_pd(_mm256_set1_pd(a), b.v[h]);
  return r;
}
template <int K>
REPMODE_HYP_AVX2_INLINE PD<K> div(PD<K> a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_div_pd(a.v[h], b.v[h]);
  return r;
}
template <int K>
REPMODE_HYP_AVX2_INLINE PD<K> div(double a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_div_pd(_mm256_set1_pd(a), b.v[h]);
  return r;
}

// The 4K floats x[0..K/2) widened to doubles (exact).
template <int K>
REPMODE_HYP_AVX2_INLINE PD<K> widen(const __m256* x) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_cvtps_pd(half_ps<K>(x, h));
  return r;
}

// exp_parts(y) per lane: e^y ~ s (1 + p).
template <int K>
REPMODE_HYP_AVX2_INLINE void exp_parts_lanes(const PD<K>& y, PD<K>& s, PD<K>& p) {
  using namespace math_detail::consts;
  // exp_reduce: kd = (y * kInvC + kShift) - kShift; r = (y - kd * kCHi) + (-(kd * kCMid))
  PD<K> t = add(mul(y, kInvC), kShift);
  PD<K> kd = sub(t, kShift);
  PD<K> r = add(sub(y, mul(kd, kCHi)), mul(kd, -kCMid));
  // s = exp2_row(j)[0] * pow2(m), j = k & 63, m = k >> 6. T_hi of the 4 lanes: the indices
  // go through memory (one vector store, four scalar loads), which measured faster than a
  // gather on Zen 3.
  const double* tab = math_detail::exp2_row(0);
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    __m256i tb = _mm256_castpd_si256(t.v[h]);
    alignas(32) uint64_t tw[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tw), tb);
    __m128d t01 = _mm_loadh_pd(_mm_load_sd(tab + 2 * (tw[0] & 63)), tab + 2 * (tw[1] & 63));
    __m128d t23 = _mm_loadh_pd(_mm_load_sd(tab + 2 * (tw[2] & 63)), tab + 2 * (tw[3] & 63));
    __m256i th = _mm256_castpd_si256(_mm256_insertf128_pd(_mm256_castpd128_pd256(t01), t23, 1));
    s.v[h] = _mm256_castsi256_pd(_mm256_add_epi64(th, _mm256_slli_epi64(_mm256_srli_epi64(tb, 6), 52)));
  }
  // q = (0.5 + kC3 * r) + r2 * (kC4 + kC5 * r); p = r + r2 * q
  PD<K> r2 = mul(r, r);
  PD<K> q = add(add(0.5, mul(kC3, r)), mul(r2, add(kC4, mul(kC5, r))));
  p = add(r, mul(r2, q));
}

// f32_boundary_within(v, tol) per lane, as a bit mask of the 4K lanes, and (float)v.
template <int K>
REPMODE_HYP_AVX2_INLINE unsigned round_lanes(const PD<K>& v, uint64_t tol, __m256* y) {
  unsigned near = 0;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    __m256i w =
        _mm256_and_si256(_mm256_add_epi64(_mm256_castpd_si256(v.v[h]), _mm256_set1_epi64x(int64_t(tol) - 0x10000000ll)),
                         _mm256_set1_epi64x(0x1fffffffll));
    __m256i m = _mm256_cmpgt_epi64(_mm256_set1_epi64x(int64_t(2 * tol + 1)), w);
    near |= unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(m))) << (4 * h);
    __m128 f = _mm256_cvtpd_ps(v.v[h]);
    if (h & 1)
      y[h >> 1] = _mm256_insertf128_ps(y[h >> 1], f, 1);
    else
      y[h >> 1] = _mm256_castps128_ps256(f);
  }
  return near;
}

// cr_tanhf's fast path on the 4K floats a[0..K/2) = |x| (lanes with 2^-13 <= a <= 9.25
// are kept): results (positive) to y, returns the lanes whose rounding test failed.
template <int K>
REPMODE_HYP_AVX2_INLINE unsigned tanh_fast_lanes(const __m256* af, __m256* y) {
  PD<K> a = widen<K>(af);
  PD<K> s, p;
  exp_parts_lanes(mul(a, -2.0), s, p);
  // n = (1.0 - s) - s * p; d = 2.0 - n; v = n / d
  PD<K> n = sub(sub(1.0, s), mul(s, p));
  PD<K> v = div(n, sub(2.0, n));
  return round_lanes(v, math_detail::kTanhFastTol, y);
}

// cr_sigmoidf's fast path on the 4K floats x[0..K/2) (lanes with -87.33 <= x <= 17.5 and
// |x| > 2^-24 are kept).
template <int K>
REPMODE_HYP_AVX2_INLINE unsigned sigmoid_fast_lanes(const __m256* xf, __m256* y) {
  __m256 negf[K / 2];
#pragma GCC unroll 8
  for (int g = 0; g < K / 2; ++g) negf[g] = _mm256_xor_ps(xf[g], _mm256_set1_ps(-0.0f));
  PD<K> s, p;
  exp_parts_lanes(widen<K>(negf), s, p);  // y = -x
  // E = s + s * p; v = 1.0 / (1.0 + E)
  PD<K> v = div(1.0, add(1.0, add(s, mul(s, p))));
  return round_lanes(v, math_detail::kSigmoidFastTol, y);
}

}  // namespace vec_math_hyp_detail

REPMODE_HYP_AVX2_FN inline void tanh_array_avx2(const float* in, float* out, int64_t n) {
  using namespace vec_math_hyp_detail;
  constexpr int G = kHypGroups;
  const int64_t n_main = n > 0 ? n - n % (8 * G) : 0;
  int64_t i = 0;
  for (; i < n_main; i += 8 * G) {
    __m256 xf[G], af[G], y[G], sign[G], tiny[G], sat[G];
    unsigned keep = 0, nan = 0;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      xf[g] = _mm256_loadu_ps(in + i + 8 * g);
      __m256i ux = _mm256_castps_si256(xf[g]);
      __m256i ax = _mm256_and_si256(ux, _mm256_set1_epi32(0x7fffffff));
      af[g] = _mm256_castsi256_ps(ax);
      sign[g] = _mm256_castsi256_ps(_mm256_xor_si256(ux, ax));
      // As in cr_tanhf_impl: NaN -> scalar; |x| < 2^-13 -> x; |x| > 9.25 (inf too) -> +-1.
      __m256i nan_m = _mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x7f800000));
      __m256i tiny_m = _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(math_detail::kTanhTinyBits)), ax);
      __m256i sat_m =
          _mm256_andnot_si256(nan_m, _mm256_cmpgt_epi32(ax, _mm256_set1_epi32(int32_t(math_detail::kTanhSatBits))));
      tiny[g] = _mm256_castsi256_ps(tiny_m);
      sat[g] = _mm256_castsi256_ps(sat_m);
      __m256i other = _mm256_or_si256(_mm256_or_si256(nan_m, tiny_m), sat_m);
      keep |= unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(other)) ^ 0xff) << (8 * g);
      nan |= unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(nan_m))) << (8 * g);
    }
    unsigned near = tanh_fast_lanes<2 * G>(af, y);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      y[g] = _mm256_or_ps(y[g], sign[g]);
      y[g] = _mm256_blendv_ps(y[g], xf[g], tiny[g]);
      y[g] = _mm256_blendv_ps(y[g], _mm256_or_ps(_mm256_set1_ps(1.0f), sign[g]), sat[g]);
    }
    unsigned bad = (near & keep) | nan;
    store_with_fixups<G>(out + i, xf, y, bad, [](float v) { return cr_tanhf(v); });
  }
  for (; i < n; ++i) out[i] = cr_tanhf(in[i]);
}

REPMODE_HYP_AVX2_FN inline void sigmoid_array_avx2(const float* in, float* out, int64_t n) {
  using namespace vec_math_hyp_detail;
  constexpr int G = kHypGroups;
  const int64_t n_main = n > 0 ? n - n % (8 * G) : 0;
  int64_t i = 0;
  for (; i < n_main; i += 8 * G) {
    __m256 xf[G], y[G], half[G], one[G], zero[G];
    unsigned keep = 0, scalar = 0;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      xf[g] = _mm256_loadu_ps(in + i + 8 * g);
      __m256i ax = _mm256_and_si256(_mm256_castps_si256(xf[g]), _mm256_set1_epi32(0x7fffffff));
      // As in cr_sigmoidf_impl: |x| <= 2^-24 -> 1/2; x > 17.5 -> 1; x < -104 -> +0 (ordered
      // compares: NaN is in none of them); fast path for -87.33 <= x <= 17.5 otherwise;
      // the rest (NaN, -104 <= x < -87.33) -> scalar.
      half[g] =
          _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(math_detail::kSigmoidHalfBits + 1)), ax));
      one[g] = _mm256_cmp_ps(xf[g], _mm256_set1_ps(math_detail::kSigmoidSat), _CMP_GT_OQ);
      zero[g] = _mm256_cmp_ps(xf[g], _mm256_set1_ps(math_detail::kSigmoidZero), _CMP_LT_OQ);
      __m256 ok = _mm256_andnot_ps(
          half[g], _mm256_and_ps(_mm256_cmp_ps(xf[g], _mm256_set1_ps(math_detail::kSigmoidSat), _CMP_LE_OQ),
                                 _mm256_cmp_ps(xf[g], _mm256_set1_ps(math_detail::kSigmoidNormal), _CMP_GE_OQ)));
      unsigned k = unsigned(_mm256_movemask_ps(ok));
      unsigned c = unsigned(_mm256_movemask_ps(_mm256_or_ps(_mm256_or_ps(half[g], one[g]), zero[g])));
      keep |= k << (8 * g);
      scalar |= ((k | c) ^ 0xff) << (8 * g);
    }
    unsigned near = sigmoid_fast_lanes<2 * G>(xf, y);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      y[g] = _mm256_blendv_ps(y[g], _mm256_set1_ps(0.5f), half[g]);
      y[g] = _mm256_blendv_ps(y[g], _mm256_set1_ps(1.0f), one[g]);
      y[g] = _mm256_andnot_ps(zero[g], y[g]);  // +0
    }
    unsigned bad = (near & keep) | scalar;
    store_with_fixups<G>(out + i, xf, y, bad, [](float v) { return cr_sigmoidf(v); });
  }
  for (; i < n; ++i) out[i] = cr_sigmoidf(in[i]);
}

}  // namespace repmode::cpu

#undef REPMODE_HYP_AVX2_INLINE
#undef REPMODE_HYP_AVX2_FN

// AVX2 + FMA array versions of cr_expf / cr_logf (csrc/common/math.h), bit for bit equal
// to the scalar functions on every input.
//
//   exp_array_avx2(in, out, n): out[i] = cr_expf(in[i]) for 0 <= i < n
//   log_array_avx2(in, out, n): out[i] = cr_logf(in[i]) for 0 <= i < n
//   in and out may be the same array (in == out); partial overlap is not allowed.
//
// Callers must check that the CPU has AVX2 and FMA first (isa.h: best_isa() >= avx2).
// Each function carries __attribute__((target("avx2,fma"))), so no -mavx2 flag is needed.
//
// How the bits stay equal. Both routines are correctly rounded, so their result for an
// input is unique; each vector lane either produces that value with a proof or hands the
// input to the scalar routine.
//  * log: 8 floats per iteration, widened to two 4-lane double vectors, each lane running
//    the scalar fast path (log_fast and the is_f32_boundary rounding test) with the same
//    IEEE double operations in the same order, one vector instruction per scalar
//    operation; the table is the very same array (log_row(0)), read per lane. A few steps
//    are rewritten in ways that provably give the same bits (see log_fast_lanes).
//  * exp: an independent, cheaper evaluation (e^x = e^a e^b with a table of e^(i/64), a
//    degree-4 polynomial, fma) with its own error bound and a rounding test wide enough
//    for it (see exp_fast_lanes); a lane that passes holds the correctly rounded value.
// Lanes the fast paths do not finish -- special inputs (NaN, zero, subnormals, x <= 0 and
// x == 1 for log; exp's overflow and underflow ranges, +inf and -inf included, take their
// value, +inf or +0, by a blend), exp inputs with 87.33 <= |x| within those ranges and
// lanes whose rounding test fails -- are recomputed by calling the scalar cr_expf/cr_logf,
// as is the n % 8 tail.
//
// Like math.h, this file must be compiled with -ffp-contract=off and without fast-math:
// GCC implements _mm256_mul_pd/_mm256_add_pd as plain vector arithmetic, which it would
// otherwise be free to contract into FMAs (and within a target("fma") function it can).
// MXCSR: round-to-nearest is assumed, as everywhere in repmode. FTZ/DAZ do not matter: no
// intermediate of a kept log lane is subnormal, and in exp only a tiny or subnormal x makes
// r * r (or x itself) subnormal, where flushing it to zero still leaves hi = RN(1 + x).
//
// Verified against the scalar functions on all 2^32 inputs by csrc/verify/check_vec_math.cpp.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "../common/math.h"

#if !(defined(__x86_64__) || defined(__i386__))
#error "vec_math_avx2.h is x86 only"
#endif

#define REPMODE_AVX2_FN __attribute__((target("avx2,fma")))
#define REPMODE_AVX2_INLINE inline __attribute__((target("avx2,fma"), always_inline))

namespace repmode::cpu {
namespace vec_math_detail {

// A pack of K vectors of 4 doubles, and element-wise operations on it that read like the
// scalar code. Each operation is applied to all K vectors before the next one starts, so
// the instruction stream interleaves K independent dependency chains (GCC keeps roughly
// this order, and the long latency chains of exp/log then overlap).
template <int K>
struct PD {
  __m256d v[K];
};

template <int K>
REPMODE_AVX2_INLINE PD<K> add(PD<K> a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_add_pd(a.v[h], b.v[h]);
  return r;
}
template <int K>
REPMODE_AVX2_INLINE PD<K> sub(PD<K> a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_sub_pd(a.v[h], b.v[h]);
  return r;
}
template <int K>
REPMODE_AVX2_INLINE PD<K> mul(PD<K> a, PD<K> b) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_mul_pd(a.v[h], b.v[h]);
  return r;
}
// Scalar constant as a pack (the compiler keeps one broadcast register or memory operand).
template <int K>
REPMODE_AVX2_INLINE PD<K> c(double x) {
  PD<K> r;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_set1_pd(x);
  return r;
}
template <int K>
REPMODE_AVX2_INLINE PD<K> add(PD<K> a, double b) {
  return add(a, c<K>(b));
}
template <int K>
REPMODE_AVX2_INLINE PD<K> add(double a, PD<K> b) {
  return add(c<K>(a), b);
}
template <int K>
REPMODE_AVX2_INLINE PD<K> sub(PD<K> a, double b) {
  return sub(a, c<K>(b));
}
template <int K>
REPMODE_AVX2_INLINE PD<K> mul(PD<K> a, double b) {
  return mul(a, c<K>(b));
}
template <int K>
REPMODE_AVX2_INLINE PD<K> mul(double a, PD<K> b) {
  return mul(c<K>(a), b);
}

// is_f32_boundary(hi) per lane, as an all-ones / all-zeros 64-bit mask.
REPMODE_AVX2_INLINE __m256i f32_boundary_mask(__m256d hi) {
  __m256i low29 = _mm256_and_si256(_mm256_castpd_si256(hi), _mm256_set1_epi64x(0x1fffffffll));
  return _mm256_cmpeq_epi64(low29, _mm256_set1_epi64x(0x10000000ll));
}

// The 4-lane halves of K/2 vectors of 8 floats.
template <int K>
REPMODE_AVX2_INLINE __m128 half_ps(const __m256* x, int h) {
  return (h & 1) ? _mm256_extractf128_ps(x[h >> 1], 1) : _mm256_castps256_ps128(x[h >> 1]);
}
template <int K>
REPMODE_AVX2_INLINE __m128i half_si(const __m256i* x, int h) {
  return (h & 1) ? _mm256_extracti128_si256(x[h >> 1], 1) : _mm256_castsi256_si128(x[h >> 1]);
}

// The last step shared by both fast paths: y = (float)value per lane (one IEEE conversion),
// and a bit mask of the lanes whose hi is a float32 rounding boundary (the is_f32_boundary test;
// those lanes are recomputed by the scalar routine).
template <int K>
REPMODE_AVX2_INLINE unsigned round_to_floats(const PD<K>& hi, const PD<K>& value, __m256* y) {
  unsigned bad = 0;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    bad |= unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(f32_boundary_mask(hi.v[h])))) << (4 * h);
    __m128 f = _mm256_cvtpd_ps(value.v[h]);
    if (h & 1)
      y[h >> 1] = _mm256_insertf128_ps(y[h >> 1], f, 1);
    else
      y[h >> 1] = _mm256_castps128_ps256(f);
  }
  return bad;
}

// e^(i/64) for kExpTableLo <= i < kExpTableLo + kExpTableSize, as doubles within 0.53 ulp
// (repmode_exp), built once on first use (90 KB).
constexpr int kExpTableLo = -5600, kExpTableSize = 11300;
inline const double* exp_by_64ths() {
  static const double* table = [] {
    static double t[kExpTableSize];
    for (int i = 0; i < kExpTableSize; ++i) t[i] = repmode_exp((i + kExpTableLo) / 64.0);
    return t;
  }();
  return table;
}

// A fast evaluation of e^x for the 4K floats x[0..K/2), for inputs with |x| < 87.33 (the
// caller handles all other lanes). It is not cr_expf's fast path but an independent one,
// cheaper (no reduction by ln2, a degree-4 polynomial, fma) with a looser error bound and a
// wider rounding test to match. A lane that passes the test holds the correctly rounded
// e^x, which is unique, so it equals cr_expf's result bit for bit; the caller recomputes
// the other lanes with cr_expf. Stores the results to y and returns a bit mask of the lanes
// whose rounding test failed. Lanes with other inputs compute garbage (no traps: FP
// exceptions are masked, and table indices are clamped into the table) and are discarded
// by the caller.
//
// e^x = e^a e^b with a = x rounded to a multiple of 1/64 and b = x - a:
//  * a: adding 1.5 2^17 (ulp 2^-6 throughout [2^17, 2^18)) rounds x to a multiple of 1/64;
//    subtracting it back is exact, and bits(x + 1.5 2^17) = 0x48400000 + 64a gives the
//    table index i = 64a, |i| <= 5589. b = x - a is exact (a = 0, or x and a within a
//    factor 1.5: Sterbenz), |b| <= 2^-7, and exact as a double.
//  * p = fma(b^2, q, b), q = 1/2 + b/6 + b^2/24 (fma): Taylor's remainder |b|^5 e^|b| / 120
//    < 2^-41.9; the evaluation errors are < 2^-60 (one rounding of p, |p| < 2^-6.9; q's and
//    b^2's errors are scaled by b^2 <= 2^-14).
//  * T = e^a (1 + e), |e| < 2^-52.9; hi = fma(T, p, T) = RN(T (1 + p)), one more 2^-53.
// In all |hi - e^x| < 2^-41.8 hi < 2^11.2 ulp(hi) (ulp(hi) > 2^-53 hi), under 4096 ulps.
// A float32 midpoint (a double whose low 29 bits are 0x10000000; never within 2^-25
// relative of a power of two, so in hi's binade when that close) can separate hi from e^x
// only if hi is within that many of its ulps of it: the test flags every hi whose low 29
// bits lie in [0x10000000 - 4096, 0x10000000 + 4095] (about 2^-16 of all inputs).
// Otherwise (float)hi, one rounding, is the correctly rounded e^x (a normal float32:
// e^-87.33 > 2^-126). Zero, tiny and subnormal x need nothing special: a = 0, b = x,
// hi = RN(1 + x); with DAZ/FTZ set, x or b^2 may flush to 0, which leaves hi = RN(1 + x)
// still within the bound.
template <int K>
REPMODE_AVX2_INLINE unsigned exp_fast_lanes(const __m256* xf, __m256* y) {
  const double* tab = exp_by_64ths() - kExpTableLo;
  unsigned bad = 0;
#pragma GCC unroll 8
  for (int g = 0; g < K / 2; ++g) {
    // a = x rounded to a multiple of 1/64 (adding 1.5 2^17, whose ulp is 2^-6), b = x - a
    const __m256 sh = _mm256_add_ps(xf[g], _mm256_set1_ps(0x1.8p17f));
    const __m256 a = _mm256_sub_ps(sh, _mm256_set1_ps(0x1.8p17f));
    const __m256 b = _mm256_sub_ps(xf[g], a);
    const __m256i idx =
        _mm256_min_epi32(_mm256_max_epi32(_mm256_sub_epi32(_mm256_castps_si256(sh), _mm256_set1_epi32(0x48400000)),
                                          _mm256_set1_epi32(kExpTableLo)),
                         _mm256_set1_epi32(kExpTableLo + kExpTableSize - 1));
    alignas(32) int32_t iw[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(iw), idx);
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      const int h = 2 * g + half;
      const __m256d r = _mm256_cvtps_pd(half ? _mm256_extractf128_ps(b, 1) : _mm256_castps256_ps128(b));
      const __m256d q = _mm256_fmadd_pd(r, _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 24), _mm256_set1_pd(1.0 / 6)),
                                        _mm256_set1_pd(0.5));
      const __m256d p = _mm256_fmadd_pd(_mm256_mul_pd(r, r), q, r);
      const int32_t* w = iw + 4 * half;
      const __m128d t01 = _mm_loadh_pd(_mm_load_sd(tab + w[0]), tab + w[1]);
      const __m128d t23 = _mm_loadh_pd(_mm_load_sd(tab + w[2]), tab + w[3]);
      const __m256d T = _mm256_insertf128_pd(_mm256_castpd128_pd256(t01), t23, 1);
      const __m256d hi = _mm256_fmadd_pd(T, p, T);
      const __m256i low = _mm256_and_si256(_mm256_add_epi64(_mm256_castpd_si256(hi), _mm256_set1_epi64x(4096)),
                                           _mm256_set1_epi64x(0x1fffe000ll));
      const __m256i near = _mm256_cmpeq_epi64(low, _mm256_set1_epi64x(0x10000000ll));
      bad |= unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(near))) << (4 * h);
      const __m128 f = _mm256_cvtpd_ps(hi);
      if (half)
        y[g] = _mm256_insertf128_ps(y[g], f, 1);
      else
        y[g] = _mm256_castps128_ps256(f);
    }
  }
  return bad;
}

// cr_logf's fast path (log_fast and the is_f32_boundary test) for the 4K floats
// x[0..K/2), which must be positive normal finite for the result to be kept. Stores the
// results to y and returns a bit mask of the lanes whose rounding test failed.
template <int K>
REPMODE_AVX2_INLINE unsigned log_fast_lanes(const __m256* xf, const float* src, __m256* y) {
  using namespace math_detail::consts;  // log_fast's constants, shared
  const double* tab = math_detail::log_row(0);

  // x = M * 2^e: e = (ux >> 23) - 127, M = 1.fraction; j = the top 7 fraction bits;
  // e is raised by one for j >= 53 (log_reduce).
  __m256i mant[K / 2], e[K / 2];
#pragma GCC unroll 8
  for (int g = 0; g < K / 2; ++g) {
    __m256i ux = _mm256_castps_si256(xf[g]);
    __m256i j = _mm256_and_si256(_mm256_srli_epi32(ux, 16), _mm256_set1_epi32(127));
    e[g] = _mm256_sub_epi32(_mm256_srli_epi32(ux, 23), _mm256_set1_epi32(127));
    e[g] = _mm256_sub_epi32(e[g], _mm256_cmpgt_epi32(j, _mm256_set1_epi32(52)));
    mant[g] = _mm256_and_si256(ux, _mm256_set1_epi32(0x7fffff));
  }
  PD<K> M, ae, cj, Lhi, Llo;
#pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    M.v[h] = _mm256_castsi256_pd(_mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(half_si<K>(mant, h)), 29),
                                                 _mm256_set1_epi64x(int64_t(1023) << 52)));
    ae.v[h] = _mm256_cvtepi32_pd(half_si<K>(e, h));  // double(e), exact
    // Rows j of the 4 lanes, read as (c, L_hi) and (L_hi, L_lo) pairs and transposed
    // (cheaper than three gathers). The row offsets 3j are computed again from the input
    // bits in memory with scalar integer instructions, which run on otherwise idle ports.
    const double* row[4];
#pragma GCC unroll 8
    for (int l = 0; l < 4; ++l) {
      uint32_t u;
      memcpy(&u, src + 4 * h + l, 4);
      row[l] = tab + 3 * ((u >> 16) & 127);
    }
    __m256d a02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[0])), _mm_loadu_pd(row[2]), 1);
    __m256d a13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[1])), _mm_loadu_pd(row[3]), 1);
    __m256d b02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[0] + 1)), _mm_loadu_pd(row[2] + 1), 1);
    __m256d b13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[1] + 1)), _mm_loadu_pd(row[3] + 1), 1);
    cj.v[h] = _mm256_unpacklo_pd(a02, a13);
    Lhi.v[h] = _mm256_unpackhi_pd(a02, a13);
    Llo.v[h] = _mm256_unpackhi_pd(b02, b13);
  }
  // log_reduce: r = (mhi * c - 1.0) + (M - mhi) * c. For float32 inputs the low 29 bits of
  // M are zero, so mhi == M and the second term is (+0) * c = +0 (c > 0); M * c - 1.0 is
  // never -0 (x - x is +0 in round-to-nearest), so adding +0 changes no bit and
  // r = M * c - 1.0 exactly as in the scalar code.
  PD<K> r = sub(mul(M, cj), 1.0);
  // h = e * kLn2Hi + L_hi; lo = e * kLn2Mid + L_lo
  PD<K> hh = add(mul(ae, math_detail::kLn2Hi), Lhi);
  PD<K> lo = add(mul(ae, math_detail::kLn2Mid), Llo);
  PD<K> r2 = mul(r, r);
  PD<K> r4 = mul(r2, r2);
  // q = ((-0.5 + kP3 * r) + r2 * (kP4 + kP5 * r)) + r4 * ((kP6 + kP7 * r) + r2 * (kP8 + kP9 * r))
  PD<K> q = add(add(add(-0.5, mul(kP3, r)), mul(r2, add(kP4, mul(kP5, r)))),
                mul(r4, add(add(kP6, mul(kP7, r)), mul(r2, add(kP8, mul(kP9, r))))));
  // s = fast_two_sum(h, r)
  PD<K> s = add(hh, r);
  PD<K> sl = sub(r, sub(s, hh));
  // fast_two_sum(s.hi, s.lo + (r2 * q + lo)).hi
  PD<K> hi = add(s, add(sl, add(mul(r2, q), lo)));
  return round_to_floats(hi, hi, y);
}

// y with the lanes whose bit is set in bad (the low 8 bits) recomputed by f from x.
template <typename F>
REPMODE_AVX2_INLINE __m256 fix_lanes(__m256 x, __m256 y, unsigned bad, F f) {
  alignas(32) float xs[8], ys[8];
  _mm256_store_ps(xs, x);
  _mm256_store_ps(ys, y);
  for (int l = 0; l < 8; ++l)
    if (bad & (1u << l)) ys[l] = f(xs[l]);
  return _mm256_load_ps(ys);
}

// Lanes with a set bit in bad are recomputed by f from the inputs x; then all 8G results
// go to out.
template <int G, typename F>
REPMODE_AVX2_INLINE void store_with_fixups(float* out, const __m256* x, const __m256* y, unsigned bad, F f) {
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    const unsigned b = (bad >> (8 * g)) & 0xffu;
    _mm256_storeu_ps(out + 8 * g, __builtin_expect(b == 0, 1) ? y[g] : fix_lanes(x[g], y[g], b, f));
  }
}

// Vectors of 8 floats per loop iteration (2 * kGroups interleaved 4-lane chains). 2 was
// measured no faster than 1 on Zen 3 (16 ymm registers: it spills).
constexpr int kGroups = 1;

}  // namespace vec_math_detail

// cr_expf of 8 floats. Inputs with |x| < 87.33 take the fast path; the others, rare,
// are settled after it: x <= -104 (-inf included; e^x < 2^-150 rounds to +0) and x > 89
// (+inf included; e^x > 2^128 rounds to +inf) by a blend, the rest (NaN, results
// subnormal or near it, 87.33 < x <= 89) and lanes whose rounding test fails by cr_expf.
REPMODE_AVX2_INLINE __m256 exp8_avx2(__m256 x) {
  using namespace vec_math_detail;
  const __m256i ax = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
  const __m256i in_range = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x42aea8f6), ax);  // |x| < 87.33f
  __m256 y;
  unsigned bad = exp_fast_lanes<2>(&x, &y) | (unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(in_range))) ^ 0xffu);
  if (__builtin_expect(bad != 0, 0)) {
    const __m256 zero = _mm256_cmp_ps(x, _mm256_set1_ps(-104.0f), _CMP_LE_OQ);
    const __m256 inf = _mm256_cmp_ps(x, _mm256_set1_ps(89.0f), _CMP_GT_OQ);
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), zero);
    y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), inf);
    bad &= ~unsigned(_mm256_movemask_ps(_mm256_or_ps(zero, inf)));
    if (bad != 0) y = fix_lanes(x, y, bad, [](float v) { return cr_expf(v); });
  }
  return y;
}

REPMODE_AVX2_FN inline void exp_array_avx2(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  const int64_t n8 = n - n % 8;
  for (; i < n8; i += 8) _mm256_storeu_ps(out + i, exp8_avx2(_mm256_loadu_ps(in + i)));
  for (; i < n; ++i) out[i] = cr_expf(in[i]);
}

REPMODE_AVX2_FN inline void log_array_avx2(const float* in, float* out, int64_t n) {
  using namespace vec_math_detail;
  constexpr int G = kGroups;
  const int64_t n_main = n > 0 ? n - n % (8 * G) : 0;
  int64_t i = 0;
  for (; i < n_main; i += 8 * G) {
    __m256 xf[G], y[G];
    unsigned special = 0;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      xf[g] = _mm256_loadu_ps(in + i + 8 * g);
      // Fast-path inputs, as in cr_logf_impl: positive normal finite x != 1 (signed
      // compares: negative inputs are negative int32s).
      __m256i ux = _mm256_castps_si256(xf[g]);
      __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi32(ux, _mm256_set1_epi32(0x007fffff)),
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), ux));
      ok = _mm256_andnot_si256(_mm256_cmpeq_epi32(ux, _mm256_set1_epi32(0x3f800000)), ok);
      special |= unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(ok)) ^ 0xff) << (8 * g);
    }
    unsigned bad = special | log_fast_lanes<2 * G>(xf, in + i, y);
    store_with_fixups<G>(out + i, xf, y, bad, [](float v) { return cr_logf(v); });
  }
  for (; i < n; ++i) out[i] = cr_logf(in[i]);
}

}  // namespace repmode::cpu

#undef REPMODE_AVX2_INLINE
#undef REPMODE_AVX2_FN

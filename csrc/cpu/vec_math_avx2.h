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
// How the bits stay equal: 8 floats per iteration, widened to two 4-lane double vectors,
// each lane running the scalar fast path (exp_fast / log_fast and the is_f32_boundary
// rounding test) with the same IEEE double operations in the same order, one vector
// instruction per scalar operation (_mm256_mul_pd for a*b, _mm256_add_pd for a+b, ...);
// the tables are the very same arrays (exp2_row(0), log_row(0)), read per lane. The
// scalar fast paths use no fma, so neither does this code. A few steps are rewritten in
// ways that provably give the same bits (see exp_fast_lanes and log_fast_lanes; the
// exhaustive check confirms them). Lanes the fast path does not finish -- special inputs
// (NaN, +-inf, zero, tiny, overflow and underflow ranges, subnormals, x <= 0, x == 1 for
// log), exp inputs below -87.33 (results subnormal or near it) and lanes whose rounding
// test fails -- are recomputed by calling the scalar cr_expf/cr_logf, as is the n % 8
// tail.
//
// Like math.h, this file must be compiled with -ffp-contract=off and without fast-math:
// GCC implements _mm256_mul_pd/_mm256_add_pd as plain vector arithmetic, which it would
// otherwise be free to contract into FMAs (and within a target("fma") function it can).
// MXCSR: the only rounding-mode-dependent operations are the ones the scalar code has too
// (default round-to-nearest assumed, as everywhere in repmode); FTZ/DAZ do not matter
// because, as in the scalar code, no intermediate of a lane that is kept is subnormal.
//
// Verified against the scalar functions on all 2^32 inputs by tools/check_vec_math.cpp.
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
template <int K> struct PD { __m256d v[K]; };

template <int K> REPMODE_AVX2_INLINE PD<K> add(PD<K> a, PD<K> b) {
  PD<K> r;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_add_pd(a.v[h], b.v[h]);
  return r;
}
template <int K> REPMODE_AVX2_INLINE PD<K> sub(PD<K> a, PD<K> b) {
  PD<K> r;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_sub_pd(a.v[h], b.v[h]);
  return r;
}
template <int K> REPMODE_AVX2_INLINE PD<K> mul(PD<K> a, PD<K> b) {
  PD<K> r;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_mul_pd(a.v[h], b.v[h]);
  return r;
}
// Scalar constant as a pack (the compiler keeps one broadcast register or memory operand).
template <int K> REPMODE_AVX2_INLINE PD<K> c(double x) {
  PD<K> r;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) r.v[h] = _mm256_set1_pd(x);
  return r;
}
template <int K> REPMODE_AVX2_INLINE PD<K> add(PD<K> a, double b) { return add(a, c<K>(b)); }
template <int K> REPMODE_AVX2_INLINE PD<K> add(double a, PD<K> b) { return add(c<K>(a), b); }
template <int K> REPMODE_AVX2_INLINE PD<K> sub(PD<K> a, double b) { return sub(a, c<K>(b)); }
template <int K> REPMODE_AVX2_INLINE PD<K> mul(PD<K> a, double b) { return mul(a, c<K>(b)); }
template <int K> REPMODE_AVX2_INLINE PD<K> mul(double a, PD<K> b) { return mul(c<K>(a), b); }

// is_f32_boundary(hi) per lane, as an all-ones / all-zeros 64-bit mask.
REPMODE_AVX2_INLINE __m256i f32_boundary_mask(__m256d hi) {
  __m256i low29 = _mm256_and_si256(_mm256_castpd_si256(hi), _mm256_set1_epi64x(0x1fffffffll));
  return _mm256_cmpeq_epi64(low29, _mm256_set1_epi64x(0x10000000ll));
}

// The 4-lane halves of K/2 vectors of 8 floats.
template <int K> REPMODE_AVX2_INLINE __m128 half_ps(const __m256* x, int h) {
  return (h & 1) ? _mm256_extractf128_ps(x[h >> 1], 1) : _mm256_castps256_ps128(x[h >> 1]);
}
template <int K> REPMODE_AVX2_INLINE __m128i half_si(const __m256i* x, int h) {
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

// cr_expf's fast path for the 4K floats x[0..K/2), for inputs with -87.33 <= x <= 89 and
// |x| >= 2^-26 (the caller sends all other lanes to the scalar function). Stores the
// results to y and returns a bit mask of the lanes whose rounding test failed. Lanes with
// other inputs compute garbage (no traps: FP exceptions are masked, and table indices
// stay inside the table) and are discarded by the caller.
//
// Three rewrites of the scalar code change no bit:
//  * k and 2^m come from the bits of t = x * kInvC + kShift instead of int(kd): t is
//    1.5*2^52 + k, so bits(t) = 0x4338000000000000 + k as a 64-bit integer, j = k & 63 =
//    bits(t) & 63, and ((bits(t) >> 6) << 52) + (1023 << 52) = bits(pow2(k >> 6)) (the
//    constant part shifts out).
//  * -(kd * kCMid) is computed as kd * -kCMid (round to nearest is symmetric).
//  * normalize_1_2 is skipped: it scales hi by 2 or 1/2 and moves m the other way, which
//    changes neither the product hi * 2^m (exact either way: it is a normal double) nor
//    the low 29 bits of hi that is_f32_boundary tests. Its only other effect, deciding
//    the branch m >= -126 (normal float result) vs m < -126, is decided here by the
//    caller's range test instead: for x >= -87.33, exp(x) >= 2^-126 e^0.0065 and the fast
//    value is far above 2^-126 (error < 2^-58), so the scalar code takes the normal
//    branch too; x < -87.33 goes to the scalar function.
template <int K> REPMODE_AVX2_INLINE unsigned exp_fast_lanes(const __m256* xf, __m256* y) {
  using namespace math_detail::consts;  // exp_reduce's and exp_fast's constants, shared

  PD<K> x;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) x.v[h] = _mm256_cvtps_pd(half_ps<K>(xf, h));  // exact
  // kd = (x * kInvC + kShift) - kShift
  PD<K> t = add(mul(x, kInvC), kShift);
  PD<K> kd = sub(t, kShift);
  // r1 = x - kd * kCHi
  PD<K> r1 = sub(x, mul(kd, kCHi));
  // two_sum(r1, b) with b = -(kd * kCMid)
  PD<K> b = mul(kd, -kCMid);
  PD<K> s = add(r1, b);
  PD<K> bb = sub(s, r1);
  PD<K> aa = sub(s, bb);
  PD<K> slo = add(sub(r1, aa), sub(b, bb));
  PD<K> r = s;
  // rl = s.lo - kd * kCLo
  PD<K> rl = sub(slo, mul(kd, kCLo));
  // Row j = k & 63 at tab + 2j; pow2(m), m = (k - j) / 64 = k >> 6.
  const double* tab = math_detail::exp2_row(0);
  PD<K> t0, t1, p2;
  #pragma GCC unroll 8
  for (int h = 0; h < K; ++h) {
    __m256i tb = _mm256_castpd_si256(t.v[h]);
    // Rows j = k & 63 of the 4 lanes as (T_hi, T_lo) pairs, transposed. The indices go
    // through memory (one vector store, four scalar loads): on Zen 3 this measured
    // clearly faster than two gathers.
    alignas(32) uint64_t tw[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tw), tb);
    const double* row[4];
    #pragma GCC unroll 8
    for (int l = 0; l < 4; ++l) row[l] = tab + 2 * (tw[l] & 63);
    __m256d a02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[0])),
                                       _mm_loadu_pd(row[2]), 1);
    __m256d a13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[1])),
                                       _mm_loadu_pd(row[3]), 1);
    t0.v[h] = _mm256_unpacklo_pd(a02, a13);
    t1.v[h] = _mm256_unpackhi_pd(a02, a13);
    p2.v[h] = _mm256_castsi256_pd(
        _mm256_add_epi64(_mm256_slli_epi64(_mm256_srli_epi64(tb, 6), 52),
                         _mm256_set1_epi64x(int64_t(1023) << 52)));
  }
  // r2 = r * r; q = (0.5 + kC3 * r) + r2 * ((kC4 + kC5 * r) + r2 * kC6)
  PD<K> r2 = mul(r, r);
  PD<K> q = add(add(0.5, mul(kC3, r)), mul(r2, add(add(kC4, mul(kC5, r)), mul(r2, kC6))));
  // em1 = r + (rl + r2 * q)
  PD<K> em1 = add(r, add(rl, mul(r2, q)));
  // fast_two_sum(t0, t1 + t0 * em1).hi (its .lo only matters in the subnormal branch)
  PD<K> hi = add(t0, add(t1, mul(t0, em1)));
  // !is_f32_boundary(hi): float(hi * pow2(m))
  return round_to_floats(hi, mul(hi, p2), y);
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
    M.v[h] = _mm256_castsi256_pd(
        _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(half_si<K>(mant, h)), 29),
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
    __m256d a02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[0])),
                                       _mm_loadu_pd(row[2]), 1);
    __m256d a13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[1])),
                                       _mm_loadu_pd(row[3]), 1);
    __m256d b02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[0] + 1)),
                                       _mm_loadu_pd(row[2] + 1), 1);
    __m256d b13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row[1] + 1)),
                                       _mm_loadu_pd(row[3] + 1), 1);
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

// Lanes with a set bit in bad are recomputed by f from the inputs x; then all 8G results
// go to out.
template <int G, typename F>
REPMODE_AVX2_INLINE void store_with_fixups(float* out, const __m256* x, const __m256* y,
                                           unsigned bad, F f) {
  if (__builtin_expect(bad == 0, 1)) {
    #pragma GCC unroll 8
    for (int g = 0; g < G; ++g) _mm256_storeu_ps(out + 8 * g, y[g]);
    return;
  }
  alignas(32) float xs[8 * G];
  alignas(32) float ys[8 * G];
  #pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    _mm256_store_ps(xs + 8 * g, x[g]);
    _mm256_store_ps(ys + 8 * g, y[g]);
  }
  for (int l = 0; l < 8 * G; ++l)
    if (bad & (1u << l)) ys[l] = f(xs[l]);
  #pragma GCC unroll 8
  for (int g = 0; g < G; ++g) _mm256_storeu_ps(out + 8 * g, _mm256_load_ps(ys + 8 * g));
}

// Vectors of 8 floats per loop iteration (2 * kGroups interleaved 4-lane chains). 2 was
// measured no faster than 1 on Zen 3 (16 ymm registers: it spills).
constexpr int kGroups = 1;

}  // namespace vec_math_detail

REPMODE_AVX2_FN inline void exp_array_avx2(const float* in, float* out, int64_t n) {
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
      // Special inputs as in cr_expf_impl (NaN, |x| < 2^-26, x > 89, x < -105), and
      // -105 <= x < -87.33, where the result is subnormal or close to it (see
      // exp_fast_lanes). NaN fails every ordered compare.
      __m256i ax = _mm256_and_si256(_mm256_castps_si256(xf[g]), _mm256_set1_epi32(0x7fffffff));
      __m256 ok = _mm256_and_ps(_mm256_cmp_ps(xf[g], _mm256_set1_ps(89.0f), _CMP_LE_OQ),
                                _mm256_cmp_ps(xf[g], _mm256_set1_ps(-87.33f), _CMP_GE_OQ));
      ok = _mm256_and_ps(ok, _mm256_castsi256_ps(
                                 _mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x327fffff))));
      special |= unsigned(_mm256_movemask_ps(ok) ^ 0xff) << (8 * g);
    }
    unsigned bad = special | exp_fast_lanes<2 * G>(xf, y);
    store_with_fixups<G>(out + i, xf, y, bad, [](float v) { return cr_expf(v); });
  }
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

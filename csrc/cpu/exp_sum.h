// The sum that softmax, log_softmax and logsumexp rows are built on, in one pass over a
// contiguous row:
//
//   exp_shifted_sum(x, m, out, n) = canonical sum over j < n of e_j = exp_of(x[j] - m)
//
// (x[j] - m one rounding in T, exp_of correctly rounded, the sum in the canonical order of
// csrc/common/reduction_order.h), also storing e_j to out[j] when out is not null.
//
// The AVX2 float path keeps the 32 lanes of a chunk in four registers (lane l is element
// l % 8 of register l / 8) and adds e_j to lane j % 32 in increasing j, as the reference
// does. The last, partial group of 32 is padded with -0.0, which changes no lane: v + -0.0
// is v for every v, zeros and NaN included. So the bits are the reference's. The AVX-512 path
// holds the same 32 lanes in two registers (lane l is element l % 16 of register l / 16), with
// the same additions in the same order.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/math_overloads.h"
#include "../common/reduction_order.h"
#include "isa.h"
#include "reduction.h"

#if defined(__x86_64__)
#include "vec_math_avx2.h"
#include "vec_math_avx512.h"
#endif

namespace repmode::cpu {

#if defined(__x86_64__)
// Level-1 value of one chunk (len <= kSumChunk) of the terms exp(x[j] - m).
template <bool kStore>
__attribute__((target("avx2,fma"))) inline float exp_shifted_chunk_avx2(const float* x, float m, float* out,
                                                                        int64_t len) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 acc[4];
  for (int g = 0; g < 4; ++g) acc[g] = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const __m256 e = exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * g), vm));
      if (kStore) _mm256_storeu_ps(out + i + 8 * g, e);
      acc[g] = _mm256_add_ps(acc[g], e);
    }
  }
  if (i < len) {
    alignas(32) float e[32];
    for (int l = 0; l < 32; ++l) e[l] = i + l < len ? cr_expf(x[i + l] - m) : -0.0f;
    for (int g = 0; g < 4; ++g) acc[g] = _mm256_add_ps(acc[g], _mm256_load_ps(e + 8 * g));
    if (kStore)
      for (int64_t l = 0; i + l < len; ++l) out[i + l] = e[l];
  }
  alignas(32) float lanes[kSumLanes];
  for (int g = 0; g < 4; ++g) _mm256_store_ps(lanes + 8 * g, acc[g]);
  return lane_tree(lanes);
}

// The same on 16-float vectors, written once for every AVX-512 caller: `exp16(x, &y)` issues
// sixteen exps (exp16_fast's contract: the lanes' rounding-test bits), `after_issue(i)` runs
// between the issue and the settle of the group of 32 starting at i (softmax's fused rows
// advance other passes there; a no-op otherwise). The values and their additions do not depend
// on either: every exp16 kernel returns cr_expf's bits.
template <bool kStore, class Exp16, class Hook>
REPMODE_AVX512_INLINE float exp_shifted_chunk_avx512_with(const float* x, float m, float* out, int64_t len,
                                                          const Exp16& exp16, const Hook& after_issue) {
  const __m512 vm = _mm512_set1_ps(m);
  __m512 acc[2] = {_mm512_set1_ps(-0.0f), _mm512_set1_ps(-0.0f)};
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    const __m512 x0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), vm), x1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm);
    __m512 y0, y1;
    const unsigned b0 = exp16(x0, &y0), b1 = exp16(x1, &y1);
    after_issue(i);
    const __m512 e0 = exp16_settle(x0, y0, b0), e1 = exp16_settle(x1, y1, b1);
    if (kStore) {
      _mm512_storeu_ps(out + i, e0);
      _mm512_storeu_ps(out + i + 16, e1);
    }
    acc[0] = _mm512_add_ps(acc[0], e0);
    acc[1] = _mm512_add_ps(acc[1], e1);
  }
  if (i < len) {
    alignas(64) float e[32];
    for (int l = 0; l < 32; ++l) e[l] = i + l < len ? cr_expf(x[i + l] - m) : -0.0f;
    for (int g = 0; g < 2; ++g) acc[g] = _mm512_add_ps(acc[g], _mm512_load_ps(e + 16 * g));
    if (kStore)
      for (int64_t l = 0; i + l < len; ++l) out[i + l] = e[l];
  }
  alignas(64) float lanes[kSumLanes];
  for (int g = 0; g < 2; ++g) _mm512_store_ps(lanes + 16 * g, acc[g]);
  return lane_tree(lanes);
}

struct Exp16Gather {  // exp16_fast: the table entries by gathers
  REPMODE_AVX512_INLINE unsigned operator()(__m512 x, __m512* y) const { return exp16_fast(x, y); }
};
struct NoHook {
  REPMODE_AVX512_INLINE void operator()(int64_t) const {}
};

// Called from exp_shifted_sum_avx2's dispatch (an AVX2 function): a plain inline function of the
// AVX-512 target, not always_inline.
template <bool kStore>
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) inline float exp_shifted_chunk_avx512(
    const float* x, float m, float* out, int64_t len) {
  return exp_shifted_chunk_avx512_with<kStore>(x, m, out, len, Exp16Gather{}, NoHook{});
}

template <bool kStore>
inline float exp_shifted_sum_avx2(const float* x, float m, float* out, int64_t n) {
  const int64_t chunks = chunk_count(n);
  float small[16] = {};
  std::vector<float> large(chunks > 16 ? chunks : 0);
  const bool avx512 = active_isa() == Isa::avx512;
  float* vals = chunks > 16 ? large.data() : small;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    vals[c] = avx512 ? exp_shifted_chunk_avx512<kStore>(x + begin, m, kStore ? out + begin : nullptr, len)
                     : exp_shifted_chunk_avx2<kStore>(x + begin, m, kStore ? out + begin : nullptr, len);
  }
  return finish_from_chunks(vals, chunks);
}
#endif

template <typename T>
inline T exp_shifted_sum(const T* x, T m, T* out, int64_t n) {
  if (n == 0) return T(0.0);
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (active_isa() >= Isa::avx2)
      return out ? exp_shifted_sum_avx2<true>(x, m, out, n) : exp_shifted_sum_avx2<false>(x, m, out, n);
  }
#endif
  if (out) {
    for (int64_t j = 0; j < n; ++j) out[j] = exp_of(x[j] - m);
    return contiguous_sum(out, n);
  }
  return canonical_sum<T>(n, [&](int64_t j) { return exp_of(x[j] - m); });
}

}  // namespace repmode::cpu

// float32 softmax / log_softmax over runs of contiguous rows on the AVX-512 path, with the passes
// of neighbouring rows fused (issue 29). Every output keeps the bits of the per-row code in
// softmax_loss.cpp (softmax_contiguous_row / log_softmax_contiguous_row): each value is computed
// by the same operations in the same order; only which pass runs beside which changes.
//
// A row of those takes three passes: the maximum m, the exp pass (e_j = exp(x_j - m) summed in
// the Sum order, and stored for softmax), and the output pass (softmax: y_j = e_j / S;
// log_softmax: y_j = (x_j - m) - log S). Run one after the other, the exp pass is bound by the
// FMA ports, the softmax output pass by the divider and the maximum by memory. Here the exp pass
// of row r also runs, in the same loop, the output pass of row r - 1 (which waited for its S)
// and the maximum of row r + 1 (which streams that row in from memory while the FMA ports work),
// so the three overlap:
//
//   for each group of 32 elements at offset i of the rows:
//     e = exp(x_r[i..i+32) - m_r) added to the 32 lanes of the Sum order (exp_sum.h)
//     out_{r-1}[i..i+32) = its output formula          (independent elements)
//     the row maximum of row r + 1 advanced over its 16-blocks up to i + 32
//
// The exp lanes are exp16_perm (vec_exp_perm_avx512.h): the correctly rounded e^x, as
// exp16_avx512 of exp_shifted_chunk_avx512, without its table gathers (checked equal on all 2^32
// inputs). The maximum is contiguous_row_max_avx512's sequence (array_math.h: the first 16 elements,
// then each further 16-block in order, NaN tracked apart, the 16 lanes folded in order, then the
// n % 16 tail), so it returns the same float, including which zero a zero maximum is. The output
// formulas are the scalar ones, per lane: the IEEE division e_j / S and the two subtractions
// (x_j - m) - log S, then canon.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

#include "../common/reduction.h"
#include "../common/softmax_loss.h"
#include "array_math.h"
#include "exp_sum.h"
#include "reduction.h"
#include "vec_math_avx512.h"
#include "vec_exp_perm_avx512.h"

namespace repmode::cpu {
namespace softmax512 {

// Rows shorter than this take the per-row code (the fused loop needs a full group of 32).
constexpr int64_t kFusedMinRow = 32;

REPMODE_AVX512_INLINE __m512 canon16(__m512 y) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q), y, _mm512_set1_ps(Canonical<float>::nan()));
}

// contiguous_row_max_avx512 over x[0..n) (n >= 16), advanced one 16-block at a time.
struct RowMax {
  const float* x = nullptr;
  int64_t n = 0, next = 16;
  __m512 m;
  __mmask16 nan = 0;

  REPMODE_AVX512_INLINE void start(const float* row, int64_t len) {
    x = row;
    n = len;
    next = 16;
    m = _mm512_loadu_ps(x);
    nan = _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q);
  }
  // Every block [next, next + 16) that ends at or before `end`, in order.
  REPMODE_AVX512_INLINE void step_to(int64_t end) {
    for (; next + 16 <= end; next += 16) {
      const __m512 v = _mm512_loadu_ps(x + next);
      m = _mm512_max_ps(v, m);  // a NaN in v is tracked below, not by max
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
  }
  REPMODE_AVX512_INLINE float finish() {
    step_to(n);
    if (nan) return Canonical<float>::nan();
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, m);
    float r = lanes[0];
    for (int l = 1; l < 16; ++l) r = lanes[l] > r ? lanes[l] : r;
    for (int64_t i = next; i < n; ++i) {
      if (x[i] != x[i]) return Canonical<float>::nan();
      r = x[i] > r ? x[i] : r;
    }
    return r;
  }
};

// The softmax output pass of a row whose S is known: out[j] = canon(out[j] / s).
struct DividePass {
  float* out = nullptr;  // null: no row waiting
  float s = 0.0f;

  REPMODE_AVX512_INLINE void group(int64_t i) const {
    if (!out) return;
    const __m512 vs = _mm512_set1_ps(s);
    _mm512_storeu_ps(out + i, canon16(_mm512_div_ps(_mm512_loadu_ps(out + i), vs)));
    _mm512_storeu_ps(out + i + 16, canon16(_mm512_div_ps(_mm512_loadu_ps(out + i + 16), vs)));
  }
  REPMODE_AVX512_INLINE void rest(int64_t begin, int64_t n) const {
    if (!out) return;
    for (int64_t j = begin; j < n; ++j) out[j] = canon(out[j] / s);
  }
};

// The log_softmax output pass of a row whose log S is known: out[j] = canon((x[j] - m) - ls).
struct ShiftPass {
  const float* x = nullptr;  // null: no row waiting
  float* out = nullptr;
  float m = 0.0f, ls = 0.0f;

  REPMODE_AVX512_INLINE void group(int64_t i) const {
    if (!x) return;
    const __m512 vm = _mm512_set1_ps(m), vl = _mm512_set1_ps(ls);
    _mm512_storeu_ps(out + i, canon16(_mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm), vl)));
    _mm512_storeu_ps(out + i + 16, canon16(_mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm), vl)));
  }
  REPMODE_AVX512_INLINE void rest(int64_t begin, int64_t n) const {
    if (!x) return;
    for (int64_t j = begin; j < n; ++j) out[j] = canon((x[j] - m) - ls);
  }
};

// exp_shifted_chunk_avx512 (exp_sum.h) over the chunk x[0..len) of a row, the chunk starting at
// element `base` of the row, with the gather-free exp lanes and, after each group's exps are
// issued, the waiting row's output pass and the next row's maximum advanced one group: the same
// values e_j and the same additions in the same order as exp_shifted_chunk_avx512.
struct Exp16Perm {
  ExpPermTable tab;
  REPMODE_AVX512_INLINE unsigned operator()(__m512 x, __m512* y) const { return exp16_perm_fast(x, y, tab); }
};
template <bool kStore, typename Pass>
REPMODE_AVX512_INLINE float exp_chunk_fused(const float* x, float m, float* out, int64_t len, int64_t base,
                                            const Pass& pass, RowMax* next) {
  struct Advance {
    const Pass& pass;
    RowMax* next;
    int64_t base;
    REPMODE_AVX512_INLINE void operator()(int64_t i) const {
      pass.group(base + i);
      if (next) next->step_to(base + i + 32);
    }
  };
  return exp_shifted_chunk_avx512_with<kStore>(x, m, out, len, Exp16Perm{exp_perm_table()}, Advance{pass, next, base});
}

// exp_shifted_sum (exp_sum.h) of row x[0..n) with the fused passes; then the waiting row's
// output pass over the elements the groups did not reach (n % 32 of them).
template <bool kStore, typename Pass>
REPMODE_AVX512_INLINE float exp_sum_fused(const float* x, float m, float* out, int64_t n, const Pass& pass,
                                          RowMax* next) {
  const int64_t chunks = chunk_count(n);
  float small[16] = {};
  std::vector<float> large(chunks > 16 ? chunks : 0);
  float* vals = chunks > 16 ? large.data() : small;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    vals[c] = exp_chunk_fused<kStore>(x + begin, m, kStore ? out + begin : nullptr, len, begin, pass, next);
  }
  pass.rest(n - n % 32, n);
  return finish_from_chunks(vals, chunks);
}

// softmax of rows [r0, r1) of the contiguous (rows, n) x into out (n >= kFusedMinRow).
REPMODE_AVX512_FN inline void softmax_rows(const float* x, float* out, int64_t r0, int64_t r1, int64_t n, bool safe) {
  RowMax nx;
  float m = contiguous_row_max_avx512(x + r0 * n, n);
  DividePass waiting;
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    const bool more = r + 1 < r1;
    if (more) {
      nx.start(xr + n, n);
      prefetch_bytes(o + n, n * int64_t(sizeof(float)), true);
    }
    if (softmax_zero_row(m, safe)) {
      for (int64_t j = 0; j < n; ++j) o[j] = 0.0f;
      waiting.rest(0, n);
      waiting = DividePass{};
    } else {
      const float s = exp_sum_fused<true>(xr, m, o, n, waiting, more ? &nx : nullptr);
      waiting = DividePass{o, s};
    }
    if (more) m = nx.finish();
  }
  waiting.rest(0, n);
}

// log_softmax of rows [r0, r1) of the contiguous (rows, n) x into out (n >= kFusedMinRow).
REPMODE_AVX512_FN inline void log_softmax_rows(const float* x, float* out, int64_t r0, int64_t r1, int64_t n) {
  RowMax nx;
  float m = contiguous_row_max_avx512(x + r0 * n, n);
  ShiftPass waiting;
  for (int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * n;
    const bool more = r + 1 < r1;
    if (more) {
      nx.start(xr + n, n);
      prefetch_bytes(out + (r + 1) * n, n * int64_t(sizeof(float)), true);
    }
    const float ls =
        log_of(exp_sum_fused<false>(xr, m, static_cast<float*>(nullptr), n, waiting, more ? &nx : nullptr));
    waiting = ShiftPass{xr, out + r * n, m, ls};
    if (more) m = nx.finish();
  }
  waiting.rest(0, n);
}

// log_softmax backward of rows [r0, r1) of contiguous (rows, n) g, y into out (n >= kFusedMinRow):
// the per-row formula of softmax_loss.cpp (G = the canonical sum of g; out_j = g_j - exp(y_j) * G,
// then canon) with two passes fused: the output pass of row r runs beside the sum of row r + 1's g.
// That sum is contiguous_chunk's (sum_chunk.h): per chunk of 4096, lane l of 32 adds g_l, g_{l+32},
// ... in order from -0.0 (two zmm registers, a group of 32 per step, the n % 32 tail added to the
// lanes one by one), then lane_tree, then finish_from_chunks; so G is contiguous_sum's value. The
// exp lanes are exp16_perm (the correctly rounded e^y, as exp_array's).
REPMODE_AVX512_FN inline float log_softmax_backward_row_fused(const float* g, const float* y, float* out, int64_t n,
                                                              float G, const float* next_g) {
  const ExpPermTable tab = exp_perm_table();
  const __m512 vG = _mm512_set1_ps(G);
  const int64_t chunks = chunk_count(n);
  float small[16] = {};
  std::vector<float> large(chunks > 16 ? chunks : 0);
  float* vals = chunks > 16 ? large.data() : small;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    __m512 acc[2] = {_mm512_set1_ps(-0.0f), _mm512_set1_ps(-0.0f)};
    int64_t i = begin;
    for (; i + 32 <= begin + len; i += 32) {
      const __m512 y0 = _mm512_loadu_ps(y + i), y1 = _mm512_loadu_ps(y + i + 16);
      __m512 e0, e1;
      const unsigned b0 = exp16_perm_fast(y0, &e0, tab), b1 = exp16_perm_fast(y1, &e1, tab);
      if (next_g) {
        acc[0] = _mm512_add_ps(acc[0], _mm512_loadu_ps(next_g + i));
        acc[1] = _mm512_add_ps(acc[1], _mm512_loadu_ps(next_g + i + 16));
      }
      e0 = exp16_settle(y0, e0, b0);
      e1 = exp16_settle(y1, e1, b1);
      _mm512_storeu_ps(out + i, canon16(_mm512_sub_ps(_mm512_loadu_ps(g + i), _mm512_mul_ps(e0, vG))));
      _mm512_storeu_ps(out + i + 16, canon16(_mm512_sub_ps(_mm512_loadu_ps(g + i + 16), _mm512_mul_ps(e1, vG))));
    }
    for (int64_t j = i; j < begin + len; ++j) out[j] = canon(g[j] - cr_expf(y[j]) * G);
    if (next_g) {
      alignas(64) float lanes[kSumLanes];
      for (int h = 0; h < 2; ++h) _mm512_store_ps(lanes + 16 * h, acc[h]);
      for (int64_t j = i; j < begin + len; ++j)
        lanes[(j - begin) % kSumLanes] = lanes[(j - begin) % kSumLanes] + next_g[j];
      vals[c] = lane_tree(lanes);
    }
  }
  return next_g ? finish_from_chunks(vals, chunks) : 0.0f;
}

REPMODE_AVX512_FN inline void log_softmax_backward_rows(const float* g, const float* y, float* out, int64_t r0,
                                                        int64_t r1, int64_t n) {
  float G = contiguous_sum(g + r0 * n, n);
  for (int64_t r = r0; r < r1; ++r) {
    const float* next_g = r + 1 < r1 ? g + (r + 1) * n : nullptr;
    G = log_softmax_backward_row_fused(g + r * n, y + r * n, out + r * n, n, G, next_g);
  }
}

}  // namespace softmax512
}  // namespace repmode::cpu

#endif

// CPU softmax, log_softmax and nll_loss (the softmax_loss family): rows in parallel, each row by the shared row
// formulas.
#include "softmax_loss.h"
#include "dispatch.h"
#include "entry_points.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "../common/reduction.h"
#include "../common/softmax_loss.h"
#include "array_math.h"
#include "exp_sum.h"
#include "isa.h"
#include "parallel.h"
#include "reduction.h"
#include "softmax_rows_avx512.h"

namespace repmode::cpu {

// Whether runs of contiguous float32 rows of length n take the fused AVX-512 row loops of
// softmax_rows_avx512.h (the same bits as the per-row code below, passes of neighbouring rows
// overlapped).
template <typename T>
inline bool fused_rows_avx512(int64_t n) {
#if defined(__x86_64__)
  return sizeof(T) == 4 && n >= softmax512::kFusedMinRow && active_isa() == Isa::avx512;
#else
  (void)n;
  return false;
#endif
}

// Row r of a contiguous (outer, n, inner) tensor starts at element row_base(r) and steps by inner.
inline int64_t row_base(int64_t r, int64_t n, int64_t inner) { return (r / inner) * n * inner + r % inner; }

// log_softmax of one contiguous row: S = the canonical sum of exp(x_j - m) in one pass (the
// terms are not stored); then out_j = (x_j - m) - log(S). The same roundings as
// log_softmax_row.
template <typename T>
REPMODE_INLINE void log_softmax_contiguous_row(const T* x, T* out, int64_t n) {
  const T m = contiguous_row_max(x, n);
  const T ls = log_of(exp_shifted_sum(x, m, static_cast<T*>(nullptr), n));
  for (int64_t j = 0; j < n; ++j) out[j] = canon((x[j] - m) - ls);
}

template <typename T>
void log_softmax(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads) {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (inner == 1 && fused_rows_avx512<T>(n)) {
      rows_parallel(outer, nthreads, 16 * n,
                    [&](int64_t r0, int64_t r1) { softmax512::log_softmax_rows(x, out, r0, r1, n); });
      return;
    }
  }
#endif
  if (inner == 1 && n > 0) {
    rows_parallel(outer, nthreads, 16 * n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        if (r + 1 < r1) {
          prefetch_bytes(x + (r + 1) * n, n * int64_t(sizeof(T)), false);
          prefetch_bytes(out + (r + 1) * n, n * int64_t(sizeof(T)), true);
        }
        log_softmax_contiguous_row(x + r * n, out + r * n, n);
      }
    });
    return;
  }
  rows_parallel(outer * inner, nthreads, n * 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + row_base(r, n, inner);
      T* o = out + row_base(r, n, inner);
      log_softmax_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; });
    }
  });
}

// log_softmax backward of one contiguous row, the formula of log_softmax_backward_row evaluated
// in another sequence: G = the canonical sum of g (contiguous_sum: the Sum order through the
// active ISA's chunk code); e_j = exp(y_j) written to out (exp_array: the correctly rounded
// exp lanes of the active ISA for float32, exp_of per element for float64 — the values of
// exp_of); then out_j = g_j - e_j * G. Every rounding is log_softmax_backward_value's.
template <typename T>
REPMODE_INLINE void log_softmax_backward_contiguous_row(const T* g, const T* y, T* out, int64_t n) {
  const T G = contiguous_sum(g, n);
  exp_array(y, out, n);
  for (int64_t j = 0; j < n; ++j) out[j] = canon(g[j] - out[j] * G);
}

template <typename T>
void log_softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads) {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (inner == 1 && fused_rows_avx512<T>(n)) {
      rows_parallel(outer, nthreads, 16 * n,
                    [&](int64_t r0, int64_t r1) { softmax512::log_softmax_backward_rows(grad, y, out, r0, r1, n); });
      return;
    }
  }
#endif
  if (inner == 1 && n > 0) {
    rows_parallel(outer, nthreads, 16 * n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) log_softmax_backward_contiguous_row(grad + r * n, y + r * n, out + r * n, n);
    });
    return;
  }
  rows_parallel(outer * inner, nthreads, n * 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = row_base(r, n, inner);
      const T* g = grad + base;
      const T* yr = y + base;
      T* o = out + base;
      log_softmax_backward_row<T>(
          n, [&](int64_t j) { return g[j * inner]; }, [&](int64_t j) { return yr[j * inner]; },
          [&](int64_t j, T v) { o[j * inner] = v; });
    }
  });
}

namespace {
void check_target(int64_t t, int64_t C) {
  if (t < 0 || t >= C)
    throw std::out_of_range("Target " + std::to_string(t) + " is out of bounds (classes: " + std::to_string(C) + ")");
}
}  // namespace

template <typename T>
void nll_loss_forward(const T* x, int64_t N, int64_t C, int64_t sN, int64_t sC, const int64_t* target, int64_t s_target,
                      const T* weight, int reduction, int64_t ignore_index, T* out, int64_t s_out, T* total_weight) {
  for (int64_t i = 0; i < N; ++i) {
    const int64_t t = target[i * s_target];
    if (t != ignore_index) check_target(t, C);
  }
  auto term = [&](int64_t i) -> T { return nll_row_term(x, sN, sC, target[i * s_target], weight, ignore_index, i); };
  if (reduction == 0) {
    for (int64_t i = 0; i < N; ++i) out[i * s_out] = canon(term(i));
    *total_weight = T(0.0);
    return;
  }
  const T sum = canonical_sum<T>(N, term);
  const T tw =
      canonical_sum<T>(N, [&](int64_t i) -> T { return nll_row_weight(target[i * s_target], weight, ignore_index); });
  *total_weight = canon(tw);
  *out = nll_reduced(sum, tw, reduction);
}

template <typename T>
void nll_loss_backward(T* grad_input, int64_t N, int64_t C, const T* grad, int64_t s_grad, const int64_t* target,
                       int64_t s_target, const T* weight, int reduction, int64_t ignore_index, T total_weight) {
  const T g_all = nll_grad_scale(grad[0], total_weight, reduction);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t t = target[i * s_target];
    if (t == ignore_index) continue;
    check_target(t, C);
    const T g = reduction == 0 ? -grad[i * s_grad] : g_all;
    grad_input[i * C + t] = nll_grad_value(g, weight, t);
  }
}

// softmax of one contiguous row, the formula of softmax_row evaluated in another sequence:
// e_j = exp(x_j - m) is written to out and summed in the canonical order in one pass, then
// divided in place. Every rounding is the same as softmax_row's, so the bits are too.
template <typename T>
REPMODE_INLINE void softmax_contiguous_row(const T* x, T* out, int64_t n, bool safe) {
  const T m = contiguous_row_max(x, n);
  if (softmax_zero_row(m, safe)) {
    for (int64_t j = 0; j < n; ++j) out[j] = T(0.0);
    return;
  }
  const T s = exp_shifted_sum(x, m, out, n);
  for (int64_t j = 0; j < n; ++j) out[j] = canon(out[j] / s);
}

template <typename T>
void softmax(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool safe, int nthreads) {
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (inner == 1 && fused_rows_avx512<T>(n)) {
      rows_parallel(outer, nthreads, 16 * n,
                    [&](int64_t r0, int64_t r1) { softmax512::softmax_rows(x, out, r0, r1, n, safe); });
      return;
    }
  }
#endif
  if (inner == 1 && n > 0) {
    rows_parallel(outer, nthreads, 16 * n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        if (r + 1 < r1) {
          prefetch_bytes(x + (r + 1) * n, n * int64_t(sizeof(T)), false);
          prefetch_bytes(out + (r + 1) * n, n * int64_t(sizeof(T)), true);
        }
        softmax_contiguous_row(x + r * n, out + r * n, n, safe);
      }
    });
    return;
  }
  rows_parallel(outer * inner, nthreads, 16 * n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + row_base(r, n, inner);
      T* o = out + row_base(r, n, inner);
      softmax_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; }, safe);
    }
  });
}

// The canonical sum (csrc/common/reduction_order.h) of the terms round(g_j * y_j) of one
// contiguous row (n > 0), without storing them: per chunk of 4096, lane l adds the terms
// l, l + 32, ... in order from -0.0, then the fixed tree; then the chunk values by
// finish_from_chunks. The loop of contiguous_chunk (sum_chunk.h) with the product as the term, so
// the compiler keeps the 32 lanes in vector registers on the AVX2 and AVX-512 paths.
template <typename T>
REPMODE_INLINE T product_sum_contiguous(const T* g, const T* y, int64_t n) {
  const int64_t chunks = chunk_count(n);
  T small[16];
  std::vector<T> large(chunks > 16 ? chunks : 0);
  T* vals = chunks > 16 ? large.data() : small;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    const T* a = g + begin;
    const T* b = y + begin;
    T v[kSumLanes];
    for (int l = 0; l < kSumLanes; ++l) v[l] = T(-0.0);
    const int64_t groups = len / kSumLanes;
    for (int64_t r = 0; r < groups; ++r)
      for (int l = 0; l < kSumLanes; ++l)
        v[l] = v[l] + softmax_backward_term(a[r * kSumLanes + l], b[r * kSumLanes + l]);
    for (int64_t i = groups * kSumLanes; i < len; ++i)
      v[i % kSumLanes] = v[i % kSumLanes] + softmax_backward_term(a[i], b[i]);
    vals[c] = lane_tree(v);
  }
  return finish_from_chunks(vals, chunks);
}

// softmax backward of one contiguous row, the formula of softmax_backward_row evaluated in
// another sequence: G = the canonical sum of round(g_j * y_j) (product_sum_contiguous), then
// out_j = y_j * (g_j - G). Every rounding is softmax_backward_row's.
template <typename T>
REPMODE_INLINE void softmax_backward_contiguous_row(const T* g, const T* y, T* out, int64_t n) {
  const T G = product_sum_contiguous(g, y, n);
  for (int64_t j = 0; j < n; ++j) out[j] = softmax_backward_value(g[j], y[j], G);
}

template <typename T>
void softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads) {
  if (inner == 1 && n > 0) {
    rows_parallel(outer, nthreads, 8 * n, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) softmax_backward_contiguous_row(grad + r * n, y + r * n, out + r * n, n);
    });
    return;
  }
  rows_parallel(outer * inner, nthreads, 4 * n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = row_base(r, n, inner);
      const T* g = grad + base;
      const T* yr = y + base;
      T* o = out + base;
      softmax_backward_row<T>(
          n, [&](int64_t j) { return g[j * inner]; }, [&](int64_t j) { return yr[j * inner]; },
          [&](int64_t j, T v) { o[j * inner] = v; });
    }
  });
}

#define REPMODE_INSTANTIATE(T)                                                                                        \
  template void softmax<T>(const T*, T*, int64_t, int64_t, int64_t, bool, int);                                       \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int);                          \
  template void log_softmax<T>(const T*, T*, int64_t, int64_t, int64_t, int);                                         \
  template void log_softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int);                      \
  template void nll_loss_forward<T>(const T*, int64_t, int64_t, int64_t, int64_t, const int64_t*, int64_t, const T*,  \
                                    int, int64_t, T*, int64_t, T*);                                                   \
  template void nll_loss_backward<T>(T*, int64_t, int64_t, const T*, int64_t, const int64_t*, int64_t, const T*, int, \
                                     int64_t, T);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    softmax<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, safe, nthreads);
  });
}

void softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                      int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    softmax_backward<T>(ptr<const T>(grad), ptr<const T>(y), ptr<T>(out), outer, n, inner, nthreads);
  });
}

void log_softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    log_softmax<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, nthreads);
  });
}

void log_softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n,
                          int64_t inner, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    log_softmax_backward<T>(ptr<const T>(grad), ptr<const T>(y), ptr<T>(out), outer, n, inner, nthreads);
  });
}

void nll_loss_forward(int dtype, uintptr_t x, int64_t N, int64_t C, int64_t sN, int64_t sC, uintptr_t target,
                      int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index, uintptr_t out,
                      int64_t s_out, uintptr_t total_weight) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    nll_loss_forward<T>(ptr<const T>(x), N, C, sN, sC, ptr<const int64_t>(target), s_target, ptr<const T>(weight),
                        reduction, ignore_index, ptr<T>(out), s_out, ptr<T>(total_weight));
  });
}

void nll_loss_backward(int dtype, uintptr_t grad_input, int64_t N, int64_t C, uintptr_t grad, int64_t s_grad,
                       uintptr_t target, int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index,
                       uintptr_t total_weight) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    nll_loss_backward<T>(ptr<T>(grad_input), N, C, ptr<const T>(grad), s_grad, ptr<const int64_t>(target), s_target,
                         ptr<const T>(weight), reduction, ignore_index, *ptr<const T>(total_weight));
  });
}

}  // namespace repmode::cpu

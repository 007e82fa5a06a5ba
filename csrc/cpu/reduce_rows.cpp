// CPU row reductions: rows in parallel, each row by the shared formulas of
// csrc/common/row_reductions.h (plain strided loads; the order is the formula's).
#include "reduce_rows.h"

#include "../common/row_reductions.h"
#include "array_math.h"
#include "exp_sum.h"
#include "parallel.h"
#include "reduce.h"

namespace repmode::cpu {
namespace {

inline int64_t row_base(int64_t r, int64_t n, int64_t inner) { return (r / inner) * n * inner + r % inner; }

}  // namespace

template <typename T>
void var_mean_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction, T* var,
                   T* mean, bool take_sqrt, int nthreads) {
  rows_parallel(M, nthreads, 2 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      T v, mu;
      row_var_mean<T>(N, [&](int64_t j) { return p[j * sN]; }, correction, &v, &mu);
      var[m] = var_or_std(v, take_sqrt);
      if (mean) mean[m] = mu;
    }
  });
}

template <typename T>
void prod_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads) {
  rows_parallel(M, nthreads, N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = canon(canonical_prod<T>(N, [&](int64_t j) { return p[j * sN]; }));
    }
  });
}

template <typename T>
void extreme_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, T* values,
                  int64_t* indices, int nthreads) {
  if (N == 0) return;  // no extreme of nothing: nothing written (Python refuses it first, as torch)
  rows_parallel(M, nthreads, N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      const int64_t j = row_arg_extreme<T>(N, [&](int64_t k) { return p[k * sN]; }, is_max);
      if (values) values[m] = canon(p[j * sN]);
      if (indices) indices[m] = j;
    }
  });
}

// logsumexp of one contiguous row: row_logsumexp's formula with the staged row maximum and
// the one-pass exp sum. The maximum may be -0 where row_logsumexp's is +0 or the reverse
// (contiguous_row_max); no bit depends on it: x_j - (+-0) and exp of it differ only in the
// sign of a zero difference, and log(S) + m with S >= 1 is +0 or positive either way.
template <typename T>
REPMODE_INLINE T logsumexp_contiguous_row(const T* x, int64_t n) {
  if (n == 0) return T(-1.0) / T(0.0);
  const T m = contiguous_row_max(x, n);
  return logsumexp_result(exp_shifted_sum(x, logsumexp_shift(m), static_cast<T*>(nullptr), n), m);
}

template <typename T>
void logsumexp_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads) {
  rows_parallel(M, nthreads, 8 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = sN == 1 ? logsumexp_contiguous_row(p, N) : row_logsumexp<T>(N, [&](int64_t j) { return p[j * sN]; });
    }
  });
}

template <typename T>
void norm_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, T* out, int nthreads) {
  rows_parallel(M, nthreads, 8 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = row_norm<T>(N, [&](int64_t j) { return p[j * sN]; }, ord);
    }
  });
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
      softmax_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; },
                     safe);
    }
  });
}

template <typename T>
void softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner,
                      int nthreads) {
  rows_parallel(outer * inner, nthreads, 4 * n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = row_base(r, n, inner);
      const T* g = grad + base;
      const T* yr = y + base;
      T* o = out + base;
      softmax_backward_row<T>(n, [&](int64_t j) { return g[j * inner]; }, [&](int64_t j) { return yr[j * inner]; },
                              [&](int64_t j, T v) { o[j * inner] = v; });
    }
  });
}

template <typename T>
void cumulative(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool product, int nthreads) {
  rows_parallel(outer * inner, nthreads, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + row_base(r, n, inner);
      T* o = out + row_base(r, n, inner);
      cumulative_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; },
                        product);
    }
  });
}

#define REPMODE_INSTANTIATE(T)                                                                                 \
  template void var_mean_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, double, T*, T*, bool, int);     \
  template void prod_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*, int);                           \
  template void extreme_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, bool, T*, int64_t*, int);        \
  template void logsumexp_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*, int);                      \
  template void norm_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, double, T*, int);                   \
  template void softmax<T>(const T*, T*, int64_t, int64_t, int64_t, bool, int);                                \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, int);                   \
  template void cumulative<T>(const T*, T*, int64_t, int64_t, int64_t, bool, int);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

}  // namespace repmode::cpu

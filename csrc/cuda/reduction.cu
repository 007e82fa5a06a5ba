// CUDA row reductions: M rows of N terms, row m's term j at x[m * sM + j * sN] (the CPU twins:
// csrc/cpu/reduction.cpp). Every launcher walks the canonical order with
// reduce_rows (csrc/cuda/reduction_rows.cuh: one warp per 4096-term chunk, scratch levels for
// long rows), one walk per pass of the row formula, and every term and final step is the
// shared function of csrc/common/reduction.h, so the bits are the CPU's.
#include "../common/reduction.h"
#include "launchers.h"
#include "reduction_rows.cuh"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

template <typename T>
struct Terms {  // x[m * sM + j * sN]
  const T* x;
  int64_t sM, sN;
  __device__ T operator()(int64_t m, int64_t j) const { return x[m * sM + j * sN]; }
};

template <typename T>
struct IndexedTerms {  // (x_mj, j), for the arg-reductions
  Terms<T> x;
  __device__ Cand<T> operator()(int64_t m, int64_t j) const { return Cand<T>{x(m, j), j}; }
};

template <typename T>
struct SumOut {
  T* out;
  int64_t s_out, n;
  bool mean;
  __device__ void operator()(int64_t m, T s) const { out[m * s_out] = sum_or_mean(s, n, mean); }
};

template <typename T>
struct WideTerms {  // double(x[m * sM + j * sN]): var_mean accumulates in float64
  Terms<T> x;
  __device__ double operator()(int64_t m, int64_t j) const { return double(x(m, j)); }
};

struct StoreMean {  // var_mean's first pass: the float64 row mean
  double* mean;
  int64_t n;
  __device__ void operator()(int64_t m, double s) const { mean[m] = norm_mean(s, n); }
};

template <typename T>
struct SquaredDeviation {
  WideTerms<T> x;
  const double* mean;
  __device__ double operator()(int64_t m, int64_t j) const { return norm_sq_term(x(m, j), mean[m]); }
};

template <typename T>
struct VarOut {
  T* var;
  T* mean_out;  // may be null
  const double* mean;
  int64_t n;
  double correction;
  bool take_sqrt;
  __device__ void operator()(int64_t m, double ss) const {
    var[m] = var_or_std<T>(var_mean_var(ss, n, correction), take_sqrt);
    if (mean_out) mean_out[m] = canon(T(mean[m]));
  }
};

template <typename T>
struct ProdOut {
  T* out;
  __device__ void operator()(int64_t m, T p) const { out[m] = canon(p); }
};

template <typename T>
struct ExtremeOut {
  T* values;         // may be null
  int64_t* indices;  // may be null
  __device__ void operator()(int64_t m, Cand<T> c) const {
    if (values) values[m] = canon(c.v);
    if (indices) indices[m] = c.i;
  }
};

template <typename T>
struct ShiftedExp {
  Terms<T> x;
  const T* max;
  __device__ T operator()(int64_t m, int64_t j) const { return logsumexp_term(x(m, j), logsumexp_shift(max[m])); }
};

template <typename T>
struct LogSumExpOut {
  T* out;
  const T* max;
  __device__ void operator()(int64_t m, T s) const { out[m] = logsumexp_result(s, max[m]); }
};

template <typename T>
struct AbsTerms {  // (|x_mj|, j) for the +-inf norms
  Terms<T> x;
  __device__ Cand<T> operator()(int64_t m, int64_t j) const { return Cand<T>{vector_norm_abs(x(m, j)), j}; }
};

template <typename T>
struct NormTerms {
  Terms<T> x;
  double ord;
  __device__ T operator()(int64_t m, int64_t j) const { return vector_norm_term(x(m, j), ord); }
};

template <typename T>
struct NormOut {
  T* out;
  double ord;
  __device__ void operator()(int64_t m, T s) const { out[m] = canon(vector_norm_from_sum(s, ord)); }
};

template <typename T>
struct PickedOut {  // the +-inf norms: the picked |x|
  T* out;
  __device__ void operator()(int64_t m, Cand<T> c) const { out[m] = canon(c.v); }
};

}  // namespace

// One walk (sum_each_row) over all rows: a warp per chunk (a thread per chunk for columns),
// scratch levels when N > 4096.
void sum_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int64_t s_out,
              bool mean, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    sum_each_row<T>(scope.get(), M, N, Terms<T>{ptr<const T>(x), sM, sN}, SumOut<T>{ptr<T>(out), s_out, N, mean},
                    columns_layout(M, N, sM, sN));
  });
}

// Two walks, as row_var_mean's two passes, both over float64 terms: the sum (the float64 mean to
// a scratch row of M values), then the sum of squared deviations, whose last level writes var
// (or std) and the mean, each rounded once to T.
void var_mean_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction,
                   uintptr_t var, uintptr_t mean, bool take_sqrt, uintptr_t stream) {
  StreamScope scope(stream);
  if (M <= 0) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const WideTerms<T> terms{{ptr<const T>(x), sM, sN}};
    StreamScratch<double> mu(M, scope.get());
    const bool cols = columns_layout(M, N, sM, sN);
    sum_each_row<double>(scope.get(), M, N, terms, StoreMean{mu.get(), N}, cols);
    sum_each_row<double>(scope.get(), M, N, SquaredDeviation<T>{terms, mu.get()},
                         VarOut<T>{ptr<T>(var), ptr<T>(mean), mu.get(), N, correction, take_sqrt}, cols);
  });
}

// One walk with x (MulOp): canonical_prod's lanes, chunks and levels.
void prod_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    prod_each_row<T>(scope.get(), M, N, Terms<T>{ptr<const T>(x), sM, sN}, ProdOut<T>{ptr<T>(out)},
                     columns_layout(M, N, sM, sN));
  });
}

// One candidate walk: (value, index) pairs, the earlier kept unless extreme_takes prefers the
// later, so the result is row_arg_extreme's first index. Empty rows are refused by the caller
// (the CPU twin would read x[0]): nothing is written for N == 0.
void extreme_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, uintptr_t values,
                  uintptr_t indices, uintptr_t stream) {
  StreamScope scope(stream);
  if (N <= 0) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    pick_each_row<T>(scope.get(), ExtremeTakes{is_max}, M, N, IndexedTerms<T>{{ptr<const T>(x), sM, sN}},
                     ExtremeOut<T>{ptr<T>(values), ptr<int64_t>(indices)}, columns_layout(M, N, sM, sN));
  });
}

// Two walks, as row_logsumexp: the first maximum under the total order (to a scratch row),
// then the canonical sum of exp(x - shift) whose last level writes log(S) + m.
void logsumexp_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out,
                    uintptr_t stream) {
  StreamScope scope(stream);
  if (M <= 0) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (N <= 0) {  // the formula's value of an empty row (-inf)
      for_each_index(scope.get(), M, Fill<T>{ptr<T>(out), row_logsumexp<T>(0, NoTerms<T>{})});
      return;
    }
    const Terms<T> terms{ptr<const T>(x), sM, sN};
    StreamScratch<T> mx(M, scope.get());
    const bool cols = columns_layout(M, N, sM, sN);
    pick_each_row<T>(scope.get(), ExtremeTakes{true}, M, N, IndexedTerms<T>{terms}, StoreValue<T>{mx.get()}, cols);
    sum_each_row<T>(scope.get(), M, N, ShiftedExp<T>{terms, mx.get()}, LogSumExpOut<T>{ptr<T>(out), mx.get()}, cols);
  });
}

// row_norm: +-inf ords are one candidate walk over |x| (the first extreme, as the CPU's scan);
// the other ords one canonical sum of vector_norm_term, finished by vector_norm_from_sum.
void norm_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, uintptr_t out,
               uintptr_t stream) {
  StreamScope scope(stream);
  if (M <= 0) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const Terms<T> terms{ptr<const T>(x), sM, sN};
    const bool cols = columns_layout(M, N, sM, sN);
    if (!vector_norm_is_extreme(ord)) {
      sum_each_row<T>(scope.get(), M, N, NormTerms<T>{terms, ord}, NormOut<T>{ptr<T>(out), ord}, cols);
    } else if (N <= 0) {  // the formula's value of an empty row
      for_each_index(scope.get(), M, Fill<T>{ptr<T>(out), row_norm<T>(0, NoTerms<T>{}, ord)});
    } else {
      pick_each_row<T>(scope.get(), ExtremeTakes{ord > 0}, M, N, AbsTerms<T>{terms}, PickedOut<T>{ptr<T>(out)}, cols);
    }
  });
}

}  // namespace repmode::cuda

// ---- cumulative ----
// cumsum / cumprod on the GPU (csrc/cuda/launchers.h) along n of a contiguous (outer, n, inner)
// view. The canonical order is sequential along each (outer, inner) line (cumulative_row in
// csrc/common/reduction.h): a float64 accumulator acc_j = acc_{j-1} (+|x) x_j, out_j = round(acc_j),
// so a line has no parallelism to give without changing its bits.

namespace repmode::cuda {
namespace {

// Line r = (r / inner, r % inner): neighbouring threads take neighbouring inner positions, so
// each step j reads and writes consecutive addresses when inner > 1. In-place (x == out) is
// fine: a line's element j is read before it is written, by the same thread.
template <typename T>
__global__ void cumulative_kernel(const T* x, T* out, int64_t lines, int64_t n, int64_t inner, bool product) {
  for (int64_t r = global_thread(); r < lines; r += grid_stride()) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    const T* xr = x + base;
    T* o = out + base;
    cumulative_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; }, product);
  }
}

}  // namespace

// One thread per (outer, inner) line, walking it in the canonical sequential order.
void cumulative(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool product,
                uintptr_t stream) {
  StreamScope scope(stream);
  const int64_t lines = outer * inner;
  if (lines <= 0 || n <= 0) return;  // nothing to write, as the CPU
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    cumulative_kernel<T>
        <<<blocks_for(lines), kBlock, 0, scope.get()>>>(ptr<const T>(x), ptr<T>(out), lines, n, inner, product);
    check_launch("cumulative");
  });
}

}  // namespace repmode::cuda

// Layer normalization on the GPU (csrc/cuda/launchers.h). The twin of csrc/cpu/layer_norm.cpp:
// every per-element step is a function of csrc/common/layer_norm.h, every sum the canonical Sum
// order of csrc/common/reduction_order.h through the group-sum engines of norm_sums.cuh.
#include "../common/layer_norm.h"
#include "launchers.h"
#include "norm_sums.cuh"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// ---------------------------------------------------------------- layer norm

template <typename T>
struct LnSqTerm : RowsAt {
  const T* x;
  const T* mean;
  __device__ void operator()(int64_t o, int64_t r, int64_t, T* t) const { t[0] = ln_sq_dev(x[o], mean[r]); }
};

template <typename T>
struct LnMeanEpi {
  T* mean;
  int64_t N;
  __device__ void operator()(int64_t r, T s, T) const { mean[r] = ln_mean(s, N); }
};

template <typename T>
struct LnStatsEpi {
  T* mean;
  T* rstd;
  int64_t N;
  T eps;
  __device__ void operator()(int64_t r, T q, T) const {
    rstd[r] = canon(ln_rstd(q, N, eps));
    mean[r] = canon(mean[r]);
  }
};

template <typename T>
struct LnOutput {
  const T* x;
  const T* w;
  const T* b;
  const T* mean;
  const T* rstd;
  T* y;
  int64_t N;
  __device__ void operator()(int64_t o) const {
    const int64_t i = o / N, j = o - i * N;
    y[o] = ln_output(ln_xhat(x[o], mean[i], rstd[i]), w, b, j);
  }
};

// The row sums A (of gw_j) and B (of gw_j * xhat_j) of the input gradient.
template <typename T>
struct LnDxTerms : RowsAt {
  const T* g;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  __device__ void operator()(int64_t o, int64_t r, int64_t, T* t) const {
    const T gw = ln_gw(g[o], w, o - r * D);
    t[0] = gw;
    t[1] = ln_g_xhat(gw, x[o], mean[r], rstd[r]);
  }
};

template <typename T>
struct LnDxEpi {
  T* a;
  T* b;
  int64_t N;
  __device__ void operator()(int64_t r, T A, T B) const {
    a[r] = ln_mean(A, N);
    b[r] = ln_mean(B, N);
  }
};

template <typename T>
struct LnDx {
  const T* g;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  const T* a;
  const T* b;
  T* dx;
  int64_t N;
  __device__ void operator()(int64_t o) const {
    const int64_t i = o / N, j = o - i * N;
    dx[o] = ln_dx(ln_gw(g[o], w, j), ln_xhat(x[o], mean[i], rstd[i]), a[i], b[i], rstd[i]);
  }
};

// Column j, row i: the weight gradient's term (layer_norm_grad_weight) and the bias's.
template <typename T>
struct LnParamTerms {
  const T* g;
  const T* x;
  const T* mean;
  const T* rstd;
  bool want_w;
  __device__ void operator()(int64_t o, int64_t, int64_t i, T* t) const {
    t[0] = want_w ? ln_g_xhat(g[o], x[o], mean[i], rstd[i]) : T(0.0);
    t[1] = g[o];
  }
};

}  // namespace

// Rows: pass 1 (row sums -> mean), pass 2 (sums of squared deviations -> rstd, mean and rstd
// canonicalized) through the segmented engine, each row's chunks spread over warps; then one
// thread per element for y. The CPU's per-row steps in the same order.
void layer_norm_forward(int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps, uintptr_t y,
                        uintptr_t mean, uintptr_t rstd, uintptr_t stream, bool reference) {
  if (reference) throw std::invalid_argument("repmode._C_cuda: layer_norm_forward has no reference on CUDA");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const RowsAt rows{N, N};
    group_sums<T, 1, false>(st, M, N, N, LoadTerm<T, RowsAt>{rows, ptr<const T>(x)}, LnMeanEpi<T>{ptr<T>(mean), N});
    group_sums<T, 1, false>(st, M, N, N, LnSqTerm<T>{rows, ptr<const T>(x), ptr<const T>(mean)},
                            LnStatsEpi<T>{ptr<T>(mean), ptr<T>(rstd), N, T(eps)});
    launch_each(st, M * N,
                LnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), ptr<const T>(mean), ptr<const T>(rstd),
                            ptr<T>(y), N});
  });
}

// dx: the row sums A, B through the segmented engine (scratch a, b per row), then one thread
// per element. dw/db: canonical sums down the N columns over the M rows in row order, through
// the column engine (chunks of 4096 rows over blocks; each column's chunk values finished by a
// warp), the order of layer_norm_grad_weight and the CPU's column_sums. M = 0 gives +0.0.
void layer_norm_backward(int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t M,
                         int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream, bool reference) {
  if (reference) throw std::invalid_argument("repmode._C_cuda: layer_norm_backward has no reference on CUDA");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    if (dx && M > 0) {
      StreamScratch<T> ab(2 * M, st);
      group_sums<T, 2, false>(st, M, N, N,
                              LnDxTerms<T>{RowsAt{N, N}, ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean),
                                           ptr<const T>(rstd), ptr<const T>(w)},
                              LnDxEpi<T>{ab.get(), ab.get() + M, N});
      launch_each(st, M * N,
                  LnDx<T>{ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd), ptr<const T>(w),
                          ab.get(), ab.get() + M, ptr<T>(dx), N});
    }
    if (dw || db)
      group_sums<T, 2, true>(
          st, N, M, 0,
          LnParamTerms<T>{ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd), dw != 0},
          CanonPairEpi<T>{ptr<T>(dw), ptr<T>(db)});
  });
}

}  // namespace repmode::cuda

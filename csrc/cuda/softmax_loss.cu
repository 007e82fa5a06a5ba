// CUDA softmax, log_softmax, their backwards, and nll_loss (the CPU twins:
// csrc/cpu/reduction.cpp, csrc/cpu/softmax_loss.cpp). A contiguous (outer, n, inner) tensor
// holds outer * inner rows along n (stride inner). The row passes of each formula are walks of
// reduce_rows (csrc/cuda/reduction_rows.cuh: one warp per 4096-term chunk, scratch levels for long
// rows) writing one value per row to a scratch row; the outputs are then one thread per element.
// Contiguous rows of one chunk (the common case: attention scores, class logits) run all their
// passes in one kernel, a warp per row, with the same lanes and tree.
// Every term and output is the shared function of csrc/common/reduction.h and
// csrc/common/softmax_loss.h, so the bits are the CPU's.
#include "../common/softmax_loss.h"
#include "../common/reduction.h"
#include "launchers.h"
#include "reduction_rows.cuh"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// Row r = (o, i) of an (outer, n, inner) tensor: element j at (o * n + j) * inner + i.
struct Layout {
  int64_t n, inner;
  __device__ int64_t at(int64_t r, int64_t j) const { return ((r / inner) * n + j) * inner + r % inner; }
  __device__ int64_t row_of(int64_t e) const { return (e / (n * inner)) * inner + e % inner; }
};

template <typename T>
struct AlongN {
  const T* x;
  Layout L;
  __device__ T operator()(int64_t r, int64_t j) const { return x[L.at(r, j)]; }
};

template <typename T>
struct IndexedAlongN {  // (x_rj, j) for row_max
  AlongN<T> x;
  __device__ Cand<T> operator()(int64_t r, int64_t j) const { return Cand<T>{x(r, j), j}; }
};

template <typename T>
struct StoreLog {  // log_softmax keeps log(S)
  T* out;
  __device__ void operator()(int64_t r, T s) const { out[r] = log_of(s); }
};

// exp(x - m) of softmax / log_softmax (max: the row maxima).
template <typename T>
struct ExpTerms {
  AlongN<T> x;
  const T* max;
  bool log;
  __device__ T operator()(int64_t r, int64_t j) const {
    return log ? log_softmax_term(x(r, j), max[r]) : softmax_term(x(r, j), max[r]);
  }
};

// The forward outputs from the row maxima and the row sums (log_softmax: log of the sums).
template <typename T>
struct ForwardOut {
  const T* x;
  T* out;
  const T* max;
  const T* sum;
  Layout L;
  bool safe, log;
  __device__ void operator()(int64_t e) const {
    const int64_t r = L.row_of(e);
    if (log)
      out[e] = log_softmax_value(x[e], max[r], sum[r]);
    else
      out[e] = softmax_zero_row(max[r], safe) ? T(0.0) : softmax_value(x[e], max[r], sum[r]);
  }
};

// The backward's row sum terms: g * y (softmax) or g (log_softmax).
template <typename T>
struct BackwardTerms {
  AlongN<T> g, y;
  bool log;
  __device__ T operator()(int64_t r, int64_t j) const {
    return log ? g(r, j) : softmax_backward_term(g(r, j), y(r, j));
  }
};

template <typename T>
struct BackwardOut {
  const T *g, *y;
  T* out;
  const T* G;
  Layout L;
  bool log;
  __device__ void operator()(int64_t e) const {
    const T Gr = G[L.row_of(e)];
    out[e] = log ? log_softmax_backward_value(g[e], y[e], Gr) : softmax_backward_value(g[e], y[e], Gr);
  }
};

// ---- nll_loss ----

// The CPU throws for a non-ignored target outside [0, C); a kernel cannot, so it traps (the
// stream's next synchronization reports the error, as torch's device-side asserts do).
__device__ __forceinline__ int64_t checked_target(const int64_t* target, int64_t s_target, int64_t i, int64_t C,
                                                  int64_t ignore_index) {
  const int64_t t = target[i * s_target];
  if (t != ignore_index && (t < 0 || t >= C)) __trap();
  return t;
}

// Row i of the (N, C) input with its target.
template <typename T>
struct NllRows {
  const T* x;
  int64_t sN, sC;
  const int64_t* target;
  int64_t s_target, C;
  const T* weight;
  int64_t ignore_index;
  __device__ int64_t target_of(int64_t i) const { return checked_target(target, s_target, i, C, ignore_index); }
  __device__ T term(int64_t i) const { return nll_row_term(x, sN, sC, target_of(i), weight, ignore_index, i); }
  __device__ T weight_of(int64_t i) const { return nll_row_weight(target_of(i), weight, ignore_index); }
};

template <typename T>
struct NllNone {
  NllRows<T> rows;
  T* out;
  int64_t s_out;
  T* total_weight;
  __device__ void operator()(int64_t i) const {
    if (i == 0) *total_weight = T(0.0);
    out[i * s_out] = canon(rows.term(i));
  }
};

// Two "rows" of N terms: row 0 the loss terms, row 1 their weights.
template <typename T>
struct NllSums {
  NllRows<T> rows;
  __device__ T operator()(int64_t row, int64_t i) const { return row == 0 ? rows.term(i) : rows.weight_of(i); }
};

template <typename T>
__global__ void nll_reduce_finish(const T* sums, int reduction, T* out, T* total_weight) {
  *total_weight = canon(sums[1]);
  *out = nll_reduced(sums[0], sums[1], reduction);
}

template <typename T>
struct NllBackward {
  T* grad_input;
  int64_t C;
  const T* grad;
  int64_t s_grad;
  const int64_t* target;
  int64_t s_target;
  const T* weight;
  int reduction;
  int64_t ignore_index;
  const T* total_weight;
  __device__ void operator()(int64_t i) const {
    const int64_t t = target[i * s_target];
    if (t == ignore_index) return;
    checked_target(target, s_target, i, C, ignore_index);
    const T tw = reduction == 1 ? *total_weight : T(1.0);  // only 'mean' reads it
    const T g = nll_grad_scale(reduction == 0 ? grad[i * s_grad] : grad[0], tw, reduction);
    grad_input[i * C + t] = nll_grad_value(g, weight, t);
  }
};

// The rows of an (outer, n, inner) tensor and how level 1 walks them.
struct RowsAlongN {
  Layout L;
  int64_t rows;
  bool cols;  // neighbouring rows (i, i+1) sit side by side: a thread per chunk
  RowsAlongN(int64_t outer, int64_t n, int64_t inner)
      : L{n, inner}, rows(outer * inner), cols(columns_layout(rows, n, 1, inner)) {}
  bool empty() const { return rows <= 0 || L.n <= 0; }
};

// Contiguous rows (inner == 1) of at most one sum chunk (n <= kSumChunk), a warp per row: the
// row's passes run in one kernel, each pass the single level of reduce_rows (warp_chunk: the
// same lanes and tree, so the same bits as the general path below) with its result broadcast
// from lane 0, then the row's outputs. No scratch rows, one launch instead of three, and no
// 64-bit index division per element.
bool short_rows(const RowsAlongN& R) { return R.L.inner == 1 && R.L.n <= kSumChunk; }

template <typename T>
__global__ void forward_short_rows(const T* x, T* out, int64_t rows, int64_t n, bool safe, bool log) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t step = grid_stride() / kWarp;
  for (int64_t r = global_thread() / kWarp; r < rows; r += step) {  // uniform per warp
    const T* xr = x + r * n;
    T* yr = out + r * n;
    const Cand<T> c = warp_chunk(ArgOp<T, MaxTakes>{}, lane, n, [&](int64_t j) { return Cand<T>{xr[j], j}; });
    const T m = from_lane0(c.v);
    if (log) {
      const T ls = log_of(
          from_lane0(warp_chunk(TreeOp<T, AddOp>{}, lane, n, [&](int64_t j) { return log_softmax_term(xr[j], m); })));
      for (int64_t j = lane; j < n; j += kWarp) yr[j] = log_softmax_value(xr[j], m, ls);
    } else {
      // The sum pass leaves each term e_j in yr[j] (the lane that wrote it reads it back), so
      // the exp runs once per element: y_j = softmax_value_of_term(e_j, S), softmax_value's bits.
      const T s = from_lane0(warp_chunk(TreeOp<T, AddOp>{}, lane, n, [&](int64_t j) {
        const T e = softmax_term(xr[j], m);
        yr[j] = e;
        return e;
      }));
      const bool zero = softmax_zero_row(m, safe);
      for (int64_t j = lane; j < n; j += kWarp) yr[j] = zero ? T(0.0) : softmax_value_of_term(yr[j], s);
    }
  }
}

template <typename T>
__global__ void backward_short_rows(const T* g, const T* y, T* out, int64_t rows, int64_t n, bool log) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t step = grid_stride() / kWarp;
  for (int64_t r = global_thread() / kWarp; r < rows; r += step) {  // uniform per warp
    const T *gr = g + r * n, *yr = y + r * n;
    T* outr = out + r * n;
    const T G = from_lane0(warp_chunk(TreeOp<T, AddOp>{}, lane, n,
                                      [&](int64_t j) { return log ? gr[j] : softmax_backward_term(gr[j], yr[j]); }));
    for (int64_t j = lane; j < n; j += kWarp)
      outr[j] = log ? log_softmax_backward_value(gr[j], yr[j], G) : softmax_backward_value(gr[j], yr[j], G);
  }
}

// Three passes, as softmax_row / log_softmax_row: the row maxima (candidate walk, row_max's
// element), the canonical sums of exp(x - m) (sum walk; log_softmax keeps their log), then one
// thread per output.
template <typename T>
void forward_rows(const T* x, T* out, const RowsAlongN& R, bool safe, bool log, cudaStream_t s) {
  if (short_rows(R)) {
    forward_short_rows<T><<<blocks_for(R.rows * kWarp), kBlock, 0, s>>>(x, out, R.rows, R.L.n, safe, log);
    check_launch("forward_short_rows");
    return;
  }
  const AlongN<T> xs{x, R.L};
  StreamScratch<T> mx(R.rows, s), sum(R.rows, s);
  pick_each_row<T>(s, MaxTakes{}, R.rows, R.L.n, IndexedAlongN<T>{xs}, StoreValue<T>{mx.get()}, R.cols);
  if (log)
    sum_each_row<T>(s, R.rows, R.L.n, ExpTerms<T>{xs, mx.get(), log}, StoreLog<T>{sum.get()}, R.cols);
  else
    sum_each_row<T>(s, R.rows, R.L.n, ExpTerms<T>{xs, mx.get(), log}, StoreSum<T>{sum.get()}, R.cols);
  for_each_index(s, R.rows * R.L.n, ForwardOut<T>{x, out, mx.get(), sum.get(), R.L, safe, log});
}

// Two passes, as softmax_backward_row / log_softmax_backward_row: G per row (sum walk), then one
// thread per output.
template <typename T>
void backward_rows(const T* g, const T* y, T* out, const RowsAlongN& R, bool log, cudaStream_t s) {
  if (short_rows(R)) {
    backward_short_rows<T><<<blocks_for(R.rows * kWarp), kBlock, 0, s>>>(g, y, out, R.rows, R.L.n, log);
    check_launch("backward_short_rows");
    return;
  }
  StreamScratch<T> G(R.rows, s);
  sum_each_row<T>(s, R.rows, R.L.n, BackwardTerms<T>{{g, R.L}, {y, R.L}, log}, StoreSum<T>{G.get()}, R.cols);
  for_each_index(s, R.rows * R.L.n, BackwardOut<T>{g, y, out, G.get(), R.L, log});
}

void forward(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe, bool log,
             uintptr_t stream) {
  StreamScope scope(stream);
  const RowsAlongN R(outer, n, inner);
  if (R.empty()) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    forward_rows(ptr<const T>(x), ptr<T>(out), R, safe, log, scope.get());
  });
}

void backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool log,
              uintptr_t stream) {
  StreamScope scope(stream);
  const RowsAlongN R(outer, n, inner);
  if (R.empty()) return;
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    backward_rows(ptr<const T>(grad), ptr<const T>(y), ptr<T>(out), R, log, scope.get());
  });
}

}  // namespace

void softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe,
             uintptr_t stream) {
  forward(dtype, x, out, outer, n, inner, safe, false, stream);
}

void log_softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, uintptr_t stream) {
  forward(dtype, x, out, outer, n, inner, false, true, stream);
}

void softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                      uintptr_t stream) {
  backward(dtype, grad, y, out, outer, n, inner, false, stream);
}

void log_softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n,
                          int64_t inner, uintptr_t stream) {
  backward(dtype, grad, y, out, outer, n, inner, true, stream);
}

// 'none': one thread per row i (thread 0 also writes total_weight = 0). 'mean'/'sum': one sum
// walk over two rows of N terms (the losses and the weights: the CPU's two canonical sums),
// then one thread writes total_weight and the reduced loss.
void nll_loss_forward(int dtype, uintptr_t x, int64_t N, int64_t C, int64_t sN, int64_t sC, uintptr_t target,
                      int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index, uintptr_t out,
                      int64_t s_out, uintptr_t total_weight, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const NllRows<T> rows{ptr<const T>(x),      sN,          sC, ptr<const int64_t>(target), s_target, C,
                          ptr<const T>(weight), ignore_index};
    if (reduction == 0) {
      if (N <= 0) {  // total_weight is still written
        for_each_index(scope.get(), 1, Fill<T>{ptr<T>(total_weight), T(0.0)});
        return;
      }
      for_each_index(scope.get(), N, NllNone<T>{rows, ptr<T>(out), s_out, ptr<T>(total_weight)});
      return;
    }
    StreamScratch<T> sums(2, scope.get());
    sum_each_row<T>(scope.get(), 2, N, NllSums<T>{rows}, StoreSum<T>{sums.get()});
    nll_reduce_finish<<<1, 1, 0, scope.get()>>>(sums.get(), reduction, ptr<T>(out), ptr<T>(total_weight));
    check_launch("nll_reduce_finish");
  });
}

// One thread per row i: the gradient at [i, t_i] (grad_input is already zero). total_weight is
// read on the device. N == 0 writes nothing (the caller returns before the CPU twin too).
void nll_loss_backward(int dtype, uintptr_t grad_input, int64_t N, int64_t C, uintptr_t grad, int64_t s_grad,
                       uintptr_t target, int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index,
                       uintptr_t total_weight, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    for_each_index(scope.get(), N,
                   NllBackward<T>{ptr<T>(grad_input), C, ptr<const T>(grad), s_grad, ptr<const int64_t>(target),
                                  s_target, ptr<const T>(weight), reduction, ignore_index, ptr<const T>(total_weight)});
  });
}

}  // namespace repmode::cuda

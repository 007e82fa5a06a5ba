// The GPU walk of the canonical sum order (csrc/common/reduction_order.h) over M rows of N terms,
// shared by csrc/cuda/reduction.cu and csrc/cuda/softmax_loss.cu.
//
// Partitioning: one warp per level-1 chunk (row m, chunk c of 4096 terms): lane l accumulates
// terms l, l+32, ... of the chunk in increasing order from the operation's identity, then the
// lanes meet in lane_tree's halving tree (v[i] = v[i] op v[i+h], h = 16, 8, 4, 2, 1) through
// __shfl_down_sync. Rows with more than one chunk write their chunk values to a scratch buffer
// (cudaMallocAsync on the stream, M * chunks values), and the next level runs the same kernel
// over those values, until one value per row is left: the levels of finish_from_chunks. So a
// few long rows spread over the whole GPU, many short rows give one warp each, and the bits are
// canonical_sum's (or canonical_prod's) whatever the grid. Column-like layouts run level 1 with a
// thread per chunk instead (chunk_level_by_thread), for coalesced loads; same lanes, same tree.
//
// Arg-reductions (first extreme index, row_max) use the same walk with (value, index)
// candidates: the combine keeps the earlier candidate unless the shared scan predicate
// (extreme_takes / max_takes) says the later one replaces it, so any tree picks the sequential
// scan's element.
#pragma once

#include <utility>

#include "../common/softmax_loss.h"
#include "../common/reduction_order.h"
#include "../common/reduction.h"
#include "runtime.cuh"

namespace repmode::cuda {

constexpr int kWarp = 32;
static_assert(kSumLanes == kWarp, "a warp's lanes are the canonical sum's lanes");
static_assert(kBlock % kWarp == 0, "blocks hold whole warps");

// Sum (AddOp) or product (MulOp) of values of type T.
template <typename T, typename Base>
struct TreeOp {
  using V = T;
  __device__ V identity() const { return Base::template identity<T>(); }
  __device__ V apply(V a, V b) const { return Base::apply(a, b); }
};

// A candidate of an arg-reduction: value v at index i of the row; i < 0 means none yet.
template <typename T>
struct Cand {
  T v;
  int64_t i;
};

// Takes(best, later): whether the later element replaces the earlier one in the CPU's scan.
struct ExtremeTakes {
  bool is_max;
  template <typename T>
  __device__ bool operator()(T best, T later) const {
    return extreme_takes(best, later, is_max);
  }
};
struct MaxTakes {
  template <typename T>
  __device__ bool operator()(T m, T later) const {
    return max_takes(m, later);
  }
};

template <typename T, typename Takes>
struct ArgOp {
  using V = Cand<T>;
  Takes takes;
  __device__ V identity() const { return V{T(0), -1}; }
  __device__ V apply(V a, V b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool a_first = a.i < b.i;
    const V& first = a_first ? a : b;
    const V& later = a_first ? b : a;
    return takes(first.v, later.v) ? later : first;
  }
};

__device__ __forceinline__ float shfl_down(float v, int h) { return __shfl_down_sync(0xffffffffu, v, h); }
__device__ __forceinline__ double shfl_down(double v, int h) { return __shfl_down_sync(0xffffffffu, v, h); }
template <typename T>
__device__ __forceinline__ Cand<T> shfl_down(Cand<T> c, int h) {
  const long long i = __shfl_down_sync(0xffffffffu, static_cast<long long>(c.i), h);
  return Cand<T>{shfl_down(c.v, h), static_cast<int64_t>(i)};
}

// Level >= 2: the terms of row m are the chunk values of the level below, n per row.
template <typename V>
struct ScratchLeaf {
  const V* in;
  int64_t n;
  __device__ V operator()(int64_t m, int64_t j) const { return in[m * n + j]; }
};

// One chunk of len <= kSumChunk terms term(0..len) walked by a whole warp: lane l accumulates
// terms l, l+32, ... from the identity, then lane_tree's halving tree. Lane 0 returns the chunk's
// value (the other lanes partial ones); every lane of the warp must call it.
template <typename Op, typename Term>
__device__ __forceinline__ typename Op::V warp_chunk(const Op& op, int lane, int64_t len, const Term& term) {
  typename Op::V v = op.identity();
  for (int64_t i = lane; i < len; i += kWarp) v = op.apply(v, term(i));
  for (int h = kWarp / 2; h >= 1; h /= 2) v = op.apply(v, shfl_down(v, h));  // lane_tree
  return v;
}

// Lane 0's value in every lane of the warp.
template <typename T>
__device__ __forceinline__ T from_lane0(T v) {
  return __shfl_sync(0xffffffffu, v, 0);
}

// One level: task m * C + c (row m, chunk c of the n terms leaf(m, 0..n)) per warp. The chunk
// value goes to out[task], or, at the last level (out == nullptr, C == 1), to fin(m, value).
template <typename Op, typename Leaf, typename Fin>
__global__ void chunk_level(Op op, int64_t M, int64_t n, int64_t C, Leaf leaf, typename Op::V* out, Fin fin) {
  using V = typename Op::V;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t step = grid_stride() / kWarp;
  for (int64_t task = global_thread() / kWarp; task < M * C; task += step) {  // uniform per warp
    const int64_t m = task / C;
    const int64_t begin = (task % C) * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    const V v = warp_chunk(op, lane, len, [&](int64_t i) { return leaf(m, begin + i); });
    if (lane == 0) {
      if (out)
        out[task] = v;
      else
        fin(m, v);
    }
  }
}

// Level 1 when a row's terms lie far apart but neighbouring rows' terms lie side by side
// (columns, sM == 1; softmax rows along n with inner > 1): one thread per task c * M + m runs the
// 32 lanes of chunk_sum itself (lane l adds terms l, l+32, ...; then lane_tree's halving tree),
// so a warp loads 32 neighbouring rows' terms together. The same values as chunk_level.
template <typename Op, typename Leaf, typename Fin>
__global__ void chunk_level_by_thread(Op op, int64_t M, int64_t n, int64_t C, Leaf leaf, typename Op::V* out, Fin fin) {
  using V = typename Op::V;
  for (int64_t task = global_thread(); task < M * C; task += grid_stride()) {
    const int64_t m = task % M;
    const int64_t c = task / M;
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    V v[kWarp];
#pragma unroll
    for (int l = 0; l < kWarp; ++l) v[l] = op.identity();
    // Not unrolled: the term (an exp, a pow) would be inlined 32 times; v lives in local memory.
    for (int64_t i = 0; i < len; ++i) v[i % kWarp] = op.apply(v[i % kWarp], leaf(m, begin + i));
#pragma unroll
    for (int h = kWarp / 2; h >= 1; h /= 2)
#pragma unroll
      for (int l = 0; l < h; ++l) v[l] = op.apply(v[l], v[l + h]);
    if (out)
      out[m * C + c] = v[0];
    else
      fin(m, v[0]);
  }
}

template <typename V, typename Fin>
__global__ void empty_rows(int64_t M, V empty, Fin fin) {
  for (int64_t m = global_thread(); m < M; m += grid_stride()) fin(m, empty);
}

template <typename Op, typename Leaf, typename Fin>
void launch_level(cudaStream_t s, Op op, int64_t M, int64_t n, int64_t C, Leaf leaf, typename Op::V* out, Fin fin,
                  bool by_thread = false) {
  if (by_thread) {
    chunk_level_by_thread<<<blocks_for(M * C), kBlock, 0, s>>>(op, M, n, C, leaf, out, fin);
    check_launch("chunk_level_by_thread");
  } else {
    chunk_level<<<blocks_for(M * C * kWarp), kBlock, 0, s>>>(op, M, n, C, leaf, out, fin);
    check_launch("chunk_level");
  }
}

// Whether level 1 should run a thread per chunk (chunk_level_by_thread): the rows' starts closer
// together than a row's consecutive terms, and enough chunks to fill the GPU with threads (below
// that a warp per chunk keeps more loads in flight). The threshold is a guess, not measured.
constexpr int64_t kMinThreadTasks = 2048;
inline bool columns_layout(int64_t M, int64_t N, int64_t row_stride, int64_t term_stride) {
  const int64_t a = row_stride < 0 ? -row_stride : row_stride;
  const int64_t b = term_stride < 0 ? -term_stride : term_stride;
  return b != 1 && a < b && M * chunk_count(N) >= kMinThreadTasks;
}

// fin(m, r) receives row m's reduction r: the canonical tree over leaf(m, 0..N) with op, or
// `empty` for N == 0 (the caller passes the common formula's value of an empty row). by_thread:
// level 1 runs a thread per chunk (see columns_layout); the higher levels always a warp per chunk.
template <typename Op, typename Leaf, typename Fin>
void reduce_rows(cudaStream_t s, Op op, int64_t M, int64_t N, Leaf leaf, Fin fin, typename Op::V empty,
                 bool by_thread) {
  using V = typename Op::V;
  if (M <= 0) return;
  if (N <= 0) {
    empty_rows<<<blocks_for(M), kBlock, 0, s>>>(M, empty, fin);
    check_launch("empty_rows");
    return;
  }
  int64_t C = chunk_count(N);
  if (C == 1) {
    launch_level(s, op, M, N, 1, leaf, static_cast<V*>(nullptr), fin, by_thread);
    return;
  }
  V* a = nullptr;
  V* b = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&a), sizeof(V) * M * C, s), "cudaMallocAsync");
  check(cudaMallocAsync(reinterpret_cast<void**>(&b), sizeof(V) * M * chunk_count(C), s), "cudaMallocAsync");
  launch_level(s, op, M, N, C, leaf, a, fin, by_thread);
  for (int64_t n = C;; n = C) {  // the levels of finish_from_chunks; sizes only shrink
    C = chunk_count(n);
    launch_level(s, op, M, n, C, ScratchLeaf<V>{a, n}, C == 1 ? static_cast<V*>(nullptr) : b, fin);
    if (C == 1) break;
    std::swap(a, b);
  }
  check(cudaFreeAsync(a, s), "cudaFreeAsync");
  check(cudaFreeAsync(b, s), "cudaFreeAsync");
}

// The load of an empty row (the common formulas' n == 0 values are computed on the host).
template <typename T>
struct NoTerms {
  __host__ __device__ T operator()(int64_t) const { return T(0); }
};

// Canonical sum / product of each row.
template <typename T, typename Leaf, typename Fin>
void sum_each_row(cudaStream_t s, int64_t M, int64_t N, Leaf leaf, Fin fin, bool by_thread = false) {
  reduce_rows(s, TreeOp<T, AddOp>{}, M, N, leaf, fin, canonical_sum<T>(0, NoTerms<T>{}), by_thread);
}
template <typename T, typename Leaf, typename Fin>
void prod_each_row(cudaStream_t s, int64_t M, int64_t N, Leaf leaf, Fin fin, bool by_thread = false) {
  reduce_rows(s, TreeOp<T, MulOp>{}, M, N, leaf, fin, canonical_prod<T>(0, NoTerms<T>{}), by_thread);
}
// The scan's candidate of each row (N > 0); leaf returns Cand{value, j}.
template <typename T, typename Takes, typename Leaf, typename Fin>
void pick_each_row(cudaStream_t s, Takes takes, int64_t M, int64_t N, Leaf leaf, Fin fin, bool by_thread = false) {
  reduce_rows(s, ArgOp<T, Takes>{takes}, M, N, leaf, fin, Cand<T>{T(0), -1}, by_thread);
}

// Common row sinks and element writers.
template <typename T>
struct StoreSum {  // the row's sum, as it is
  T* out;
  __device__ void operator()(int64_t m, T s) const { out[m] = s; }
};
template <typename T>
struct StoreValue {  // the picked candidate's value
  T* out;
  __device__ void operator()(int64_t m, Cand<T> c) const { out[m] = c.v; }
};
template <typename T>
struct Fill {
  T* out;
  T value;
  __device__ void operator()(int64_t e) const { out[e] = value; }
};

// f(e) for every e < total (elementwise passes).
template <typename F>
__global__ void each_index(int64_t total, F f) {
  for (int64_t e = global_thread(); e < total; e += grid_stride()) f(e);
}
template <typename F>
void for_each_index(cudaStream_t s, int64_t total, F f) {
  if (total <= 0) return;
  each_index<<<blocks_for(total), kBlock, 0, s>>>(total, f);
  check_launch("each_index");
}

}  // namespace repmode::cuda

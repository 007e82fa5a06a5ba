// Layer, batch and group normalization on the GPU (csrc/cuda/launchers.h). The twins of
// csrc/cpu/layer_norm.cpp and csrc/cpu/batch_norm.cpp: every per-element step is a function of
// csrc/common/layer_norm.h or csrc/common/batch_norm.h, every sum the canonical Sum order of
// csrc/common/reduce_order.h. Threads only decide who computes which chunk or which output.
//
// All the sums here are "group sums": group r (a row, a channel, an (n, group) pair, a column)
// has M terms t[0..M) in its canonical logical order, and one or two (K) sums are taken over
// them. Two engines compute the level-1 chunk values of every group into a scratch buffer:
//   * segmented: term j = (seg, s) = (j / S, j % S) of group r sits at at(r, seg) + s (rows of
//     layer norm, NCHW batch norm, group norm). One warp per (group, chunk): lane l adds terms
//     l, l+32, ... of the chunk in order (consecutive lanes read consecutive addresses), then
//     the halving tree through __shfl_down_sync (v[i] = v[i] + v[i+h], h = 16 .. 1).
//   * column: term j of column c sits at j * C + c (channels-last batch norm, the weight and
//     bias gradients of layer norm). One block per (tile of 32 columns, chunk): a warp reads a
//     row of 32 adjacent columns (coalesced); thread (w, t) holds lanes w, w+8, w+16, w+24 of
//     column t, each adding its terms in order; the 32 lanes of a column meet in shared memory
//     and lane_tree (the shared function) closes the chunk.
// Then one warp per group finishes the chunk values level by level exactly as
// finish_from_chunks does and hands the group's sums to an epilogue (lane 0). Level-1 work
// spreads over the whole GPU however few the groups are; scratch is K values per chunk,
// allocated on the stream. An empty group (M = 0) sums to +0.0, as on the CPU.
#include <stdexcept>

#include "../common/batch_norm.h"
#include "../common/layer_norm.h"
#include "../common/reduce_order.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

constexpr int kWarp = 32;
static_assert(kSumLanes == kWarp, "a warp is the 32 lanes of a chunk");
constexpr int kWarpsPerBlock = kBlock / kWarp;
constexpr int kLanesPerThread = kSumLanes / kWarpsPerBlock;  // column engine
static_assert(kLanesPerThread * kWarpsPerBlock == kSumLanes, "kBlock must be a multiple of 32, at most 1024");

// Blocks for n warps' worth of items.
inline unsigned warp_blocks(int64_t n) { return blocks_for(n * kWarp); }

// The halving tree of lane_tree over the 32 lane values of a warp; lane 0 ends with v[0].
template <typename T>
__device__ __forceinline__ T warp_lane_tree(T v) {
  for (int h = kSumLanes / 2; h >= 1; h /= 2) {
    const T upper = __shfl_down_sync(0xffffffffu, v, h);
    v = v + upper;
  }
  return v;
}

// finish_from_chunks over v[0..count) by one warp (v is overwritten): each next-level chunk
// is summed by the 32 lanes and the tree, in order; chunk c reads v[c*4096..] and its value
// goes to v[c], which no later chunk of the level reads. Valid in lane 0; count 0 gives +0.0.
template <typename T>
__device__ T warp_finish(T* v, int64_t count) {
  const int lane = threadIdx.x % kWarp;
  if (count == 0) return T(0.0);
  while (count > 1) {
    const int64_t next = chunk_count(count);
    for (int64_t c = 0; c < next; ++c) {
      const int64_t end = count < (c + 1) * kSumChunk ? count : (c + 1) * kSumChunk;
      T acc = T(-0.0);
      for (int64_t j = c * kSumChunk + lane; j < end; j += kWarp) acc = acc + v[j];
      acc = warp_lane_tree(acc);
      if (lane == 0) v[c] = acc;
    }
    __syncwarp();
    count = next;
  }
  return v[0];
}

// Level 1 of the segmented engine: item = r * chunks + k. Terms: at(r, seg) and
// operator()(offset, r, seg, t) writing the K terms at that offset.
template <typename T, int K, typename Terms>
__global__ void segmented_chunks(int64_t R, int64_t M, int64_t S, int64_t chunks, Terms terms, T* vals0, T* vals1) {
  const int lane = threadIdx.x % kWarp;
  const int64_t seg_step = kWarp / S, s_step = kWarp % S;  // a lane's next term is 32 further on
  const int64_t items = R * chunks;
  for (int64_t item = global_thread() / kWarp; item < items; item += grid_stride() / kWarp) {
    const int64_t r = item / chunks, k = item - r * chunks;
    const int64_t end = M < (k + 1) * kSumChunk ? M : (k + 1) * kSumChunk;
    T acc0 = T(-0.0), acc1 = T(-0.0);
    int64_t j = k * kSumChunk + lane;
    int64_t seg = j / S, s = j - seg * S;
    for (; j < end; j += kWarp) {
      T t[2];
      terms(terms.at(r, seg) + s, r, seg, t);
      acc0 = acc0 + t[0];
      if constexpr (K == 2) acc1 = acc1 + t[1];
      seg += seg_step;
      s += s_step;
      if (s >= S) {
        s -= S;
        ++seg;
      }
    }
    acc0 = warp_lane_tree(acc0);
    if constexpr (K == 2) acc1 = warp_lane_tree(acc1);
    if (lane == 0) {
      vals0[item] = acc0;
      if constexpr (K == 2) vals1[item] = acc1;
    }
  }
}

// Level 1 of the column engine: item = tile * chunks + k, chunk values at [c * chunks + k].
// Terms: operator()(offset, c, j, t).
template <typename T, int K, typename Terms>
__global__ void column_chunks(int64_t C, int64_t M, int64_t chunks, Terms terms, T* vals0, T* vals1) {
  __shared__ T lanes[K][kSumLanes][kWarp + 1];
  const int t = threadIdx.x % kWarp, w = threadIdx.x / kWarp;
  const int64_t items = (C + kWarp - 1) / kWarp * chunks;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t tile = item / chunks, k = item - tile * chunks;
    const int64_t c = tile * kWarp + t;
    const int64_t j0 = k * kSumChunk, end = M < j0 + kSumChunk ? M : j0 + kSumChunk;
    T acc[K][kLanesPerThread];
    for (int q = 0; q < kLanesPerThread; ++q)
      for (int u = 0; u < K; ++u) acc[u][q] = T(-0.0);
    if (c < C)
      for (int64_t row = j0; row < end; row += kSumLanes)
        for (int q = 0; q < kLanesPerThread; ++q) {
          const int64_t j = row + w + q * kWarpsPerBlock;  // lane w + 8q of the chunk
          if (j >= end) break;
          T v[2];
          terms(j * C + c, c, j, v);
          for (int u = 0; u < K; ++u) acc[u][q] = acc[u][q] + v[u];
        }
    for (int q = 0; q < kLanesPerThread; ++q)
      for (int u = 0; u < K; ++u) lanes[u][w + q * kWarpsPerBlock][t] = acc[u][q];
    __syncthreads();
    if (w == 0 && c < C) {
      T* out[2] = {vals0, vals1};
      for (int u = 0; u < K; ++u) {
        T v[kSumLanes];
        for (int l = 0; l < kSumLanes; ++l) v[l] = lanes[u][l][t];
        out[u][c * chunks + k] = lane_tree<T>(v);
      }
    }
    __syncthreads();
  }
}

// One warp per group: the group's K sums from its chunk values, to epi(r, sum0, sum1).
template <typename T, int K, typename Epilogue>
__global__ void finish_groups(int64_t R, int64_t chunks, T* vals0, T* vals1, Epilogue epi) {
  for (int64_t r = global_thread() / kWarp; r < R; r += grid_stride() / kWarp) {
    const T s0 = warp_finish(vals0 + r * chunks, chunks);
    const T s1 = K == 2 ? warp_finish(vals1 + r * chunks, chunks) : T(0.0);
    if (threadIdx.x % kWarp == 0) epi(r, s0, s1);
  }
}

// The K sums of R groups of M terms each, handed to epi: the segmented engine (S: segment
// length) or, with kColumns, the column engine (R columns of an M x R row-major block).
template <typename T, int K, bool kColumns, typename Terms, typename Epilogue>
void group_sums(cudaStream_t stream, int64_t R, int64_t M, int64_t S, const Terms& terms, const Epilogue& epi) {
  if (R <= 0) return;
  const int64_t chunks = M > 0 ? chunk_count(M) : 0;
  StreamScratch<T> vals(K * R * chunks, stream);
  T* v0 = vals.get();
  T* v1 = K == 2 ? v0 + R * chunks : nullptr;
  if (chunks > 0) {
    if constexpr (kColumns) {
      const int64_t items = (R + kWarp - 1) / kWarp * chunks;
      column_chunks<T, K><<<blocks_for(items, 1), kBlock, 0, stream>>>(R, M, chunks, terms, v0, v1);
      check_launch("column_chunks");
    } else {
      segmented_chunks<T, K><<<warp_blocks(R * chunks), kBlock, 0, stream>>>(R, M, S > 0 ? S : 1, chunks, terms,
                                                                              v0, v1);
      check_launch("segmented_chunks");
    }
  }
  finish_groups<T, K><<<warp_blocks(R), kBlock, 0, stream>>>(R, chunks, v0, v1, epi);
  check_launch("finish_groups");
}

// Batch norm's per-channel sums in either layout (terms at(c, n) for NCHW).
template <typename T, int K, typename Terms, typename Epilogue>
void channel_sums(cudaStream_t stream, int64_t C, int64_t M, int64_t S, bool channels_last, const Terms& terms,
                  const Epilogue& epi) {
  if (channels_last)
    group_sums<T, K, true>(stream, C, M, 0, terms, epi);
  else
    group_sums<T, K, false>(stream, C, M, S, terms, epi);
}

// f(i) for i < n, one thread each (grid-stride).
template <typename F>
__global__ void for_each_index(int64_t n, F f) {
  for (int64_t i = global_thread(); i < n; i += grid_stride()) f(i);
}

template <typename F>
void launch_each(cudaStream_t stream, int64_t n, const F& f) {
  if (n <= 0) return;
  for_each_index<<<blocks_for(n), kBlock, 0, stream>>>(n, f);
  check_launch("for_each_index");
}

// ---------------------------------------------------------------- layout and terms

// Group r = rows of D elements, each segment (seg) S long: r * D + seg * S.
struct RowsAt {
  int64_t D, S;
  __device__ int64_t at(int64_t r, int64_t seg) const { return r * D + seg * S; }
};

// Channel c of an NCHW (N, C, S) tensor, segment n: (n * C + c) * S.
struct ChannelAt {
  int64_t C, S;
  __device__ int64_t at(int64_t c, int64_t n) const { return (n * C + c) * S; }
};

template <typename T, typename At>
struct LoadTerm : At {
  const T* x;
  __device__ void operator()(int64_t o, int64_t, int64_t, T* t) const { t[0] = x[o]; }
};

// Squared deviation from the group's mean (batch/group norm).
template <typename T, typename At>
struct NormSqTerm : At {
  const T* x;
  const T* mean;
  __device__ void operator()(int64_t o, int64_t r, int64_t, T* t) const { t[0] = norm_sq_term<T>(x[o], mean[r]); }
};

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

// dw, db (either may be null) from the column sums.
template <typename T>
struct CanonPairEpi {
  T* out0;
  T* out1;
  __device__ void operator()(int64_t r, T s0, T s1) const {
    if (out0) out0[r] = canon(s0);
    if (out1) out1[r] = canon(s1);
  }
};

// ---------------------------------------------------------------- batch norm

template <typename T>
struct BnMeanEpi {
  T* mean;
  int64_t M;
  __device__ void operator()(int64_t c, T s, T) const { mean[c] = norm_mean<T>(s, M); }
};

// The training statistics of channel c, as the CPU's channel_stats.
template <typename T>
struct BnTrainEpi {
  const T* mean;
  T* invstd;
  T* save_mean;
  T* save_invstd;
  T* running_mean;
  T* running_var;
  int64_t M;
  T eps;
  double momentum;
  __device__ void operator()(int64_t c, T q, T) const {
    invstd[c] = norm_invstd<T>(norm_var<T>(q, M), eps);
    if (save_mean) save_mean[c] = canon(mean[c]);
    if (save_invstd) save_invstd[c] = canon(invstd[c]);
    if (running_mean) running_mean[c] = norm_running_update<T>(running_mean[c], double(mean[c]), momentum);
    if (running_var) running_var[c] = norm_running_update<T>(running_var[c], norm_unbiased_var<T>(q, M), momentum);
  }
};

// Evaluation: the running statistics normalize.
template <typename T>
struct BnEvalStats {
  const T* running_mean;
  const T* running_var;
  T* mean;
  T* invstd;
  T eps;
  __device__ void operator()(int64_t c) const {
    mean[c] = running_mean[c];
    invstd[c] = norm_invstd<T>(running_var[c], eps);
  }
};

// Channel of element o: (n, s, c) for channels-last, else (n, c, s).
struct BnChannel {
  int64_t C, S;
  bool channels_last;
  __device__ int64_t operator()(int64_t o) const { return channels_last ? o % C : (o / S) % C; }
};

template <typename T>
struct BnOutput {
  const T* x;
  const T* w;
  const T* b;
  const T* mean;
  const T* invstd;
  T* y;
  BnChannel channel;
  __device__ void operator()(int64_t o) const {
    const int64_t c = channel(o);
    y[o] = norm_affine<T>(norm_xhat<T>(x[o], mean[c], invstd[c]), w ? w[c] : T(1.0), b ? b[c] : T(-0.0));
  }
};

// The statistics the backward uses and the scale invstd * w, per channel.
template <typename T>
struct BnBackwardStats {
  const T* mean;
  const T* invstd;
  const T* running_mean;
  const T* running_var;
  const T* w;
  bool train;
  T eps;
  T* m;
  T* is;
  T* scale;
  __device__ void operator()(int64_t c) const {
    m[c] = train ? mean[c] : running_mean[c];
    is[c] = train ? invstd[c] : norm_invstd<T>(running_var[c], eps);
    scale[c] = norm_times_weight<T>(is[c], w ? w[c] : T(1.0));
  }
};

// The two gradient sums' terms: dy and dy * xhat (group = channel).
template <typename T, typename At>
struct BnGradTerms : At {
  const T* dy;
  const T* x;
  const T* mean;
  const T* invstd;
  __device__ void operator()(int64_t o, int64_t c, int64_t, T* t) const {
    t[0] = dy[o];
    t[1] = norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mean[c], invstd[c]));
  }
};

// The two gradient sums: dw, db (either may be null) and their means k1, k2 (batch norm per
// channel, group norm per (n, group) with dw = db = null).
template <typename T>
struct GradSumsEpi {
  T* dw;
  T* db;
  T* k1;
  T* k2;
  int64_t M;
  __device__ void operator()(int64_t c, T sg, T sgx) const {
    if (dw) dw[c] = canon(sgx);
    if (db) db[c] = canon(sg);
    k1[c] = norm_mean<T>(sg, M);
    k2[c] = norm_mean<T>(sgx, M);
  }
};

template <typename T>
struct BnDx {
  const T* dy;
  const T* x;
  const T* mean;
  const T* invstd;
  const T* scale;
  const T* k1;
  const T* k2;
  T* dx;
  bool train;
  BnChannel channel;
  __device__ void operator()(int64_t o) const {
    const int64_t c = channel(o);
    dx[o] = train ? norm_dx_batch_stats<T>(dy[o], norm_xhat<T>(x[o], mean[c], invstd[c]), k1[c], k2[c], scale[c])
                  : norm_dx_fixed_stats<T>(dy[o], scale[c]);
  }
};

// ---------------------------------------------------------------- group norm

template <typename T>
struct GnStatsEpi {
  T* mean;
  T* rstd;
  int64_t D;
  T eps;
  __device__ void operator()(int64_t r, T q, T) const {
    rstd[r] = canon(norm_invstd<T>(norm_var<T>(q, D), eps));
    mean[r] = canon(mean[r]);
  }
};

template <typename T>
struct GnOutput {
  const T* x;
  const T* w;
  const T* b;
  const T* mean;
  const T* rstd;
  T* y;
  int64_t C, HxW, D;
  __device__ void operator()(int64_t o) const {
    const int64_t r = o / D, c = (o / HxW) % C;
    y[o] = norm_affine<T>(norm_xhat<T>(x[o], mean[r], rstd[r]), w ? w[c] : T(1.0), b ? b[c] : T(-0.0));
  }
};

// Group r = (n, g), segment i = its i-th channel: g = dy * w_c and g * xhat.
template <typename T>
struct GnDxTerms : RowsAt {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  int64_t G, Cg;
  __device__ void operator()(int64_t o, int64_t r, int64_t i, T* t) const {
    const T g = norm_times_weight<T>(dy[o], w ? w[(r % G) * Cg + i] : T(1.0));
    t[0] = g;
    t[1] = norm_g_xhat<T>(g, norm_xhat<T>(x[o], mean[r], rstd[r]));
  }
};

template <typename T>
struct GnDx {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  const T* k1;
  const T* k2;
  T* dx;
  int64_t C, HxW, D;
  __device__ void operator()(int64_t o) const {
    const int64_t r = o / D, c = (o / HxW) % C;
    const T g = norm_times_weight<T>(dy[o], w ? w[c] : T(1.0));
    dx[o] = norm_dx_batch_stats<T>(g, norm_xhat<T>(x[o], mean[r], rstd[r]), k1[r], k2[r], rstd[r]);
  }
};

// Channel c, segment n: dy and dy * xhat with the statistics of group (n, c / Cg).
template <typename T>
struct GnParamTerms : ChannelAt {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  int64_t G, Cg;
  __device__ void operator()(int64_t o, int64_t c, int64_t n, T* t) const {
    const int64_t r = n * G + c / Cg;
    t[0] = norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mean[r], rstd[r]));  // -> dw (CanonPairEpi's first)
    t[1] = dy[o];                                                          // -> db
  }
};

}  // namespace

// Rows: pass 1 (row sums -> mean), pass 2 (sums of squared deviations -> rstd, mean and rstd
// canonicalized) through the segmented engine, each row's chunks spread over warps; then one
// thread per element for y. The CPU's per-row steps in the same order.
void layer_norm_forward(int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps,
                        uintptr_t y, uintptr_t mean, uintptr_t rstd, uintptr_t stream, bool reference) {
  if (reference) throw std::invalid_argument("repmode._C_cuda: layer_norm_forward has no reference on CUDA");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const RowsAt rows{N, N};
    group_sums<T, 1, false>(st, M, N, N, LoadTerm<T, RowsAt>{rows, ptr<const T>(x)},
                     LnMeanEpi<T>{ptr<T>(mean), N});
    group_sums<T, 1, false>(st, M, N, N, LnSqTerm<T>{rows, ptr<const T>(x), ptr<const T>(mean)},
                     LnStatsEpi<T>{ptr<T>(mean), ptr<T>(rstd), N, T(eps)});
    launch_each(st, M * N,
                LnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), ptr<const T>(mean),
                            ptr<const T>(rstd), ptr<T>(y), N});
  });
}

// dx: the row sums A, B through the segmented engine (scratch a, b per row), then one thread
// per element. dw/db: canonical sums down the N columns over the M rows in row order, through
// the column engine (chunks of 4096 rows over blocks; each column's chunk values finished by a
// warp), the order of layer_norm_grad_weight and the CPU's column_sums. M = 0 gives +0.0.
void layer_norm_backward(int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                         int64_t M, int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream,
                         bool reference) {
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
      group_sums<T, 2, true>(st, N, M, 0,
                       LnParamTerms<T>{ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                                       dw != 0},
                       CanonPairEpi<T>{ptr<T>(dw), ptr<T>(db)});
  });
}

// Per channel (few outputs, long sums over N*S): every (channel, chunk) of 4096 terms is a
// work item of the segmented (NCHW) or column (channels-last) engine, the chunk values finished
// per channel by a warp whose lane 0 also does the CPU's channel_stats (save_*, running
// statistics in float64 by norm_running_update); then one thread per element for y.
void batch_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, bool channels_last,
                        uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                        double eps, uintptr_t save_mean, uintptr_t save_invstd, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (C <= 0) return;
    const cudaStream_t st = scope.get();
    const int64_t M = N * S;
    const T e = T(eps);
    StreamScratch<T> stats(2 * C, st);
    T* mp = stats.get();
    T* ip = mp + C;
    if (training) {
      const ChannelAt at{C, S};
      channel_sums<T, 1>(st, C, M, S, channels_last, LoadTerm<T, ChannelAt>{at, ptr<const T>(x)},
                       BnMeanEpi<T>{mp, M});
      channel_sums<T, 1>(st, C, M, S, channels_last, NormSqTerm<T, ChannelAt>{at, ptr<const T>(x), mp},
                       BnTrainEpi<T>{mp, ip, ptr<T>(save_mean), ptr<T>(save_invstd), ptr<T>(rmean), ptr<T>(rvar), M,
                                     e, momentum});
    } else {
      launch_each(st, C, BnEvalStats<T>{ptr<const T>(rmean), ptr<const T>(rvar), mp, ip, e});
    }
    launch_each(st, M * C,
                BnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), mp, ip, ptr<T>(y),
                            BnChannel{C, S, channels_last}});
  });
}

// Per channel as the forward: the statistics and scale per channel, the two gradient sums
// (dy, dy * xhat) over the engines when any of dw, db, dx-with-batch-statistics needs them,
// then one thread per element of dx.
void batch_norm_backward(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                         double eps, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (C <= 0) return;
    const cudaStream_t st = scope.get();
    const int64_t M = N * S;
    StreamScratch<T> consts(5 * C, st);
    T* mp = consts.get();
    T* ip = mp + C;
    T* sp = ip + C;
    T* k1 = sp + C;
    T* k2 = k1 + C;
    launch_each(st, C,
                BnBackwardStats<T>{ptr<const T>(mean), ptr<const T>(invstd), ptr<const T>(rmean), ptr<const T>(rvar),
                                   ptr<const T>(w), train, T(eps), mp, ip, sp});
    if (dw || db || (dx && train))
      channel_sums<T, 2>(st, C, M, S, channels_last,
                       BnGradTerms<T, ChannelAt>{ChannelAt{C, S}, ptr<const T>(dy), ptr<const T>(x), mp, ip},
                       GradSumsEpi<T>{ptr<T>(dw), ptr<T>(db), k1, k2, M});
    if (dx)
      launch_each(st, M * C,
                  BnDx<T>{ptr<const T>(dy), ptr<const T>(x), mp, ip, sp, k1, k2, ptr<T>(dx), train,
                          BnChannel{C, S, channels_last}});
  });
}

// Per (n, group): its Cg * HxW terms (segments of HxW per channel) through the segmented engine,
// two passes as the CPU (mean written to `mean`, then rstd, both canonicalized), then one
// thread per element for y.
void group_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G,
                        uintptr_t w, uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, uintptr_t stream) {
  if (G <= 0) throw std::invalid_argument("repmode._C_cuda: group_norm_forward needs at least one group");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
    const RowsAt rows{D, HxW};
    group_sums<T, 1, false>(st, R, D, HxW, LoadTerm<T, RowsAt>{rows, ptr<const T>(x)},
                     BnMeanEpi<T>{ptr<T>(mean), D});
    group_sums<T, 1, false>(st, R, D, HxW, NormSqTerm<T, RowsAt>{rows, ptr<const T>(x), ptr<const T>(mean)},
                     GnStatsEpi<T>{ptr<T>(mean), ptr<T>(rstd), D, T(eps)});
    if (D > 0)
      launch_each(st, R * D,
                  GnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), ptr<const T>(mean),
                              ptr<const T>(rstd), ptr<T>(y), C, HxW, D});
  });
}

// dx: per (n, group) sums of g = dy * w and g * xhat (segmented engine), then one thread per
// element. dw/db: per channel over its N segments of HxW (segmented engine, channels as groups).
void group_norm_backward(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                         int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw, uintptr_t db,
                         uintptr_t stream) {
  if (G <= 0) throw std::invalid_argument("repmode._C_cuda: group_norm_backward needs at least one group");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
    if (dx && R > 0 && D > 0) {
      StreamScratch<T> ks(2 * R, st);
      group_sums<T, 2, false>(st, R, D, HxW,
                       GnDxTerms<T>{RowsAt{D, HxW}, ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean),
                                    ptr<const T>(rstd), ptr<const T>(w), G, Cg},
                       GradSumsEpi<T>{nullptr, nullptr, ks.get(), ks.get() + R, D});
      launch_each(st, R * D,
                  GnDx<T>{ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                          ptr<const T>(w), ks.get(), ks.get() + R, ptr<T>(dx), C, HxW, D});
    }
    if (dw || db)
      group_sums<T, 2, false>(st, C, N * HxW, HxW,
                       GnParamTerms<T>{ChannelAt{C, HxW}, ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean),
                                       ptr<const T>(rstd), G, Cg},
                       CanonPairEpi<T>{ptr<T>(dw), ptr<T>(db)});
  });
}

}  // namespace repmode::cuda

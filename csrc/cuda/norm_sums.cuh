// The group-sum engines of the normalization kernels, shared by csrc/cuda/layer_norm.cu and
// csrc/cuda/batch_norm.cu (batch and group norm). Threads only decide who computes which chunk
// or which output; every sum is the canonical Sum order of csrc/common/reduction_order.h.
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
#pragma once

#include <stdexcept>

#include "../common/batch_norm.h"  // norm_sq_term
#include "../common/reduction_order.h"
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
      segmented_chunks<T, K>
          <<<warp_blocks(R * chunks), kBlock, 0, stream>>>(R, M, S > 0 ? S : 1, chunks, terms, v0, v1);
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

}  // namespace
}  // namespace repmode::cuda

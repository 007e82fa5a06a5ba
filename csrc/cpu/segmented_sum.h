// The segmented-sum engine of the CPU batch norm and group norm kernels (csrc/cpu/batch_norm.cpp).
// A group's terms t[0..M) are laid out in memory as segments of S contiguous elements (batch
// norm, NCHW: one segment per n; group norm: one per channel of the group), or, for channels-last
// batch norm, one term per row of C channels. The level-1 chunks (4096 terms) of every group are
// independent work items, so threads split (group, chunk) pairs; each chunk keeps the 32 lanes of
// the Sum order (csrc/common/reduction_order.h): a contiguous run adds its element q to lane
// (j0 + q) mod 32, where j0 is its first term index. Only memory walks live here: every sum is
// the canonical Sum order, whoever computes it.
#pragma once

#include <vector>

#include "../common/reduction_order.h"
#include "parallel.h"
#include "sum_chunk.h"

namespace repmode::cpu::segsum {

constexpr int64_t kLanes = kSumLanes;
constexpr int64_t kColumnBlock = 32;  // channels per column item (channels-last batch norm)

// Segmented groups: group r's term j = (seg, s) = (j / S, j % S) sits at base(r, seg) + s;
// term(o, r, seg) gives the term at memory offset o. K (1 or 2) sums are taken at once.

// Chunk [j0, j1) of group r: the terms, computed run by run into contiguous buffers, then
// summed by the 32 lanes.
template <typename T, int K, typename Base, typename Term0, typename Term1>
REPMODE_INLINE void segmented_chunk(int64_t r, int64_t j0, int64_t j1, int64_t S, const Base& base, const Term0& t0,
                                    const Term1& t1, T* buf0, T* buf1, T* v0, T* v1) {
  int64_t seg = j0 / S, s = j0 - seg * S;
  for (int64_t j = j0; j < j1;) {
    const int64_t len = (S - s < j1 - j) ? S - s : j1 - j;
    const int64_t o = base(r, seg) + s;
    const int64_t sg = seg;
    T* __restrict b0 = buf0 + (j - j0);
    for (int64_t q = 0; q < len; ++q) b0[q] = t0(o + q, r, sg);
    if constexpr (K == 2) {
      T* __restrict b1 = buf1 + (j - j0);
      for (int64_t q = 0; q < len; ++q) b1[q] = t1(o + q, r, sg);
    }
    j += len;
    ++seg;
    s = 0;
  }
  *v0 = contiguous_chunk(buf0, j1 - j0);
  if constexpr (K == 2) *v1 = contiguous_chunk(buf1, j1 - j0);
}

// One thread's scratch: the terms of a chunk and the chunk values of `width` groups.
template <typename T>
struct Scratch {
  std::vector<T> buf0, buf1, vals0, vals1;
  Scratch(int64_t chunks, int64_t width)
      : buf0(kSumChunk), buf1(kSumChunk), vals0(chunks * width + 1), vals1(chunks * width + 1) {}
};

// The K sums of group r, whole, on the calling thread.
template <typename T, int K, typename Base, typename Term0, typename Term1>
REPMODE_INLINE void segmented_group(int64_t r, int64_t M, int64_t S, const Base& base, const Term0& t0, const Term1& t1,
                                    Scratch<T>& sc, T* out0, T* out1) {
  if (M == 0) {
    *out0 = T(0.0);
    if constexpr (K == 2) *out1 = T(0.0);
    return;
  }
  const int64_t chunks = chunk_count(M);
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
    segmented_chunk<T, K>(r, j0, j1, S, base, t0, t1, sc.buf0.data(), sc.buf1.data(), &sc.vals0[k], &sc.vals1[k]);
  }
  *out0 = finish_from_chunks(sc.vals0.data(), chunks);
  if constexpr (K == 2) *out1 = finish_from_chunks(sc.vals1.data(), chunks);
}

// The K sums of R groups with (group, chunk) pairs spread over threads (for few, long groups).
template <typename T, int K, typename Base, typename Term0, typename Term1>
void segmented_sums(int64_t R, int64_t M, int64_t S, const Base& base, const Term0& t0, const Term1& t1, T* out0,
                    T* out1, int nthreads) {
  if (R <= 0) return;
  if (M == 0) {
    for (int64_t r = 0; r < R; ++r) {
      out0[r] = T(0.0);
      if (K == 2) out1[r] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  std::vector<T> vals0(R * chunks), vals1(K == 2 ? R * chunks : 1);
  const int64_t per_item = M < kSumChunk ? M : kSumChunk;
  rows_parallel(R * chunks, nthreads, per_item * K, [&](int64_t i0, int64_t i1) {
    Scratch<T> sc(0, 0);
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t r = item / chunks, k = item - r * chunks;
      const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
      segmented_chunk<T, K>(r, j0, j1, S, base, t0, t1, sc.buf0.data(), sc.buf1.data(), &vals0[item],
                            &vals1[K == 2 ? item : 0]);
    }
  });
  for (int64_t r = 0; r < R; ++r) {
    out0[r] = finish_from_chunks(vals0.data() + r * chunks, chunks);
    if (K == 2) out1[r] = finish_from_chunks(vals1.data() + r * chunks, chunks);
  }
}

// Channels-last batch norm: channel c's term j sits at j*C + c; a block of `width` adjacent
// channels is walked together, lanes[l][w] being lane l of channel c0 + w. term(o, c).
template <typename T, int K, typename Term0, typename Term1>
REPMODE_INLINE void column_chunk(int64_t c0, int64_t width, int64_t j0, int64_t j1, int64_t C, const Term0& t0,
                                 const Term1& t1, T* dst0, T* dst1, int64_t dst_stride) {
  T a[kLanes][kColumnBlock], b[K == 2 ? kLanes : 1][kColumnBlock];
  for (int l = 0; l < kLanes; ++l)
    for (int64_t w = 0; w < kColumnBlock; ++w) {
      a[l][w] = T(-0.0);
      if constexpr (K == 2) b[l][w] = T(-0.0);
    }
  for (int64_t j = j0; j < j1; ++j) {
    T* la = a[j & (kLanes - 1)];
    const int64_t o = j * C + c0;
    if constexpr (K == 1) {
      for (int64_t w = 0; w < width; ++w) la[w] = la[w] + t0(o + w, c0 + w);
    } else {
      T* lb = b[j & (kLanes - 1)];
      for (int64_t w = 0; w < width; ++w) {
        la[w] = la[w] + t0(o + w, c0 + w);
        lb[w] = lb[w] + t1(o + w, c0 + w);
      }
    }
  }
  for (int h = kLanes / 2; h >= 1; h /= 2)
    for (int l = 0; l < h; ++l)
      for (int64_t w = 0; w < width; ++w) {
        a[l][w] = a[l][w] + a[l + h][w];
        if constexpr (K == 2) b[l][w] = b[l][w] + b[l + h][w];
      }
  for (int64_t w = 0; w < width; ++w) {
    dst0[w * dst_stride] = a[0][w];
    if constexpr (K == 2) dst1[w * dst_stride] = b[0][w];
  }
}

// The K sums of channels [c0, c0 + width), whole, on the calling thread.
template <typename T, int K, typename Term0, typename Term1>
REPMODE_INLINE void column_group(int64_t c0, int64_t width, int64_t M, int64_t C, const Term0& t0, const Term1& t1,
                                 Scratch<T>& sc, T* out0, T* out1) {
  if (M == 0) {
    for (int64_t w = 0; w < width; ++w) {
      out0[c0 + w] = T(0.0);
      if constexpr (K == 2) out1[c0 + w] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
    column_chunk<T, K>(c0, width, j0, j1, C, t0, t1, sc.vals0.data() + k, sc.vals1.data() + k, chunks);
  }
  for (int64_t w = 0; w < width; ++w) {
    out0[c0 + w] = finish_from_chunks(sc.vals0.data() + w * chunks, chunks);
    if constexpr (K == 2) out1[c0 + w] = finish_from_chunks(sc.vals1.data() + w * chunks, chunks);
  }
}

// The same with (block, chunk) pairs spread over threads.
template <typename T, int K, typename Term0, typename Term1>
void column_sums(int64_t C, int64_t M, const Term0& t0, const Term1& t1, T* out0, T* out1, int nthreads) {
  if (C <= 0) return;
  if (M == 0) {
    for (int64_t c = 0; c < C; ++c) {
      out0[c] = T(0.0);
      if (K == 2) out1[c] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  const int64_t blocks = (C + kColumnBlock - 1) / kColumnBlock;
  std::vector<T> vals0(C * chunks), vals1(K == 2 ? C * chunks : 1);
  const int64_t per_item = (M < kSumChunk ? M : kSumChunk) * kColumnBlock;
  rows_parallel(blocks * chunks, nthreads, per_item * K, [&](int64_t i0, int64_t i1) {
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t blk = item / chunks, k = item - blk * chunks;
      const int64_t c0 = blk * kColumnBlock;
      const int64_t width = C - c0 < kColumnBlock ? C - c0 : kColumnBlock;
      const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
      column_chunk<T, K>(c0, width, j0, j1, C, t0, t1, vals0.data() + c0 * chunks + k,
                         vals1.data() + (K == 2 ? c0 * chunks + k : 0), chunks);
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    out0[c] = finish_from_chunks(vals0.data() + c * chunks, chunks);
    if (K == 2) out1[c] = finish_from_chunks(vals1.data() + c * chunks, chunks);
  }
}

// Per-channel sums of batch norm in either layout; term(o, c).
template <typename T, int K, typename Term0, typename Term1>
void channel_sums(int64_t N, int64_t C, int64_t S, bool channels_last, const Term0& t0, const Term1& t1, T* out0,
                  T* out1, int nthreads) {
  if (channels_last) {
    column_sums<T, K>(C, N * S, t0, t1, out0, out1, nthreads);
  } else {
    segmented_sums<T, K>(
        C, N * S, S, [&](int64_t c, int64_t n) { return (n * C + c) * S; },
        [&](int64_t o, int64_t c, int64_t) { return t0(o, c); },
        [&](int64_t o, int64_t c, int64_t) { return t1(o, c); }, out0, out1, nthreads);
  }
}

// f(o, c) for every element of an (N, C, S) tensor in either layout (writes its own output).
template <typename F>
void for_each_element(int64_t N, int64_t C, int64_t S, bool channels_last, int nthreads, const F& f) {
  if (channels_last) {
    rows_parallel(N * S, nthreads, C * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < C; ++c) f(r * C + c, c);
    });
  } else {
    rows_parallel(N * C, nthreads, S * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % C, base = r * S;
        for (int64_t s = 0; s < S; ++s) f(base + s, c);
      }
    });
  }
}

template <typename T>
const T* or_fill(const T* p, int64_t n, T value, std::vector<T>& storage) {
  if (p) return p;
  storage.assign(n, value);
  return storage.data();
}

// Whole groups per thread (one pass of threads, the group's data reused from cache between its
// passes) when there are enough groups; otherwise (group, chunk) pairs per thread. Both give
// the same bits: a chunk's value and the finishing tree do not depend on who computes them.
inline bool whole_groups(int64_t groups, int64_t M, int nthreads) { return groups >= nthreads || M < 8 * kSumChunk; }

// Channels per channels-last block: enough blocks for the threads, at most kColumnBlock.
inline int64_t column_width(int64_t C, int nthreads) {
  const int64_t t = nthreads < 1 ? 1 : nthreads;
  int64_t w = (C + t - 1) / t;
  w = (w + 7) / 8 * 8;
  return w < kColumnBlock ? w : kColumnBlock;
}

}  // namespace repmode::cpu::segsum

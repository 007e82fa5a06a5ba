// The canonical summation order of repmode (docs/semantics.md, "Sum order").
//
// A sum of n terms t[0..n) is defined, for every device, thread count and SIMD width, as:
//   * level 1: split t into chunks of kChunk = 4096 consecutive terms; each chunk is summed by
//     kLanes = 32 interleaved lanes (lane l adds t[l], t[l+32], t[l+64], ... in increasing
//     order, starting from -0.0), then the lanes are combined by a fixed halving tree
//     (v[i] += v[i+16] for i < 16, then 8, 4, 2, 1) and v[0] is the chunk's value;
//   * level k+1: the chunk values of level k are summed by the same rule, until one value is left.
//   * n == 0 gives +0.0.
// A CPU evaluates the 32 lanes with 4 AVX2 (or 2 AVX-512) registers; a GPU gives a chunk to a
// warp. Threads only decide who computes which chunk, never the order inside one.
#pragma once

#include "defs.h"

namespace repmode {

constexpr int64_t kSumLanes = 32;
constexpr int64_t kSumChunk = 4096;

// The combining operation of a tree reduction: + for sums (identity -0.0), x for products
// (identity +1.0). The same lanes, chunks and tree serve both.
struct AddOp {
  template <typename T>
  static REPMODE_HD T identity() {
    return T(-0.0);
  }
  template <typename T>
  static REPMODE_HD T apply(T a, T b) {
    return a + b;
  }
};
struct MulOp {
  template <typename T>
  static REPMODE_HD T identity() {
    return T(1.0);
  }
  template <typename T>
  static REPMODE_HD T apply(T a, T b) {
    return a * b;
  }
};

// The fixed halving tree over 32 lane values (destroys v).
template <typename T, typename Op = AddOp>
REPMODE_HD T lane_tree(T* v) {
  for (int h = kSumLanes / 2; h >= 1; h /= 2)
    for (int i = 0; i < h; ++i) v[i] = Op::apply(v[i], v[i + h]);
  return v[0];
}

// One chunk (len <= kSumChunk) of terms load(begin), ..., load(begin + len - 1).
template <typename T, typename Load, typename Op = AddOp>
REPMODE_HD T chunk_sum(int64_t begin, int64_t len, const Load& load) {
  T v[kSumLanes];
  for (int l = 0; l < kSumLanes; ++l) v[l] = Op::template identity<T>();
  for (int64_t i = 0; i < len; ++i) v[i % kSumLanes] = Op::apply(v[i % kSumLanes], load(begin + i));
  return lane_tree<T, Op>(v);
}

// Number of chunk values at the next level for `count` values at this one.
REPMODE_HD int64_t chunk_count(int64_t count) { return (count + kSumChunk - 1) / kSumChunk; }

// Value of node `index` at `level` (level 0 = the terms themselves) over n terms.
template <typename T, typename Load, typename Op = AddOp>
REPMODE_HD T sum_node(int level, int64_t index, int64_t n, const Load& load) {
  if (level == 0) return load(index);
  int64_t below = n;  // number of nodes at level - 1
  for (int l = 1; l < level; ++l) below = chunk_count(below);
  const int64_t begin = index * kSumChunk;
  const int64_t len = (below - begin < kSumChunk) ? below - begin : kSumChunk;
  auto child = [&](int64_t j) { return sum_node<T, Load, Op>(level - 1, j, n, load); };
  return chunk_sum<T, decltype(child), Op>(begin, len, child);
}

// Number of levels above the terms: the smallest L >= 1 with one node at level L.
REPMODE_HD int sum_levels(int64_t n) {
  int levels = 1;
  for (int64_t count = chunk_count(n); count > 1; count = chunk_count(count)) ++levels;
  return levels;
}

// The reference: the canonical sum of load(0..n), written plainly.
template <typename T, typename Load>
REPMODE_HD T canonical_sum(int64_t n, const Load& load) {
  if (n == 0) return T(0.0);
  return sum_node<T, Load, AddOp>(sum_levels(n), 0, n, load);
}

// The canonical product: the same lanes, chunks and tree with x; n == 0 gives +1.0.
template <typename T, typename Load>
REPMODE_HD T canonical_prod(int64_t n, const Load& load) {
  if (n == 0) return T(1.0);
  return sum_node<T, Load, MulOp>(sum_levels(n), 0, n, load);
}

// Reduce already-computed level-1 chunk values (count of them) to the final sum; `values`
// is overwritten. Used by fast paths that compute level 1 in parallel/SIMD.
template <typename T>
REPMODE_HD T finish_from_chunks(T* values, int64_t count) {
  while (count > 1) {
    const int64_t next = chunk_count(count);
    for (int64_t c = 0; c < next; ++c) {
      const int64_t begin = c * kSumChunk;
      const int64_t len = (count - begin < kSumChunk) ? count - begin : kSumChunk;
      values[c] = chunk_sum<T>(begin, len, [&](int64_t j) { return values[j]; });
    }
    count = next;
  }
  return values[0];
}

}  // namespace repmode

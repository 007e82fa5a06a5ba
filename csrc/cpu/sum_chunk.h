// The level-1 value of one contiguous chunk of the canonical Sum order
// (csrc/common/reduction_order.h), written so the compiler keeps the 32 lanes in vector
// registers; each lane's additions stay in order. Shared by the CPU kernels that hold a
// chunk's terms contiguously (reduce.cpp, batch_norm.cpp).
#pragma once

#include <cstdint>

#include "../common/reduction_order.h"
#include "parallel.h"

namespace repmode::cpu {

// Lane l adds p[l], p[l + 32], ... of p[0..len) (len <= kSumChunk) in order, then the fixed tree.
template <typename T>
REPMODE_INLINE T contiguous_chunk(const T* p, int64_t len) {
  T v[kSumLanes];
  for (int l = 0; l < kSumLanes; ++l) v[l] = T(-0.0);
  const int64_t rows = len / kSumLanes;
  for (int64_t r = 0; r < rows; ++r) {
    const T* q = p + r * kSumLanes;
    for (int l = 0; l < kSumLanes; ++l) v[l] = v[l] + q[l];
  }
  for (int64_t i = rows * kSumLanes; i < len; ++i) v[i % kSumLanes] = v[i % kSumLanes] + p[i];
  return lane_tree(v);
}

}  // namespace repmode::cpu

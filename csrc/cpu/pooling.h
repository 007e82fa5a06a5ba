// CPU pooling kernels (max, average, adaptive; 2-d as 3-d with D = 1). The per-output and
// per-input sequences are those of csrc/common/pooling.h; these functions only choose which
// planes or channel lanes a thread computes and how memory is walked.
#pragma once

#include <cstdint>

#include "../common/pooling.h"

namespace repmode::cpu {

using repmode::PoolGeom;  // csrc/common/pooling.h

// out (and, for max kinds, index) from x.
template <typename T>
void pool_forward(const T* x, T* out, int64_t* index, const PoolGeom& g, int nthreads);
// grad_input from grad_output (and, for max kinds, index). grad_input is overwritten.
template <typename T>
void pool_backward(const T* grad_output, const int64_t* index, T* grad_input, const PoolGeom& g, int nthreads);

// The canonical orders as plain loops, one plane at a time (for the tests).
template <typename T>
void pool_forward_reference(const T* x, T* out, int64_t* index, const PoolGeom& g);
template <typename T>
void pool_backward_reference(const T* grad_output, const int64_t* index, T* grad_input, const PoolGeom& g);

}  // namespace repmode::cpu

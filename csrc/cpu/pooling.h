// CPU pooling kernels (max, average, adaptive; 2-d as 3-d with D = 1). The per-output and
// per-input sequences are those of csrc/common/pooling.h; these functions only choose which
// planes or channel lanes a thread computes and how memory is walked.
#pragma once

#include <cstdint>

namespace repmode::cpu {

// Sizes, strides (in elements, order n, c, d, h, w) and arguments of one pooling call.
struct PoolGeom {
  int kind = 0;  // repmode::PoolKind
  int64_t N = 1, C = 1, D = 1, H = 1, W = 1;      // input
  int64_t OD = 1, OH = 1, OW = 1;                  // output
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
  int64_t xs[5] = {0, 0, 0, 0, 0};  // input (forward) / grad_input (backward) strides
  int64_t os[5] = {0, 0, 0, 0, 0};  // output (forward) / grad_output (backward) strides
  int64_t is[5] = {0, 0, 0, 0, 0};  // index strides (max kinds)
};

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

#pragma once
#include <cstdint>

namespace repmode::cpu {

// Along n of contiguous (outer, n, inner) tensors.
template <typename T>
void softmax(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool safe, int nthreads);
template <typename T>
void softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads);
// x and out are contiguous (outer, n, inner); the softmax runs along n.
template <typename T>
void log_softmax(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads);
template <typename T>
void log_softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads);

// reduction: 0 = none, 1 = mean, 2 = sum (torch's Reduction enum).
// none: out[i * s_out] per row; mean/sum: out[0] and total_weight[0].
template <typename T>
void nll_loss_forward(const T* x, int64_t N, int64_t C, int64_t sN, int64_t sC, const int64_t* target, int64_t s_target,
                      const T* weight, int reduction, int64_t ignore_index, T* out, int64_t s_out, T* total_weight);
// grad_input is contiguous (N, C) and already zero. grad is grad_output (strided for 'none').
template <typename T>
void nll_loss_backward(T* grad_input, int64_t N, int64_t C, const T* grad, int64_t s_grad, const int64_t* target,
                       int64_t s_target, const T* weight, int reduction, int64_t ignore_index, T total_weight);

}  // namespace repmode::cpu

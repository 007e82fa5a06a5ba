// CTC loss on the GPU (csrc/cuda/launchers.h), the twins of csrc/cpu/ctc.cpp: one thread per batch
// element (grid-stride), running the per-element routines of csrc/common/ctc.h — the same
// sequence of operations as the CPU's thread for that element. The float64 alpha/beta/label
// scratch lives in stream-ordered device memory. One thread per sequence is slow for long
// sequences (the recursion over t is sequential by definition); it is the reference-faithful form.
#include "../common/ctc.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// alpha: B blocks of T * S_max doubles.
template <typename T>
__global__ void ctc_forward_kernel(CtcBatch a, const T* lp, int64_t S_max, T* nll, T* log_alpha, double* alpha) {
  for (int64_t b = global_thread(); b < a.B; b += grid_stride())
    ctc_forward_one<T>(a, lp, b, S_max, nll, log_alpha, alpha + b * a.T * S_max);
}

// alpha, beta: B blocks of T * S_max doubles each; lg: B blocks of C doubles.
template <typename T>
__global__ void ctc_backward_kernel(CtcBatch a, const T* lp, const T* grad_out, int64_t go_stride, bool zero_infinity,
                                    T* grad, double* alpha, double* beta, double* lg, int64_t S_max) {
  for (int64_t b = global_thread(); b < a.B; b += grid_stride())
    ctc_backward_one<T>(a, lp, b, grad_out, go_stride, zero_infinity, grad, alpha + b * a.T * S_max,
                        beta + b * a.T * S_max, lg + b * a.C);
}

}  // namespace

// One thread per batch element (grid-stride).
void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, uintptr_t stream) {
  StreamScope scope(stream);
  const CtcBatch a = CtcBatch::from(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths,
                                    target_lengths, blank);
  by_dtype(dtype, [&](auto zero) {
    using V = decltype(zero);
    if (B <= 0) return;
    StreamScratch<double> alpha(B * T * S_max, scope.get());
    ctc_forward_kernel<V><<<blocks_for(B, 64), 64, 0, scope.get()>>>(a, ptr<const V>(lp), S_max, ptr<V>(nll),
                                                                     ptr<V>(log_alpha), alpha.get());
    check_launch("ctc_forward_kernel");
  });
}

// One thread per batch element (grid-stride).
void ctc_loss_backward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                       int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                       uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, uintptr_t grad_out,
                       int64_t S_max, int64_t go_stride, bool zero_infinity, uintptr_t grad, uintptr_t stream) {
  StreamScope scope(stream);
  const CtcBatch a = CtcBatch::from(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths,
                                    target_lengths, blank);
  by_dtype(dtype, [&](auto zero) {
    using V = decltype(zero);
    if (B <= 0) return;
    StreamScratch<double> alpha(B * T * S_max, scope.get());
    StreamScratch<double> beta(B * T * S_max, scope.get());
    StreamScratch<double> lg(B * C, scope.get());
    ctc_backward_kernel<V><<<blocks_for(B, 64), 64, 0, scope.get()>>>(a, ptr<const V>(lp), ptr<const V>(grad_out),
                                                                      go_stride, zero_infinity, ptr<V>(grad),
                                                                      alpha.get(), beta.get(), lg.get(), S_max);
    check_launch("ctc_backward_kernel");
  });
}

}  // namespace repmode::cuda

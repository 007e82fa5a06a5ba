// CTC loss on the GPU (csrc/cuda/launchers.h), the twins of csrc/cpu/ctc.cpp: one thread per batch
// element (grid-stride), running the per-sequence routines of csrc/common/ctc.h — the same
// sequence of operations as the CPU's thread for that element. The float64 alpha/beta/label
// scratch lives in stream-ordered device memory. One thread per sequence is slow for long
// sequences (the recursion over t is sequential by definition); it is the reference-faithful form.
#include "../common/ctc.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

struct CtcArgs {
  int64_t T, B, C;
  int64_t lp_ts, lp_bs, lp_cs;
  const int64_t* targets;
  const int64_t* tg_offsets;
  int64_t tg_stride;
  const int64_t* input_lengths;
  const int64_t* target_lengths;
  int64_t blank;
};

// alpha: B blocks of T * S_max doubles (sequence b uses the first Tb * (2L + 1) of its block).
template <typename T>
__global__ void ctc_forward_kernel(CtcArgs a, const T* lp, int64_t S_max, T* nll, T* log_alpha, double* alpha) {
  for (int64_t b = global_thread(); b < a.B; b += grid_stride()) {
    const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
    T* la = log_alpha + b * a.T * S_max;
    double* al = alpha + b * a.T * S_max;
    for (int64_t i = 0; i < a.T * S_max; ++i) la[i] = T(ctc_neg_inf());
    if (Tb > 0) {
      const CtcProbs<T> probs{lp + b * a.lp_bs, a.lp_ts, a.lp_cs};
      const CtcTarget tg{a.targets + a.tg_offsets[b], a.tg_stride, a.blank};
      ctc_alpha<T>(probs, tg, Tb, L, al);
      for (int64_t t = 0; t < Tb; ++t)
        for (int64_t s = 0; s < S; ++s) la[t * S_max + s] = canon(T(al[t * S + s]));
    }
    nll[b] = canon(T(ctc_nll(al, Tb, L)));
  }
}

// alpha, beta: B blocks of T * S_max doubles each; lg: B blocks of C doubles. grad (T, B, C) contiguous.
template <typename T>
__global__ void ctc_backward_kernel(CtcArgs a, const T* lp, const T* grad_out, int64_t go_stride, bool zero_infinity,
                                    T* grad, double* alpha, double* beta, double* lg, int64_t S_max) {
  for (int64_t b = global_thread(); b < a.B; b += grid_stride()) {
    const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b];
    T* g = grad + b * a.C;
    const int64_t g_ts = a.B * a.C;
    if (Tb > 0) {
      double* al = alpha + b * a.T * S_max;
      double* be = beta + b * a.T * S_max;
      const CtcProbs<T> probs{lp + b * a.lp_bs, a.lp_ts, a.lp_cs};
      const CtcTarget tg{a.targets + a.tg_offsets[b], a.tg_stride, a.blank};
      ctc_alpha<T>(probs, tg, Tb, L, al);
      const double nll = ctc_nll(al, Tb, L);
      if (!(zero_infinity && T(nll) == T(-ctc_neg_inf()))) {
        ctc_beta<T>(probs, tg, Tb, L, be);
        const double gr = double(grad_out[b * go_stride]);
        for (int64_t t = 0; t < Tb; ++t)
          ctc_grad_row<T>(probs, tg, t, L, a.C, al, be, nll, gr, lg + b * a.C, g + t * g_ts, 1);
      } else {
        for (int64_t t = 0; t < Tb; ++t)
          for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
      }
    }
    for (int64_t t = Tb; t < a.T; ++t)
      for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
  }
}

CtcArgs ctc_args(int64_t T, int64_t B, int64_t C, int64_t lp_ts, int64_t lp_bs, int64_t lp_cs, uintptr_t targets,
                 uintptr_t tg_offsets, int64_t tg_stride, uintptr_t input_lengths, uintptr_t target_lengths,
                 int64_t blank) {
  return CtcArgs{T,
                 B,
                 C,
                 lp_ts,
                 lp_bs,
                 lp_cs,
                 ptr<const int64_t>(targets),
                 ptr<const int64_t>(tg_offsets),
                 tg_stride,
                 ptr<const int64_t>(input_lengths),
                 ptr<const int64_t>(target_lengths),
                 blank};
}

}  // namespace

// One thread per batch element (grid-stride).
void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, uintptr_t stream) {
  StreamScope scope(stream);
  const CtcArgs a =
      ctc_args(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths, target_lengths, blank);
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
  const CtcArgs a =
      ctc_args(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths, target_lengths, blank);
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

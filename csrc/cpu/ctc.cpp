// CTC loss on the CPU: batch elements are distributed over threads, each computed whole by the
// per-element routines of csrc/common/ctc.h (so the bits of one element never depend on the
// thread count or on the other elements of the batch).
#include <vector>

#include "../common/ctc.h"
#include "dispatch.h"
#include "entry_points.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

// Work of one batch element, for parallel_for's threshold: about 3 exp + 1 log per (t, s).
int64_t ctc_work(const CtcBatch& a) { return a.T * 8 + 1; }

template <typename T>
void ctc_forward(const CtcBatch& a, const T* lp, int64_t S_max, T* nll, T* log_alpha, int nthreads) {
  parallel_for(a.B, nthreads, ctc_work(a) * S_max, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha(size_t(a.T * S_max));
    for (int64_t b = b0; b < b1; ++b) ctc_forward_one<T>(a, lp, b, S_max, nll, log_alpha, alpha.data());
  });
}

template <typename T>
void ctc_backward(const CtcBatch& a, const T* lp, const T* grad_out, int64_t S_max, int64_t go_stride,
                  bool zero_infinity, T* grad, int nthreads) {
  parallel_for(a.B, nthreads, 2 * ctc_work(a) * S_max, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha(size_t(a.T * S_max)), beta(size_t(a.T * S_max)), lg(size_t(a.C));
    for (int64_t b = b0; b < b1; ++b)
      ctc_backward_one<T>(a, lp, b, grad_out, go_stride, zero_infinity, grad, alpha.data(), beta.data(), lg.data());
  });
}

}  // namespace

// ---- entry points (csrc/cpu/entry_points.h) ----

void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, int nthreads) {
  const CtcBatch a = CtcBatch::from(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths,
                                    target_lengths, blank);
  by_dtype(dtype, [&](auto v) {
    using V = decltype(v);
    ctc_forward<V>(a, ptr<const V>(lp), S_max, ptr<V>(nll), ptr<V>(log_alpha), nthreads);
  });
}

void ctc_loss_backward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                       int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                       uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, uintptr_t grad_out,
                       int64_t S_max, int64_t go_stride, bool zero_infinity, uintptr_t grad, int nthreads) {
  const CtcBatch a = CtcBatch::from(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths,
                                    target_lengths, blank);
  by_dtype(dtype, [&](auto v) {
    using V = decltype(v);
    ctc_backward<V>(a, ptr<const V>(lp), ptr<const V>(grad_out), S_max, go_stride, zero_infinity, ptr<V>(grad),
                    nthreads);
  });
}

}  // namespace repmode::cpu

// CTC loss on the CPU: batch elements are distributed over threads, each computed whole by the
// per-sequence routines of csrc/common/ctc.h (so the bits of one element never depend on the
// thread count or on the other elements of the batch).
#include <vector>

#include "../common/ctc.h"
#include "dispatch.h"
#include "entry_points.h"
#include "parallel.h"

namespace repmode::cpu {

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

// Work of one batch element, for parallel_for's threshold: about 3 exp + 1 log per (t, s).
int64_t ctc_work(const CtcArgs& a) { return a.T * 8 + 1; }

template <typename T>
void ctc_forward(const CtcArgs& a, const T* lp, int64_t S_max, T* nll, T* log_alpha, int nthreads) {
  parallel_for(a.B, nthreads, ctc_work(a) * S_max, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
      T* la = log_alpha + b * a.T * S_max;
      for (int64_t i = 0; i < a.T * S_max; ++i) la[i] = T(ctc_neg_inf());
      if (Tb > 0) {
        alpha.resize(size_t(Tb * S));
        const CtcProbs<T> probs{lp + b * a.lp_bs, a.lp_ts, a.lp_cs};
        const CtcTarget tg{a.targets + a.tg_offsets[b], a.tg_stride, a.blank};
        ctc_alpha<T>(probs, tg, Tb, L, alpha.data());
        for (int64_t t = 0; t < Tb; ++t)
          for (int64_t s = 0; s < S; ++s) la[t * S_max + s] = canon(T(alpha[size_t(t * S + s)]));
      }
      nll[b] = canon(T(ctc_nll(alpha.data(), Tb, L)));
    }
  });
}

template <typename T>
void ctc_backward(const CtcArgs& a, const T* lp, const T* grad_out, int64_t S_max, int64_t go_stride,
                  bool zero_infinity, T* grad, int nthreads) {
  parallel_for(a.B, nthreads, 2 * ctc_work(a) * S_max, [&](int64_t b0, int64_t b1) {
    std::vector<double> alpha, beta, lg(size_t(a.C));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
      T* g = grad + b * a.C;  // grad is (T, B, C) contiguous
      const int64_t g_ts = a.B * a.C;
      double nll = ctc_nll(nullptr, 0, L);
      if (Tb > 0) {
        alpha.resize(size_t(Tb * S));
        beta.resize(size_t(Tb * S));
        const CtcProbs<T> probs{lp + b * a.lp_bs, a.lp_ts, a.lp_cs};
        const CtcTarget tg{a.targets + a.tg_offsets[b], a.tg_stride, a.blank};
        ctc_alpha<T>(probs, tg, Tb, L, alpha.data());
        nll = ctc_nll(alpha.data(), Tb, L);
        // zero_infinity zeroes the gradient of a loss whose value (in T) is +inf
        if (!(zero_infinity && T(nll) == T(-ctc_neg_inf()))) {
          ctc_beta<T>(probs, tg, Tb, L, beta.data());
          const double gr = double(grad_out[b * go_stride]);
          for (int64_t t = 0; t < Tb; ++t)
            ctc_grad_row<T>(probs, tg, t, L, a.C, alpha.data(), beta.data(), nll, gr, lg.data(), g + t * g_ts, 1);
        } else {
          for (int64_t t = 0; t < Tb; ++t)
            for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
        }
      }
      for (int64_t t = Tb; t < a.T; ++t)
        for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
    }
  });
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

// ---- entry points (csrc/cpu/entry_points.h) ----

void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, int nthreads) {
  const CtcArgs a =
      ctc_args(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths, target_lengths, blank);
  by_dtype(dtype, [&](auto v) {
    using V = decltype(v);
    ctc_forward<V>(a, ptr<const V>(lp), S_max, ptr<V>(nll), ptr<V>(log_alpha), nthreads);
  });
}

void ctc_loss_backward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                       int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                       uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, uintptr_t grad_out,
                       int64_t S_max, int64_t go_stride, bool zero_infinity, uintptr_t grad, int nthreads) {
  const CtcArgs a =
      ctc_args(T, B, C, lp_ts, lp_bs, lp_cs, targets, tg_offsets, tg_stride, input_lengths, target_lengths, blank);
  by_dtype(dtype, [&](auto v) {
    using V = decltype(v);
    ctc_backward<V>(a, ptr<const V>(lp), ptr<const V>(grad_out), S_max, go_stride, zero_infinity, ptr<V>(grad),
                    nthreads);
  });
}

}  // namespace repmode::cpu

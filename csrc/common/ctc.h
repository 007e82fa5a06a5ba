// CTC loss (docs/semantics.md "CTC loss"): the alpha/beta recursions of Graves et al. (2006) in log
// space, for one batch element, in float64 (float32 log-probabilities widened exactly) with
// repmode's own exp/log (csrc/common/math.h). Everything here is a function of one sequence's
// data only; the CPU kernel runs batch elements on threads (csrc/cpu/ctc.cpp), never splits one,
// and the GPU one thread per element (csrc/cuda/ctc.cu), both through ctc_forward_one / ctc_backward_one.
#pragma once

#include "defs.h"
#include "math.h"

namespace repmode {

REPMODE_HD double ctc_neg_inf() { return double_from_bits(0xfff0000000000000ull); }

// log(exp(a) + exp(b) + exp(c)) in the fixed order of the definition:
//   m = max(a, b, c) (0 if that is -inf); round(round(log(round(round(e^(a-m) + e^(b-m)) + e^(c-m)))) + m)
REPMODE_HD double ctc_lse3(double a, double b, double c) {
  double m = a;
  if (b > m) m = b;
  if (c > m) m = c;
  if (m == ctc_neg_inf()) m = 0.0;
  return repmode_log((repmode_exp(a - m) + repmode_exp(b - m)) + repmode_exp(c - m)) + m;
}

// log(exp(a) + exp(b)): m = max(a, b) (0 if that is -inf); round(log(round(e^(a-m) + e^(b-m))) + m)
REPMODE_HD double ctc_lse2(double a, double b) {
  double m = a > b ? a : b;
  if (m == ctc_neg_inf()) m = 0.0;
  return repmode_log(repmode_exp(a - m) + repmode_exp(b - m)) + m;
}

// The extended target l' of one sequence: blank at even s, target[(s - 1) / 2] at odd s.
struct CtcTarget {
  const int64_t* data;  // the sequence's first label
  int64_t stride;       // between labels, in elements
  int64_t blank;
  REPMODE_HD int64_t at(int64_t s) const { return (s % 2 == 0) ? blank : data[stride * (s / 2)]; }
};

// log-probabilities of one sequence: lp(t, c) = base[t * ts + c * cs], widened exactly.
template <typename T>
struct CtcProbs {
  const T* base;
  int64_t ts, cs;
  REPMODE_HD double at(int64_t t, int64_t c) const { return double(base[t * ts + c * cs]); }
};

// alpha (Tb x S, S = 2L + 1, row-major) of one sequence of input length Tb >= 1:
//   alpha[0][0] = lp(0, blank), alpha[0][1] = lp(0, l'(1)) (L > 0), -inf elsewhere;
//   alpha[t][s] = round(lse3(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2]) + lp(t, l'(s))),
//   the second term -inf for s = 0, the third -inf unless s > 1 and l'(s-2) != l'(s).
template <typename T>
REPMODE_HD void ctc_alpha(const CtcProbs<T>& lp, const CtcTarget& tg, int64_t Tb, int64_t L, double* alpha) {
  const int64_t S = 2 * L + 1;
  for (int64_t s = 0; s < S; ++s) alpha[s] = ctc_neg_inf();
  alpha[0] = lp.at(0, tg.blank);
  if (L > 0) alpha[1] = lp.at(0, tg.at(1));
  for (int64_t t = 1; t < Tb; ++t) {
    const double* prev = alpha + (t - 1) * S;
    double* cur = alpha + t * S;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t l = tg.at(s);
      const double a2 = s > 0 ? prev[s - 1] : ctc_neg_inf();
      const double a3 = (s > 1 && tg.at(s - 2) != l) ? prev[s - 2] : ctc_neg_inf();
      cur[s] = ctc_lse3(prev[s], a2, a3) + lp.at(t, l);
    }
  }
}

// The negative log-likelihood from alpha: Tb = 0: 0 if L = 0, else +inf;
// L = 0: -alpha[Tb-1][0]; else -lse2(alpha[Tb-1][2L], alpha[Tb-1][2L-1]).
REPMODE_HD double ctc_nll(const double* alpha, int64_t Tb, int64_t L) {
  if (Tb == 0) return L == 0 ? 0.0 : -ctc_neg_inf();
  const double* last = alpha + (Tb - 1) * (2 * L + 1);
  if (L == 0) return -last[0];
  return -ctc_lse2(last[2 * L], last[2 * L - 1]);
}

// beta (Tb x S) of one sequence, Tb >= 1: beta[Tb-1][2L] = lp(Tb-1, blank),
// beta[Tb-1][2L-1] = lp(Tb-1, l'(2L-1)) (L > 0), -inf elsewhere;
//   beta[t][s] = round(lse3(beta[t+1][s], beta[t+1][s+1], beta[t+1][s+2]) + lp(t, l'(s))),
//   the second term -inf for s = 2L, the third -inf unless s < 2L - 1 and l'(s+2) != l'(s).
template <typename T>
REPMODE_HD void ctc_beta(const CtcProbs<T>& lp, const CtcTarget& tg, int64_t Tb, int64_t L, double* beta) {
  const int64_t S = 2 * L + 1;
  double* last = beta + (Tb - 1) * S;
  for (int64_t s = 0; s < S; ++s) last[s] = ctc_neg_inf();
  last[2 * L] = lp.at(Tb - 1, tg.blank);
  if (L > 0) last[2 * L - 1] = lp.at(Tb - 1, tg.at(2 * L - 1));
  for (int64_t t = Tb - 2; t >= 0; --t) {
    const double* next = beta + (t + 1) * S;
    double* cur = beta + t * S;
    for (int64_t s = S - 1; s >= 0; --s) {
      const int64_t l = tg.at(s);
      const double b2 = s < 2 * L ? next[s + 1] : ctc_neg_inf();
      const double b3 = (s < 2 * L - 1 && tg.at(s + 2) != l) ? next[s + 2] : ctc_neg_inf();
      cur[s] = ctc_lse3(next[s], b2, b3) + lp.at(t, l);
    }
  }
}

// The gradient row of step t < Tb (C labels) from alpha, beta, the float64 nll and the incoming
// gradient gr: first, per label c, lg[c] = the log of the sum over the s with l'(s) = c of
// e^(alpha[t][s] + beta[t][s]), accumulated over s = 2L, 2L-1, ..., 0 (decreasing s) by
// lg = (lg == -inf) ? ab : lse2(lg, ab), starting from -inf; then
//   grad[c] = round_T(round(round(e^lp - e^(round(round(lg[c] + nll) - lp))) * gr)).
// lg: C doubles of scratch.
template <typename T>
REPMODE_HD void ctc_grad_row(const CtcProbs<T>& lp, const CtcTarget& tg, int64_t t, int64_t L, int64_t C,
                             const double* alpha, const double* beta, double nll, double gr, double* lg, T* grad,
                             int64_t grad_cs) {
  const int64_t S = 2 * L + 1;
  for (int64_t c = 0; c < C; ++c) lg[c] = ctc_neg_inf();
  for (int64_t s = S - 1; s >= 0; --s) {
    const double ab = alpha[t * S + s] + beta[t * S + s];
    double& acc = lg[tg.at(s)];
    acc = (acc == ctc_neg_inf()) ? ab : ctc_lse2(acc, ab);
  }
  for (int64_t c = 0; c < C; ++c) {
    const double p = lp.at(t, c);
    const double v = (repmode_exp(p) - repmode_exp((lg[c] + nll) - p)) * gr;
    grad[c * grad_cs] = canon(T(v));
  }
}

// ---- one batch element, whole: what a CPU thread (csrc/cpu/ctc.cpp) or a GPU thread
// (csrc/cuda/ctc.cu) runs for element b; the backends differ only in where the scratch lives ----

// The batch: log_probs (T, B, C) with strides, the targets (padded (B, max) with stride, or
// concatenated: tg_offsets[b] is element b's first label), the lengths (int64 each).
struct CtcBatch {
  int64_t T, B, C;
  int64_t lp_ts, lp_bs, lp_cs;
  const int64_t* targets;
  const int64_t* tg_offsets;
  int64_t tg_stride;
  const int64_t* input_lengths;
  const int64_t* target_lengths;
  int64_t blank;

  static CtcBatch from(int64_t T, int64_t B, int64_t C, int64_t lp_ts, int64_t lp_bs, int64_t lp_cs, uintptr_t targets,
                       uintptr_t tg_offsets, int64_t tg_stride, uintptr_t input_lengths, uintptr_t target_lengths,
                       int64_t blank) {
    return CtcBatch{T,
                    B,
                    C,
                    lp_ts,
                    lp_bs,
                    lp_cs,
                    reinterpret_cast<const int64_t*>(targets),
                    reinterpret_cast<const int64_t*>(tg_offsets),
                    tg_stride,
                    reinterpret_cast<const int64_t*>(input_lengths),
                    reinterpret_cast<const int64_t*>(target_lengths),
                    blank};
  }
  template <typename T_>
  REPMODE_HD CtcProbs<T_> probs(const T_* lp, int64_t b) const {
    return CtcProbs<T_>{lp + b * lp_bs, lp_ts, lp_cs};
  }
  REPMODE_HD CtcTarget target(int64_t b) const { return CtcTarget{targets + tg_offsets[b], tg_stride, blank}; }
};

// Forward of element b: nll[b] and its (T, S_max) block of log_alpha (-inf outside the path).
// alpha: scratch of at least T * S_max doubles.
template <typename T>
REPMODE_HD void ctc_forward_one(const CtcBatch& a, const T* lp, int64_t b, int64_t S_max, T* nll, T* log_alpha,
                                double* alpha) {
  const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
  T* la = log_alpha + b * a.T * S_max;
  for (int64_t i = 0; i < a.T * S_max; ++i) la[i] = T(ctc_neg_inf());
  if (Tb > 0) {
    ctc_alpha<T>(a.probs(lp, b), a.target(b), Tb, L, alpha);
    for (int64_t t = 0; t < Tb; ++t)
      for (int64_t s = 0; s < S; ++s) la[t * S_max + s] = canon(T(alpha[t * S + s]));
  }
  nll[b] = canon(T(ctc_nll(alpha, Tb, L)));
}

// Backward of element b into grad (T, B, C) contiguous: zero past its input length, and zero
// where zero_infinity is set and its loss (in T) is +inf. alpha, beta: scratch of at least
// T * S_max doubles each; lg: C doubles.
template <typename T>
REPMODE_HD void ctc_backward_one(const CtcBatch& a, const T* lp, int64_t b, const T* grad_out, int64_t go_stride,
                                 bool zero_infinity, T* grad, double* alpha, double* beta, double* lg) {
  const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b];
  T* g = grad + b * a.C;
  const int64_t g_ts = a.B * a.C;
  if (Tb > 0) {
    const CtcProbs<T> probs = a.probs(lp, b);
    const CtcTarget tg = a.target(b);
    ctc_alpha<T>(probs, tg, Tb, L, alpha);
    const double nll = ctc_nll(alpha, Tb, L);
    if (!(zero_infinity && T(nll) == T(-ctc_neg_inf()))) {
      ctc_beta<T>(probs, tg, Tb, L, beta);
      const double gr = double(grad_out[b * go_stride]);
      for (int64_t t = 0; t < Tb; ++t) ctc_grad_row<T>(probs, tg, t, L, a.C, alpha, beta, nll, gr, lg, g + t * g_ts, 1);
    } else {
      for (int64_t t = 0; t < Tb; ++t)
        for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
    }
  }
  for (int64_t t = Tb; t < a.T; ++t)
    for (int64_t c = 0; c < a.C; ++c) g[t * g_ts + c] = T(0);
}

}  // namespace repmode

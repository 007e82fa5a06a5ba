// The softmax_loss family's bits: log_softmax / softmax row formulas and nll_loss.
//
// Row formulas of log_softmax and its backward (docs/semantics.md, "log_softmax").
// A row is n values reached through load(j)/store(j, v); the same code serves every device.
#pragma once

#include "defs.h"
#include "math_overloads.h"
#include "reduction_order.h"

namespace repmode {

// Whether a later element v replaces the running maximum m in row_max: a NaN m is final; a
// NaN v or a larger v wins; ties keep m. A parallel reduction takes the later of two candidates
// exactly when this holds, so it picks row_max's element.
template <typename T>
REPMODE_HD bool max_takes(T m, T v) {
  if (m != m) return false;
  return v > m || v != v;
}

// max with NaN propagation, folded left to right (the value does not depend on the order;
// the fold fixes which of +0/-0 is kept: the first).
template <typename T, typename Load>
REPMODE_HD T row_max(int64_t n, const Load& load) {
  T m = load(0);
  for (int64_t j = 1; j < n; ++j) {
    const T v = load(j);
    if (m != m) break;
    if (max_takes(m, v)) m = v;
  }
  return m;
}

// out[j] = (x[j] - m) - log(S),  m = max(x),  S = canonical sum of exp(x[j] - m).
template <typename T>
REPMODE_HD T log_softmax_term(T x, T m) {
  return exp_of(x - m);
}
template <typename T>
REPMODE_HD T log_softmax_value(T x, T m, T ls) {
  return canon((x - m) - ls);
}

template <typename T, typename Load, typename Store>
REPMODE_HD void log_softmax_row(int64_t n, const Load& x, const Store& out) {
  if (n == 0) return;
  const T m = row_max<T>(n, x);
  const T s = canonical_sum<T>(n, [&](int64_t j) { return log_softmax_term(x(j), m); });
  const T ls = log_of(s);
  for (int64_t j = 0; j < n; ++j) out(j, log_softmax_value(x(j), m, ls));
}

template <typename T>
REPMODE_HD T log_softmax_backward_value(T g, T y, T G) {
  return canon(g - exp_of(y) * G);
}

// grad_in[j] = g[j] - exp(y[j]) * G,  G = canonical sum of g (y is log_softmax's output).
template <typename T, typename LoadG, typename LoadY, typename Store>
REPMODE_HD void log_softmax_backward_row(int64_t n, const LoadG& g, const LoadY& y, const Store& out) {
  const T G = canonical_sum<T>(n, g);
  for (int64_t j = 0; j < n; ++j) out(j, log_softmax_backward_value(g(j), y(j), G));
}

}  // namespace repmode

// nll_loss formulas (docs/semantics.md, "nll_loss"). Rows i < N of a (N, C) input; target t_i;
// optional class weights w. Ignored rows contribute +0 to both sums.
namespace repmode {

// The loss reduction codes (torch's Reduction enum), defined here once (X(python_name,
// enumerator, code)); exported to Python as _C.codes()["Reduction"] (repmode/kernels/losses.py).
// clang-format off
#define REPMODE_REDUCTIONS(X) \
  X(NONE, none, 0)        \
  X(MEAN, mean, 1)        \
  X(SUM,  sum,  2)
// clang-format on

enum class Reduction : int {
#define REPMODE_X(python_name, name, code) name = code,
  REPMODE_REDUCTIONS(REPMODE_X)
#undef REPMODE_X
};

// The loss term of row i: -(w[t] * x[i, t]), or -x[i, t] without weights.
template <typename T>
REPMODE_HD T nll_term(T x_it, const T* weight, int64_t t) {
  return weight ? -(weight[t] * x_it) : -x_it;
}

// The gradient written at [i, t_i]: w[t] * g with g = -(grad / total_weight) for 'mean'
// and g = -grad for 'sum'/'none'.
template <typename T>
REPMODE_HD T nll_grad_value(T grad, const T* weight, int64_t t) {
  return weight ? canon(weight[t] * grad) : canon(grad);
}

// Row i's summed loss term (+0 for an ignored row) and its weight (+0 when ignored, 1 without
// weights). The caller has checked that a non-ignored target lies in [0, C).
template <typename T>
REPMODE_HD T nll_row_term(const T* x, int64_t sN, int64_t sC, int64_t t, const T* weight, int64_t ignore_index,
                          int64_t i) {
  return t == ignore_index ? T(0.0) : nll_term(x[i * sN + t * sC], weight, t);
}
template <typename T>
REPMODE_HD T nll_row_weight(int64_t t, const T* weight, int64_t ignore_index) {
  return t == ignore_index ? T(0.0) : (weight ? weight[t] : T(1.0));
}

// The reduced loss from the canonical sums of the terms and of the weights (reduction 1 =
// mean, 2 = sum).
template <typename T>
REPMODE_HD T nll_reduced(T sum, T total_weight, int reduction) {
  return canon(reduction == 1 ? sum / total_weight : sum);
}

// g of nll_grad_value for 'mean' / 'sum' (grad0 = the scalar grad_output); for 'none' it is
// -grad[i] per row.
template <typename T>
REPMODE_HD T nll_grad_scale(T grad0, T total_weight, int reduction) {
  return reduction == 1 ? -(grad0 / total_weight) : -grad0;
}

}  // namespace repmode

// Row formulas of log_softmax and its backward (docs/semantics.md, "log_softmax").
// A row is n values reached through load(j)/store(j, v); the same code serves every device.
#pragma once

#include "defs.h"
#include "math_overloads.h"
#include "reduce_order.h"

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
REPMODE_HD T log_softmax_term(T x, T m) { return exp_of(x - m); }
template <typename T>
REPMODE_HD T log_softmax_value(T x, T m, T ls) { return canon((x - m) - ls); }

template <typename T, typename Load, typename Store>
REPMODE_HD void log_softmax_row(int64_t n, const Load& x, const Store& out) {
  if (n == 0) return;
  const T m = row_max<T>(n, x);
  const T s = canonical_sum<T>(n, [&](int64_t j) { return log_softmax_term(x(j), m); });
  const T ls = log_of(s);
  for (int64_t j = 0; j < n; ++j) out(j, log_softmax_value(x(j), m, ls));
}

template <typename T>
REPMODE_HD T log_softmax_backward_value(T g, T y, T G) { return canon(g - exp_of(y) * G); }

// grad_in[j] = g[j] - exp(y[j]) * G,  G = canonical sum of g (y is log_softmax's output).
template <typename T, typename LoadG, typename LoadY, typename Store>
REPMODE_HD void log_softmax_backward_row(int64_t n, const LoadG& g, const LoadY& y, const Store& out) {
  const T G = canonical_sum<T>(n, g);
  for (int64_t j = 0; j < n; ++j) out(j, log_softmax_backward_value(g(j), y(j), G));
}

}  // namespace repmode

// Row formulas of the reductions beyond sum (docs/semantics.md, "Reductions"). A row is n
// terms reached through load(j); every formula is a fixed sequence of IEEE operations built on
// the canonical sum order, so it gives the same bits on every device.
#pragma once

#include "defs.h"
#include "log_softmax.h"
#include "math.h"
#include "reduce_order.h"

namespace repmode {

// var and mean: mean = S / n (S the canonical sum); var = canonical sum of (x - mean)^2
// divided by max(0, n - correction). Both passes use the canonical order.
template <typename T, typename Load>
REPMODE_HD void row_var_mean(int64_t n, const Load& load, double correction, T* var, T* mean) {
  const T m = canonical_sum<T>(n, load) / T(n);
  const T ss = canonical_sum<T>(n, [&](int64_t j) {
    const T d = load(j) - m;
    return d * d;
  });
  const double dof = double(n) - correction;
  *mean = canon(m);
  *var = canon(ss / T(dof > 0 ? dof : 0.0));
}

// Total order used by max/min: -0 < +0, and NaN above everything (so the extreme of a row that
// holds a NaN is NaN). Under a total order the extreme does not depend on the evaluation order.
template <typename T>
REPMODE_HD bool total_greater(T a, T b) {
  if (a != a) return b == b;
  if (b != b) return false;
  if (a == b) return bits_of(a) != bits_of(b) && !(bits_of(a) >> (sizeof(T) * 8 - 1));  // +0 > -0
  return a > b;
}

// Index of the first maximum (is_max) or minimum of the row under the total order; NaN wins.
template <typename T, typename Load>
REPMODE_HD int64_t row_arg_extreme(int64_t n, const Load& load, bool is_max) {
  int64_t best = 0;
  T v = load(0);
  for (int64_t j = 1; j < n; ++j) {
    const T x = load(j);
    if (v != v) break;
    const bool better = (x != x) || (is_max ? total_greater(x, v) : (total_greater(v, x)));
    if (better) {
      best = j;
      v = x;
    }
  }
  return best;
}

// logsumexp: m = max(x); m' = m if finite else 0; out = log(canonical sum of exp(x - m')) + m.
template <typename T, typename Load>
REPMODE_HD T row_logsumexp(int64_t n, const Load& load) {
  if (n == 0) return T(-1.0) / T(0.0);  // log(0) = -inf
  const T m = load(row_arg_extreme<T>(n, load, true));
  const T shift = (m - m == T(0.0)) ? m : T(0.0);  // m - m is 0 only for finite m
  const T s = canonical_sum<T>(n, [&](int64_t j) { return exp_of(load(j) - shift); });
  return canon(log_of(s) + m);
}

// softmax: m = max(x); e_j = exp(x_j - m); S = canonical sum of e_j; y_j = e_j / S.
// safe: a row whose every element is -inf gives zeros instead of NaN (_safe_softmax).
template <typename T, typename Load, typename Store>
REPMODE_HD void softmax_row(int64_t n, const Load& x, const Store& out, bool safe) {
  if (n == 0) return;
  const T m = row_max<T>(n, x);
  if (safe && m == T(-1.0) / T(0.0)) {
    for (int64_t j = 0; j < n; ++j) out(j, T(0.0));
    return;
  }
  const T s = canonical_sum<T>(n, [&](int64_t j) { return exp_of(x(j) - m); });
  for (int64_t j = 0; j < n; ++j) out(j, canon(exp_of(x(j) - m) / s));
}

// softmax backward: G = canonical sum of round(g_j * y_j); grad_j = round(y_j * round(g_j - G)).
template <typename T, typename LoadG, typename LoadY, typename Store>
REPMODE_HD void softmax_backward_row(int64_t n, const LoadG& g, const LoadY& y, const Store& out) {
  const T G = canonical_sum<T>(n, [&](int64_t j) { return g(j) * y(j); });
  for (int64_t j = 0; j < n; ++j) out(j, canon(y(j) * (g(j) - G)));
}

// cumsum / cumprod: sequential by definition. out_0 = x_0; out_j = round(out_{j-1} (+|x) x_j).
template <typename T, typename Load, typename Store>
REPMODE_HD void cumulative_row(int64_t n, const Load& x, const Store& out, bool product) {
  if (n == 0) return;
  T acc = x(0);
  out(0, canon(acc));
  for (int64_t j = 1; j < n; ++j) {
    acc = product ? acc * x(j) : acc + x(j);
    out(j, canon(acc));
  }
}

}  // namespace repmode

// Row formulas of the reductions beyond sum (docs/semantics.md, "Reductions"). A row is n
// terms reached through load(j); every formula is a fixed sequence of IEEE operations built on
// the canonical sum order, so it gives the same bits on every device.
#pragma once

#include "batch_norm.h"
#include "defs.h"
#include "softmax_loss.h"
#include "math.h"
#include "reduction_order.h"

namespace repmode {

// var and mean accumulate in float64 (NUMERICS_VERSION 2): with w_j = double(x_j) (exact),
// mean64 = S / n (S the canonical sum of w in float64); Q = canonical sum of round64((w_j -
// mean64)^2); var64 = Q / max(0, n - correction). Outputs: mean = round_T(mean64), var =
// round_T(var64), std = round_T(sqrt64(var64)) (for float32 a correctly rounded sqrt of var64:
// 53 >= 2 * 24 + 2). For float64 data this is the plain two-pass formula in the data's type. A
// float32 mean, rounded before the second pass, biased the variance by (mean - round(mean))^2:
// 2,000x less accurate than native torch (which accumulates in double) at mean 1e6
// (docs/accuracy.md). Both passes use the canonical order. The pieces below are the formula's
// steps, shared by devices that run the two passes apart (csrc/cuda/reduction.cu). The mean and
// the squared deviations are batch_norm.h's norm_mean and norm_sq_term, taken in float64.
REPMODE_HD double var_mean_var(double ss, int64_t n, double correction) {
  const double dof = double(n) - correction;
  return ss / (dof > 0 ? dof : 0.0);
}
// The var (or, when take_sqrt, std) output in T from var64.
template <typename T>
REPMODE_HD T var_or_std(double var, bool take_sqrt) {
  return canon(T(take_sqrt ? sqrt_of(var) : var));
}

template <typename T, typename Load>
REPMODE_HD void row_var_mean(int64_t n, const Load& load, double correction, bool take_sqrt, T* var, T* mean) {
  auto wide = [&](int64_t j) { return double(load(j)); };
  const double m = norm_mean(canonical_sum<double>(n, wide), n);
  const double ss = canonical_sum<double>(n, [&](int64_t j) { return norm_sq_term(wide(j), m); });
  *mean = canon(T(m));
  *var = var_or_std<T>(var_mean_var(ss, n, correction), take_sqrt);
}

// sum / mean: the canonical sum S, divided by n for a mean.
template <typename T>
REPMODE_HD T sum_or_mean(T sum, int64_t n, bool mean) {
  return canon(mean ? sum / T(n) : sum);
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

// Whether a later element x replaces the current extreme `best` in the scan below: a NaN
// best is final (the first NaN wins); a NaN x wins; otherwise x must be strictly beyond best.
// A parallel reduction takes the later of two candidates exactly when this holds, so it picks
// the scan's (first) index.
template <typename T>
REPMODE_HD bool extreme_takes(T best, T x, bool is_max) {
  if (best != best) return false;
  return (x != x) || (is_max ? total_greater(x, best) : total_greater(best, x));
}

// Index of the first maximum (is_max) or minimum of the row under the total order; NaN wins.
template <typename T, typename Load>
REPMODE_HD int64_t row_arg_extreme(int64_t n, const Load& load, bool is_max) {
  int64_t best = 0;
  T v = load(0);
  for (int64_t j = 1; j < n; ++j) {
    const T x = load(j);
    if (v != v) break;
    if (extreme_takes(v, x, is_max)) {
      best = j;
      v = x;
    }
  }
  return best;
}

// logsumexp: m = max(x); m' = m if finite else 0; out = log(canonical sum of exp(x - m')) + m.
template <typename T>
REPMODE_HD T logsumexp_shift(T m) {
  return (m - m == T(0.0)) ? m : T(0.0);
}  // m - m is 0 only for finite m
template <typename T>
REPMODE_HD T logsumexp_term(T x, T shift) {
  return exp_of(x - shift);
}
template <typename T>
REPMODE_HD T logsumexp_result(T s, T m) {
  return canon(log_of(s) + m);
}

template <typename T, typename Load>
REPMODE_HD T row_logsumexp(int64_t n, const Load& load) {
  if (n == 0) return T(-1.0) / T(0.0);  // log(0) = -inf
  const T m = load(row_arg_extreme<T>(n, load, true));
  const T shift = logsumexp_shift(m);
  const T s = canonical_sum<T>(n, [&](int64_t j) { return logsumexp_term(load(j), shift); });
  return logsumexp_result(s, m);
}

// Vector norms by ord: 2 (sqrt of the sum of squares), 1 (sum of |x|), +inf / -inf (max / min
// of |x|, +0 / +inf for an empty row), 0 (count of nonzeros), any other p ((sum |x|^p)^(1/p)).
// The sums use the canonical order; the terms and the final step are the functions below.
template <typename T>
REPMODE_HD T vector_norm_abs(T v) {
  return v < T(0) ? -v : v + T(0);
}

// |x|^p for the general-p norm: exp(p * log|x|) evaluated in float64 with repmode's routines,
// then rounded once to T. Reproducible everywhere; not correctly rounded.
template <typename T>
REPMODE_HD T pow_abs(T x, double p) {
  const double a = x < T(0) ? -double(x) : double(x);
  if (a == 0.0) return T(p > 0 ? 0.0 : (p == 0 ? 1.0 : 1.0 / 0.0));
  return T(repmode_exp(p * repmode_log(a)));
}

REPMODE_HD bool vector_norm_is_extreme(double ord) { return ord == 1.0 / 0.0 || ord == -1.0 / 0.0; }

// The summed term of x for a non-extreme ord.
template <typename T>
REPMODE_HD T vector_norm_term(T v, double ord) {
  if (ord == 2.0) return v * v;
  if (ord == 1.0) return vector_norm_abs(v);
  if (ord == 0.0) return v != T(0) ? T(1) : T(0);
  return pow_abs<T>(v, ord);
}

// The norm from the canonical sum s of the terms (non-extreme ord); not yet canon().
template <typename T>
REPMODE_HD T vector_norm_from_sum(T s, double ord) {
  if (ord == 2.0) return sqrt_of(s);
  if (ord == 1.0 || ord == 0.0) return s;
  return pow_abs<T>(s, 1.0 / ord);
}

template <typename T, typename Load>
REPMODE_HD T row_norm(int64_t n, const Load& load, double ord) {
  const double inf = 1.0 / 0.0;
  auto abs_at = [&](int64_t j) { return vector_norm_abs(load(j)); };
  T r;
  if (vector_norm_is_extreme(ord)) {
    r = n == 0 ? T(ord == inf ? 0.0 : inf) : abs_at(row_arg_extreme<T>(n, abs_at, ord == inf));
  } else {
    r = vector_norm_from_sum(canonical_sum<T>(n, [&](int64_t j) { return vector_norm_term(load(j), ord); }), ord);
  }
  return canon(r);
}

// softmax: m = max(x); e_j = exp(x_j - m); S = canonical sum of e_j; y_j = e_j / S.
// safe: a row whose every element is -inf gives zeros instead of NaN (_safe_softmax).
template <typename T>
REPMODE_HD T softmax_term(T x, T m) {
  return exp_of(x - m);
}
template <typename T>
REPMODE_HD bool softmax_zero_row(T m, bool safe) {
  return safe && m == T(-1.0) / T(0.0);
}
// The output from its term e_j (kernels that keep the terms between passes use it directly).
template <typename T>
REPMODE_HD T softmax_value_of_term(T e, T s) {
  return canon(e / s);
}
template <typename T>
REPMODE_HD T softmax_value(T x, T m, T s) {
  return softmax_value_of_term(softmax_term(x, m), s);
}

template <typename T, typename Load, typename Store>
REPMODE_HD void softmax_row(int64_t n, const Load& x, const Store& out, bool safe) {
  if (n == 0) return;
  const T m = row_max<T>(n, x);
  if (softmax_zero_row(m, safe)) {
    for (int64_t j = 0; j < n; ++j) out(j, T(0.0));
    return;
  }
  const T s = canonical_sum<T>(n, [&](int64_t j) { return softmax_term(x(j), m); });
  for (int64_t j = 0; j < n; ++j) out(j, softmax_value(x(j), m, s));
}

// softmax backward: G = canonical sum of round(g_j * y_j); grad_j = round(y_j * round(g_j - G)).
template <typename T>
REPMODE_HD T softmax_backward_term(T g, T y) {
  return g * y;
}
template <typename T>
REPMODE_HD T softmax_backward_value(T g, T y, T G) {
  return canon(y * (g - G));
}

template <typename T, typename LoadG, typename LoadY, typename Store>
REPMODE_HD void softmax_backward_row(int64_t n, const LoadG& g, const LoadY& y, const Store& out) {
  const T G = canonical_sum<T>(n, [&](int64_t j) { return softmax_backward_term(g(j), y(j)); });
  for (int64_t j = 0; j < n; ++j) out(j, softmax_backward_value(g(j), y(j), G));
}

// cumsum / cumprod: sequential by definition, in a float64 accumulator (NUMERICS_VERSION 2).
// acc_0 = x_0; acc_j = acc_{j-1} (+|x) x_j, every step an IEEE float64 operation on the float64
// value of x_j (exact for float32 data); out_j = round_T(acc_j), one rounding per output. For
// float32 this is what native CPU torch does (it accumulates float32 scans in double): a float32
// accumulator was 16x less accurate on a 3,000-long row (docs/accuracy.md). For float64 the
// accumulator is float64, so the formula is unchanged: out_j = round(out_{j-1} (+|x) x_j).
// bf16/fp16 reach the float32 kernel widened, so they accumulate in float64 too and are rounded
// float64 -> float32 -> their own type (repmode/kernels/reduction.py).
template <typename T, typename Load, typename Store>
REPMODE_HD void cumulative_row(int64_t n, const Load& x, const Store& out, bool product) {
  if (n == 0) return;
  double acc = double(x(0));
  out(0, canon(T(acc)));
  for (int64_t j = 1; j < n; ++j) {
    const double v = double(x(j));
    acc = product ? acc * v : acc + v;
    out(j, canon(T(acc)));
  }
}

}  // namespace repmode

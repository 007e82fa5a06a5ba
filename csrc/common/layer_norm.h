// Layer normalization rows (docs/semantics.md, "Layer and RMS normalization"). A row is the
// n = prod(normalized_shape) trailing elements of the input, in row-major order. Every sum
// below is the canonical Sum order (reduction_order.h); every other step is one IEEE operation in
// T, in the written order (no fma). These functions define the bits; CPU (and later CUDA)
// kernels only choose which rows a thread computes and how memory is walked.
#pragma once

#include "defs.h"
#include "math.h"
#include "reduction_order.h"

namespace repmode {

// mean = S / n, S a canonical sum over the row (also the backward's a = A / n, b = B / n).
template <typename T>
REPMODE_HD T ln_mean(T sum, int64_t n) {
  return sum / T(n);
}

// (x - mean)^2: two roundings.
template <typename T>
REPMODE_HD T ln_sq_dev(T x, T mean) {
  const T d = x - mean;
  return d * d;
}

// rstd = 1 / sqrt(Q / n + eps), Q the canonical sum of the squared deviations: four roundings.
template <typename T>
REPMODE_HD T ln_rstd(T q, int64_t n, T eps) {
  return T(1.0) / sqrt_of(q / T(n) + eps);
}

// xhat = (x - mean) * rstd: two roundings.
template <typename T>
REPMODE_HD T ln_xhat(T x, T mean, T rstd) {
  return (x - mean) * rstd;
}

// g * xhat: one rounding after xhat (the backward's B terms with g = gw_j; the weight
// gradient's terms with g the incoming gradient).
template <typename T>
REPMODE_HD T ln_g_xhat(T g, T x, T mean, T rstd) {
  return g * ln_xhat(x, mean, rstd);
}

// y = xhat, then y * w (if weight), then y + b (if bias): one rounding each.
template <typename T>
REPMODE_HD T ln_output(T xhat, const T* w, const T* b, int64_t j) {
  T y = xhat;
  if (w) y = y * w[j];
  if (b) y = y + b[j];
  return canon(y);
}

// mean = S / n (S the canonical sum of the row), rstd as above.
template <typename T, typename Load>
REPMODE_HD void layer_norm_stats(int64_t n, const Load& x, T eps, T* mean, T* rstd) {
  const T m = ln_mean(canonical_sum<T>(n, x), n);
  const T q = canonical_sum<T>(n, [&](int64_t j) { return ln_sq_dev(x(j), m); });
  *mean = m;
  *rstd = ln_rstd(q, n, eps);
}

// One forward row: stores y_j through out(j, value) and returns mean and rstd (not canonicalized).
template <typename T, typename Load, typename Store>
REPMODE_HD void layer_norm_row(int64_t n, const Load& x, const T* w, const T* b, T eps, const Store& out, T* mean,
                               T* rstd) {
  layer_norm_stats<T>(n, x, eps, mean, rstd);
  for (int64_t j = 0; j < n; ++j) out(j, ln_output(ln_xhat(x(j), *mean, *rstd), w, b, j));
}

// gw_j = g_j * w_j (g_j without weight): one rounding.
template <typename T>
REPMODE_HD T ln_gw(T g, const T* w, int64_t j) {
  return w ? g * w[j] : g;
}

// dx_j = rstd * ((gw_j - a) - xhat_j * b), a = A / n, b = B / n (A, B the row's canonical sums
// of gw_j and of gw_j * xhat_j): the per-element part, five roundings.
template <typename T>
REPMODE_HD T ln_dx(T gw, T xhat, T a, T b, T rstd) {
  return canon(rstd * ((gw - a) - xhat * b));
}

// One backward row of grad_input.
template <typename T, typename LoadG, typename LoadX, typename Store>
REPMODE_HD void layer_norm_backward_row(int64_t n, const LoadG& g, const LoadX& x, T mean, T rstd, const T* w,
                                        const Store& out) {
  const T A = canonical_sum<T>(n, [&](int64_t j) { return ln_gw(g(j), w, j); });
  const T B = canonical_sum<T>(n, [&](int64_t j) { return ln_g_xhat(ln_gw(g(j), w, j), x(j), mean, rstd); });
  const T a = ln_mean(A, n);
  const T b = ln_mean(B, n);
  for (int64_t j = 0; j < n; ++j) out(j, ln_dx(ln_gw(g(j), w, j), ln_xhat(x(j), mean, rstd), a, b, rstd));
}

// grad_weight_j = canonical sum over rows i (in order) of g_ij * xhat_ij;
// grad_bias_j = canonical sum over rows i of g_ij.
template <typename T, typename LoadG, typename LoadX, typename LoadMean, typename LoadRstd>
REPMODE_HD T layer_norm_grad_weight(int64_t rows, int64_t j, const LoadG& g, const LoadX& x, const LoadMean& mean,
                                    const LoadRstd& rstd) {
  return canon(canonical_sum<T>(rows, [&](int64_t i) { return ln_g_xhat(g(i, j), x(i, j), mean(i), rstd(i)); }));
}

}  // namespace repmode

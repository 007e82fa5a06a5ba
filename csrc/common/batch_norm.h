// Batch and group normalization: the per-group statistics and the per-element formulas
// (docs/semantics.md, "Batch and group normalization"). A normalized group is M terms
// t[0..M) in a fixed logical order (batch norm: one channel, terms in (n, spatial) row-major
// order; group norm: one (n, group), terms in (channel, spatial) row-major order). Every sum
// is the canonical Sum order (reduction_order.h); every other step is one IEEE operation.
// A missing weight is 1 and a missing bias is -0.0: x * 1 and x + (-0.0) are exact
// identities, so those steps change nothing.
#pragma once

#include "defs.h"
#include "math.h"
#include "reduction_order.h"

namespace repmode {

// mean = round(S / M), S the canonical sum of the terms.
template <typename T>
REPMODE_HD T norm_mean(T sum, int64_t M) {
  return sum / T(M);
}

// The terms of the second pass: round(round(x - mean)^2).
template <typename T>
REPMODE_HD T norm_sq_term(T x, T mean) {
  const T d = x - mean;
  return d * d;
}

// Biased variance round(Q / M), Q the canonical sum of norm_sq_term.
template <typename T>
REPMODE_HD T norm_var(T q, int64_t M) {
  return q / T(M);
}

// invstd = round(1 / sqrt(round(var + eps))), eps already rounded to T; IEEE sqrt and division.
template <typename T>
REPMODE_HD T norm_invstd(T var, T eps) {
  return T(1.0) / sqrt_of(var + eps);
}

// xhat = round(round(x - mean) * invstd).
template <typename T>
REPMODE_HD T norm_xhat(T x, T mean, T invstd) {
  return (x - mean) * invstd;
}

// y = round(round(xhat * w) + b).
template <typename T>
REPMODE_HD T norm_affine(T xhat, T w, T b) {
  return canon(xhat * w + b);
}

// Running statistic update, in float64 and rounded once to T, in torch's order:
// RN_T(RN64(RN64(momentum * stat) + RN64(RN64(1 - momentum) * r))).
template <typename T>
REPMODE_HD T norm_running_update(T r, double stat, double momentum) {
  const double a = momentum * stat;
  const double b = (1.0 - momentum) * double(r);
  return canon(T(a + b));
}

// The unbiased variance fed to the running variance: RN64(Q / (M - 1)) (Q widened exactly).
template <typename T>
REPMODE_HD double norm_unbiased_var(T q, int64_t M) {
  return double(q) / double(M - 1);
}

// round(v * w): group norm's incoming gradient g = dy * w, batch norm's scale invstd * w.
template <typename T>
REPMODE_HD T norm_times_weight(T v, T w) {
  return v * w;
}

// round(g * xhat): the terms of the second gradient sum (and of the weight gradient).
template <typename T>
REPMODE_HD T norm_g_xhat(T g, T xhat) {
  return g * xhat;
}

// Input gradient with batch statistics. g is the incoming gradient (group norm: round(dy * w)),
// k1 = round(Sg / M), k2 = round(Sgx / M) with Sg the canonical sum of g and Sgx the canonical
// sum of round(g * xhat); scale = round(invstd * w) (batch norm) or rstd (group norm):
// dx = round(scale * round(round(g - k1) - round(xhat * k2))).
template <typename T>
REPMODE_HD T norm_dx_batch_stats(T g, T xhat, T k1, T k2, T scale) {
  return canon(scale * ((g - k1) - xhat * k2));
}

// Input gradient with fixed (running) statistics: dx = round(dy * scale).
template <typename T>
REPMODE_HD T norm_dx_fixed_stats(T dy, T scale) {
  return canon(dy * scale);
}

// Both statistics of one group from its terms load(0..M): *mean, *q (the canonical sum of
// the squared deviations) and *invstd.
template <typename T, typename Load>
REPMODE_HD void norm_group_stats(int64_t M, const Load& load, T eps, T* mean, T* q, T* invstd) {
  const T m = norm_mean<T>(canonical_sum<T>(M, load), M);
  const T s = canonical_sum<T>(M, [&](int64_t j) { return norm_sq_term<T>(load(j), m); });
  *mean = m;
  *q = s;
  *invstd = norm_invstd<T>(norm_var<T>(s, M), eps);
}

// Batch norm's training statistics accumulate in float64 (NUMERICS_VERSION 2), as var does
// (reduction.h): with w_j = double(x_j) (exact), m64 = round64(S / M) with S the canonical sum of
// w in float64, and q64 = the canonical float64 sum of round64(round64(w_j - m64)^2). A float32
// mean moved by its sum's rounding offsets every xhat of the channel, and the weight gradient
// sum(dy * xhat) carries that offset times sum(dy): up to 4.6x less accurate than native torch at
// mean 1e3 (docs/accuracy.md). Group norm keeps norm_group_stats below.
template <typename T, typename Load>
REPMODE_HD void bn_train_sums(int64_t M, const Load& load, double* m64, double* q64) {
  auto wide = [&](int64_t j) { return double(load(j)); };
  const double m = norm_mean<double>(canonical_sum<double>(M, wide), M);
  *m64 = m;
  *q64 = canonical_sum<double>(M, [&](int64_t j) { return norm_sq_term<double>(wide(j), m); });
}

// The channel's outputs from m64 and q64: mean = round_T(m64), invstd = round_T(1 / sqrt64(
// round64(round64(q64 / M) + eps))) (eps as given, a float64); the running statistics are updated
// from m64 and round64(q64 / (M - 1)) by norm_running_update. Any output pointer may be null.
template <typename T>
REPMODE_HD void bn_train_stats(double m64, double q64, int64_t M, double eps, double momentum, T* mean, T* invstd,
                               T* save_mean, T* save_invstd, T* running_mean, T* running_var) {
  const T m = T(m64);
  const T is = T(1.0 / sqrt_of(q64 / double(M) + eps));
  if (mean) *mean = m;
  if (invstd) *invstd = is;
  if (save_mean) *save_mean = canon(m);
  if (save_invstd) *save_invstd = canon(is);
  if (running_mean) *running_mean = norm_running_update<T>(*running_mean, m64, momentum);
  if (running_var) *running_var = norm_running_update<T>(*running_var, q64 / double(M - 1), momentum);
}

// The two gradient sums of one group: *sg = canonical sum of g(j), *sgx = canonical sum of
// round(g(j) * xhat(j)).
template <typename T, typename LoadG, typename LoadXhat>
REPMODE_HD void norm_grad_sums(int64_t M, const LoadG& g, const LoadXhat& xhat, T* sg, T* sgx) {
  *sg = canonical_sum<T>(M, g);
  *sgx = canonical_sum<T>(M, [&](int64_t j) { return norm_g_xhat<T>(g(j), xhat(j)); });
}

}  // namespace repmode

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

// The two gradient sums of one group: *sg = canonical sum of g(j), *sgx = canonical sum of
// round(g(j) * xhat(j)).
template <typename T, typename LoadG, typename LoadXhat>
REPMODE_HD void norm_grad_sums(int64_t M, const LoadG& g, const LoadXhat& xhat, T* sg, T* sgx) {
  *sg = canonical_sum<T>(M, g);
  *sgx = canonical_sum<T>(M, [&](int64_t j) { return norm_g_xhat<T>(g(j), xhat(j)); });
}

}  // namespace repmode

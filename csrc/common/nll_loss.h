// nll_loss formulas (docs/semantics.md, "nll_loss"). Rows i < N of a (N, C) input; target t_i;
// optional class weights w. Ignored rows contribute +0 to both sums.
#pragma once

#include "defs.h"
#include "reduce_order.h"

namespace repmode {

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

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

}  // namespace repmode

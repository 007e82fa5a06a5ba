// Indexed accumulation (scatter_add, index_add, index_put with accumulate=True and what builds on
// them): docs/semantics.md "Indexed accumulation". The order: destination element d starts from its
// value and receives its contributions in increasing source position j, one IEEE addition each,
//
//   for j = 0, 1, ..., n-1:  out[dest[j]] = canon(out[dest[j]] + values[j])
//
// never in thread or atomic order. A walk may visit the destinations in any grouping (a partition of
// the destination ids among threads, rounds of distinct destinations) as long as each destination
// sees its j in increasing order: the additions into one destination are then this exact sequence.
#pragma once

#include <cstdint>

#include "defs.h"

namespace repmode {

// One contribution: the step every walk applies, in source order per destination. A NaN sum is
// the canonical NaN (an element no contribution reaches keeps its bits).
template <typename T>
REPMODE_HD void accumulate_step(T* out, int64_t d, T v) {
  out[d] = canon(out[d] + v);
}

// The definition, plainly: one pass over the sources in increasing position.
template <typename T>
REPMODE_HD void accumulate_in_order(T* out, const int64_t* dest, const T* values, int64_t n) {
  for (int64_t j = 0; j < n; ++j) accumulate_step(out, dest[j], values[j]);
}

}  // namespace repmode

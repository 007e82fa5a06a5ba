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

// index_add of whole blocks, out viewed as (outer, size, inner) and src as (outer, n, inner):
//   for o < outer, for i = 0 .. n-1:  out[o, idx[i], c] += src[o, i, c]   for c in [c0, c1)
// Flattened, source position j = (o*n + i)*inner + c, so each destination element sees its
// contributions in increasing j: the sequence of accumulate_in_order over the same ids. A walk over
// a column range [c0, c1) is independent of the other ranges (threads split the columns).
template <typename T>
REPMODE_HD void accumulate_blocks_in_order(T* out, const int64_t* idx, const T* src, int64_t outer, int64_t size,
                                           int64_t n, int64_t inner, int64_t c0, int64_t c1) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      T* row = out + (o * size + idx[i]) * inner;
      const T* from = src + (o * n + i) * inner;
      for (int64_t c = c0; c < c1; ++c) accumulate_step(row, c, from[c]);
    }
}

}  // namespace repmode

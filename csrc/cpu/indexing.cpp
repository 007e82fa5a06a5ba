// Indexed accumulation on the CPU: the definition's own pass (csrc/common/indexing.h), on the
// calling thread. Measured on the shared 2-core machine (16M float32 contributions into 1M
// destinations): the pass takes about 115 ms, native torch's scatter_add about 180 ms. Splitting the
// destination ids into ranges, one per thread, each thread scanning every source position in order
// (which keeps each destination's order), was slower at 2 threads (about 360 ms: every thread reads
// all the ids and mispredicts the range test half the time), and a stable bucketing of the sources
// by range first slower still; so the pass stays on one thread and nthreads changes nothing.
#include "../common/indexing.h"
#include "dispatch.h"
#include "entry_points.h"
#include "parallel.h"

namespace repmode::cpu {

// ---- entry points (csrc/cpu/entry_points.h) ----

void accumulate_in_order(int dtype, uintptr_t out, uintptr_t dest, uintptr_t values, int64_t n, int nthreads) {
  (void)nthreads;  // one pass on the calling thread (see above)
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    repmode::accumulate_in_order<T>(ptr<T>(out), ptr<const int64_t>(dest), ptr<const T>(values), n);
  });
}

void accumulate_blocks_in_order(int dtype, uintptr_t out, uintptr_t idx, uintptr_t src, int64_t outer, int64_t size,
                                int64_t n, int64_t inner, int nthreads) {
  // Threads split the columns: each destination element stays with one thread, which adds its
  // contributions in order; rows are contiguous, so every step is a vector of additions.
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    parallel_for(inner, nthreads, outer * n, [&](int64_t c0, int64_t c1) {
      repmode::accumulate_blocks_in_order<T>(ptr<T>(out), ptr<const int64_t>(idx), ptr<const T>(src), outer, size, n,
                                             inner, c0, c1);
    });
  });
}

}  // namespace repmode::cpu

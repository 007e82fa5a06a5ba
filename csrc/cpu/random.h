#pragma once
#include <cstdint>

namespace repmode::cpu {

// Fill out[0..n) with distribution `dist` (a RandomDist code: 0 uniform(p0, p1), 1 normal(p0,
// p1), 3 exponential(p0), 4 geometric(p0), 5 log_normal(p0, p1), 6 cauchy(p0, p1)) from the
// stream (seed, offset) as csrc/common/random.h defines it; returns the number of
// blocks read (the caller's offset advances by that much).
template <typename T>
uint64_t random_fill(int dist, T* out, int64_t n, uint64_t seed, uint64_t offset, double p0, double p1, int nthreads);

// Integers in [lo, lo + range) (range 0: all of 2^64), two per block; returns blocks read.
uint64_t random_ints(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range, int nthreads);

}  // namespace repmode::cpu

// CPU random fills: blocks in parallel, each block by the shared formulas of
// csrc/common/random_dists.h (a block's elements never depend on which thread draws it).
#include "random.h"

#include <stdexcept>
#include <string>

#include "../common/random_dists.h"
#include "parallel.h"

namespace repmode::cpu {

template <typename T>
uint64_t random_fill(int dist, T* out, int64_t n, uint64_t seed, uint64_t offset, double p0, double p1,
                     int nthreads) {
  if (dist < 0 || dist > 6 || dist == 2)
    throw std::invalid_argument("random_fill: unknown distribution code " + std::to_string(dist));
  const RandomDist d = static_cast<RandomDist>(dist);
  const int64_t per = elements_per_block(d, int(sizeof(T)));
  const int64_t blocks = n > 0 ? (n + per - 1) / per : 0;
  parallel_for(blocks, nthreads, 16 * per, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const PhiloxBlock b = stream_block(seed, offset + uint64_t(j));
      T vals[4];
      dist_from_block<T>(d, b, p0, p1, vals);
      const int64_t first = j * per;
      const int64_t count = n - first < per ? n - first : per;
      for (int64_t k = 0; k < count; ++k) out[first + k] = vals[k];
    }
  });
  return uint64_t(blocks);
}

uint64_t random_ints(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     int nthreads) {
  const int64_t blocks = n > 0 ? (n + 1) / 2 : 0;
  parallel_for(blocks, nthreads, 32, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      int64_t vals[2];
      ints_from_block(stream_block(seed, offset + uint64_t(j)), lo, range, vals);
      out[2 * j] = vals[0];
      if (2 * j + 1 < n) out[2 * j + 1] = vals[1];
    }
  });
  return uint64_t(blocks);
}

template uint64_t random_fill<float>(int, float*, int64_t, uint64_t, uint64_t, double, double, int);
template uint64_t random_fill<double>(int, double*, int64_t, uint64_t, uint64_t, double, double, int);

}  // namespace repmode::cpu

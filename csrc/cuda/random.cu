// Random fills on the GPU (csrc/cuda/launchers.h): repmode's Philox stream and distributions
// (csrc/common/philox.h, csrc/common/random.h). Element i of a fill at stream offset o is
// slot i % per of stream block o + i / per, a pure function of (seed, o, i): one thread per
// block computes it with the shared scalar formula (the CPU's AVX2 Philox and Box-Muller paths
// give the same bits as that formula), so the values are the CPU's whatever the launch shape.
#include <stdexcept>
#include <string>

#include "../common/random.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// Writes the first min(per, n - first) of a block's `per` values (the last block may be partial).
template <typename T, int kMax>
__device__ __forceinline__ void store_block(T* out, int64_t n, int64_t j, int per, const T (&vals)[kMax]) {
  const int64_t first = j * per;
  const int64_t count = n - first < per ? n - first : per;
  for (int k = 0; k < count; ++k) out[first + k] = vals[k];
}

template <typename T, RandomDist kDist>
__global__ void fill_kernel(T* out, int64_t n, int64_t blocks, uint64_t seed, uint64_t offset, double p0, double p1) {
  const int per = elements_per_block(kDist, int(sizeof(T)));
  for (int64_t j = global_thread(); j < blocks; j += grid_stride()) {
    T vals[4];
    dist_from_block<T>(kDist, stream_block(seed, offset + uint64_t(j)), p0, p1, vals);
    store_block(out, n, j, per, vals);
  }
}

__global__ void ints_kernel(int64_t* out, int64_t n, int64_t blocks, uint64_t seed, uint64_t offset, int64_t lo,
                            uint64_t range) {
  for (int64_t j = global_thread(); j < blocks; j += grid_stride()) {
    int64_t vals[2];
    ints_from_block(stream_block(seed, offset + uint64_t(j)), lo, range, vals);
    store_block(out, n, j, 2, vals);
  }
}

// The fill kernel for the distribution `d`, compiled per distribution.
template <typename T>
void launch_fill(RandomDist d, T* out, int64_t n, int64_t blocks, uint64_t seed, uint64_t offset, double p0, double p1,
                 cudaStream_t stream) {
  switch (d) {
#define REPMODE_FILL(name)                                                                                             \
  case RandomDist::name:                                                                                               \
    fill_kernel<T, RandomDist::name><<<blocks_for(blocks), kBlock, 0, stream>>>(out, n, blocks, seed, offset, p0, p1); \
    break;
    REPMODE_FILL(uniform)
    REPMODE_FILL(normal) REPMODE_FILL(exponential) REPMODE_FILL(geometric) REPMODE_FILL(log_normal) REPMODE_FILL(cauchy)
#undef REPMODE_FILL
  }
  check_launch("random_fill");
}

}  // namespace

// One thread per stream block (grid-stride); returns the blocks read, computed on the host as
// the CPU's (no synchronization).
uint64_t random_fill(int dist, int dtype, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, double p0,
                     double p1, uintptr_t stream) {
  StreamScope scope(stream);
  if (dist < 0 || dist > 6 || dist == 2)
    throw std::invalid_argument("random_fill: unknown distribution code " + std::to_string(dist));
  return by_dtype(dtype, [&](auto zero) -> uint64_t {
    using T = decltype(zero);
    const RandomDist d = static_cast<RandomDist>(dist);
    const int64_t per = elements_per_block(d, int(sizeof(T)));
    const int64_t blocks = n > 0 ? (n + per - 1) / per : 0;
    if (blocks == 0) return 0;
    launch_fill<T>(d, ptr<T>(out), n, blocks, seed, offset, p0, p1, scope.get());
    return uint64_t(blocks);
  });
}

// Two integers per stream block, one thread per block (grid-stride); returns the blocks read.
uint64_t random_ints(uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     uintptr_t stream) {
  StreamScope scope(stream);
  const int64_t blocks = n > 0 ? (n + 1) / 2 : 0;
  if (blocks == 0) return 0;
  ints_kernel<<<blocks_for(blocks), kBlock, 0, scope.get()>>>(ptr<int64_t>(out), n, blocks, seed, offset, lo, range);
  check_launch("random_ints");
  return uint64_t(blocks);
}

}  // namespace repmode::cuda

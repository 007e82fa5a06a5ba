// Compile-only check: csrc/common/pooling.h builds for the GPU (tests/test_cuda_sources.py).
#include "../../common/pooling.h"

namespace repmode_check {

template <typename T>
__global__ void pooling_kernel(const T* x, T* out, int64_t* index, int64_t H, int64_t W) {
  using namespace repmode;
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  auto load = [&](int64_t d, int64_t h, int64_t w) { return x[(d * H + h) * W + w]; };
  const PoolSpan d = pool_span(kPoolAvg, 0, 1, 1, 1, 1, 0, 1);
  const PoolSpan h = pool_span(kPoolMax, 1, 3, H, 3, 2, 1, 1);
  const PoolSpan w = pool_span_adaptive(1, 3, W);
  out[0] = pool_max_window<T>(d, h, w, H, W, load, index);
  out[1] = pool_avg_window<T>(d, h, w, pool_divisor(d, h, w, true, 0), load);
  out[2] = pool_avg_grad_term<T>(x[0], pool_divisor(d, h, pool_span_avg(0, 2, 2, 1, W), false, 0));
}

template __global__ void pooling_kernel<float>(const float*, float*, int64_t*, int64_t, int64_t);
template __global__ void pooling_kernel<double>(const double*, double*, int64_t*, int64_t, int64_t);

}  // namespace repmode_check

// Compile-only check: csrc/common/layer_norm.h builds for the GPU (tests/test_cuda_sources.py).
#include "../../common/layer_norm.h"

namespace repmode_check {

template <typename T>
__global__ void layer_norm_kernel(const T* x, const T* g, const T* w, const T* b, T* out, int64_t n) {
  using namespace repmode;
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  auto X = [&](int64_t j) { return x[j]; };
  auto G = [&](int64_t j) { return g[j]; };
  T mean, rstd;
  layer_norm_row<T>(n, X, w, b, T(1e-5), [&](int64_t j, T v) { out[j] = v; }, &mean, &rstd);
  layer_norm_backward_row<T>(n, G, X, mean, rstd, w, [&](int64_t j, T v) { out[n + j] = v; });
  auto G2 = [&](int64_t i, int64_t j) { return g[i * n + j]; };
  auto X2 = [&](int64_t i, int64_t j) { return x[i * n + j]; };
  auto S = [&](int64_t i) { return mean; };
  out[2 * n] = layer_norm_grad_weight<T>(1, 0, G2, X2, S, S);
}

template __global__ void layer_norm_kernel<float>(const float*, const float*, const float*, const float*, float*,
                                                  int64_t);
template __global__ void layer_norm_kernel<double>(const double*, const double*, const double*, const double*, double*,
                                                   int64_t);

}  // namespace repmode_check

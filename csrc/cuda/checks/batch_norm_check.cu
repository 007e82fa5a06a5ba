// Compile-only check: the batch/group norm formulas (csrc/common/batch_norm.h) build for the GPU
// as they are (tests/test_cuda_sources.py).
#include "../../common/batch_norm.h"

namespace repmode_check {

template <typename T>
__global__ void batch_norm_kernel(const T* x, const T* dy, T* out, int64_t n) {
  using namespace repmode;
  if (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x != 0) return;
  auto load = [&](int64_t j) { return x[j]; };
  T mean, q, invstd;
  norm_group_stats<T>(n, load, T(1e-5), &mean, &q, &invstd);
  const T xhat = norm_xhat<T>(x[0], mean, invstd);
  out[0] = norm_affine<T>(xhat, T(2.0), T(-0.0));
  out[1] = norm_running_update<T>(out[1], norm_unbiased_var<T>(q, n), 0.1);
  T sg, sgx;
  norm_grad_sums<T>(
      n, [&](int64_t j) { return dy[j]; }, [&](int64_t j) { return norm_xhat<T>(x[j], mean, invstd); }, &sg, &sgx);
  out[2] = norm_dx_batch_stats<T>(dy[0], xhat, norm_mean<T>(sg, n), norm_mean<T>(sgx, n), invstd);
  out[3] = norm_dx_fixed_stats<T>(dy[0], invstd) + norm_var<T>(q, n) + norm_sq_term<T>(x[0], mean);
}

template __global__ void batch_norm_kernel<float>(const float*, const float*, float*, int64_t);
template __global__ void batch_norm_kernel<double>(const double*, const double*, double*, int64_t);

}  // namespace repmode_check

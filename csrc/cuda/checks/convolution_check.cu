// Compile-only check: the convolution orders (csrc/common/convolution.h) build for the GPU
// as they are (tests/test_cuda_sources.py).
#include "../../common/convolution.h"

namespace repmode_check {

template <typename T>
__global__ void convolution_kernel(repmode::ConvGeom g, const T* x, const T* w, const T* gy, T* out) {
  using namespace repmode;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i != 0) return;
  out[0] = conv_forward_at<T>(g, x, w, nullptr, 0, 0, 0);
  out[1] = conv_forward_at<T>(g, x, w, x, 0, 0, 0);
  out[2] = conv_grad_input_at<T>(g, gy, w, 0, 0, 0);
  out[3] = conv_grad_weight_partial<T>(g, x, gy, 0, 0, 0, 0);
  out[4] = conv_grad_weight_at<T>(g, x, gy, 0, 0, 0);
}

template __global__ void convolution_kernel<float>(repmode::ConvGeom, const float*, const float*, const float*, float*);
template __global__ void convolution_kernel<double>(repmode::ConvGeom, const double*, const double*, const double*,
                                                    double*);

}  // namespace repmode_check

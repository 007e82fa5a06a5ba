// Compile-only check: csrc/common/grid_sample.h builds for the GPU (tests/cuda/test_cuda_sources.py).
#include "../../common/grid_sample.h"

namespace repmode_check {

template <typename T>
__global__ void grid_sample_kernel(const T* x, const T* grid, T* out, T* gi, repmode::GridSampleGeom g) {
  using namespace repmode;
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  const GridAxes<T> ax = grid_axes_of<T>(g);
  GridTaps<T> t;
  grid_taps_at<T>(g, ax, grid, true, t);
  out[0] = grid_combine<T>(g, t, x);
  GridGrad<T> acc;
  grid_backward_channel<T>(g, t, x, gi, out[0], true, acc);
  grid_write_grad<T>(g, t, acc, out + 1);
}

template __global__ void grid_sample_kernel<float>(const float*, const float*, float*, float*, repmode::GridSampleGeom);
template __global__ void grid_sample_kernel<double>(const double*, const double*, double*, double*,
                                                    repmode::GridSampleGeom);

}  // namespace repmode_check

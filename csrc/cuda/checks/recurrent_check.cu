// Compile-only check: the LSTM cell formulas (csrc/common/recurrent.h) build for the GPU.
#include "../../common/recurrent.h"

namespace repmode_check {

template <typename T>
__global__ void recurrent_kernel(const T* x, T* out) {
  using namespace repmode;
  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
  const LstmCellOut<T> s = lstm_cell_forward<T>(x, x + 4, x[8]);
  const T dht = lstm_dh<T>(x[9], true, x[10], true);
  const LstmCellGrad<T> d = lstm_cell_backward<T>(dht, x[11], true, s.i, s.f, s.g, s.o, s.tc, x[8]);
  out[0] = s.h + s.c + d.di + d.df + d.dg + d.d_o + d.dc;
}

template __global__ void recurrent_kernel<float>(const float*, float*);
template __global__ void recurrent_kernel<double>(const double*, double*);

}  // namespace repmode_check

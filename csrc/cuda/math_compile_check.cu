// Compile-only check that csrc/common/math.h builds as device code:
//   nvcc -c -x cu --fmad=false -std=c++17 csrc/cuda/math_compile_check.cu -o /tmp/m.o
// It is not linked into the extension; the kernel also serves as a template for
// comparing device results with the host functions bit for bit.
#include "../common/math.h"

__global__ void repmode_math_compile_check(const float* xf, float* expf_out, float* logf_out,
                                           const double* xd, double* exp_out,
                                           double* log_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  expf_out[i] = repmode::cr_expf(xf[i]);
  logf_out[i] = repmode::cr_logf(xf[i]);
  exp_out[i] = repmode::repmode_exp(xd[i]);
  log_out[i] = repmode::repmode_log(xd[i]);
}

// Compile-only check: the FFT definition (csrc/common/fft.h) builds for the GPU as it is
// (tests/cuda/test_cuda_sources.py). One thread runs each routine once.
#include "../../common/fft.h"

namespace repmode_check {

__global__ void fft_kernel(const repmode::Cx* x, repmode::Cx* out, repmode::Cx* tw, repmode::Cx* work, double* mag,
                           int64_t n, int64_t M) {
  using namespace repmode;
  if (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x != 0) return;
  for (int64_t k = 0; k < M; ++k) tw[k] = fft_twiddle(k, M);
  if (fft_smooth(n)) {
    fft_recursive(x, 1, out, n, tw, M / n, true);
  } else {
    Cx* chirp = work + 2 * M;
    Cx* bhat = chirp + n;
    for (int64_t k = 0; k < n; ++k) chirp[k] = fft_chirp(k, n);
    fft_bluestein(x, 1, n, out, fft_bluestein_size(n), chirp, bhat, tw, work);
  }
  mag[0] = complex_abs_value(out[0].re, out[0].im) + double(fft_radix(n));
}

}  // namespace repmode_check

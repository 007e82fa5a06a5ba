// Compile-only check: the headers that define repmode's bits build for the GPU as they are.
// Instantiates each shared formula and order in device code (tests/test_cuda_sources.py).
#include "../../common/defs.h"
#include "../../common/softmax_loss.h"
#include "../../common/random.h"
#include "../../common/reduction_order.h"
#include "../../common/reduction.h"

namespace repmode_check {

template <typename T>
__global__ void shared_headers_kernel(const T* x, T* out, int64_t n) {
  using namespace repmode;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i != 0) return;
  auto load = [&](int64_t j) { return x[j]; };
  out[0] = canonical_sum<T>(n, load);
  // (every elementwise formula is instantiated by math_compile_check.cu)
  log_softmax_row<T>(n, load, [&](int64_t j, T v) { out[8 + j] = v; });
  out[5] = nll_term<T>(x[0], nullptr, 0);
  T chunks[2] = {x[0], x[1]};
  out[6] = finish_from_chunks<T>(chunks, 2);
  T var, mean;
  row_var_mean<T>(n, load, 1.0, false, &var, &mean);
  out[7] = var + sqrt_of(mean) + canonical_prod<T>(n, load) + row_logsumexp<T>(n, load);
  out[8 + n] = T(row_arg_extreme<T>(n, load, true));
  softmax_row<T>(n, load, [&](int64_t j, T v) { out[8 + j] += v; }, true);
  cumulative_row<T>(n, load, [&](int64_t j, T v) { out[8 + j] += v; }, false);
  const PhiloxBlock b = stream_block(uint64_t(n), uint64_t(i));
  T draws[4];
  for (int d = 0; d <= 6; ++d)
    if (d != 2) dist_from_block<T>(static_cast<RandomDist>(d), b, 0.0, 1.0, draws);
  int64_t ints[2];
  ints_from_block(b, -5, 10, ints);
  out[1] = draws[0] + T(ints[0]);
}

}  // namespace repmode_check

template __global__ void repmode_check::shared_headers_kernel<float>(const float*, float*, int64_t);
template __global__ void repmode_check::shared_headers_kernel<double>(const double*, double*, int64_t);

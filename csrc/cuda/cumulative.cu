// cumsum / cumprod on the GPU (csrc/cuda/launchers.h) along n of a contiguous (outer, n, inner)
// view. The canonical order is sequential along each (outer, inner) line (cumulative_row in
// csrc/common/row_reductions.h): out_j = round(out_{j-1} (+|x) x_j), so a line has no
// parallelism to give without changing its bits.
#include "../common/row_reductions.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// Line r = (r / inner, r % inner): neighbouring threads take neighbouring inner positions, so
// each step j reads and writes consecutive addresses when inner > 1. In-place (x == out) is
// fine: a line's element j is read before it is written, by the same thread.
template <typename T>
__global__ void cumulative_kernel(const T* x, T* out, int64_t lines, int64_t n, int64_t inner, bool product) {
  for (int64_t r = global_thread(); r < lines; r += grid_stride()) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    const T* xr = x + base;
    T* o = out + base;
    cumulative_row<T>(n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; },
                      product);
  }
}

}  // namespace

// One thread per (outer, inner) line, walking it in the canonical sequential order.
void cumulative(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool product,
                uintptr_t stream) {
  StreamScope scope(stream);
  const int64_t lines = outer * inner;
  if (lines <= 0 || n <= 0) return;  // nothing to write, as the CPU
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    cumulative_kernel<T><<<blocks_for(lines), kBlock, 0, scope.get()>>>(ptr<const T>(x), ptr<T>(out), lines, n,
                                                                          inner, product);
    check_launch("cumulative");
  });
}

}  // namespace repmode::cuda

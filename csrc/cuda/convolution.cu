// Convolution on the GPU: every output is one call of its canonical order in
// csrc/common/convolution.h (the functions the CPU's reference uses and its lowered GEMM
// reproduces), so the bits are the CPU's; the kernels only decide which thread computes what.
#include <algorithm>
#include <cstdint>

#include "../common/convolution.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

ConvGeom geom_of(const Ints& v) { return conv_geom_of(v, "repmode._C_cuda"); }

template <typename T>
__global__ void forward_kernel(ConvGeom g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t L = g.out_len(), total = g.N * g.Co * L;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t pos = i % L, co = (i / L) % g.Co, n = i / (L * g.Co);
    y[i] = conv_forward_at<T>(g, x, w, bias, n, co, pos);
  }
}

template <typename T>
__global__ void grad_input_kernel(ConvGeom g, const T* gy, const T* w, const T* bias, T* gx) {
  const int64_t L = g.in_len(), total = g.N * g.Ci * L;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t pos = i % L, ci = (i / L) % g.Ci, n = i / (L * g.Ci);
    gx[i] = conv_grad_input_out<T>(g, gy, w, bias, n, ci, pos);
  }
}

// Partials of images n0 .. n0+cnt-1: part[i * wsize + e] = P_(n0+i) of weight element e.
template <typename T>
__global__ void grad_weight_partial_kernel(ConvGeom g, const T* x, const T* gy, int64_t n0, int64_t cnt, T* part) {
  const int64_t kvol = g.kvol(), wsize = g.Co * g.cig() * kvol, total = cnt * wsize;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t e = i % wsize, f = e % kvol, cl = (e / kvol) % g.cig(), co = e / (kvol * g.cig());
    part[i] = conv_grad_weight_partial<T>(g, x, gy, n0 + i / wsize, co, cl, f);
  }
}

// Adds a round's partials to the running sums in gw, image by image in increasing n; the sum is
// stored exactly between rounds and made canonical after the last image.
template <typename T>
__global__ void grad_weight_combine_kernel(int64_t wsize, const T* part, int64_t n0, int64_t cnt, bool last, T* gw) {
  for (int64_t e = global_thread(); e < wsize; e += grid_stride()) {
    T acc = n0 == 0 ? T(0) : gw[e];
    for (int64_t i = 0; i < cnt; ++i) acc = conv_grad_weight_step(acc, part[i * wsize + e], n0 + i);
    gw[e] = last ? canon(acc) : acc;
  }
}

template <typename T>
__global__ void fill_zero_kernel(T* out, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_stride()) out[i] = T(0);
}

// Scratch bound for the weight gradient's partials: rounds of images hold at most this many
// elements (at least one image's worth).
constexpr int64_t kPartialElems = int64_t(1) << 24;

}  // namespace

// Partition: one thread per output element y[n, co, pos] (grid-stride), each running
// conv_forward_at, the CPU's chain (a first version: no tiling or data reuse).
void conv_forward(int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y,
                  uintptr_t stream) {
  const ConvGeom g = geom_of(geom);
  StreamScope scope(stream);
  const int64_t total = g.N * g.Co * g.out_len();
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    forward_kernel<T><<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(x), ptr<const T>(w),
                                                                     ptr<const T>(bias), ptr<T>(y));
    check_launch("conv forward_kernel");
  });
}

// Partition: one thread per input-gradient element gx[n, ci, pos] (grid-stride), a gather over
// the kernel offsets that reach it, in the CPU's order (conv_grad_input_at, then the bias).
void conv_grad_input(int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx,
                     uintptr_t stream) {
  const ConvGeom g = geom_of(geom);
  StreamScope scope(stream);
  const int64_t total = g.N * g.Ci * g.in_len();
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    grad_input_kernel<T><<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(gy), ptr<const T>(w),
                                                                        ptr<const T>(bias), ptr<T>(gx));
    check_launch("conv grad_input_kernel");
  });
}

// Partition: the canonical order is P_n (one fma chain over image n's output positions) per
// weight element, then gw = P_0 + P_1 + ... in increasing n. Images go in rounds whose partials
// fit the scratch bound; within a round one thread per (image, weight element) computes its
// chain into scratch (cudaMallocAsync on the stream), then one thread per weight element adds
// the round's partials to its running sum in increasing n — the CPU's combination exactly.
void conv_grad_weight(int dtype, const Ints& geom, uintptr_t x, uintptr_t gy, uintptr_t gw, uintptr_t stream) {
  const ConvGeom g = geom_of(geom);
  StreamScope scope(stream);
  const int64_t wsize = g.Co * g.cig() * g.kvol();
  if (wsize == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T* out = ptr<T>(gw);
    if (g.N == 0 || g.out_len() == 0) {
      fill_zero_kernel<T><<<blocks_for(wsize), kBlock, 0, scope.get()>>>(out, wsize);
      check_launch("conv fill_zero_kernel");
      return;
    }
    const int64_t round = std::max<int64_t>(1, std::min<int64_t>(g.N, kPartialElems / wsize));
    struct Scratch {  // freed on the stream also when a launch check throws
      void* p = nullptr;
      cudaStream_t s;
      ~Scratch() { if (p) cudaFreeAsync(p, s); }
    } scratch{nullptr, scope.get()};
    check(cudaMallocAsync(&scratch.p, size_t(round * wsize) * sizeof(T), scope.get()), "cudaMallocAsync");
    T* part = static_cast<T*>(scratch.p);
    for (int64_t n0 = 0; n0 < g.N; n0 += round) {
      const int64_t cnt = std::min(round, g.N - n0);
      grad_weight_partial_kernel<T><<<blocks_for(cnt * wsize), kBlock, 0, scope.get()>>>(
          g, ptr<const T>(x), ptr<const T>(gy), n0, cnt, part);
      check_launch("conv grad_weight_partial_kernel");
      grad_weight_combine_kernel<T><<<blocks_for(wsize), kBlock, 0, scope.get()>>>(wsize, part, n0, cnt,
                                                                                   n0 + cnt == g.N, out);
      check_launch("conv grad_weight_combine_kernel");
    }
    void* done = scratch.p;
    scratch.p = nullptr;
    check(cudaFreeAsync(done, scope.get()), "cudaFreeAsync");
  });
}

}  // namespace repmode::cuda

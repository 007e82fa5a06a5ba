// Pooling on the GPU (max, average, adaptive; 2-d as 3-d with D = 1). Every output and every
// grad_input element runs the sequence of csrc/common/pooling.h that the CPU runs (windows
// row-major; backward: +0.0, then one pool_grad_add per contributing output in increasing flat
// output order), so the bits are the CPU's; the kernels only decide who computes which element.
#include <cstdint>
#include <stdexcept>

#include "../common/pooling.h"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

__device__ __forceinline__ bool span_has(const PoolSpan& sp, int64_t i) {
  const int64_t t = i - sp.start;
  return t >= 0 && t % sp.step == 0 && t / sp.step < sp.count;
}

__device__ __forceinline__ int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// A range [lo, hi] of outputs along axis a that includes every output whose (average or
// adaptive) window holds input i; membership is then decided by span_has on the real span.
__device__ __forceinline__ void candidates(const PoolGeom& g, int a, int64_t i, int64_t& lo, int64_t& hi) {
  const int64_t O = a == 0 ? g.OD : (a == 1 ? g.OH : g.OW);
  const int64_t I = a == 0 ? g.D : (a == 1 ? g.H : g.W);
  if (g.kind == kPoolAvg) {  // unclipped window [o*s - p, o*s - p + k) holds i
    lo = floor_div(i + g.p[a] - g.k[a], g.s[a]) + 1;
    hi = floor_div(i + g.p[a], g.s[a]);
  } else {  // adaptive: [floor(o*I/O), ceil((o+1)*I/O)) holds i, widened by one each side
    lo = (i * O) / I - 1;
    hi = ((i + 1) * O + I - 1) / I;
  }
  if (lo < 0) lo = 0;
  if (hi > O - 1) hi = O - 1;
}

template <typename T>
__global__ void forward_kernel(PoolGeom g, const T* x, T* out, int64_t* index) {
  const int64_t total = g.N * g.C * g.OD * g.OH * g.OW;
  for (int64_t t = global_thread(); t < total; t += grid_stride()) {
    const int64_t ow = t % g.OW, oh = (t / g.OW) % g.OH, od = (t / (g.OW * g.OH)) % g.OD;
    const int64_t c = (t / (g.OW * g.OH * g.OD)) % g.C, n = t / (g.OW * g.OH * g.OD * g.C);
    pool_forward_at<T>(g, x, out, index, n, c, od, oh, ow);
  }
}

// Average kinds: one thread per grad_input element gathers the outputs whose windows hold it,
// in increasing flat output order (od, then oh, then ow).
template <typename T>
__global__ void avg_backward_kernel(PoolGeom g, const T* go, T* gi) {
  const int64_t total = g.N * g.C * g.D * g.H * g.W;
  for (int64_t t = global_thread(); t < total; t += grid_stride()) {
    const int64_t w = t % g.W, h = (t / g.W) % g.H, d = (t / (g.W * g.H)) % g.D;
    const int64_t c = (t / (g.W * g.H * g.D)) % g.C, n = t / (g.W * g.H * g.D * g.C);
    const T* gop = go + n * g.os[0] + c * g.os[1];
    int64_t lod, hid, loh, hih, low, hiw;
    candidates(g, 0, d, lod, hid);
    candidates(g, 1, h, loh, hih);
    candidates(g, 2, w, low, hiw);
    T acc = T(0.0);
    for (int64_t od = lod; od <= hid; ++od) {
      const PoolSpan a = pool_span_of(g, 0, od);
      if (!span_has(a, d)) continue;
      for (int64_t oh = loh; oh <= hih; ++oh) {
        const PoolSpan b = pool_span_of(g, 1, oh);
        if (!span_has(b, h)) continue;
        for (int64_t ow = low; ow <= hiw; ++ow) {
          const PoolSpan cc = pool_span_of(g, 2, ow);
          if (!span_has(cc, w)) continue;
          const int64_t divisor = pool_window_divisor(g.kind, a, b, cc, g.count_include_pad, g.divisor_override);
          acc = pool_grad_add(acc, pool_avg_grad_term(gop[od * g.os[2] + oh * g.os[3] + ow * g.os[4]], divisor));
        }
      }
    }
    gi[n * g.xs[0] + c * g.xs[1] + d * g.xs[2] + h * g.xs[3] + w * g.xs[4]] = acc;
  }
}

// Max kinds: one thread per (n, c) plane zeroes it, then adds each output's gradient at its
// index in increasing flat output order (exact for any index inside the plane, as the CPU).
template <typename T>
__global__ void max_backward_kernel(PoolGeom g, const T* go, const int64_t* index, T* gi) {
  const int64_t planes = g.N * g.C, plane = g.D * g.H * g.W;
  for (int64_t t = global_thread(); t < planes; t += grid_stride()) {
    const int64_t n = t / g.C, c = t % g.C;
    T* gp = gi + n * g.xs[0] + c * g.xs[1];
    const T* gop = go + n * g.os[0] + c * g.os[1];
    const int64_t* ip = index + n * g.is[0] + c * g.is[1];
    for (int64_t d = 0; d < g.D; ++d)
      for (int64_t h = 0; h < g.H; ++h)
        for (int64_t w = 0; w < g.W; ++w) gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]] = T(0.0);
    for (int64_t od = 0; od < g.OD; ++od)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const int64_t i = ip[od * g.is[2] + oh * g.is[3] + ow * g.is[4]];
          if (i < 0 || i >= plane) continue;  // the CPU throws; a kernel cannot (see pool_backward)
          T& dst = gp[(i / (g.H * g.W)) * g.xs[2] + ((i / g.W) % g.H) * g.xs[3] + (i % g.W) * g.xs[4]];
          dst = pool_grad_add(dst, gop[od * g.os[2] + oh * g.os[3] + ow * g.os[4]]);
        }
  }
}

void no_reference(bool reference) {
  if (reference) throw std::invalid_argument("repmode._C_cuda pooling: the scalar references are CPU-only");
}

}  // namespace

// Partition: one thread per output element (grid-stride), running pool_max_window /
// pool_avg_window over its window exactly as the CPU does.
void pool_forward(int dtype, int kind, uintptr_t x, uintptr_t out, uintptr_t index, const Ints& in_sizes,
                  const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil,
                  bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is,
                  uintptr_t stream, bool reference) {
  no_reference(reference);
  const PoolGeom g = pool_geom_of(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os,
                                  is, "repmode._C_cuda pooling");
  StreamScope scope(stream);
  const int64_t total = g.N * g.C * g.OD * g.OH * g.OW;
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    forward_kernel<T>
        <<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(x), ptr<T>(out), ptr<int64_t>(index));
    check_launch("pool forward_kernel");
  });
}

// Partition: average kinds, one thread per grad_input element (a gather over the windows that
// hold it, in increasing output order); max kinds, one thread per (n, c) plane (the CPU's
// scatter in increasing output order: indices may point anywhere in the plane). An index outside
// its plane is skipped here, where the CPU throws std::out_of_range (a kernel cannot throw).
void pool_backward(int dtype, int kind, uintptr_t grad_output, uintptr_t index, uintptr_t grad_input,
                   const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p,
                   const Ints& dil, bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os,
                   const Ints& is, uintptr_t stream, bool reference) {
  no_reference(reference);
  const PoolGeom g = pool_geom_of(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os,
                                  is, "repmode._C_cuda pooling");
  StreamScope scope(stream);
  const int64_t total = g.N * g.C * g.D * g.H * g.W;
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (pool_is_max(g.kind)) {
      max_backward_kernel<T><<<blocks_for(g.N * g.C), kBlock, 0, scope.get()>>>(
          g, ptr<const T>(grad_output), ptr<const int64_t>(index), ptr<T>(grad_input));
      check_launch("pool max_backward_kernel");
    } else {
      avg_backward_kernel<T>
          <<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(grad_output), ptr<T>(grad_input));
      check_launch("pool avg_backward_kernel");
    }
  });
}

}  // namespace repmode::cuda

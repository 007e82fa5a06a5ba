// Convolution on the GPU: every output is one call of its canonical order in
// csrc/common/convolution.h (the functions the CPU's reference uses and its lowered GEMM
// reproduces), so the bits are the CPU's; the kernels only decide which thread computes what.
#include <algorithm>
#include <cstdint>

#include "../common/convolution.h"
#include "matmul.cuh"
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

// The lowered columns of images n0 .. n0+cnt-1: col[i] is (Ci * kvol) x L, row (ci, f), so the rows
// of group grp are the group's K x L matrix of csrc/cpu/convolution.cpp. A thread per (image,
// channel, position) writes that position's kvol rows (conv_lowered_at for each kernel offset:
// conv_each_offset): the index divisions are paid once per kvol elements,
// not several times per element, and neighbouring threads still write neighbouring columns.
template <typename T>
__global__ void im2col_kernel(ConvGeom g, const T* x, int64_t n0, int64_t cnt, T* col) {
  const int64_t L = g.out_len(), kvol = g.kvol(), lin = g.in_len(), total = cnt * g.Ci * L;
  for (int64_t t = global_thread(); t < total; t += grid_stride()) {
    const int64_t p = t % L, ic = t / L;  // ic = i * Ci + ci
    int64_t o[3];
    conv_unflatten(g.out, p, o);
    const T* xc = x + (n0 * g.Ci + ic) * lin;
    T* dst = col + ic * kvol * L + p;
    conv_each_offset(g, [&](const int64_t* kk, int64_t f) { dst[f * L] = conv_lowered_at<T>(g, xc, o, kk); });
  }
}

// col2im of images n0 .. n0+cnt-1: gx[n, ci, pos] gathers gcol[i] ((Ci * kvol) x L, row (ci, f))
// in conv_grad_input_gather's order, then the bias.
template <typename T>
__global__ void col2im_kernel(ConvGeom g, const T* gcol, const T* bias, int64_t n0, int64_t cnt, T* gx) {
  const int64_t L = g.out_len(), kvol = g.kvol(), lin = g.in_len(), total = cnt * g.Ci * lin;
  for (int64_t t = global_thread(); t < total; t += grid_stride()) {
    const int64_t pos = t % lin, ci = (t / lin) % g.Ci, i = t / (lin * g.Ci);
    const T* rows = gcol + (i * g.Ci + ci) * kvol * L;
    const T v = conv_grad_input_gather<T>(g, pos, [&](int64_t f, int64_t op) { return rows[f * L + op]; });
    gx[(n0 * g.Ci) * lin + t] = bias ? conv_add_bias(v, bias[ci]) : v;
  }
}

template <typename T>
__global__ void bias_kernel(ConvGeom g, const T* bias, T* y) {
  const int64_t L = g.out_len(), total = g.N * g.Co * L;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) y[i] = conv_add_bias(y[i], bias[(i / L) % g.Co]);
}

// Scratch bounds: rounds of images whose weight-gradient partials, or whose lowered columns,
// hold at most this many elements (at least one image's worth).
constexpr int64_t kPartialElems = int64_t(1) << 24;
constexpr int64_t kColumnElems = int64_t(1) << 25;

// The input gradient through the canonical GEMM: per round of images and per group,
// gcol (K x L) = W_g^T (K x Co/G) · gY_g (Co/G x L), each entry the GEMM order over co (GemmSum)
// then canon() (the partial P_f of conv_grad_input_at); then col2im gathers the partials per input
// element in increasing f (conv_grad_input_gather), as the CPU does.
template <typename T>
void grad_input_by_gemm(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, cudaStream_t stream) {
  const int64_t L = g.out_len(), K = g.kdim(), cog = g.cog(), per_image = g.Ci * g.kvol() * L;
  const int64_t round = std::max<int64_t>(1, std::min<int64_t>(g.N, kColumnElems / per_image));
  StreamScratch<T> scratch(round * per_image, stream);
  T* gcol = scratch.get();
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0);
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm_async<T>(cnt, K, L, cog, w + grp * cog * K, 0, 1, K, gy + (n0 * g.Co + grp * cog) * L, g.Co * L, L, 1,
                    gcol + grp * K * L, per_image, L, 1, stream);
    col2im_kernel<T><<<blocks_for(cnt * g.Ci * g.in_len()), kBlock, 0, stream>>>(g, gcol, bias, n0, cnt, gx);
    check_launch("conv col2im_kernel");
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

// The forward through the canonical GEMM: per round of images and per group,
// Y_g (Co/G x L) = W_g (Co/G x K) · col (K x L), batched over the round's images. Each output is
// the GEMM order over k = (ci, f) row-major (GemmSum) then canon(): conv_forward_at's order (the
// CPU's lowering); the bias is then added once.
template <typename T>
void forward_by_gemm(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, cudaStream_t stream) {
  const int64_t L = g.out_len(), K = g.kdim(), cog = g.cog(), per_image = g.Ci * g.kvol() * L;
  const int64_t round = std::max<int64_t>(1, std::min<int64_t>(g.N, kColumnElems / per_image));
  StreamScratch<T> scratch(round * per_image, stream);
  T* col = scratch.get();
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0);
    im2col_kernel<T><<<blocks_for(cnt * g.Ci * L), kBlock, 0, stream>>>(g, x, n0, cnt, col);
    check_launch("conv im2col_kernel");
    for (int64_t grp = 0; grp < g.G; ++grp)
      gemm_async<T>(cnt, cog, L, K, w + grp * cog * K, 0, K, 1, col + grp * K * L, per_image, L, 1,
                    y + (n0 * g.Co + grp * cog) * L, g.Co * L, L, 1, stream);
  }
  if (bias) {
    bias_kernel<T><<<blocks_for(g.N * g.Co * L), kBlock, 0, stream>>>(g, bias, y);
    check_launch("conv bias_kernel");
  }
}

}  // namespace

// Partition: groups with at least 8 output channels and 8-term sums go through the canonical GEMM
// (forward_by_gemm: lowered columns in scratch, one GEMM block per output tile); small ones run
// one thread per output element y[n, co, pos] (conv_forward_at, no data reuse). Both compute the
// same order per output, so the choice (by shape only) never changes bits.
void conv_forward(int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y,
                  uintptr_t stream) {
  const ConvGeom g = geom_of(geom);
  StreamScope scope(stream);
  const int64_t total = g.N * g.Co * g.out_len();
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (g.cog() >= 8 && g.kdim() >= 8) {
      forward_by_gemm<T>(g, ptr<const T>(x), ptr<const T>(w), ptr<const T>(bias), ptr<T>(y), scope.get());
      return;
    }
    forward_kernel<T><<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(x), ptr<const T>(w),
                                                                     ptr<const T>(bias), ptr<T>(y));
    check_launch("conv forward_kernel");
  });
}

// Partition: groups with at least 8 output channels and 8-row lowered matrices go through the
// tiled GEMM (grad_input_by_gemm: partials in scratch, then one thread per input element gathers
// them); small ones run one thread per input-gradient element gx[n, ci, pos] (conv_grad_input_at).
// Both are conv_grad_input_at's order exactly, so the choice (by shape only) never changes bits.
void conv_grad_input(int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx,
                     uintptr_t stream) {
  const ConvGeom g = geom_of(geom);
  StreamScope scope(stream);
  const int64_t total = g.N * g.Ci * g.in_len();
  if (total == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (g.cog() >= 8 && g.kdim() >= 8 && g.out_len() > 0) {
      grad_input_by_gemm<T>(g, ptr<const T>(gy), ptr<const T>(w), ptr<const T>(bias), ptr<T>(gx), scope.get());
      return;
    }
    grad_input_kernel<T><<<blocks_for(total), kBlock, 0, scope.get()>>>(g, ptr<const T>(gy), ptr<const T>(w),
                                                                        ptr<const T>(bias), ptr<T>(gx));
    check_launch("conv grad_input_kernel");
  });
}

// Partition: the canonical order is P_n (the GEMM order over image n's output positions) per
// weight element, then gw = P_0 + P_1 + ... in increasing n. Images go in rounds whose partials
// (and lowered columns) fit the scratch bounds; within a round the partials of all its images are
// computed into scratch (cudaMallocAsync on the stream) by the tiled GEMM, batched over images, or
// by one thread per (image, weight element); then one thread per weight element adds the round's
// partials to its running sum in increasing n — the CPU's combination exactly.
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
    // Through the tiled GEMM where groups have at least 8 output channels and 8-row lowered
    // matrices (P_n^T = col_n (K x L) · gY_n^T, the GEMM order over positions); else one thread
    // per (image, weight element) runs conv_grad_weight_partial. Same order, so the same bits.
    const bool by_gemm = g.cog() >= 8 && g.kdim() >= 8;
    const int64_t L = g.out_len(), K = g.kdim(), cog = g.cog(), per_image = g.Ci * g.kvol() * L;
    int64_t round = std::max<int64_t>(1, std::min<int64_t>(g.N, kPartialElems / wsize));
    if (by_gemm) round = std::max<int64_t>(1, std::min<int64_t>(round, kColumnElems / per_image));
    StreamScratch<T> scratch(round * (wsize + (by_gemm ? per_image : 0)), scope.get());
    T* part = scratch.get();
    T* col = part + round * wsize;
    for (int64_t n0 = 0; n0 < g.N; n0 += round) {
      const int64_t cnt = std::min(round, g.N - n0);
      if (by_gemm) {
        im2col_kernel<T><<<blocks_for(cnt * g.Ci * L), kBlock, 0, scope.get()>>>(g, ptr<const T>(x), n0, cnt, col);
        check_launch("conv im2col_kernel");
        for (int64_t grp = 0; grp < g.G; ++grp)  // slot (co, cl, f) = row (cl, f), column co - grp * cog
          gemm_async<T>(cnt, K, cog, L, col + grp * K * L, per_image, L, 1,
                        ptr<const T>(gy) + (n0 * g.Co + grp * cog) * L, g.Co * L, 1, L, part + grp * cog * K, wsize, 1,
                        K, scope.get());
      } else {
        grad_weight_partial_kernel<T>
            <<<blocks_for(cnt * wsize), kBlock, 0, scope.get()>>>(g, ptr<const T>(x), ptr<const T>(gy), n0, cnt, part);
        check_launch("conv grad_weight_partial_kernel");
      }
      grad_weight_combine_kernel<T>
          <<<blocks_for(wsize), kBlock, 0, scope.get()>>>(wsize, part, n0, cnt, n0 + cnt == g.N, out);
      check_launch("conv grad_weight_combine_kernel");
    }
  });
}

}  // namespace repmode::cuda

// Convolution on the CPU by lowering onto the canonical GEMM (matmul.h); the lowering itself
// (chunks, im2col/col2im, tables) is in convolution_lowering.{h,cpp}. Depthwise convolutions
// take the direct kernel of convolution_depthwise.cpp instead (the same chains).
//
// Forward: for image n and group g, Y_g (Co/G × L) = W_g (Co/G × K) · col (K × L), where
// col[(ci, f), pos] = x_padded[n, ci, pos·stride − pad + f·dil] (im2col) and K runs over
// (ci, f) row-major: each output is the GEMM order over k (matmul.h), which is exactly the
// sum of conv_forward_at. Output positions are cut into chunks so that a chunk's
// columns stay in L2; chunks only partition outputs.
//
// Input gradient: gcol (K × L) = W_g^T · gY_g (each entry the GEMM order over co), then
// col2im adds gcol[(ci, f), pos] into gx at the position pos reads. For one input element
// the partials must arrive in increasing f. Chunks of whole output rows (all leading
// spatial dims but the last) are processed from the last row chunk to the first: a
// larger leading offset (f0, f1) reaches an element from a smaller output row, so the
// rows visited later carry the larger offsets, and inside a chunk col2im walks f in
// increasing order.
//
// Weight gradient: per image, P_n^T (K × Co/G) = col (K × L) · gY_g^T (L × Co/G) — the GEMM
// order over positions; then gw = P_0 + P_1 + ... in increasing n. Several images run at
// once (one per thread, each in its own buffer), and their partials are added in order; for
// L <= 256 (one chunk per image) the partials and their sum are fused into one segmented GEMM.

#include "convolution.h"
#include "dispatch.h"
#include "entry_points.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <omp.h>

#include "../common/matmul.h"  // kGemmChunk
#include "convolution_lowering.h"
#include "matmul.h"
#include "parallel.h"

namespace repmode::cpu {

using namespace lowering;

namespace {

// Forward of small images: per round and group, the images' columns are lowered side by side
// into one K × (images·L) matrix, one GEMM gives Y = W_g · cols (each output still the chain
// over k), and the result is copied to its images (with the bias).
template <typename T>
void conv_forward_small(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig();
  const int64_t round = images_per_round(g.N, K * L + cog * L);
  T* cols = thread_buffer<T>(size_t(round * K * L), 0);
  T* ybuf = thread_buffer<T>(size_t(round * cog * L), 1);
  const std::vector<int64_t> idx = lowering_table(g);
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0), ld = cnt * L;
    for (int64_t grp = 0; grp < g.G; ++grp) {
      parallel_for(cnt, nthreads, K * L, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          im2col_table<T>(g, cig, x + ((n0 + i) * g.Ci + grp * cig) * g.in_len(), idx.data(), cols + i * L, ld);
      });
      gemm<T>(1, cog, ld, K, w + grp * cog * K, 0, K, 1, cols, 0, ld, 1, ybuf, 0, ld, 1, nthreads);
      parallel_for(cnt, nthreads, cog * L, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t c = 0; c < cog; ++c) {
            const T* src = ybuf + c * ld + i * L;
            T* r = y + ((n0 + i) * g.Co + grp * cog + c) * L;
            if (bias) {
              const T b = bias[grp * cog + c];
              for (int64_t j = 0; j < L; ++j) r[j] = conv_add_bias(src[j], b);
            } else {
              for (int64_t j = 0; j < L; ++j) r[j] = src[j];
            }
          }
      });
    }
  }
}

// Input gradient of small images: the images' gy side by side (cog × images·L), one GEMM
// gives gcols = W_g^T · gy, then col2im per image. One image is one row chunk, so col2im adds
// each input element's partials in increasing offset order, as in the general path.
template <typename T>
void conv_grad_input_small(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig(), lin = g.in_len();
  const int64_t round = images_per_round(g.N, K * L + cog * L);
  T* gcols = thread_buffer<T>(size_t(round * K * L), 0);
  T* gyb = thread_buffer<T>(size_t(round * cog * L), 1);
  const std::vector<int64_t> idx = lowering_table(g);
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0), ld = cnt * L;
    for (int64_t grp = 0; grp < g.G; ++grp) {
      parallel_for(cnt, nthreads, cog * L, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t c = 0; c < cog; ++c)
            std::memcpy(gyb + c * ld + i * L, gy + ((n0 + i) * g.Co + grp * cog + c) * L, size_t(L) * sizeof(T));
      });
      gemm<T>(1, K, ld, cog, w + grp * cog * K, 0, 1, K, gyb, 0, ld, 1, gcols, 0, ld, 1, nthreads);
      parallel_for(cnt, nthreads, K * L, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          T* gxt = gx + ((n0 + i) * g.Ci + grp * cig) * lin;
          for (int64_t e = 0; e < cig * lin; ++e) gxt[e] = T(0);
          col2im_table_add<T>(g, cig, gxt, idx.data(), gcols + i * L, ld);
          for (int64_t c = 0; c < cig; ++c) {
            T* r = gxt + c * lin;
            if (bias) {
              const T b = bias[grp * cig + c];
              for (int64_t e = 0; e < lin; ++e) r[e] = conv_add_bias(canon(r[e]), b);
            } else {
              for (int64_t e = 0; e < lin; ++e) r[e] = canon(r[e]);
            }
          }
        }
      });
    }
  }
}

}  // namespace

template <typename T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig();
  if (g.N == 0 || g.Co == 0 || L == 0) return;
  if (conv_depthwise_direct(g)) return conv_depthwise_forward<T>(g, x, w, bias, y, nthreads);
  const int64_t lc = std::min<int64_t>(L, std::max<int64_t>(16, kChunkElems / std::max<int64_t>(K, 1) / 16 * 16));
  const int64_t nchunks = (L + lc - 1) / lc;
  const double work = double(g.N) * double(g.Co) * double(L) * double(K);
  if (K > 0 && K * L <= small_image_elems() && g.N > 1) {
    conv_forward_small<T>(g, x, w, bias, y, nthreads);
    return;
  }
  run_tasks(g.N * g.G * nchunks, nthreads, work, [&](int64_t t, int inner) {
    const int64_t ch = t % nchunks, grp = (t / nchunks) % g.G, n = t / (nchunks * g.G);
    const int64_t p0 = ch * lc, p1 = std::min(L, p0 + lc), m = p1 - p0;
    T* yt = y + (n * g.Co + grp * cog) * L + p0;
    if (K == 0) {
      for (int64_t c = 0; c < cog; ++c)
        for (int64_t j = 0; j < m; ++j) yt[c * L + j] = T(0);
    } else {
      T* col = thread_buffer<T>(size_t(K * m), 0);
      std::vector<Segment>& segs = thread_segments();
      chunk_segments(g, p0, p1, segs);
      im2col<T>(g, cig, x + (n * g.Ci + grp * cig) * g.in_len(), segs, col, m);
      gemm<T>(1, cog, m, K, w + grp * cog * K, 0, K, 1, col, 0, m, 1, yt, 0, L, 1, inner);
    }
    if (bias)
      for (int64_t c = 0; c < cog; ++c) {
        const T b = bias[grp * cog + c];
        for (int64_t j = 0; j < m; ++j) yt[c * L + j] = conv_add_bias(yt[c * L + j], b);
      }
  });
}

template <typename T>
void conv_grad_input(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig(), lin = g.in_len();
  if (g.N == 0 || g.Ci == 0 || lin == 0) return;
  if (conv_depthwise_direct(g)) return conv_depthwise_grad_input<T>(g, gy, w, bias, gx, nthreads);
  const int64_t rows = g.out[0] * g.out[1], rowlen = g.out[2];
  const int64_t crow = std::max<int64_t>(1, kChunkElems / std::max<int64_t>(K * rowlen, 1));
  const double work = double(g.N) * double(g.Co) * double(L) * double(K);
  if (K > 0 && L > 0 && cog > 0 && K * L <= small_image_elems() && g.N > 1) {
    conv_grad_input_small<T>(g, gy, w, bias, gx, nthreads);
    return;
  }
  run_tasks(g.N * g.G, nthreads, work, [&](int64_t t, int inner) {
    const int64_t grp = t % g.G, n = t / g.G;
    T* gxt = gx + (n * g.Ci + grp * cig) * lin;
    for (int64_t i = 0; i < cig * lin; ++i) gxt[i] = T(0);
    if (K > 0 && L > 0 && cog > 0) {
      for (int64_t r1 = rows; r1 > 0;) {
        const int64_t r0 = std::max<int64_t>(0, r1 - crow);
        const int64_t p0 = r0 * rowlen, p1 = r1 * rowlen, m = p1 - p0;
        T* col = thread_buffer<T>(size_t(K * m), 0);
        gemm<T>(1, K, m, cog, w + grp * cog * K, 0, 1, K, gy + (n * g.Co + grp * cog) * L + p0, 0, L, 1, col, 0, m, 1,
                inner);
        std::vector<Segment>& segs = thread_segments();
        chunk_segments(g, p0, p1, segs);
        col2im_add<T>(g, cig, gxt, segs, col, m);
        r1 = r0;
      }
    }
    for (int64_t c = 0; c < cig; ++c) {
      const T b = bias ? bias[grp * cig + c] : T(0);
      T* r = gxt + c * lin;
      if (bias)
        for (int64_t i = 0; i < lin; ++i) r[i] = conv_add_bias(canon(r[i]), b);
      else
        for (int64_t i = 0; i < lin; ++i) r[i] = canon(r[i]);
    }
  });
}

// acc = P_0 (n = 0), then acc + P_n in increasing n, for the round's partials slots[i] =
// P_(n0+i). acc and the partials share the layout (G, K, Co/G), so the adds run over
// contiguous memory; each element's sequence is the documented one.
template <typename T>
void accumulate_partials(const T* slots, int64_t wsize, int64_t n0, int64_t cnt, T* acc, int nthreads) {
  parallel_for(wsize, nthreads, cnt, [&](int64_t e0, int64_t e1) {
    for (int64_t i = 0; i < cnt; ++i) {
      const T* s = slots + i * wsize;
      if (n0 + i == 0)
        for (int64_t e = e0; e < e1; ++e) acc[e] = s[e];
      else
        for (int64_t e = e0; e < e1; ++e) acc[e] = canon(T(acc[e] + s[e]));
    }
  });
}

// gw[co, k] from the accumulated (G, K, Co/G) layout (an exact copy).
template <typename T>
void store_weight_grad(const ConvGeom& g, const T* acc, T* gw, int nthreads) {
  const int64_t K = g.kdim(), cog = g.cog();
  parallel_for(g.Co, nthreads, K, [&](int64_t c0, int64_t c1) {
    for (int64_t co = c0; co < c1; ++co) {
      const T* s = acc + (co / cog) * K * cog + co % cog;
      T* out = gw + co * K;
      for (int64_t k = 0; k < K; ++k) out[k] = s[k * cog];
    }
  });
}

// Weight gradient of small images: per round and group, the images' columns and transposed
// gy are built in parallel, then one batched GEMM gives every image's partial.
template <typename T>
void conv_grad_weight_small(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig(), wsize = g.Co * K;
  const int64_t round = images_per_round(g.N, K * L + L * cog + wsize);
  T* cols = thread_buffer<T>(size_t(round * K * L), 0);
  T* gyts = thread_buffer<T>(size_t(round * L * cog), 1);
  T* slots = thread_buffer<T>(size_t(round * wsize), 2);
  std::vector<T> acc(static_cast<size_t>(wsize));
  const std::vector<int64_t> idx = lowering_table(g);
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0);
    for (int64_t grp = 0; grp < g.G; ++grp) {
      parallel_for(cnt, nthreads, K * L + L * cog, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t n = n0 + i;
          im2col_table<T>(g, cig, x + (n * g.Ci + grp * cig) * g.in_len(), idx.data(), cols + i * K * L, L);
          const T* gyg = gy + (n * g.Co + grp * cog) * L;
          T* gyt = gyts + i * L * cog;
          for (int64_t c = 0; c < cog; ++c)
            for (int64_t p = 0; p < L; ++p) gyt[p * cog + c] = gyg[c * L + p];
        }
      });
      gemm<T>(cnt, K, cog, L, cols, K * L, L, 1, gyts, L * cog, cog, 1, slots + grp * K * cog, wsize, cog, 1, nthreads);
    }
    accumulate_partials(slots, wsize, n0, cnt, acc.data(), nthreads);
  }
  store_weight_grad(g, acc.data(), gw, nthreads);
}

// Weight gradient when an image has at most one chunk of positions (L <= 256): each image's
// partial is one chunk of the GEMM order over its L positions (short float32 ones in float64),
// and the partials are added in image order, so gemm_segments computes them fused (segments of
// L terms): the running sum stays in the output tile between images instead of going through a
// partial per image in memory. A round of images is lowered side by side into cols
// (K × images·L), their gy copied beside each other. With many
// output channels (Co/G >= 256) the product is gw_g (Co/G × K) = gy · colsᵀ, written straight
// into gw; with few, the wide side K is the GEMM's rows, acc (K × Co/G) = cols · gyᵀ, and acc is
// then transposed into gw (cheap when Co/G is small). fma(a, b, c) = fma(b, a, c), so both are
// the documented chains, and the bits do not depend on the choice or on the round size.
template <typename T>
void conv_grad_weight_segments(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig();
  const bool direct = cog >= 256;
  const int64_t round = std::min<int64_t>(g.N, std::max<int64_t>(1, 8 * kChunkElems / (K * L + L * cog)));
  T* cols = thread_buffer<T>(size_t(round * K * L), 0);
  T* gyb = thread_buffer<T>(size_t(round * L * cog), 1);  // direct: (cog, images·L); else (images·L, cog)
  std::vector<T> acc(direct ? 0 : static_cast<size_t>(g.Co * K));
  const std::vector<int64_t> idx = lowering_table(g);
  for (int64_t n0 = 0; n0 < g.N; n0 += round) {
    const int64_t cnt = std::min(round, g.N - n0), width = cnt * L;
    const bool more = n0 > 0, last = n0 + cnt == g.N;
    for (int64_t grp = 0; grp < g.G; ++grp) {
      parallel_for(cnt, nthreads, K * L + L * cog, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t n = n0 + i;
          im2col_table<T>(g, cig, x + (n * g.Ci + grp * cig) * g.in_len(), idx.data(), cols + i * L, width);
          const T* gyg = gy + (n * g.Co + grp * cog) * L;
          if (direct) {
            for (int64_t c = 0; c < cog; ++c) std::memcpy(gyb + c * width + i * L, gyg + c * L, size_t(L) * sizeof(T));
          } else {
            T* gyt = gyb + i * L * cog;
            for (int64_t c = 0; c < cog; ++c)
              for (int64_t p = 0; p < L; ++p) gyt[p * cog + c] = gyg[c * L + p];
          }
        }
      });
      if (direct)
        gemm_segments<T>(cog, K, width, L, gyb, width, 1, cols, 1, width, gw + grp * cog * K, K, 1, more, last,
                         nthreads);
      else
        gemm_segments<T>(K, cog, width, L, cols, width, 1, gyb, cog, 1, acc.data() + grp * K * cog, cog, 1, more, last,
                         nthreads);
    }
  }
  if (!direct) store_weight_grad(g, acc.data(), gw, nthreads);
}

template <typename T>
void conv_grad_weight(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  const int64_t K = g.kdim(), L = g.out_len(), cog = g.cog(), cig = g.cig();
  const int64_t wsize = g.Co * K;
  if (wsize == 0) return;
  if (g.N == 0 || L == 0) {
    for (int64_t i = 0; i < wsize; ++i) gw[i] = T(0);
    return;
  }
  if (conv_depthwise_direct(g)) return conv_depthwise_grad_weight<T>(g, x, gy, gw, nthreads);
  if (L <= kGemmChunk) return conv_grad_weight_segments<T>(g, x, gy, gw, nthreads);
  if (K * L <= small_image_elems() && g.N > 1) {
    conv_grad_weight_small<T>(g, x, gy, gw, nthreads);
    return;
  }
  const double work = double(g.N) * double(g.Co) * double(L) * double(K);
  if (work < double(1 << 18)) nthreads = 1;
  // Images per round: a few per thread, taken dynamically, so a thread slowed by other load
  // on its core does not hold the round up; their partials are then added in order.
  const int64_t per_round = nthreads <= 1 ? 1 : std::min<int64_t>(g.N, 4 * int64_t(nthreads));
  // slots[i] holds image (n0 + i)'s partial, transposed per group: (G, K, Co/G).
  std::vector<T> slots(size_t(per_round * wsize)), acc(static_cast<size_t>(wsize));
  // Per thread: one image's lowered columns and its transposed gy (freed when the call ends:
  // an image's columns can be large).
  const int team = int(std::max<int64_t>(1, std::min<int64_t>(nthreads, per_round)));
  std::vector<std::vector<T>> cols(static_cast<size_t>(team));
  std::vector<std::vector<T>> gyts(static_cast<size_t>(team));
  // One image's partial into slot i, with `inner` threads inside the GEMM.
  auto partial = [&](int64_t n, int64_t i, int inner) {
    T* slot = slots.data() + i * wsize;
    const size_t me = size_t(inner > 1 ? 0 : omp_get_thread_num());
    cols[me].resize(size_t(K * L));
    gyts[me].resize(size_t(L * cog));
    T* col = cols[me].data();
    std::vector<Segment> segs;
    chunk_segments(g, 0, L, segs);
    // gy of the group transposed to (L, Co/G) (an exact copy), so the GEMM packs it by rows
    T* gyt = gyts[me].data();
    for (int64_t grp = 0; grp < g.G; ++grp) {
      im2col<T>(g, cig, x + (n * g.Ci + grp * cig) * g.in_len(), segs, col, L);
      const T* gyg = gy + (n * g.Co + grp * cog) * L;
      for (int64_t p0 = 0; p0 < L; p0 += 64) {
        const int64_t p1 = std::min<int64_t>(L, p0 + 64);
        for (int64_t c = 0; c < cog; ++c)
          for (int64_t p = p0; p < p1; ++p) gyt[p * cog + c] = gyg[c * L + p];
      }
      gemm<T>(1, K, cog, L, col, 0, L, 1, gyt, 0, cog, 1, slot + grp * K * cog, 0, cog, 1, inner);
    }
  };
  for (int64_t n0 = 0; n0 < g.N; n0 += per_round) {
    const int64_t cnt = std::min(per_round, g.N - n0);
    if (cnt == 1 || team == 1) {
      for (int64_t i = 0; i < cnt; ++i) partial(n0 + i, i, nthreads);
    } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
      for (int64_t i = 0; i < cnt; ++i) partial(n0 + i, i, 1);
    }
    accumulate_partials(slots.data(), wsize, n0, cnt, acc.data(), nthreads);
  }
  store_weight_grad(g, acc.data(), gw, nthreads);
}

template <typename T>
void conv_reference(int what, const ConvGeom& g, const T* a, const T* b, const T* bias, T* out) {
  if (what == 0) {
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t co = 0; co < g.Co; ++co)
        for (int64_t p = 0; p < g.out_len(); ++p)
          out[(n * g.Co + co) * g.out_len() + p] = conv_forward_at<T>(g, a, b, bias, n, co, p);
  } else if (what == 1) {
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t ci = 0; ci < g.Ci; ++ci)
        for (int64_t p = 0; p < g.in_len(); ++p)
          out[(n * g.Ci + ci) * g.in_len() + p] = conv_grad_input_out<T>(g, a, b, bias, n, ci, p);
  } else {
    for (int64_t co = 0; co < g.Co; ++co)
      for (int64_t c = 0; c < g.cig(); ++c)
        for (int64_t f = 0; f < g.kvol(); ++f)
          out[(co * g.cig() + c) * g.kvol() + f] = conv_grad_weight_at<T>(g, a, b, co, c, f);
  }
}

#define REPMODE_INSTANTIATE_CONV(T)                                                         \
  template void conv_forward<T>(const ConvGeom&, const T*, const T*, const T*, T*, int);    \
  template void conv_grad_input<T>(const ConvGeom&, const T*, const T*, const T*, T*, int); \
  template void conv_grad_weight<T>(const ConvGeom&, const T*, const T*, T*, int);          \
  template void conv_reference<T>(int, const ConvGeom&, const T*, const T*, const T*, T*);

REPMODE_INSTANTIATE_CONV(float)
REPMODE_INSTANTIATE_CONV(double)

#undef REPMODE_INSTANTIATE_CONV

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

namespace {

ConvGeom geom_of(const Ints& v) { return conv_geom_of(v, "repmode._C"); }

}  // namespace

void conv_forward(int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y, int nthreads) {
  const ConvGeom g = geom_of(geom);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    conv_forward<T>(g, ptr<const T>(x), ptr<const T>(w), ptr<const T>(bias), ptr<T>(y), nthreads);
  });
}

void conv_grad_input(int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx,
                     int nthreads) {
  const ConvGeom g = geom_of(geom);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    conv_grad_input<T>(g, ptr<const T>(gy), ptr<const T>(w), ptr<const T>(bias), ptr<T>(gx), nthreads);
  });
}

void conv_grad_weight(int dtype, const Ints& geom, uintptr_t x, uintptr_t gy, uintptr_t gw, int nthreads) {
  const ConvGeom g = geom_of(geom);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    conv_grad_weight<T>(g, ptr<const T>(x), ptr<const T>(gy), ptr<T>(gw), nthreads);
  });
}

void convolution_reference(int what, int dtype, const Ints& geom, uintptr_t a, uintptr_t b, uintptr_t bias,
                           uintptr_t out) {
  const ConvGeom g = geom_of(geom);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    conv_reference<T>(what, g, ptr<const T>(a), ptr<const T>(b), ptr<const T>(bias), ptr<T>(out));
  });
}

}  // namespace repmode::cpu

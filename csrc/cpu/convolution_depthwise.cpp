// Depthwise convolution (groups = Ci = Co: one input and one output channel per group) on the CPU
// without the GEMM lowering. The lowering runs one tiny GEMM per group (K = kvol, one output
// channel), whose packing, call and parallel-region costs dwarf the arithmetic; here the channels
// are the vector lanes instead.
//
// Every output is still the documented chain of csrc/common/convolution.h (docs/semantics.md
// "Convolution"), computed lane by lane:
//   forward      y[n,c,o]  = canon(fma chain from +0.0 over f in row-major order of
//                            w[c,f] · x_pad[n,c,i(o,f)]) (kvol <= 256: one chunk of the GEMM
//                            order), then + bias[c] (one rounding) when there is a bias;
//   grad input   gx[n,c,i] = canon(((+0.0 + P_f0) + P_f1) + ...) over the offsets f in row-major
//                            order that reach an output o, P_f = fma(w[c,f], gy[n,c,o], +0.0) (the
//                            GEMM order over the group's one output channel), then + bias[c];
//   grad weight  gw[c,f]   = P_0 (+ P_1) (+ ...) in image order, P_n = the GEMM order (chunks of
//                            256 positions, groups of 64 chunks) over the output positions o in
//                            row-major order of gy[n,c,o] · x_pad[n,c,i(o,f)].
// A task takes a block of kLanes channels of one image (forward, grad input) or of every image
// in order (grad weight), copies them channels-last into per-thread buffers (exact copies; the
// padding is a row of zeros there, so a padding term is the same fma with a +0.0 operand), and
// runs each lane's chain; channels past Co in the last block are computed on zeros and dropped.
// The loops are compiled for the active ISA path (rows_parallel): wider vectors only compute more
// lanes at once. Threads take whole tasks, so no output's sequence depends on them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "convolution.h"
#include "convolution_lowering.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

// Lanes (channels) per task: 16 float32 or 8 float64 (one 512-bit register per output position).
template <typename T>
constexpr int64_t kLanes = 64 / int64_t(sizeof(T));

// Output positions computed together in the forward (independent chains, for the FMA pipes).
constexpr int64_t kPosBlock = 4;

// Where each output position o reads at kernel offset f: tab[o * kvol + f] = the input position
// (within one channel), or `lin` (the zero row of the channels-last buffer) in the padding.
std::vector<int32_t> read_table(const ConvGeom& g) {
  const int64_t kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  std::vector<int32_t> tab(size_t(L * kvol));
  int64_t o[3], kk[3];
  for (int64_t p = 0; p < L; ++p) {
    conv_unflatten(g.out, p, o);
    for (int64_t f = 0; f < kvol; ++f) {
      conv_unflatten(g.k, f, kk);
      const int64_t ip = conv_input_pos(g, o, kk);
      tab[size_t(p * kvol + f)] = int32_t(ip < 0 ? lin : ip);
    }
  }
  return tab;
}

// The inverse: inv[i * kvol + f] = the output position that reads input position i at offset f,
// or -1 when none does (conv_output_pos; for one f the map o -> i is one-to-one).
std::vector<int32_t> gather_table(const ConvGeom& g) {
  const int64_t kvol = g.kvol(), lin = g.in_len();
  std::vector<int32_t> inv(size_t(lin * kvol));
  int64_t i[3], kk[3];
  for (int64_t p = 0; p < lin; ++p) {
    conv_unflatten(g.in, p, i);
    for (int64_t f = 0; f < kvol; ++f) {
      conv_unflatten(g.k, f, kk);
      inv[size_t(p * kvol + f)] = int32_t(conv_output_pos(g, i, kk));
    }
  }
  return inv;
}

// dst[r * W + l] = src[(c0 + l) * ld + r] for rows r < rows and lanes l < nl; lanes nl .. W-1 are
// +0.0 (an exact copy, channels-last).
template <typename T, int64_t W>
REPMODE_INLINE void to_lanes(const T* src, int64_t ld, int64_t rows, int64_t nl, T* dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += 32) {
    const int64_t r1 = std::min<int64_t>(rows, r0 + 32);
    for (int64_t l = 0; l < W; ++l) {
      if (l < nl) {
        const T* s = src + l * ld;
        for (int64_t r = r0; r < r1; ++r) dst[r * W + l] = s[r];
      } else {
        for (int64_t r = r0; r < r1; ++r) dst[r * W + l] = T(0);
      }
    }
  }
}

// dst[(l) * ld + r] = src[r * W + l] for lanes l < nl (back to channels-first).
template <typename T, int64_t W>
REPMODE_INLINE void from_lanes(const T* src, int64_t rows, int64_t nl, T* dst, int64_t ld) {
  for (int64_t r0 = 0; r0 < rows; r0 += 32) {
    const int64_t r1 = std::min<int64_t>(rows, r0 + 32);
    for (int64_t l = 0; l < nl; ++l) {
      T* d = dst + l * ld;
      for (int64_t r = r0; r < r1; ++r) d[r] = src[r * W + l];
    }
  }
}

// The weights of channels [c0, c0 + nl) as wt[f * W + l] (+0.0 in lanes past nl).
template <typename T, int64_t W>
REPMODE_INLINE void weights_to_lanes(const T* w, int64_t kvol, int64_t c0, int64_t nl, T* wt) {
  to_lanes<T, W>(w + c0 * kvol, kvol, kvol, nl, wt);
}

}  // namespace

bool conv_depthwise_direct(const ConvGeom& g) {
  return g.G == g.Ci && g.G == g.Co && g.kvol() <= kGemmChunk && g.in_len() < (int64_t(1) << 30) &&
         g.out_len() < (int64_t(1) << 30) && g.N > 0 && g.out_len() > 0 && g.in_len() > 0;
}

template <typename T>
void conv_depthwise_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Co, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W;
  const std::vector<int32_t> tab = read_table(g);
  const int32_t* tp = tab.data();
  rows_parallel(g.N * blocks, nthreads, L * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / blocks, c0 = (t % blocks) * W, nl = std::min<int64_t>(W, C - c0);
      T* xt = lowering::thread_buffer<T>(size_t((lin + 1) * W), 0);
      T* wt = lowering::thread_buffer<T>(size_t(kvol * W + W), 1);
      T* yt = lowering::thread_buffer<T>(size_t(L * W), 2);
      to_lanes<T, W>(x + (n * C + c0) * lin, lin, lin, nl, xt);
      for (int64_t l = 0; l < W; ++l) xt[lin * W + l] = T(0);  // the padding row
      weights_to_lanes<T, W>(w, kvol, c0, nl, wt);
      T* bt = wt + kvol * W;
      for (int64_t l = 0; l < W; ++l) bt[l] = (bias && l < nl) ? bias[c0 + l] : T(0);
      int64_t p = 0;
      for (; p + kPosBlock <= L; p += kPosBlock) {
        T acc[kPosBlock][W];
        for (int64_t q = 0; q < kPosBlock; ++q)
          for (int64_t l = 0; l < W; ++l) acc[q][l] = T(0);
        const int32_t* tq = tp + p * kvol;
        for (int64_t f = 0; f < kvol; ++f) {
          const T* __restrict wf = wt + f * W;
          for (int64_t q = 0; q < kPosBlock; ++q) {
            const T* __restrict xr = xt + int64_t(tq[q * kvol + f]) * W;
            T* __restrict aq = acc[q];
#pragma omp simd
            for (int64_t l = 0; l < W; ++l) aq[l] = repmode_fma(wf[l], xr[l], aq[l]);
          }
        }
        for (int64_t q = 0; q < kPosBlock; ++q)
          for (int64_t l = 0; l < W; ++l)
            yt[(p + q) * W + l] = bias ? conv_add_bias(canon(acc[q][l]), bt[l]) : canon(acc[q][l]);
      }
      for (; p < L; ++p) {
        T acc[W];
        for (int64_t l = 0; l < W; ++l) acc[l] = T(0);
        for (int64_t f = 0; f < kvol; ++f) {
          const T* __restrict wf = wt + f * W;
          const T* __restrict xr = xt + int64_t(tp[p * kvol + f]) * W;
#pragma omp simd
          for (int64_t l = 0; l < W; ++l) acc[l] = repmode_fma(wf[l], xr[l], acc[l]);
        }
        for (int64_t l = 0; l < W; ++l) yt[p * W + l] = bias ? conv_add_bias(canon(acc[l]), bt[l]) : canon(acc[l]);
      }
      from_lanes<T, W>(yt, L, nl, y + (n * C + c0) * L, L);
    }
  });
}

template <typename T>
void conv_depthwise_grad_input(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Ci, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W;
  const std::vector<int32_t> inv = gather_table(g);
  const int32_t* ip = inv.data();
  rows_parallel(g.N * blocks, nthreads, lin * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / blocks, c0 = (t % blocks) * W, nl = std::min<int64_t>(W, C - c0);
      T* gyt = lowering::thread_buffer<T>(size_t(L * W), 0);
      T* wt = lowering::thread_buffer<T>(size_t(kvol * W + W), 1);
      T* gxt = lowering::thread_buffer<T>(size_t(lin * W), 2);
      to_lanes<T, W>(gy + (n * C + c0) * L, L, L, nl, gyt);
      weights_to_lanes<T, W>(w, kvol, c0, nl, wt);
      T* bt = wt + kvol * W;
      for (int64_t l = 0; l < W; ++l) bt[l] = (bias && l < nl) ? bias[c0 + l] : T(0);
      int64_t i = 0;
      for (; i + kPosBlock <= lin; i += kPosBlock) {
        T acc[kPosBlock][W];
        for (int64_t q = 0; q < kPosBlock; ++q)
          for (int64_t l = 0; l < W; ++l) acc[q][l] = T(0);
        const int32_t* iq = ip + i * kvol;
        for (int64_t f = 0; f < kvol; ++f) {
          const T* __restrict wf = wt + f * W;
          for (int64_t q = 0; q < kPosBlock; ++q) {
            const int32_t o = iq[q * kvol + f];
            if (o < 0) continue;
            const T* __restrict gr = gyt + int64_t(o) * W;
            T* __restrict aq = acc[q];
#pragma omp simd
            for (int64_t l = 0; l < W; ++l) aq[l] = aq[l] + repmode_fma(wf[l], gr[l], T(0));
          }
        }
        for (int64_t q = 0; q < kPosBlock; ++q)
          for (int64_t l = 0; l < W; ++l)
            gxt[(i + q) * W + l] = bias ? conv_add_bias(canon(acc[q][l]), bt[l]) : canon(acc[q][l]);
      }
      for (; i < lin; ++i) {
        T acc[W];
        for (int64_t l = 0; l < W; ++l) acc[l] = T(0);
        for (int64_t f = 0; f < kvol; ++f) {
          const int32_t o = ip[i * kvol + f];
          if (o < 0) continue;
          const T* __restrict wf = wt + f * W;
          const T* __restrict gr = gyt + int64_t(o) * W;
#pragma omp simd
          for (int64_t l = 0; l < W; ++l) acc[l] = acc[l] + repmode_fma(wf[l], gr[l], T(0));
        }
        for (int64_t l = 0; l < W; ++l) gxt[i * W + l] = bias ? conv_add_bias(canon(acc[l]), bt[l]) : canon(acc[l]);
      }
      from_lanes<T, W>(gxt, lin, nl, gx + (n * C + c0) * lin, lin);
    }
  });
}

template <typename T>
void conv_depthwise_grad_weight(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Co, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W, nq = gemm_chunks(L);
  const std::vector<int32_t> tab = read_table(g);
  const int32_t* tp = tab.data();
  // One task: a channel block over every image in increasing n (the image order of the sum).
  rows_parallel(blocks, nthreads, g.N * L * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c0 = t * W, nl = std::min<int64_t>(W, C - c0);
      T* xt = lowering::thread_buffer<T>(size_t((lin + 1) * W), 0);
      T* gyt = lowering::thread_buffer<T>(size_t(L * W), 1);
      // per offset f and lane: the chunk's chain, the group's and the total's running sums, and
      // the sum over images
      T* st = lowering::thread_buffer<T>(size_t(4 * kvol * W), 2);
      T *chunk = st, *group = st + kvol * W, *total = st + 2 * kvol * W, *acc = st + 3 * kvol * W;
      for (int64_t n = 0; n < g.N; ++n) {
        to_lanes<T, W>(x + (n * C + c0) * lin, lin, lin, nl, xt);
        for (int64_t l = 0; l < W; ++l) xt[lin * W + l] = T(0);
        to_lanes<T, W>(gy + (n * C + c0) * L, L, L, nl, gyt);
        for (int64_t q = 0; q < nq; ++q) {
          for (int64_t e = 0; e < kvol * W; ++e) chunk[e] = T(0);
          const int64_t p1 = std::min<int64_t>(L, (q + 1) * kGemmChunk);
          for (int64_t p = q * kGemmChunk; p < p1; ++p) {
            const T* __restrict gr = gyt + p * W;
            const int32_t* tq = tp + p * kvol;
            for (int64_t f = 0; f < kvol; ++f) {
              const T* __restrict xr = xt + int64_t(tq[f]) * W;
              T* __restrict cf = chunk + f * W;
#pragma omp simd
              for (int64_t l = 0; l < W; ++l) cf[l] = gemm_chain_step(gr[l], xr[l], cf[l]);
            }
          }
          for (int64_t e = 0; e < kvol * W; ++e) group[e] = gemm_chunk_combine(group[e], chunk[e], q);
          if ((q + 1) % kGemmGroup == 0 || q + 1 == nq)
            for (int64_t e = 0; e < kvol * W; ++e) total[e] = gemm_group_combine(total[e], group[e], q / kGemmGroup);
        }
        for (int64_t e = 0; e < kvol * W; ++e) acc[e] = conv_grad_weight_step(acc[e], gemm_chain_finish(total[e]), n);
      }
      // gw[c, 0, f] for the block's channels
      for (int64_t l = 0; l < nl; ++l)
        for (int64_t f = 0; f < kvol; ++f) gw[(c0 + l) * kvol + f] = canon(acc[f * W + l]);
    }
  });
}

#define REPMODE_INSTANTIATE_DEPTHWISE(T)                                                              \
  template void conv_depthwise_forward<T>(const ConvGeom&, const T*, const T*, const T*, T*, int);    \
  template void conv_depthwise_grad_input<T>(const ConvGeom&, const T*, const T*, const T*, T*, int); \
  template void conv_depthwise_grad_weight<T>(const ConvGeom&, const T*, const T*, T*, int);

REPMODE_INSTANTIATE_DEPTHWISE(float)
REPMODE_INSTANTIATE_DEPTHWISE(double)

#undef REPMODE_INSTANTIATE_DEPTHWISE

}  // namespace repmode::cpu

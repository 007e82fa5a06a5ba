// Depthwise convolution (groups = Ci = Co: one input and one output channel per group) on the CPU
// without the GEMM lowering. The lowering runs one tiny GEMM per group (K = kvol, one output
// channel), whose packing, call and parallel-region costs dwarf the arithmetic; here the channels
// are the vector lanes instead.
//
// Every output is still the documented order of csrc/common/convolution.h (docs/semantics.md
// "Convolution"), computed lane by lane:
//   forward      y[n,c,o]  = the GEMM order (csrc/common/matmul.h) over the kernel offsets f in
//                            row-major order of w[c,f] · x_pad[n,c,i(o,f)]; kvol <= 256 is one
//                            chunk: fma chains from +0.0 over 16 offsets each, the chains summed in
//                            order, canon; then + bias[c] (one rounding) when there is a bias;
//   grad input   gx[n,c,i] = canon(((+0.0 + P_f0) + P_f1) + ...) over the offsets f in row-major
//                            order that reach an output o, P_f = fma(w[c,f], gy[n,c,o], +0.0) (the
//                            GEMM order over the group's one output channel), then + bias[c];
//   grad weight  gw[c,f]   = P_0 (+ P_1) (+ ...) in image order, P_n = the GEMM order (chains of 16
//                            positions, chunks of 256, groups of 64 chunks) over the output
//                            positions o in row-major order of gy[n,c,o] · x_pad[n,c,i(o,f)].
// Short float32 sums (a forward with kvol <= 32, such as 3×3 and 5×5; a weight-gradient partial
// over L <= 32 positions) follow the GEMM order's short float32 rule: the lanes run the same order
// in float64 on exactly widened copies of x, w and gy (the same 16 channels per task, two 512-bit
// registers of 8 per position), and each sum is rounded once to float32 before canon.
// A task takes a block of channels of one image (forward, grad input) or of every image in order
// (grad weight), copies them channels-last into per-thread buffers (exact copies; the padding is a
// row of zeros there, so a padding term is the same fma with a +0.0 operand), and runs each lane's
// order; channels past Co in the last block are computed on zeros and dropped. The loops are
// compiled for the active ISA path (rows_parallel): wider vectors only compute more lanes at once.
// Threads take whole tasks, so no output's sequence depends on them.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "convolution.h"
#include "convolution_lowering.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

// Lanes (channels) per task of a tensor of type T: 16 float32 or 8 float64 (one 512-bit register
// per output position; two when float32 lanes sum in float64).
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

// dst[r * W + l] = A(src[(c0 + l) * ld + r]) for rows r < rows and lanes l < nl; lanes nl .. W-1
// are +0.0 (channels-last; A is T or float64, so the copy is exact).
template <typename T, typename A, int64_t W>
REPMODE_INLINE void to_lanes(const T* src, int64_t ld, int64_t rows, int64_t nl, A* dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += 32) {
    const int64_t r1 = std::min<int64_t>(rows, r0 + 32);
    for (int64_t l = 0; l < W; ++l) {
      if (l < nl) {
        const T* s = src + l * ld;
        for (int64_t r = r0; r < r1; ++r) dst[r * W + l] = A(s[r]);
      } else {
        for (int64_t r = r0; r < r1; ++r) dst[r * W + l] = A(0);
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
template <typename T, typename A, int64_t W>
REPMODE_INLINE void weights_to_lanes(const T* w, int64_t kvol, int64_t c0, int64_t nl, A* wt) {
  to_lanes<T, A, W>(w + c0 * kvol, kvol, kvol, nl, wt);
}

// The zero row after the lin input rows of a channels-last buffer (where padding terms read).
template <typename A, int64_t W>
REPMODE_INLINE void zero_padding_row(A* xt, int64_t lin) {
  for (int64_t l = 0; l < W; ++l) xt[lin * W + l] = A(0);
}

// The bias of channels [c0, c0 + nl) as bt[l] (+0.0 past nl, and everywhere without a bias).
template <typename T, int64_t W>
REPMODE_INLINE void bias_to_lanes(const T* bias, int64_t c0, int64_t nl, T* bt) {
  for (int64_t l = 0; l < W; ++l) bt[l] = (bias && l < nl) ? bias[c0 + l] : T(0);
}

// GemmSum's finish of a sum that ran in A (its running total `s`): canon; when A is float64 for a
// float32 sum (the short float32 rule), canon(T(canon(s))) there, which is canon(T(s)) bit for bit
// (a NaN stays a NaN when rounded; one canon then writes the one NaN) and vectorizes.
template <typename T, typename A>
REPMODE_INLINE T sum_finish(A s) {
  if constexpr (std::is_same_v<T, A>)
    return gemm_chain_finish(s);
  else
    return gemm_chain_finish(T(s));
}

// out[l] = sum_finish(s[l]), plus bt[l] (conv_add_bias) when there is a bias, for the W lanes.
template <typename T, typename A, int64_t W>
REPMODE_INLINE void finish_lanes(const A* s, const T* bt, bool has_bias, T* out) {
  if (has_bias) {
#pragma omp simd
    for (int64_t l = 0; l < W; ++l) out[l] = conv_add_bias(sum_finish<T>(s[l]), bt[l]);
  } else {
#pragma omp simd
    for (int64_t l = 0; l < W; ++l) out[l] = sum_finish<T>(s[l]);
  }
}

// The forward outputs of NP consecutive positions (tq: their rows of the read table) for every
// lane: the kernel offsets' chains of kGemmChain (fma chains from +0.0 of w · x in row-major
// order) summed in order into one chunk (kvol <= 256), finished in T, plus the bias when there is
// one. yt[q * W + l] is position q's output in lane l.
template <typename T, typename A, int64_t W, int64_t NP>
REPMODE_INLINE void forward_positions(const A* xt, const A* wt, const T* bt, bool has_bias, const int32_t* tq,
                                      int64_t kvol, T* yt) {
  A chunk[NP][W];
  for (int64_t q = 0; q < NP; ++q)
    for (int64_t l = 0; l < W; ++l) chunk[q][l] = A(0);
  for (int64_t f0 = 0; f0 < kvol; f0 += kGemmChain) {
    const int64_t f1 = std::min<int64_t>(kvol, f0 + kGemmChain);
    A chain[NP][W];
    for (int64_t q = 0; q < NP; ++q)
      for (int64_t l = 0; l < W; ++l) chain[q][l] = gemm_chain_start<A>();
    for (int64_t f = f0; f < f1; ++f) {
      const A* __restrict wf = wt + f * W;
      for (int64_t q = 0; q < NP; ++q) {
        const A* __restrict xr = xt + int64_t(tq[q * kvol + f]) * W;
        A* __restrict hq = chain[q];
#pragma omp simd
        for (int64_t l = 0; l < W; ++l) hq[l] = gemm_chain_step(wf[l], xr[l], hq[l]);
      }
    }
    const int64_t r = f0 / kGemmChain;  // the chain's index in the one chunk
    for (int64_t q = 0; q < NP; ++q)
#pragma omp simd
      for (int64_t l = 0; l < W; ++l) chunk[q][l] = gemm_chain_combine(chunk[q][l], chain[q][l], r);
  }
  for (int64_t q = 0; q < NP; ++q) finish_lanes<T, A, W>(chunk[q], bt, has_bias, yt + q * W);
}

// The forward with the lanes summing in A (T, or float64 for a short float32 sum).
template <typename T, typename A>
void forward_lanes(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Co, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W;
  const std::vector<int32_t> tab = read_table(g);
  const int32_t* tp = tab.data();
  rows_parallel(g.N * blocks, nthreads, L * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / blocks, c0 = (t % blocks) * W, nl = std::min<int64_t>(W, C - c0);
      A* xt = lowering::thread_buffer<A>(size_t((lin + 1) * W), 0);
      A* wt = lowering::thread_buffer<A>(size_t(kvol * W), 1);
      T* yt = lowering::thread_buffer<T>(size_t(L * W), 2);
      T bt[W];
      to_lanes<T, A, W>(x + (n * C + c0) * lin, lin, lin, nl, xt);
      zero_padding_row<A, W>(xt, lin);
      weights_to_lanes<T, A, W>(w, kvol, c0, nl, wt);
      bias_to_lanes<T, W>(bias, c0, nl, bt);
      int64_t p = 0;
      for (; p + kPosBlock <= L; p += kPosBlock)
        forward_positions<T, A, W, kPosBlock>(xt, wt, bt, bias != nullptr, tp + p * kvol, kvol, yt + p * W);
      for (; p < L; ++p) forward_positions<T, A, W, 1>(xt, wt, bt, bias != nullptr, tp + p * kvol, kvol, yt + p * W);
      from_lanes<T, W>(yt, L, nl, y + (n * C + c0) * L, L);
    }
  });
}

// After chain c (of `chains`, 0-based) of a sum over output positions has ended in chain[e], for
// n running sums at once: the chain joins its chunk; a finished chunk joins its group; a
// finished group joins the total (the upper three levels of the GEMM order, as GemmTree).
template <typename A>
REPMODE_INLINE void end_chain(const A* chain, A* chunk, A* group, A* total, int64_t n, int64_t c, int64_t chains) {
  constexpr int64_t kChainsPerChunk = kGemmChunk / kGemmChain;
  const int64_t r = c % kChainsPerChunk, q = c / kChainsPerChunk;
  const bool last = c + 1 == chains;
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) chunk[e] = gemm_chain_combine(chunk[e], chain[e], r);
  if (r + 1 != kChainsPerChunk && !last) return;
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) group[e] = gemm_chunk_combine(group[e], chunk[e], q);
  if ((q + 1) % kGemmGroup != 0 && !last) return;
#pragma omp simd
  for (int64_t e = 0; e < n; ++e) total[e] = gemm_group_combine(total[e], group[e], q / kGemmGroup);
}

// One image's weight-gradient partials of a task's block for every offset f and lane, left
// unfinished in total[f * W + l]: the GEMM order over the L output positions (chains of
// kGemmChain positions, each an fma chain from +0.0 of gy · x_pad, then chunks and groups).
// st holds the four running sums (chain, chunk, group, total) of kvol * W lanes each.
template <typename A, int64_t W>
REPMODE_INLINE void image_partials(const A* xt, const A* gyt, const int32_t* tp, int64_t kvol, int64_t L, A* st) {
  const int64_t n = kvol * W, chains = (L + kGemmChain - 1) / kGemmChain;
  A *chain = st, *chunk = st + n, *group = st + 2 * n, *total = st + 3 * n;
  for (int64_t c = 0; c < chains; ++c) {
    for (int64_t e = 0; e < n; ++e) chain[e] = gemm_chain_start<A>();
    const int64_t p1 = std::min<int64_t>(L, (c + 1) * kGemmChain);
    for (int64_t p = c * kGemmChain; p < p1; ++p) {
      const A* __restrict gr = gyt + p * W;
      const int32_t* tq = tp + p * kvol;
      for (int64_t f = 0; f < kvol; ++f) {
        const A* __restrict xr = xt + int64_t(tq[f]) * W;
        A* __restrict hf = chain + f * W;
#pragma omp simd
        for (int64_t l = 0; l < W; ++l) hf[l] = gemm_chain_step(gr[l], xr[l], hf[l]);
      }
    }
    end_chain(chain, chunk, group, total, n, c, chains);
  }
}

// The weight gradient with the per-image partials summing in A (T, or float64 for a short
// float32 sum); the sum over images is in T.
template <typename T, typename A>
void grad_weight_lanes(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Co, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W;
  const std::vector<int32_t> tab = read_table(g);
  const int32_t* tp = tab.data();
  // One task: a channel block over every image in increasing n (the image order of the sum).
  rows_parallel(blocks, nthreads, g.N * L * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t c0 = t * W, nl = std::min<int64_t>(W, C - c0);
      A* xt = lowering::thread_buffer<A>(size_t((lin + 1) * W), 0);
      A* gyt = lowering::thread_buffer<A>(size_t(L * W), 1);
      // per offset f and lane: the partial's four running sums, then the sum over images (a T
      // value, held exactly in A)
      A* st = lowering::thread_buffer<A>(size_t(5 * kvol * W), 2);
      A* acc = st + 4 * kvol * W;
      for (int64_t e = 0; e < kvol * W; ++e) acc[e] = A(0);
      for (int64_t n = 0; n < g.N; ++n) {
        to_lanes<T, A, W>(x + (n * C + c0) * lin, lin, lin, nl, xt);
        zero_padding_row<A, W>(xt, lin);
        to_lanes<T, A, W>(gy + (n * C + c0) * L, L, L, nl, gyt);
        image_partials<A, W>(xt, gyt, tp, kvol, L, st);
        const A* total = st + 3 * kvol * W;
        for (int64_t e = 0; e < kvol * W; ++e) acc[e] = A(conv_grad_weight_step(T(acc[e]), sum_finish<T>(total[e]), n));
      }
      // gw[c, 0, f] for the block's channels
      for (int64_t l = 0; l < nl; ++l)
        for (int64_t f = 0; f < kvol; ++f) gw[(c0 + l) * kvol + f] = canon(T(acc[f * W + l]));
    }
  });
}

}  // namespace

bool conv_depthwise_direct(const ConvGeom& g) {
  return g.G == g.Ci && g.G == g.Co && g.kvol() <= kGemmChunk && g.in_len() < (int64_t(1) << 30) &&
         g.out_len() < (int64_t(1) << 30) && g.N > 0 && g.out_len() > 0 && g.in_len() > 0;
}

// Each output sums kvol terms (one chunk: conv_depthwise_direct), in float64 when that is short.
template <typename T>
void conv_depthwise_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, int nthreads) {
  if (gemm_runs_wide<T>(g.kvol()))
    forward_lanes<T, double>(g, x, w, bias, y, nthreads);
  else
    forward_lanes<T, T>(g, x, w, bias, y, nthreads);
}

template <typename T>
void conv_depthwise_grad_input(const ConvGeom& g, const T* gy, const T* w, const T* bias, T* gx, int nthreads) {
  constexpr int64_t W = kLanes<T>;
  const int64_t C = g.Ci, kvol = g.kvol(), L = g.out_len(), lin = g.in_len();
  const int64_t blocks = (C + W - 1) / W;
  const std::vector<int32_t> inv = gather_table(g);
  const int32_t* ip = inv.data();
  // P_f is a one-term GemmSum (cog = 1); for float32 that is a short sum, float(double(w) *
  // double(gy) + 0.0), which is fma(w, gy, +0.0) in float32 bit for bit: the float64 product is
  // exact, so both round the same exact value once (a -0.0 product gives +0.0 in both, an
  // underflow keeps its sign in both), and a NaN term makes the whole sum NaN before its canon.
  rows_parallel(g.N * blocks, nthreads, lin * kvol * W, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / blocks, c0 = (t % blocks) * W, nl = std::min<int64_t>(W, C - c0);
      T* gyt = lowering::thread_buffer<T>(size_t(L * W), 0);
      T* wt = lowering::thread_buffer<T>(size_t(kvol * W), 1);
      T* gxt = lowering::thread_buffer<T>(size_t(lin * W), 2);
      T bt[W];
      to_lanes<T, T, W>(gy + (n * C + c0) * L, L, L, nl, gyt);
      weights_to_lanes<T, T, W>(w, kvol, c0, nl, wt);
      bias_to_lanes<T, W>(bias, c0, nl, bt);
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

// Each image's partial sums L terms, in float64 when that is short.
template <typename T>
void conv_depthwise_grad_weight(const ConvGeom& g, const T* x, const T* gy, T* gw, int nthreads) {
  if (gemm_runs_wide<T>(g.out_len()))
    grad_weight_lanes<T, double>(g, x, gy, gw, nthreads);
  else
    grad_weight_lanes<T, T>(g, x, gy, gw, nthreads);
}

#define REPMODE_INSTANTIATE_DEPTHWISE(T)                                                              \
  template void conv_depthwise_forward<T>(const ConvGeom&, const T*, const T*, const T*, T*, int);    \
  template void conv_depthwise_grad_input<T>(const ConvGeom&, const T*, const T*, const T*, T*, int); \
  template void conv_depthwise_grad_weight<T>(const ConvGeom&, const T*, const T*, T*, int);

REPMODE_INSTANTIATE_DEPTHWISE(float)
REPMODE_INSTANTIATE_DEPTHWISE(double)

#undef REPMODE_INSTANTIATE_DEPTHWISE

}  // namespace repmode::cpu

// The GEMM's per-output order over k, written once (docs/semantics.md, "Matrix products"). Every
// output of a matrix product, and every convolution output lowered onto one, is a sum over k of
// A[i,k]·B[k,j] taken in four levels whose boundaries depend on K only:
//
//   * k is cut into chains of kGemmChain (16) consecutive indices (the last one may be shorter);
//     a chain is one fma chain from +0.0:  h = fma(A[i,k_last], B[k_last,j], ... fma(A[i,k_0], B[k_0,j], +0.0));
//   * the chains are cut into chunks of 16 consecutive chains (kGemmChunk = 256 k); chunk q is its
//     first chain plus the others in increasing order:  c_q = ((h_16q + h_16q+1) + ...);
//   * the chunks are cut into groups of kGemmGroup (64) consecutive chunks (16,384 k); group g is
//     its first chunk's partial plus the others' in increasing q:  G_g = ((c_64g + c_64g+1) + ...);
//   * the output is the first group's partial plus the others' in increasing g:
//     T = ((G_0 + G_1) + ...), and C[i,j] = canon(T).  K = 0 gives +0.0.
//
// Short float32 sums (K <= kGemmShortK = 32) run this order in float64 on the exactly widened
// terms (a float32 product is exact in float64) and round the result once to float32
// (gemm_runs_wide): the few terms of a short product are summed almost exactly, where one float32
// chain would be less accurate than native BLAS's matrix-vector kernels.
//
// So each output carries four scalars (the chain's, the chunk's, the group's and the total's running
// sums), which a CPU micro-kernel keeps in registers, a small tile buffer, its C tile and a
// buffer beside it, and a GPU thread in two registers and two stored values; a chain is 16 k so
// that its one extra addition per output costs 1/16 of the fmas (numerics version 7; versions 3-6
// had chunks of one 256-term chain, which is up to 3.6x less accurate than a matrix-vector BLAS).
// Chain, chunk and group sizes belong to the definition, never to an implementation's tile: a CPU
// k-block or a GPU k-tile must divide kGemmChunk (and a GPU k-tile kGemmChain) and start at a
// multiple of it.
//
// The CPU scalar kernel and reference (csrc/cpu/matmul.cpp), the CUDA kernel (csrc/cuda/matmul.cu),
// the convolution orders (csrc/common/convolution.h), the linear-algebra dots (csrc/common/linalg.h)
// and the standalone verifier (csrc/verify/gemm_check.cpp) use these functions; the SIMD
// micro-kernels of csrc/cpu/matmul.cpp compute the same per-lane sequence with fmadd, add and a
// blend to the canonical NaN.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"  // repmode_fma

namespace repmode {

constexpr int64_t kGemmChain = 16;   // k per chain: one fma chain from +0.0
constexpr int64_t kGemmChunk = 256;  // k per chunk: its 16 chains summed in order
constexpr int64_t kGemmGroup = 64;   // chunks per group (kGemmChunk * kGemmGroup = 16,384 k)
constexpr int64_t kGemmGroupK = kGemmChunk * kGemmGroup;
constexpr int64_t kGemmShortK = 32;  // float32 sums of at most this many terms run in float64
static_assert(kGemmChunk % kGemmChain == 0, "a chunk is whole chains");

// Whether a sum of K terms of type T runs the order in float64 (then rounded once to T): float32
// (and bf16/fp16 widened to float32) sums of 1 .. kGemmShortK terms.
template <typename T>
REPMODE_HD constexpr bool gemm_runs_wide(int64_t K) {
  return sizeof(T) == 4 && K > 0 && K <= kGemmShortK;
}

template <typename T>
REPMODE_HD T gemm_chain_start() {
  return T(0);
}

// One step of a chain: fma(a, b, acc), exactly rounded on host and device
// (fma(a, b, c) == fma(b, a, c), so C^T = B^T A^T has the same chains).
template <typename T>
REPMODE_HD T gemm_chain_step(T a, T b, T acc) {
  return repmode_fma(a, b, acc);
}

// Chain r of its chunk (r = 0 .. 15), finished, joins the chunk's running sum `chunk`: the first
// chain starts it (no addition, so a -0.0 chain stays -0.0), later ones are added.
template <typename T>
REPMODE_HD T gemm_chain_combine(T chunk, T chain, int64_t r) {
  return r == 0 ? chain : T(chunk + chain);
}

// Chunk q's finished sum `chunk` joins its group's running sum `group` in the same way.
template <typename T>
REPMODE_HD T gemm_chunk_combine(T group, T chunk, int64_t q) {
  return q % kGemmGroup == 0 ? chunk : T(group + chunk);
}

// Group g's finished sum `group` joins the output's running total in the same way.
template <typename T>
REPMODE_HD T gemm_group_combine(T total, T group, int64_t g) {
  return g == 0 ? group : T(total + group);
}

// The output written after the last term.
template <typename T>
REPMODE_HD T gemm_chain_finish(T acc) {
  return canon(acc);
}

// The number of chunks and groups of a sum over K terms.
REPMODE_HD int64_t gemm_chunks(int64_t K) { return (K + kGemmChunk - 1) / kGemmChunk; }
REPMODE_HD int64_t gemm_groups(int64_t K) { return (K + kGemmGroupK - 1) / kGemmGroupK; }

// The output from its chunks' finished sums c_0 .. c_{n-1} (the third and fourth levels): for
// kernels that compute the chunks apart (the GPU's split k) and combine them afterwards; GemmTree
// below does the same as it goes. `chunk(q)` returns c_q. (Not for short float32 sums, which never
// have more than one chunk.)
template <typename T, class ChunkAt>
REPMODE_HD T gemm_sum_of_chunks(int64_t n, ChunkAt chunk) {
  T group = T(0), total = T(0);
  for (int64_t q = 0; q < n; ++q) {
    group = gemm_chunk_combine(group, chunk(q), q);
    if ((q + 1) % kGemmGroup == 0 || q + 1 == n) total = gemm_group_combine(total, group, q / kGemmGroup);
  }
  return gemm_chain_finish(total);
}

// The four levels as a running state fed one term at a time in increasing k, in T itself (no
// short-sum rule): step(a, b) for k = 0 .. K-1, then finish() returns canon(T) (+0.0 for K = 0).
template <typename T>
struct GemmTree {
  T chain = T(0), chunk = T(0), group = T(0), total = T(0);
  int64_t k = 0;

  REPMODE_HD void step(T a, T b) {
    chain = gemm_chain_step(a, b, chain);
    ++k;
    if (k % kGemmChain == 0) end_chain();
    if (k % kGemmChunk == 0) end_chunk();
    if (k % kGemmGroupK == 0) end_group();
  }
  REPMODE_HD T finish() {
    if (k == 0) return T(0);
    if (k % kGemmChain != 0) end_chain();  // the last, shorter chain, chunk and group end here
    if (k % kGemmChunk != 0) end_chunk();
    if (k % kGemmGroupK != 0) end_group();
    return gemm_chain_finish(total);
  }

 private:
  // The chain (chunk, group) holding term k-1 has ended.
  REPMODE_HD void end_chain() {
    chunk = gemm_chain_combine(chunk, chain, ((k - 1) / kGemmChain) % (kGemmChunk / kGemmChain));
    chain = T(0);
  }
  REPMODE_HD void end_chunk() { group = gemm_chunk_combine(group, chunk, (k - 1) / kGemmChunk); }
  REPMODE_HD void end_group() { total = gemm_group_combine(total, group, (k - 1) / kGemmGroupK); }
};

// The canonical order of a sum over K terms of type T (the reference, the verifier, the
// convolution's and linear algebra's per-element orders use it; fast kernels reproduce its
// sequence): GemmTree in T, or for a short float32 sum (gemm_runs_wide) GemmTree in float64 on the
// widened terms, rounded once to T. step(a, b) for k = 0 .. K-1 (exactly K steps), then finish().
template <typename T>
struct GemmSum {
  REPMODE_HD explicit GemmSum(int64_t K) : wide(gemm_runs_wide<T>(K)) {}

  REPMODE_HD void step(T a, T b) {
    if constexpr (sizeof(T) == 4) {
      if (wide) return w.step(double(a), double(b));
    }
    t.step(a, b);
  }
  REPMODE_HD T finish() {
    if constexpr (sizeof(T) == 4) {
      if (wide) return canon(T(w.finish()));
    }
    return t.finish();
  }

 private:
  bool wide;
  GemmTree<T> t;
  GemmTree<double> w;
};

}  // namespace repmode

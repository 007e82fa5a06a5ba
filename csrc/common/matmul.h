// The GEMM's per-output order over k, written once (docs/semantics.md, "Matrix products"). Every
// output of a matrix product, and every convolution output lowered onto one, is a sum over k of
// A[i,k]·B[k,j] taken in three levels whose boundaries depend on K only:
//
//   * k is cut into chunks of kGemmChunk (256) consecutive indices (the last one may be shorter);
//     chunk q is one fma chain from +0.0:  c_q = fma(A[i,k_last], B[k_last,j], ... fma(A[i,k_0], B[k_0,j], +0.0));
//   * the chunks are cut into groups of kGemmGroup (64) consecutive chunks (16,384 k); group g is
//     its first chunk's partial plus the others' in increasing q:  G_g = ((c_64g + c_64g+1) + ...);
//   * the output is the first group's partial plus the others' in increasing g:
//     T = ((G_0 + G_1) + ...), and C[i,j] = canon(T).  K = 0 gives +0.0.
//
// So each output carries three scalars (the chunk's chain, the group's and the total's running
// sums), which a CPU micro-kernel keeps in its C tile and a GPU thread in a register and two stored
// values; for K <= 256 it is the plain fma chain from +0.0 (the order before NUMERICS_VERSION 3).
// Chunk and group sizes belong to the definition, never to an implementation's tile: a CPU k-block
// or a GPU k-tile must divide kGemmChunk and start at a multiple of it.
//
// The CPU scalar kernel and reference (csrc/cpu/matmul.cpp), the CUDA kernel (csrc/cuda/matmul.cu),
// the convolution orders (csrc/common/convolution.h) and the standalone verifier
// (csrc/verify/gemm_check.cpp) use these functions; the AVX2 micro-kernels of csrc/cpu/matmul.cpp
// compute the same per-lane sequence with fmadd, add and a blend to the canonical NaN.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"  // repmode_fma

namespace repmode {

constexpr int64_t kGemmChunk = 256;  // k per chunk: one fma chain from +0.0
constexpr int64_t kGemmGroup = 64;   // chunks per group (kGemmChunk * kGemmGroup = 16,384 k)
constexpr int64_t kGemmGroupK = kGemmChunk * kGemmGroup;

template <typename T>
REPMODE_HD T gemm_chain_start() {
  return T(0);
}

// One step of a chunk's chain: fma(a, b, acc), exactly rounded on host and device
// (fma(a, b, c) == fma(b, a, c), so C^T = B^T A^T has the same chains).
template <typename T>
REPMODE_HD T gemm_chain_step(T a, T b, T acc) {
  return repmode_fma(a, b, acc);
}

// Chunk q's finished chain `chunk` joins its group's running sum `group`: the first chunk of a
// group starts it (no addition, so a -0.0 chain stays -0.0), later ones are added.
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

// The output from its chunks' finished chains c_0 .. c_{n-1} (the second and third levels): for
// kernels that compute the chunks apart (the GPU's split k) and combine them afterwards; GemmSum
// below does the same as it goes. `chunk(q)` returns c_q.
template <typename T, class ChunkAt>
REPMODE_HD T gemm_sum_of_chunks(int64_t n, ChunkAt chunk) {
  T group = T(0), total = T(0);
  for (int64_t q = 0; q < n; ++q) {
    group = gemm_chunk_combine(group, chunk(q), q);
    if ((q + 1) % kGemmGroup == 0 || q + 1 == n) total = gemm_group_combine(total, group, q / kGemmGroup);
  }
  return gemm_chain_finish(total);
}

// The order as a running state fed one term at a time in increasing k (the reference, the
// verifier and the convolution's per-element orders use it; fast kernels reproduce its
// sequence): step(a, b) for k = 0 .. K-1, then finish() returns canon(T) (+0.0 for K = 0).
template <typename T>
struct GemmSum {
  T chunk = T(0), group = T(0), total = T(0);
  int64_t k = 0;

  REPMODE_HD void step(T a, T b) {
    chunk = gemm_chain_step(a, b, chunk);
    if (++k % kGemmChunk == 0) end_chunk();
  }
  REPMODE_HD T finish() {
    if (k == 0) return T(0);
    if (k % kGemmChunk != 0) end_chunk();
    if (gemm_chunks(k) % kGemmGroup != 0) total = gemm_group_combine(total, group, gemm_groups(k) - 1);
    return gemm_chain_finish(total);
  }

 private:
  // The chunk holding term k-1 has ended.
  REPMODE_HD void end_chunk() {
    const int64_t q = (k - 1) / kGemmChunk;
    group = gemm_chunk_combine(group, chunk, q);
    chunk = T(0);
    if ((q + 1) % kGemmGroup == 0) total = gemm_group_combine(total, group, q / kGemmGroup);
  }
};

}  // namespace repmode

// Reproducible matrix multiply on the CPU.
//
// The canonical order (csrc/common/matmul.h, docs/semantics.md "Matrix products"): k in chunks
// of 256, each an fma chain from +0.0; the chunk partials summed in order per group of 64
// chunks; the group sums summed in order; a NaN output written as repmode's canonical NaN.
// Nothing depends on tile sizes, thread count or ISA: threads split output tiles only, and a
// k-block is exactly one chunk. So gemm() and gemm_reference() agree bit for bit on every
// machine, for every thread count and every ISA path.
#pragma once

#include <cstdint>

namespace repmode::cpu {

// Batched strided GEMM: for b < batch, C_b = A_b · B_b with A_b M×K, B_b K×N, C_b M×N.
// Strides are in elements. A batch stride may be 0 (broadcast); transposed or sliced
// operands are passed by their strides, without a copy. C's elements must not overlap
// each other or A and B. C is only written (its k-block partials are stored there and
// read back, which is exact). K == 0 writes +0.0; M == 0 or N == 0 writes nothing.
// Uses at most `nthreads` OpenMP threads (values < 1 mean 1); the result does not
// depend on it. Safe to call concurrently from several threads.
template <typename T>
void gemm(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk, const T* B,
          int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn, int nthreads);

// The canonical order written plainly: each output fed term by term through GemmSum. Slow; for tests.
template <typename T>
void gemm_reference(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk,
                    const T* B, int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn);

// Segmented products (the convolution weight gradient's per-image partials added in image order,
// fused): C[i,j] = ((C[i,j] + s_0) + s_1) + ... with accumulate, else (s_0 + s_1) + ..., where s_q
// is the fma chain from +0.0 over k = q·seg .. q·seg + seg - 1 of A[i,k]·B[k,j] (seg <= 256,
// K a multiple of seg). So with accumulate = false and one segment it is gemm()'s order for
// K <= 256; a NaN of the result is written canonical when `finish`. K == 0 leaves C unchanged.
// Threads, tiles and ISA paths never change the result.
template <typename T>
void gemm_segments(int64_t M, int64_t N, int64_t K, int64_t seg, const T* A, int64_t sAm, int64_t sAk, const T* B,
                   int64_t sBk, int64_t sBn, T* C, int64_t sCm, int64_t sCn, bool accumulate, bool finish,
                   int nthreads);

extern template void gemm<float>(int64_t, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, int64_t,
                                 const float*, int64_t, int64_t, int64_t, float*, int64_t, int64_t, int64_t, int);
extern template void gemm<double>(int64_t, int64_t, int64_t, int64_t, const double*, int64_t, int64_t, int64_t,
                                  const double*, int64_t, int64_t, int64_t, double*, int64_t, int64_t, int64_t, int);
extern template void gemm_reference<float>(int64_t, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, int64_t,
                                           const float*, int64_t, int64_t, int64_t, float*, int64_t, int64_t, int64_t);
extern template void gemm_reference<double>(int64_t, int64_t, int64_t, int64_t, const double*, int64_t, int64_t,
                                            int64_t, const double*, int64_t, int64_t, int64_t, double*, int64_t,
                                            int64_t, int64_t);
extern template void gemm_segments<float>(int64_t, int64_t, int64_t, int64_t, const float*, int64_t, int64_t,
                                          const float*, int64_t, int64_t, float*, int64_t, int64_t, bool, bool, int);
extern template void gemm_segments<double>(int64_t, int64_t, int64_t, int64_t, const double*, int64_t, int64_t,
                                           const double*, int64_t, int64_t, double*, int64_t, int64_t, bool, bool, int);

}  // namespace repmode::cpu

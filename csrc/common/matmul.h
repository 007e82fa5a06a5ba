// The GEMM's per-output chain, written once (docs/semantics.md, "Matrix products"): every output of
// a matrix product, and every convolution output lowered onto one, is
//     acc = gemm_chain_start<T>();                                  // +0.0
//     for k = 0 .. K-1: acc = gemm_chain_step(A[i,k], B[k,j], acc);  // one exact fma each
//     C[i,j] = gemm_chain_finish(acc);                              // NaN -> the canonical NaN
// k may be blocked (the accumulator carries across blocks, stored exactly between them), but the
// chain is never split or reordered. The CPU scalar kernel and reference (csrc/cpu/matmul.cpp),
// the CUDA kernel (csrc/cuda/matmul.cu), the convolution orders (csrc/common/convolution.h) and
// the standalone verifier (csrc/verify/gemm_check.cpp) call these; the AVX2 micro-kernels of
// csrc/cpu/matmul.cpp compute the same per-lane sequence with fmadd and a blend to the canonical
// NaN on the last k-block.
#pragma once

#include "defs.h"
#include "math.h"  // repmode_fma

namespace repmode {

template <typename T>
REPMODE_HD T gemm_chain_start() {
  return T(0);
}

// One step of the chain: fma(a, b, acc), exactly rounded on host and device (fma(a, b, c) ==
// fma(b, a, c), so C^T = B^T A^T has the same chains).
template <typename T>
REPMODE_HD T gemm_chain_step(T a, T b, T acc) {
  return repmode_fma(a, b, acc);
}

// The output written after the last step.
template <typename T>
REPMODE_HD T gemm_chain_finish(T acc) {
  return canon(acc);
}

}  // namespace repmode

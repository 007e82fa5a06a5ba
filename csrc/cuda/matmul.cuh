// The canonical GEMM (csrc/cuda/matmul.cu) for other CUDA launchers: C_b = A_b · B_b for b < batch,
// every output the canonical four-level order over k then canon() (csrc/common/matmul.h; a float32
// sum of at most 32 terms runs in float64, rounded once), launched asynchronously on `stream` (the
// caller sets the device). Strides in elements; a batch stride may be 0. Pointers are device
// pointers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace repmode::cuda {

template <typename T>
void gemm_async(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk,
                const T* B, int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn,
                cudaStream_t stream);

}  // namespace repmode::cuda

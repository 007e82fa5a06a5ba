#pragma once
#include <cstdint>

namespace repmode::cpu {

// Layer norm over M contiguous rows of N elements (x, y: M*N; mean, rstd: M; w, b: N or null).
// Orders: csrc/common/layer_norm.h.
template <typename T>
void layer_norm_forward(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y, T* mean, T* rstd,
                        int nthreads);
template <typename T>
void layer_norm_forward_reference(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y, T* mean,
                                  T* rstd);

// Backward: any of dx (M*N), dw (N), db (N) may be null (not wanted).
template <typename T>
void layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M, int64_t N, T* dx,
                         T* dw, T* db, int nthreads);
template <typename T>
void layer_norm_backward_reference(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M,
                                   int64_t N, T* dx, T* dw, T* db);

}  // namespace repmode::cpu

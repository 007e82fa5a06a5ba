#pragma once
#include <cstdint>

namespace repmode::cpu {

// Batch norm over x viewed as (N, C, S): S = the product of the spatial sizes. Layout:
// channels_last = false: element (n, c, s) at (n*C + c)*S + s; true: at (n*S + s)*C + c.
// x, y (and dy, dx) share the layout. w, b, running_mean, running_var may be null.
// training: save_mean/save_invstd (C each) receive the batch statistics and the running
// statistics (if given) are updated in place; otherwise the running statistics normalize.
template <typename T>
void batch_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t S, bool channels_last, const T* w, const T* b,
                        T* running_mean, T* running_var, bool training, double momentum, double eps, T* save_mean,
                        T* save_invstd, int nthreads);

// train: mean/invstd are the saved batch statistics; otherwise running_mean and running_var
// give them. dx, dw, db may be null (not wanted).
template <typename T>
void batch_norm_backward(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, bool channels_last, const T* w,
                         const T* mean, const T* invstd, const T* running_mean, const T* running_var, bool train,
                         double eps, T* dx, T* dw, T* db, int nthreads);

// Group norm of a contiguous (N, C, HxW) x with G groups; mean and rstd are (N, G).
template <typename T>
void group_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G, const T* w, const T* b,
                        double eps, T* mean, T* rstd, int nthreads);

template <typename T>
void group_norm_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, int64_t N, int64_t C,
                         int64_t HxW, int64_t G, T* dx, T* dw, T* db, int nthreads);

// The plain references of the same orders (contiguous (N, C, S) tensors only).
template <typename T>
void batch_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t S, const T* w, const T* b,
                                  T* running_mean, T* running_var, bool training, double momentum, double eps,
                                  T* save_mean, T* save_invstd);
template <typename T>
void batch_norm_backward_reference(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, const T* w, const T* mean,
                                   const T* invstd, const T* running_mean, const T* running_var, bool train, double eps,
                                   T* dx, T* dw, T* db);
template <typename T>
void group_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G, const T* w,
                                  const T* b, double eps, T* mean, T* rstd);
template <typename T>
void group_norm_backward_reference(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                                   int64_t C, int64_t HxW, int64_t G, T* dx, T* dw, T* db);

}  // namespace repmode::cpu

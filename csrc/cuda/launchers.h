// The CUDA kernels' host entry points, one per function of repmode._C that a kernel family
// calls. Each takes the same arguments as its CPU twin in csrc/cpu/entry_points.h, except that
// the CPU's `nthreads` is the CUDA stream to launch on (cudaStream_t as an integer; 0 = the
// legacy default stream). Pointers are device pointers on the stream's device; launches are
// asynchronous on that stream and error-checked (a CUDA error throws std::runtime_error). Plain
// C++: no CUDA types, so the pybind11 binding (csrc/bindings/cuda_module.cpp, expanding
// csrc/bindings/entry_points.def) builds with the host compiler. The arithmetic of every output
// is the shared csrc/common/ headers', so the bits equal the CPU's (docs/semantics.md,
// docs/cuda.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace repmode::cuda {

using Ints = std::vector<int64_t>;

// --- runtime (csrc/cuda/runtime.cu) ---
int device_count();  // 0 when there is no usable device or driver
std::string device_name(int device);
void synchronize(uintptr_t stream);  // waits for the stream; throws on a pending error

// --- elementwise and random (csrc/cuda/elementwise.cu, csrc/cuda/random.cu) ---
void elementwise(int op, int dtype, const Ints& sizes, uintptr_t out, const Ints& out_strides, uintptr_t a,
                 const Ints& a_strides, double a_value, uintptr_t b, const Ints& b_strides, double b_value, bool has_b,
                 uintptr_t c, const Ints& c_strides, double c_value, bool has_c, const std::vector<double>& params,
                 uintptr_t stream);
void elementwise_flat(int op, int dtype, int64_t n, uintptr_t out, uintptr_t a, uintptr_t b, double b_value, bool has_b,
                      double p0, double p1, uintptr_t stream);
uint64_t random_fill(int dist, int dtype, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, double p0,
                     double p1, uintptr_t stream);
uint64_t random_ints(uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     uintptr_t stream);
void cumulative(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool product,
                uintptr_t stream);

// --- row reductions, softmax, nll (csrc/cuda/reduction.cu, csrc/cuda/softmax_loss.cu) ---
void sum_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int64_t s_out,
              bool mean, uintptr_t stream);
void var_mean_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction,
                   uintptr_t var, uintptr_t mean, bool take_sqrt, uintptr_t stream);
void prod_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, uintptr_t stream);
void extreme_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, uintptr_t values,
                  uintptr_t indices, uintptr_t stream);
void logsumexp_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out,
                    uintptr_t stream);
void norm_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, uintptr_t out,
               uintptr_t stream);
void softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe,
             uintptr_t stream);
void softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                      uintptr_t stream);
void log_softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, uintptr_t stream);
void log_softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n,
                          int64_t inner, uintptr_t stream);
void nll_loss_forward(int dtype, uintptr_t x, int64_t N, int64_t C, int64_t sN, int64_t sC, uintptr_t target,
                      int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index, uintptr_t out,
                      int64_t s_out, uintptr_t total_weight, uintptr_t stream);
// total_weight is a device pointer here (the CPU twin reads it on the host).
void nll_loss_backward(int dtype, uintptr_t grad_input, int64_t N, int64_t C, uintptr_t grad, int64_t s_grad,
                       uintptr_t target, int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index,
                       uintptr_t total_weight, uintptr_t stream);

// --- matrix products (csrc/cuda/matmul.cu) ---
void gemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,
          uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn,
          uintptr_t stream);

// --- convolution and pooling (csrc/cuda/convolution.cu, csrc/cuda/pooling.cu) ---
// geom: the 22 integers of csrc/common/convolution.h.
void conv_forward(int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y, uintptr_t stream);
void conv_grad_input(int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx,
                     uintptr_t stream);
void conv_grad_weight(int dtype, const Ints& geom, uintptr_t x, uintptr_t gy, uintptr_t gw, uintptr_t stream);
// reference must be false on CUDA (the scalar references are CPU test aids).
void pool_forward(int dtype, int kind, uintptr_t x, uintptr_t out, uintptr_t index, const Ints& in_sizes,
                  const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil,
                  bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is,
                  uintptr_t stream, bool reference);
void pool_backward(int dtype, int kind, uintptr_t grad_output, uintptr_t index, uintptr_t grad_input,
                   const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p,
                   const Ints& dil, bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os,
                   const Ints& is, uintptr_t stream, bool reference);

// --- normalization and recurrent cells (csrc/cuda/layer_norm.cu, batch_norm.cu, recurrent.cu) ---
void layer_norm_forward(int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps, uintptr_t y,
                        uintptr_t mean, uintptr_t rstd, uintptr_t stream, bool reference);
void layer_norm_backward(int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t M,
                         int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream, bool reference);
void batch_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, bool channels_last,
                        uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                        double eps, uintptr_t save_mean, uintptr_t save_invstd, uintptr_t stream);
void batch_norm_backward(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                         double eps, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream);
void group_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t w,
                        uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, uintptr_t stream);
void group_norm_backward(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t N,
                         int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream);
void lstm_forward_step(int dtype, int64_t B, int64_t H, uintptr_t a, int64_t a_rs, uintptr_t r, int64_t r_rs,
                       uintptr_t c_prev, int64_t c_rs, uintptr_t ws, uintptr_t h, uintptr_t stream);
void lstm_backward_step(int dtype, int64_t B, int64_t H, uintptr_t go, int64_t go_rs, int64_t go_cs, uintptr_t dh,
                        uintptr_t dc, uintptr_t ws, uintptr_t c_prev, int64_t c_rs, uintptr_t dgates, uintptr_t dc_out,
                        uintptr_t stream);

// --- CTC loss (csrc/cuda/ctc.cu) ---
void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, uintptr_t stream);
void ctc_loss_backward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                       int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                       uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, uintptr_t grad_out,
                       int64_t S_max, int64_t go_stride, bool zero_infinity, uintptr_t grad, uintptr_t stream);

}  // namespace repmode::cuda

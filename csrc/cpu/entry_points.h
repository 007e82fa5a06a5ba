// The CPU kernels' dtype-erased entry points, one per function of repmode._C
// (csrc/bindings/entry_points.def lists them; csrc/bindings/cpu_module.cpp binds them). The CPU
// twin of csrc/cuda/launchers.h: pointers are integers (0 = absent), sizes and strides are in
// elements, `dtype` is a code of REPMODE_DTYPES (csrc/common/defs.h), and the last argument is
// the OpenMP thread count `nthreads` where the CUDA twin takes its stream (results never depend
// on it). The argument order is the Python-visible one, so three entries keep a trailing
// `reference` switch after nthreads (layer_norm_*, pool_*) and convolution_reference starts with
// `what`. Each entry is defined in its family's file, csrc/cpu/<family>.cpp, where the dtype
// dispatch (csrc/cpu/dispatch.h) turns it into the typed kernel. Plain C++: no pybind11, no torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace repmode::cpu {

using Ints = std::vector<int64_t>;

// --- runtime: CPU control (csrc/cpu/isa.cpp) ---
bool flush_denormal_active();               // FTZ or DAZ set in this thread's MXCSR
bool set_cpu_isa(const std::string& name);  // "auto", "scalar", "avx2", "avx512"; false if unavailable
std::string cpu_isa();
std::string best_cpu_isa();

// --- elementwise (csrc/cpu/elementwise.cpp) ---
// Operands a, b, c: pointer + strides, or (pointer 0) the Python number `value`; b and c may be
// absent (has_b / has_c false). params: the op's number arguments p0, p1, p2.
void elementwise(int op, int dtype, const Ints& sizes, uintptr_t out, const Ints& out_strides, uintptr_t a,
                 const Ints& a_strides, double a_value, uintptr_t b, const Ints& b_strides, double b_value, bool has_b,
                 uintptr_t c, const Ints& c_strides, double c_value, bool has_c, const std::vector<double>& params,
                 int nthreads);
// The hot path: contiguous operands of n elements; b is an array (b != 0), the number b_value
// (b == 0, has_b) or absent. (The binding keeps the GIL below 4096 elements.)
void elementwise_flat(int op, int dtype, int64_t n, uintptr_t out, uintptr_t a, uintptr_t b, double b_value, bool has_b,
                      double p0, double p1, int nthreads);

// --- random (csrc/cpu/random.cpp) ---
uint64_t random_fill(int dist, int dtype, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, double p0,
                     double p1, int nthreads);
uint64_t random_ints(uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     int nthreads);
// Test aids: one Philox4x32-10 block, and sincos_turns(u) = (sin 2 pi u, cos 2 pi u).
std::vector<uint32_t> philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1);
std::vector<double> sincos_turns(double u);

// --- reduction (csrc/cpu/reduction.cpp) ---
void sum_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int64_t s_out,
              bool mean, int nthreads);
void sum_rows_reference(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out,
                        int64_t s_out, bool mean);
void var_mean_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction,
                   uintptr_t var, uintptr_t mean, bool take_sqrt, int nthreads);
void prod_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int nthreads);
void extreme_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, uintptr_t values,
                  uintptr_t indices, int nthreads);
void logsumexp_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int nthreads);
void norm_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, uintptr_t out,
               int nthreads);
void cumulative(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool product,
                int nthreads);

// --- softmax_loss (csrc/cpu/softmax_loss.cpp) ---
void softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe, int nthreads);
void softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                      int nthreads);
void log_softmax(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, int nthreads);
void log_softmax_backward(int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n,
                          int64_t inner, int nthreads);
// reduction: a Reduction code (csrc/common/softmax_loss.h). total_weight is read on the host.
void nll_loss_forward(int dtype, uintptr_t x, int64_t N, int64_t C, int64_t sN, int64_t sC, uintptr_t target,
                      int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index, uintptr_t out,
                      int64_t s_out, uintptr_t total_weight);
void nll_loss_backward(int dtype, uintptr_t grad_input, int64_t N, int64_t C, uintptr_t grad, int64_t s_grad,
                       uintptr_t target, int64_t s_target, uintptr_t weight, int reduction, int64_t ignore_index,
                       uintptr_t total_weight);

// --- matmul (csrc/cpu/matmul.cpp) ---
void gemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,
          uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn,
          int nthreads);
void gemm_reference(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm,
                    int64_t sAk, uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb,
                    int64_t sCm, int64_t sCn);

// --- convolution (csrc/cpu/convolution.cpp) ---
// geom: the integers of REPMODE_CONV_GEOM_FIELDS (csrc/common/convolution.h), exported as
// _C.codes()["ConvGeom"].
void conv_forward(int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y, int nthreads);
void conv_grad_input(int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx,
                     int nthreads);
void conv_grad_weight(int dtype, const Ints& geom, uintptr_t x, uintptr_t gy, uintptr_t gw, int nthreads);
int64_t set_conv_chunk_elems(int64_t elems);
// what: 0 forward (a = x, b = w), 1 grad input (a = gy, b = w), 2 grad weight (a = x, b = gy).
void convolution_reference(int what, int dtype, const Ints& geom, uintptr_t a, uintptr_t b, uintptr_t bias,
                           uintptr_t out);

// --- pooling (csrc/cpu/pooling.cpp) ---
// kind: a PoolKind code (csrc/common/pooling.h). reference: the plain loops instead.
void pool_forward(int dtype, int kind, uintptr_t x, uintptr_t out, uintptr_t index, const Ints& in_sizes,
                  const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil,
                  bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is,
                  int nthreads, bool reference);
void pool_backward(int dtype, int kind, uintptr_t grad_output, uintptr_t index, uintptr_t grad_input,
                   const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p,
                   const Ints& dil, bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os,
                   const Ints& is, int nthreads, bool reference);

// --- resample (csrc/cpu/resample.cpp) ---
// mode: a ResampleMode code (csrc/common/resample.h); nsp: resampled axes (the last nsp of D, H, W);
// in_sizes (N, C, D, H, W), out_sizes (OD, OH, OW), scales per axis (<= 0: none), strides 5 each
// (input/output for the forward; grad_input/grad_output for the backward). reference: plain loops.
void resample_forward(int dtype, int mode, int nsp, uintptr_t x, uintptr_t out, const Ints& in_sizes,
                      const Ints& out_sizes, bool align_corners, const std::vector<double>& scales, const Ints& xs,
                      const Ints& os, int nthreads, bool reference);
void resample_backward(int dtype, int mode, int nsp, uintptr_t grad_output, uintptr_t grad_input, const Ints& in_sizes,
                       const Ints& out_sizes, bool align_corners, const std::vector<double>& scales, const Ints& gis,
                       const Ints& gos, int nthreads, bool reference);

// --- layer_norm (csrc/cpu/layer_norm.cpp) ---
void layer_norm_forward(int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps, uintptr_t y,
                        uintptr_t mean, uintptr_t rstd, int nthreads, bool reference);
void layer_norm_backward(int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t M,
                         int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads, bool reference);

// --- batch_norm: batch and group norm (csrc/cpu/batch_norm.cpp, batch_norm_reference.cpp) ---
void batch_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, bool channels_last,
                        uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                        double eps, uintptr_t save_mean, uintptr_t save_invstd, int nthreads);
void batch_norm_backward(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                         double eps, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads);
void group_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t w,
                        uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, int nthreads);
void group_norm_backward(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t N,
                         int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads);
void batch_norm_forward_reference(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, uintptr_t w,
                                  uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                                  double eps, uintptr_t save_mean, uintptr_t save_invstd);
void batch_norm_backward_reference(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, uintptr_t w,
                                   uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                                   double eps, uintptr_t dx, uintptr_t dw, uintptr_t db);
void group_norm_forward_reference(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G,
                                  uintptr_t w, uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd);
void group_norm_backward_reference(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                                   int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw,
                                   uintptr_t db);

// --- recurrent (csrc/cpu/recurrent.cpp) ---
void lstm_forward_step(int dtype, int64_t B, int64_t H, uintptr_t a, int64_t a_rs, uintptr_t r, int64_t r_rs,
                       uintptr_t c_prev, int64_t c_rs, uintptr_t ws, uintptr_t h, int nthreads);
void lstm_backward_step(int dtype, int64_t B, int64_t H, uintptr_t go, int64_t go_rs, int64_t go_cs, uintptr_t dh,
                        uintptr_t dc, uintptr_t ws, uintptr_t c_prev, int64_t c_rs, uintptr_t dgates, uintptr_t dc_out,
                        int nthreads);

// --- indexing (csrc/cpu/indexing.cpp) ---
// out[dest[j]] = out[dest[j]] + values[j] for j = 0 .. n-1, in that order (a NaN sum: the canonical
// NaN); dest: n int64 ids into out's contiguous elements; values: n contiguous elements of out's dtype.
void accumulate_in_order(int dtype, uintptr_t out, uintptr_t dest, uintptr_t values, int64_t n, int nthreads);
// index_add of blocks: out (outer, size, inner) and src (outer, n, inner) contiguous, idx n int64 in
// [0, size); out[o, idx[i], :] += src[o, i, :] for o, then i, in order (the sequence above).
void accumulate_blocks_in_order(int dtype, uintptr_t out, uintptr_t idx, uintptr_t src, int64_t outer, int64_t size,
                                int64_t n, int64_t inner, int nthreads);

// --- ctc (csrc/cpu/ctc.cpp) ---
// log_probs (T, B, C) with strides (lp_ts, lp_bs, lp_cs); targets int64, sequence b's labels at
// targets[tg_offsets[b] + k * tg_stride]; input/target lengths: B int64 each (checked by the caller).
// Forward writes nll (B) and log_alpha (B, T, S_max) contiguous (-inf where no alpha is defined);
// backward writes grad (T, B, C) contiguous, recomputing alpha and beta in float64 (S_max = 2 * max
// target length + 1, as in the forward).
void ctc_loss_forward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                      int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                      uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, int64_t S_max, uintptr_t nll,
                      uintptr_t log_alpha, int nthreads);
void ctc_loss_backward(int dtype, int64_t T, int64_t B, int64_t C, uintptr_t lp, int64_t lp_ts, int64_t lp_bs,
                       int64_t lp_cs, uintptr_t targets, uintptr_t tg_offsets, int64_t tg_stride,
                       uintptr_t input_lengths, uintptr_t target_lengths, int64_t blank, uintptr_t grad_out,
                       int64_t S_max, int64_t go_stride, bool zero_infinity, uintptr_t grad, int nthreads);
// --- grid_sample (csrc/cpu/grid_sample.cpp) ---
// nsp 2 or 3; interp and padding: torch's grid_sampler codes (0 bilinear, 1 nearest, 2 bicubic;
// 0 zeros, 1 border, 2 reflection); in_sizes (N, C, D, H, W) (2-d: D = 1), out_sizes (OD, OH, OW);
// strides 5 each: input (n, c, d, h, w), grid (n, od, oh, ow, coordinate), output (n, c, od, oh, ow).
// The backward writes grad_input (0: not wanted) at the input's strides and grad_grid (0: not
// wanted) at the grid's. reference: the plain loops.
void grid_sample_forward(int dtype, int nsp, int interp, int padding, bool align_corners, uintptr_t x, uintptr_t grid,
                         uintptr_t out, const Ints& in_sizes, const Ints& out_sizes, const Ints& xs, const Ints& gs,
                         const Ints& os, int nthreads, bool reference);
void grid_sample_backward(int dtype, int nsp, int interp, int padding, bool align_corners, uintptr_t grad_output,
                          uintptr_t x, uintptr_t grid, uintptr_t grad_input, uintptr_t grad_grid, const Ints& in_sizes,
                          const Ints& out_sizes, const Ints& xs, const Ints& gs, const Ints& gos, int nthreads,
                          bool reference);
// --- linalg (csrc/cpu/linalg.cpp; the algorithms in csrc/common/linalg.h) ---
// All take contiguous float64 batches (dtype must be float64: float32 is widened by the caller)
// and work in place; int32 outputs (info, pivots, sweeps) have one entry per matrix (per column).
// Cholesky: a (batch, n, n) row-major -> L in the lower triangle, +0 above; info[b] (torch's).
void linalg_cholesky(int dtype, int64_t batch, int64_t n, uintptr_t a, uintptr_t info, int nthreads);
// A X = B: a (batch, n, n) row-major triangular, b (batch, n, k) row-major, overwritten by X.
void linalg_triangular_solve(int dtype, int64_t batch, int64_t n, int64_t k, uintptr_t a, uintptr_t b, bool upper,
                             bool unit, int nthreads);
// LU with partial pivoting: a (batch, m, n) row-major -> L\U; piv (batch, min(m, n)) 1-based; info.
void linalg_lu_factor(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t piv, uintptr_t info,
                      bool pivot, int nthreads);
// Householder QR: a (batch, n, m) = column-major m x n matrices -> R above, reflectors below; tau.
void linalg_geqrf(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t tau, int nthreads);
// C := Q C or Q^T C: a (batch, k, m) column-major reflectors, tau (batch, k), c (batch, ncols, m)
// column-major.
void linalg_apply_q(int dtype, int64_t batch, int64_t m, int64_t k, uintptr_t a, uintptr_t tau, int64_t ncols,
                    uintptr_t c, bool transpose, int nthreads);
// Cyclic Jacobi: s (batch, n, n) symmetric row-major -> its diagonal holds the eigenvalues; vt
// (batch, n, n) rows = eigenvectors (unsorted); sweeps[b] = the sweeps run.
void linalg_eigh_jacobi(int dtype, int64_t batch, int64_t n, uintptr_t s, uintptr_t vt, bool compute_v,
                        uintptr_t sweeps, int nthreads);
// One-sided Jacobi: g (batch, n, m) = column-major m x n (m >= n) -> the left singular vectors u_j
// (zero where sigma_j = 0); vt (batch, n, n) rows = right singular vectors; s (batch, n) the
// singular values (all unsorted); sweeps[b] = the sweeps run.
void linalg_svd_jacobi(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t g, uintptr_t vt, uintptr_t s,
                       bool compute_v, uintptr_t sweeps, int nthreads);
// float64 in Wide (double-double, csrc/common/linalg.h), each output rounded once; the same
// layouts as the entries above. geqrf_wide also writes Q's first qcols columns (column-major,
// (batch, qcols, m)) from the unrounded reflectors when qcols > 0.
void linalg_geqrf_wide(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t a, uintptr_t tau, int64_t qcols,
                       uintptr_t q, int nthreads);
void linalg_apply_q_wide(int dtype, int64_t batch, int64_t m, int64_t k, uintptr_t a, uintptr_t tau, int64_t ncols,
                         uintptr_t c, bool transpose, int nthreads);
void linalg_eigh_jacobi_wide(int dtype, int64_t batch, int64_t n, uintptr_t s, uintptr_t vt, bool compute_v,
                             uintptr_t sweeps, int nthreads);
void linalg_svd_jacobi_wide(int dtype, int64_t batch, int64_t m, int64_t n, uintptr_t g, uintptr_t vt, uintptr_t s,
                            bool compute_v, uintptr_t sweeps, int nthreads);
// LDLᵀ (Bunch-Kaufman, LAPACK's lower sytf2 format): a (batch, n, n) column-major -> LD in the lower
// triangle (the upper one untouched); piv (batch, n) 1-based, negative for 2x2 blocks; info.
void linalg_ldl_factor(int dtype, int64_t batch, int64_t n, uintptr_t a, uintptr_t piv, uintptr_t info, bool wide,
                       int nthreads);
// A X = B from linalg_ldl_factor's output: b (batch, k, n) column-major, overwritten by X. wide: in
// double-double (the float64 definition), each output rounded once (also for linalg_ldl_factor).
void linalg_ldl_solve(int dtype, int64_t batch, int64_t n, int64_t k, uintptr_t a, uintptr_t piv, uintptr_t b,
                      bool wide, int nthreads);
// --- fft (csrc/cpu/fft.cpp) ---
// One pass of 1-d transforms over the lines of a (outer, n_src, inner) view: mode 0 c2c, 1 r2c (real
// input, imaginary +0), 2 c2r (X_0 .. X_{n_fft/2} extended as Hermitian, real part written). src:
// dtype code src_dtype, complex (interleaved) for c2c and c2r, strides (outer, n, inner) in elements of
// the tensor (complex elements for complex input); dst: contiguous (outer, n_dst, inner), complex of
// dst_dtype except for c2r (real). n_fft: the transform length; each result divided by divisor (1:
// not at all); forward: the direction of c2c (r2c is forward, c2r inverse); reference: every line
// through the plain scalar fft_recursive / fft_bluestein (no lane walk).
void fft_lines(int mode, int src_dtype, uintptr_t src, const Ints& src_strides, int dst_dtype, uintptr_t dst,
               int64_t outer, int64_t inner, int64_t n_src, int64_t n_fft, int64_t n_dst, bool forward, double divisor,
               int nthreads, bool reference);
// Test aid: (re, im) of the twiddle W_n^k = exp(-2 pi i k / n), 0 <= k < n.
std::vector<double> fft_twiddle_of(int64_t k, int64_t n);
// |z| of n contiguous complex values (interleaved pairs of dtype) into n reals.
void complex_abs(int dtype, uintptr_t src, uintptr_t dst, int64_t n, int nthreads);

}  // namespace repmode::cpu

// Math routines over contiguous arrays through the fastest CPU path that gives the scalar
// routines' bits (csrc/common/math_*.h): the AVX-512 array versions or the AVX2 ones
// for float32 when active (each verified bitwise against its scalar routine on all 2^32 inputs),
// the scalar routines otherwise.
#pragma once

#include <cstdint>

#include "../common/elementwise.h"
#include "../common/softmax_loss.h"
#include "isa.h"
#include "vec_activation_backward.h"
#include "vec_special.h"
#include "vec_tail.h"

#if defined(__x86_64__)
#include "vec_math_avx2.h"
#include "vec_math_erf_avx2.h"
#include "vec_math_gelu_avx2.h"
#include "vec_math_hyperbolic_avx2.h"
#include "vec_math_avx512.h"
#include "vec_math_more_avx512.h"
#include "vec_math_atan_avx2.h"
#include "vec_math_silu.h"
#endif

namespace repmode::cpu {

// out[i] = exp_of(in[i]); in == out is allowed.
inline void exp_array(const float* in, float* out, int64_t n) {
#if defined(__x86_64__)
  if (active_isa() == Isa::avx512) return exp_array_avx512(in, out, n);
  if (active_isa() >= Isa::avx2) return exp_array_avx2(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i]);
}
inline void exp_array(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i]);
}

// Elementwise ops whose float32 formula has an AVX2 array version with the same bits (and an
// AVX-512 one for exp, log, tanh, sigmoid, gelu, erf, the special functions of vec_special.h and
// tan, sinh, cosh of vec_tail.h).
template <typename T>
inline bool unary_array_op(int op) {
#if defined(__x86_64__)
  if (sizeof(T) == 4 && active_isa() >= Isa::avx2)
    return op == int(EwOp::exp) || op == int(EwOp::log) || op == int(EwOp::tanh) || op == int(EwOp::sigmoid) ||
           op == int(EwOp::erf) || op == int(EwOp::gelu) || op == int(EwOp::atan) || op == int(EwOp::silu) ||
           special_array_op(op) || tail_array_op(op);
#endif
  (void)op;
  return false;
}

// out[i] = EwFormula<float, op>(in[i]) for an op accepted by unary_array_op<float>. An AVX-512
// CPU runs their AVX-512 versions (atan: AVX2 only).
inline void unary_array(int op, const float* in, float* out, int64_t n) {
#if defined(__x86_64__)
  if (special_array_op(op)) return special_array(op, in, out, n, active_isa());  // lgamma, digamma, erfinv
  if (tail_array_op(op)) return tail_array(op, in, out, n, active_isa());        // tan, sinh, cosh
  if (active_isa() == Isa::avx512) {
    if (op == int(EwOp::exp)) return exp_array_avx512(in, out, n);
    if (op == int(EwOp::log)) return log_array_avx512(in, out, n);
    if (op == int(EwOp::tanh)) return tanh_array_avx512(in, out, n);
    if (op == int(EwOp::sigmoid)) return sigmoid_array_avx512(in, out, n);
    if (op == int(EwOp::gelu)) return gelu_array_avx512(in, out, n);
    if (op == int(EwOp::erf)) return erf_array_avx512(in, out, n);
    if (op == int(EwOp::silu)) return silu_array_avx512(in, out, n);
  }
  switch (static_cast<EwOp>(op)) {
    case EwOp::exp:
      return exp_array_avx2(in, out, n);
    case EwOp::log:
      return log_array_avx2(in, out, n);
    case EwOp::tanh:
      return tanh_array_avx2(in, out, n);
    case EwOp::sigmoid:
      return sigmoid_array_avx2(in, out, n);
    case EwOp::erf:
      return erf_array_avx2(in, out, n);
    case EwOp::gelu:
      return gelu_array_avx2(in, out, n);
    case EwOp::atan:
      return atan_array_avx2(in, out, n);
    case EwOp::silu:
      return silu_array_avx2(in, out, n);
    default:
      break;
  }
#endif
  (void)op, (void)in, (void)out, (void)n;
}
inline void unary_array(int, const double*, double*, int64_t) {}

// Two-operand elementwise ops whose float32 formula has an AVX2 array version with the same bits
// (b an array, sb = 1, or one value, sb = 0; the activation gradients of vec_activation_backward.h
// need sb = 1, and have AVX-512 versions too).
template <typename T>
inline bool binary_array_op(int op, int64_t sb) {
#if defined(__x86_64__)
  if (sizeof(T) == 4 && active_isa() >= Isa::avx2 && (sb == 0 || sb == 1))
    return op == int(EwOp::atan2) || (act_backward_array_op(op) && sb == 1);
#endif
  (void)op, (void)sb;
  return false;
}

// out[i] = EwFormula<float, op>(a[i], b[i * sb]) for an op accepted by binary_array_op<float>.
inline void binary_array(int op, const float* a, const float* b, int64_t sb, float* out, int64_t n) {
#if defined(__x86_64__)
  if (op == int(EwOp::atan2)) return atan2_array_avx2(a, b, sb, out, n);
  // gelu_backward, gelu_tanh_backward, silu_backward: a = grad, b = input (sb == 1)
  if (act_backward_array_op(op)) return act_backward_array(op, a, b, out, n, active_isa());
#endif
  (void)op, (void)a, (void)b, (void)sb, (void)out, (void)n;
}
inline void binary_array(int, const double*, const double*, int64_t, double*, int64_t) {}

// The row maximum of the staged softmax/log_softmax paths. NaN wins, as in row_max; which of
// +0/-0 is returned for a zero maximum may differ from row_max, and no output depends on it:
// x_j - m and exp(x_j - m) agree for m = +0 and m = -0 except in the sign of a zero difference,
// which reaches a log_softmax output only when log(S) == 0, i.e. when a single element holds the
// maximum — and then m is that element on every path.
inline float contiguous_row_max(const float* x, int64_t n);
inline double contiguous_row_max(const double* x, int64_t n) {
  return row_max<double>(n, [&](int64_t j) { return x[j]; });
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline float contiguous_row_max_avx2(const float* x, int64_t n) {
  __m256 m = _mm256_loadu_ps(x);
  __m256 nan = _mm256_cmp_ps(m, m, _CMP_UNORD_Q);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    m = _mm256_max_ps(v, m);  // a NaN in v is tracked below, not by max
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan)) return Canonical<float>::nan();
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float r = lanes[0];
  for (int l = 1; l < 8; ++l) r = lanes[l] > r ? lanes[l] : r;
  for (; i < n; ++i) {
    if (x[i] != x[i]) return Canonical<float>::nan();
    r = x[i] > r ? x[i] : r;
  }
  return r;
}
#endif

#if defined(__x86_64__)
// contiguous_row_max_avx2 on 16 lanes: the same maxima (max is exact; a lane's order of
// comparisons changes only which zero a zero maximum is, see above), NaN tracked apart.
__attribute__((target("avx512f,avx512dq,avx2"))) inline float contiguous_row_max_avx512(const float* x, int64_t n) {
  __m512 m = _mm512_loadu_ps(x);
  __mmask16 nan = _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q);
  int64_t i = 16;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    m = _mm512_max_ps(v, m);  // a NaN in v is tracked below, not by max
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  if (nan) return Canonical<float>::nan();
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, m);
  float r = lanes[0];
  for (int l = 1; l < 16; ++l) r = lanes[l] > r ? lanes[l] : r;
  for (; i < n; ++i) {
    if (x[i] != x[i]) return Canonical<float>::nan();
    r = x[i] > r ? x[i] : r;
  }
  return r;
}
#endif

inline float contiguous_row_max(const float* x, int64_t n) {
#if defined(__x86_64__)
  if (n >= 16 && active_isa() == Isa::avx512) return contiguous_row_max_avx512(x, n);
  if (n >= 8 && active_isa() >= Isa::avx2) return contiguous_row_max_avx2(x, n);
#endif
  return row_max<float>(n, [&](int64_t j) { return x[j]; });
}

}  // namespace repmode::cpu

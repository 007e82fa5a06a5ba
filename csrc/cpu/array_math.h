// exp/log over contiguous arrays through the fastest CPU path that gives the scalar routines'
// bits (csrc/common/math.h): AVX2 for float32 when active, the scalar routines otherwise.
#pragma once

#include <cstdint>

#include "../common/log_softmax.h"
#include "isa.h"

#if defined(__x86_64__)
#include "vec_math_avx2.h"
#endif

namespace repmode::cpu {

// out[i] = exp_of(in[i]); in == out is allowed.
inline void exp_array(const float* in, float* out, int64_t n) {
#if defined(__x86_64__)
  if (active_isa() >= Isa::avx2) return exp_array_avx2(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i]);
}
inline void exp_array(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i]);
}

// out[i] = log_of(in[i]); in == out is allowed.
inline void log_array(const float* in, float* out, int64_t n) {
#if defined(__x86_64__)
  if (active_isa() >= Isa::avx2) return log_array_avx2(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = log_of(in[i]);
}
inline void log_array(const double* in, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = log_of(in[i]);
}

}  // namespace repmode::cpu

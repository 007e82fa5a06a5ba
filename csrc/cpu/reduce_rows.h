#pragma once
#include <cstdint>

namespace repmode::cpu {

// Row reductions over x viewed as M rows of N terms: row m's term j is x[m*sM + j*sN].
// Outputs are contiguous (one per row). Orders: csrc/common/row_reductions.h.

// var and mean (mean may be null).
template <typename T>
void var_mean_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction, T* var,
                   T* mean, bool take_sqrt, int nthreads);
template <typename T>
void prod_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads);
// max/min under the total order (NaN wins; -0 < +0); values and/or first index (either may be null).
template <typename T>
void extreme_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, T* values,
                  int64_t* indices, int nthreads);
template <typename T>
void logsumexp_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads);
// Vector norms: ord 0 (count of nonzeros), 1, 2, +inf, -inf, or any other p.
template <typename T>
void norm_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, T* out, int nthreads);

// Along n of contiguous (outer, n, inner) tensors.
template <typename T>
void softmax(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool safe, int nthreads);
template <typename T>
void softmax_backward(const T* grad, const T* y, T* out, int64_t outer, int64_t n, int64_t inner, int nthreads);
template <typename T>
void cumulative(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool product, int nthreads);

}  // namespace repmode::cpu

#pragma once
#include <cstdint>

namespace repmode::cpu {

// out[m * s_out] = canonical sum over j < N of x[m * sM + j * sN], for m < M
// (csrc/common/reduction_order.h). If divide_by_n, the sum is then divided by T(N) (mean).
template <typename T>
void sum_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out, bool divide_by_n,
              int nthreads);

// The plain reference of the same order (tests compare the fast paths against it).
template <typename T>
void sum_rows_reference(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out,
                        bool divide_by_n);

// The canonical sum of p[0..n) on the calling thread, through the active ISA's chunk code.
// Same bits as canonical_sum (csrc/common/reduction_order.h).
template <typename T>
T contiguous_sum(const T* p, int64_t n);

// Row reductions over x viewed as M rows of N terms: row m's term j is x[m*sM + j*sN].
// Outputs are contiguous (one per row). Orders: csrc/common/reduction.h.

// var and mean (mean may be null).
template <typename T>
void var_mean_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction, T* var, T* mean,
                   bool take_sqrt, int nthreads);
template <typename T>
void prod_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads);
// max/min under the total order (NaN wins; -0 < +0); values and/or first index (either may be null).
template <typename T>
void extreme_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, T* values, int64_t* indices,
                  int nthreads);
template <typename T>
void logsumexp_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads);
// Vector norms: ord 0 (count of nonzeros), 1, 2, +inf, -inf, or any other p.
template <typename T>
void norm_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, T* out, int nthreads);

// cumsum / cumprod along n of contiguous (outer, n, inner) tensors.
template <typename T>
void cumulative(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool product, int nthreads);

}  // namespace repmode::cpu

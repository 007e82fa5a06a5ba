#pragma once
#include <cstdint>

namespace repmode::cpu {

// out[m * s_out] = canonical sum over j < N of x[m * sM + j * sN], for m < M
// (csrc/common/reduce_order.h). If divide_by_n, the sum is then divided by T(N) (mean).
template <typename T>
void sum_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out,
              bool divide_by_n, int nthreads);

// The plain reference of the same order (tests compare the fast paths against it).
template <typename T>
void sum_rows_reference(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out,
                        int64_t s_out, bool divide_by_n);

// The canonical sum of p[0..n) on the calling thread, through the active ISA's chunk code.
// Same bits as canonical_sum (csrc/common/reduce_order.h).
template <typename T>
T contiguous_sum(const T* p, int64_t n);

}  // namespace repmode::cpu

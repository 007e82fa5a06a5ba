// The CPU elementwise engine: out[i] = formula(op)(a[i], b[i], c[i], p0, p1, p2) over an
// N-d index space with broadcasting (stride 0). Formulas: csrc/common/elementwise.h.
#pragma once
#include <cstdint>
#include <vector>

namespace repmode::cpu {

// One strided operand; strides in elements, one per output dim (0 where broadcast).
// data == nullptr: the operand is absent (unary and binary ops).
template <typename T>
struct Operand {
  const T* data;
  std::vector<int64_t> strides;
};

// params: the op's number arguments p0, p1, p2 (as given; see EwParams).
// The output may alias an input only with identical strides (in-place).
template <typename T>
void elementwise(int op, const std::vector<int64_t>& sizes, T* out, const std::vector<int64_t>& out_strides,
                 const Operand<T>& a, const Operand<T>& b, const Operand<T>& c, const double params[3], int nthreads);

// Contiguous out and a of n elements; b and c are arrays (stride 1), single values
// (stride 0) or absent (nullptr).
template <typename T>
void elementwise_contiguous(int op, int64_t n, T* out, const T* a, const T* b, int64_t b_stride, const T* c,
                            int64_t c_stride, const double params[3], int nthreads);

}  // namespace repmode::cpu

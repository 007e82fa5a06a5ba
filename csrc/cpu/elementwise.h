#pragma once
#include <cstdint>
#include <vector>

namespace repmode::cpu {

// One strided operand of an elementwise op; strides in elements, one per output dim
// (0 where broadcast). A null pointer means "the scalar `value`" (a Python number).
template <typename T>
struct Operand {
  const T* data;
  std::vector<int64_t> strides;
};

// out = formula(op)(a, b, alpha) for every index of `sizes` (docs/semantics.md, "Elementwise").
// Unary ops ignore b. Outputs may alias an input only with identical strides (in-place).
template <typename T>
void elementwise(int op, const std::vector<int64_t>& sizes, T* out,
                 const std::vector<int64_t>& out_strides, const Operand<T>& a, const Operand<T>& b,
                 T alpha, int nthreads);

// The same for contiguous operands of n elements (b may be a scalar: b_stride 0).
template <typename T>
void elementwise_contiguous(int op, int64_t n, T* out, const T* a, const T* b, int64_t b_stride, T alpha,
                            int nthreads);

}  // namespace repmode::cpu

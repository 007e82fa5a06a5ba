// AVX2 and AVX-512 array versions of the float32 special functions lgamma, digamma and erfinv
// (csrc/common/math_special.h's float32 definitions, through EwFormula<float, op>), bit for bit
// equal to the scalar formula on every input. csrc/cpu/vec_special.cpp has the method.
#pragma once

#include <cstdint>

#include "isa.h"

namespace repmode::cpu {

// Whether op (an EwOp code) has an array version here.
bool special_array_op(int op);
// out[i] = EwFormula<float, op>(in[i]) for 0 <= i < n, op accepted by special_array_op, on the
// given path (avx2 or avx512; the CPU must have it). in == out is allowed; partial overlap is not.
void special_array(int op, const float* in, float* out, int64_t n, Isa isa);

}  // namespace repmode::cpu

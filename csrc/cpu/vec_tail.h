// AVX2 and AVX-512 array versions of float32 tan, sinh and cosh (csrc/common/math_tail.h's
// cr_tanf, cr_sinhf, cr_coshf), bit for bit equal to the scalar functions on every input.
// csrc/cpu/vec_tail.cpp has the method.
#pragma once

#include <cstdint>

#include "isa.h"

namespace repmode::cpu {

// Whether op (an EwOp code) has an array version here.
bool tail_array_op(int op);
// out[i] = EwFormula<float, op>(in[i]) for 0 <= i < n, op accepted by tail_array_op, on the
// given path (avx2 or avx512; the CPU must have it). in == out is allowed; partial overlap is not.
void tail_array(int op, const float* in, float* out, int64_t n, Isa isa);

}  // namespace repmode::cpu

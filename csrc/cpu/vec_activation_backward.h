// AVX2 and AVX-512 array versions of the float32 activation gradients gelu_backward (erf form),
// gelu_tanh_backward and silu_backward, bit for bit equal to their scalar formulas
// (csrc/common/elementwise.h) on every input. csrc/cpu/vec_activation_backward.cpp has the method.
#pragma once

#include <cstdint>

#include "isa.h"

namespace repmode::cpu {

// Whether op (an EwOp code) has an array version here.
bool act_backward_array_op(int op);
// out[i] = EwFormula<float, op>(g[i], x[i]) for 0 <= i < n, op accepted by act_backward_array_op,
// on the given path (avx2 or avx512; the CPU must have it). out may be g or x; no partial overlap.
void act_backward_array(int op, const float* g, const float* x, float* out, int64_t n, Isa isa);

// For csrc/verify/check_activation_backward.cpp: the lanes' approximation h[i] of the op's double
// factor H(x[i]) (the scalar result is narrow<float>(g H)), the window term w[i] of its error
// scale sigma = |h| + w, and kept[i] (1: the lanes may keep g h; 0: the scalar formula), on the
// given path.
void act_backward_approx(int op, const float* x, double* h, double* w, uint8_t* kept, int64_t n, Isa isa);
// The m of the lanes' rounding test: a kept lane returns RN(p - m (|p| + |G| w)), p = RN(G h), when
// that float equals RN(p + m (|p| + |G| w)) (vec_activation_backward.cpp).
double act_backward_margin(int op);

}  // namespace repmode::cpu

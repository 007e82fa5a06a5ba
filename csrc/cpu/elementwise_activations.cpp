// Elementwise activations and their backward formulas that take several steps (evaluated
// in double and rounded once: csrc/common/elementwise.h).
//
// Every op here has AVX2 and AVX-512 copies of its loop (`true`), even those whose formula branches
// per element and so is not vectorized: inside the copies (target "avx2,fma", flatten) the
// formula's explicit fmas (repmode_fma: the math routines' double-double steps) are single FMA
// instructions, where the portable copy calls libm's fma() for each. fma is exactly rounded either
// way, so the bits are the same on every path (tests/families/elementwise/test_activation_isa_paths.py).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(elu, true) \
  REPMODE_EW_CASE(elu_backward_input, true) \
  REPMODE_EW_CASE(elu_backward_result, true) \
  REPMODE_EW_CASE(gelu, true) \
  REPMODE_EW_CASE(gelu_tanh, true) \
  REPMODE_EW_CASE(gelu_backward, true) \
  REPMODE_EW_CASE(gelu_tanh_backward, true) \
  REPMODE_EW_CASE(silu, true) \
  REPMODE_EW_CASE(silu_backward, true) \
  REPMODE_EW_CASE(mish, true) \
  REPMODE_EW_CASE(mish_backward, true) \
  REPMODE_EW_CASE(softplus, true) \
  REPMODE_EW_CASE(softplus_backward, true) \
  REPMODE_EW_CASE(hardswish, true) \
  REPMODE_EW_CASE(hardswish_backward, true) \
  REPMODE_EW_CASE(hardsigmoid, true) \
  REPMODE_EW_CASE(hardsigmoid_backward, true) \
  REPMODE_EW_CASE(softshrink, true) \
  REPMODE_EW_CASE(log_sigmoid, true) \
  REPMODE_EW_CASE(log_sigmoid_backward, true) \
  REPMODE_EW_CASE(glu, true)
REPMODE_EW_GROUP(activations, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

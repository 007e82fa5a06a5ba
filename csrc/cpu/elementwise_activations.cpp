// Elementwise activations and their backward formulas that take several steps (evaluated
// in double and rounded once: csrc/common/elementwise.h).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(elu, false) \
  REPMODE_EW_CASE(elu_backward_input, false) \
  REPMODE_EW_CASE(elu_backward_result, false) \
  REPMODE_EW_CASE(gelu, false) \
  REPMODE_EW_CASE(gelu_tanh, false) \
  REPMODE_EW_CASE(gelu_backward, false) \
  REPMODE_EW_CASE(gelu_tanh_backward, false) \
  REPMODE_EW_CASE(silu, false) \
  REPMODE_EW_CASE(silu_backward, false) \
  REPMODE_EW_CASE(mish, false) \
  REPMODE_EW_CASE(mish_backward, false) \
  REPMODE_EW_CASE(softplus, false) \
  REPMODE_EW_CASE(softplus_backward, false) \
  REPMODE_EW_CASE(hardswish, true) \
  REPMODE_EW_CASE(hardswish_backward, true) \
  REPMODE_EW_CASE(hardsigmoid, true) \
  REPMODE_EW_CASE(hardsigmoid_backward, true) \
  REPMODE_EW_CASE(softshrink, true) \
  REPMODE_EW_CASE(log_sigmoid, false) \
  REPMODE_EW_CASE(log_sigmoid_backward, false) \
  REPMODE_EW_CASE(glu, false)
REPMODE_EW_GROUP(activations, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

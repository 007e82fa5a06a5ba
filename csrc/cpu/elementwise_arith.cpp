// Elementwise ops of one or a few basic operations: compiled also for AVX2, where the
// compiler vectorizes them (same IEEE sequence per element).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(add, true) \
  REPMODE_EW_CASE(sub, true) \
  REPMODE_EW_CASE(mul, true) \
  REPMODE_EW_CASE(div, true) \
  REPMODE_EW_CASE(threshold_backward, true) \
  REPMODE_EW_CASE(minimum, true) \
  REPMODE_EW_CASE(maximum, true) \
  REPMODE_EW_CASE(clamp, true) \
  REPMODE_EW_CASE(neg, true) \
  REPMODE_EW_CASE(relu, true) \
  REPMODE_EW_CASE(abs, true) \
  REPMODE_EW_CASE(sqrt, true) \
  REPMODE_EW_CASE(reciprocal, true) \
  REPMODE_EW_CASE(sign, true) \
  REPMODE_EW_CASE(leaky_relu, true) \
  REPMODE_EW_CASE(leaky_relu_backward, true) \
  REPMODE_EW_CASE(hardtanh_backward, true) \
  REPMODE_EW_CASE(addcmul, true) \
  REPMODE_EW_CASE(addcdiv, true) \
  REPMODE_EW_CASE(lerp, true) \
  REPMODE_EW_CASE(tanh_backward, true) \
  REPMODE_EW_CASE(sigmoid_backward, true)
REPMODE_EW_GROUP(arith, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

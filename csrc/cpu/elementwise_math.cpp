// Elementwise ops that are one call of repmode's math routines (csrc/common/math_*.h).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(exp, false) \
  REPMODE_EW_CASE(log, false) \
  REPMODE_EW_CASE(log1p, false) \
  REPMODE_EW_CASE(expm1, false) \
  REPMODE_EW_CASE(log2, false) \
  REPMODE_EW_CASE(exp2, false) \
  REPMODE_EW_CASE(tanh, false) \
  REPMODE_EW_CASE(sigmoid, false) \
  REPMODE_EW_CASE(erf, false) \
  REPMODE_EW_CASE(erfc, false) \
  REPMODE_EW_CASE(sin, false) \
  REPMODE_EW_CASE(cos, false) \
  REPMODE_EW_CASE(rsqrt, false) \
  REPMODE_EW_CASE(pow, false)
REPMODE_EW_GROUP(math, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

// The math long tail (issue 26): inverse trigonometric functions, hyperbolic functions, tan
// and log10 over repmode's own routines (csrc/common/math_atan.h, ...). The per-element bits
// are csrc/common/elementwise.h's; no AVX2 copy of the loops (the routines branch per element).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(atan, false) \
  REPMODE_EW_CASE(atan2, false) \
  REPMODE_EW_CASE(asin, false) \
  REPMODE_EW_CASE(acos, false) \
  REPMODE_EW_CASE(sinh, false) \
  REPMODE_EW_CASE(cosh, false) \
  REPMODE_EW_CASE(tan, false) \
  REPMODE_EW_CASE(log10, false) \
  REPMODE_EW_CASE(asinh, false) \
  REPMODE_EW_CASE(acosh, false) \
  REPMODE_EW_CASE(atanh, false)
REPMODE_EW_GROUP(mathtail, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

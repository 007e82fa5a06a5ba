// Special functions, gamma and error-function family (issue 26): lgamma, digamma, polygamma,
// mvlgamma, erfinv, the Hurwitz zeta function, ndtri, log_ndtr, erfcx and entr over
// csrc/common/math_special.h; igamma, igammac and airy_ai over csrc/common/math_igamma.h. The
// per-element bits are csrc/common/elementwise.h's; no compiled AVX2 copy of these loops (the
// formulas branch per element and loop over series): float32 lgamma, digamma and erfinv over
// contiguous arrays take the AVX2/AVX-512 array versions of vec_special.cpp instead
// (array_math.h), with the same bits.
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(lgamma, false) \
  REPMODE_EW_CASE(digamma, false) \
  REPMODE_EW_CASE(polygamma, false) \
  REPMODE_EW_CASE(mvlgamma, false) \
  REPMODE_EW_CASE(erfinv, false) \
  REPMODE_EW_CASE(zeta, false) \
  REPMODE_EW_CASE(ndtri, false) \
  REPMODE_EW_CASE(log_ndtr, false) \
  REPMODE_EW_CASE(erfcx, false) \
  REPMODE_EW_CASE(entr, false) \
  REPMODE_EW_CASE(igamma, false) \
  REPMODE_EW_CASE(igammac, false) \
  REPMODE_EW_CASE(airy_ai, false)
REPMODE_EW_GROUP(special, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

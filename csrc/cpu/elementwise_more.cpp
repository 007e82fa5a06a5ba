// More elementwise functions (docs/semantics.md "More elementwise functions"): exact ops
// (copysign, fmod, nextafter, frexp, ...) and formulas over repmode's math routines
// (logaddexp, logit, sinc, hypot, ...). The per-element bits are csrc/common/elementwise.h's.
#include "elementwise_engine.h"

namespace repmode::cpu {

// Ops of a few comparisons, selections and basic operations get an AVX2 copy of the loop
// (the compiler may vectorize them: the same IEEE sequence per element); fmod's integer long
// division and the math-routine formulas do not.
// clang-format off
#define CASES \
  REPMODE_EW_CASE(copysign, true) \
  REPMODE_EW_CASE(fmod, false) \
  REPMODE_EW_CASE(remainder, false) \
  REPMODE_EW_CASE(floor_divide, false) \
  REPMODE_EW_CASE(fmax, true) \
  REPMODE_EW_CASE(fmin, true) \
  REPMODE_EW_CASE(heaviside, true) \
  REPMODE_EW_CASE(nextafter, true) \
  REPMODE_EW_CASE(frac, true) \
  REPMODE_EW_CASE(nan_to_num, true) \
  REPMODE_EW_CASE(round_decimals, true) \
  REPMODE_EW_CASE(frexp_mantissa, false) \
  REPMODE_EW_CASE(frexp_exponent, false) \
  REPMODE_EW_CASE(logaddexp, false) \
  REPMODE_EW_CASE(logaddexp2, false) \
  REPMODE_EW_CASE(logit, false) \
  REPMODE_EW_CASE(logit_backward, false) \
  REPMODE_EW_CASE(xlog1py, false) \
  REPMODE_EW_CASE(sinc, false) \
  REPMODE_EW_CASE(hypot, false) \
  REPMODE_EW_CASE(ldexp, false)
REPMODE_EW_GROUP(more, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

// Bessel functions and orthogonal polynomials (issue 26): the per-element bits are
// csrc/common/elementwise.h's (formulas in csrc/common/math_bessel.h); no AVX2 copy of the
// loops (the routines branch per element, the polynomials loop n times).
#include "elementwise_engine.h"

namespace repmode::cpu {

// clang-format off
#define CASES \
  REPMODE_EW_CASE(i0, false) \
  REPMODE_EW_CASE(i0e, false) \
  REPMODE_EW_CASE(i1, false) \
  REPMODE_EW_CASE(i1e, false) \
  REPMODE_EW_CASE(bessel_k0, false) \
  REPMODE_EW_CASE(bessel_k1, false) \
  REPMODE_EW_CASE(bessel_k0e, false) \
  REPMODE_EW_CASE(bessel_k1e, false) \
  REPMODE_EW_CASE(spherical_bessel_j0, false) \
  REPMODE_EW_CASE(chebyshev_t, false) \
  REPMODE_EW_CASE(chebyshev_u, false) \
  REPMODE_EW_CASE(chebyshev_v, false) \
  REPMODE_EW_CASE(chebyshev_w, false) \
  REPMODE_EW_CASE(shifted_chebyshev_t, false) \
  REPMODE_EW_CASE(shifted_chebyshev_u, false) \
  REPMODE_EW_CASE(shifted_chebyshev_v, false) \
  REPMODE_EW_CASE(shifted_chebyshev_w, false) \
  REPMODE_EW_CASE(hermite_h, false) \
  REPMODE_EW_CASE(hermite_he, false) \
  REPMODE_EW_CASE(laguerre_l, false) \
  REPMODE_EW_CASE(legendre_p, false) \
  REPMODE_EW_CASE(kaiser_window, false) \
  REPMODE_EW_CASE(bessel_j0, false) \
  REPMODE_EW_CASE(bessel_j1, false) \
  REPMODE_EW_CASE(bessel_y0, false) \
  REPMODE_EW_CASE(bessel_y1, false)
REPMODE_EW_GROUP(bessel, CASES)
#undef CASES
// clang-format on

}  // namespace repmode::cpu

// One name per math function for both float types: `tanh_of(float)` is the correctly
// rounded cr_tanhf, `tanh_of(double)` the reproducible repmode_tanh. Kernels written once
// as templates over the dtype call these. (sqrt_of, an IEEE basic operation, is in math.h.)
#pragma once

#include "math.h"
#include "math_erf.h"
#include "math_exp_family.h"
#include "math_hyperbolic.h"
#include "math_log_family.h"
#include "math_pow.h"
#include "math_trig.h"
#include "math_atan.h"
#include "math_tail.h"

namespace repmode {

#define REPMODE_MATH_OVERLOAD(name, f32, f64)            \
  REPMODE_HD float name##_of(float x) { return f32(x); } \
  REPMODE_HD double name##_of(double x) { return f64(x); }

REPMODE_MATH_OVERLOAD(exp, cr_expf, repmode_exp)
REPMODE_MATH_OVERLOAD(log, cr_logf, repmode_log)
REPMODE_MATH_OVERLOAD(exp2, cr_exp2f, repmode_exp2)
REPMODE_MATH_OVERLOAD(expm1, cr_expm1f, repmode_expm1)
REPMODE_MATH_OVERLOAD(log2, cr_log2f, repmode_log2)
REPMODE_MATH_OVERLOAD(log1p, cr_log1pf, repmode_log1p)
REPMODE_MATH_OVERLOAD(sin, cr_sinf, repmode_sin)
REPMODE_MATH_OVERLOAD(cos, cr_cosf, repmode_cos)
REPMODE_MATH_OVERLOAD(tanh, cr_tanhf, repmode_tanh)
REPMODE_MATH_OVERLOAD(sigmoid, cr_sigmoidf, repmode_sigmoid)
REPMODE_MATH_OVERLOAD(erf, cr_erff, repmode_erf)
REPMODE_MATH_OVERLOAD(erfc, cr_erfcf, repmode_erfc)
REPMODE_MATH_OVERLOAD(rsqrt, cr_rsqrtf, repmode_rsqrt)
REPMODE_MATH_OVERLOAD(reciprocal, cr_reciprocalf, repmode_reciprocal)
REPMODE_MATH_OVERLOAD(atan, cr_atanf, repmode_atan)
REPMODE_MATH_OVERLOAD(asin, cr_asinf, repmode_asin)
REPMODE_MATH_OVERLOAD(acos, cr_acosf, repmode_acos)
REPMODE_MATH_OVERLOAD(sinh, cr_sinhf, repmode_sinh)
REPMODE_MATH_OVERLOAD(cosh, cr_coshf, repmode_cosh)
REPMODE_MATH_OVERLOAD(tan, cr_tanf, repmode_tan)
REPMODE_MATH_OVERLOAD(log10, cr_log10f, repmode_log10)
REPMODE_MATH_OVERLOAD(asinh, cr_asinhf, repmode_asinh)
REPMODE_MATH_OVERLOAD(acosh, cr_acoshf, repmode_acosh)
REPMODE_MATH_OVERLOAD(atanh, cr_atanhf, repmode_atanh)

#undef REPMODE_MATH_OVERLOAD

REPMODE_HD float pow_of(float x, float y) { return cr_powf(x, y); }
REPMODE_HD double pow_of(double x, double y) { return repmode_pow(x, y); }
REPMODE_HD float atan2_of(float y, float x) { return cr_atan2f(y, x); }
REPMODE_HD double atan2_of(double y, double x) { return repmode_atan2(y, x); }

}  // namespace repmode

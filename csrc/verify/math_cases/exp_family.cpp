// cr_exp2f / cr_expm1f and repmode_exp2 / repmode_expm1 (csrc/common/math_exp_family.h).
// References: glibc's x87 exp2l/expm1l (a few long double ulps, < 2^-60 relative) and
// libquadmath's exp2q/expm1q (< 2^-110 relative); expm1l and expm1q keep their relative
// accuracy near 0, where e^x - 1 is computed without cancellation.
#include "../../common/math_exp_family.h"
#include "../math_verify.h"

namespace {
long double exp2_ld(long double x) { return exp2l(x); }
__float128 exp2_q(__float128 x) { return exp2q(x); }
long double expm1_ld(long double x) { return expm1l(x); }
__float128 expm1_q(__float128 x) { return expm1q(x); }

verify::RegisterUnary exp2f_case({"exp2f", repmode::cr_exp2f, exp2_ld, exp2_q});
verify::RegisterUnary expm1f_case({"expm1f", repmode::cr_expm1f, expm1_ld, expm1_q});
// exp2: |x| up to 1080 covers overflow (1024) and the subnormal results down to -1075.
verify::RegisterDouble exp2_case({"exp2", repmode::repmode_exp2, exp2_q, 1e-20, 1080.0});
// expm1: |x| up to 750 covers overflow (~709.78) and the saturation to -1 (x < -38).
verify::RegisterDouble expm1_case({"expm1", repmode::repmode_expm1, expm1_q, 1e-20, 750.0});
}  // namespace

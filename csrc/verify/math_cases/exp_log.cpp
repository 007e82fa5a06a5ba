// cr_expf / cr_logf (csrc/common/math.h) and their AVX2 array paths.
#include "../../common/math.h"
#include "../../cpu/vec_math_avx2.h"
#include "../math_verify.h"

namespace {
long double exp_ld(long double x) { return expl(x); }
__float128 exp_q(__float128 x) { return expq(x); }
long double log_ld(long double x) { return logl(x); }
__float128 log_q(__float128 x) { return logq(x); }

verify::RegisterUnary expf_case({"expf", repmode::cr_expf, exp_ld, exp_q, repmode::cpu::exp_array_avx2});
verify::RegisterUnary logf_case({"logf", repmode::cr_logf, log_ld, log_q, repmode::cpu::log_array_avx2});
verify::RegisterDouble exp_case({"exp", repmode::repmode_exp, exp_q, 1e-20, 745.0});
verify::RegisterDouble log_case({"log", repmode::repmode_log, log_q, 1e-300, 1e300});
}  // namespace

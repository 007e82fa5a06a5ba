// cr_sinhf, cr_coshf, cr_tanf, cr_log10f, cr_asinhf, cr_acoshf, cr_atanhf over all 2^32 inputs,
// and the float64 versions on random inputs (csrc/common/math_tail.h).
//
// References: glibc's x87 long double functions (sinhl, coshl, tanl, log10l, asinhl, acoshl,
// atanhl: within a few ulps of 64 bits, < 2^-60 relative over the float32 arguments) decide
// unless within 2^-58 of a float32 rounding boundary; then libquadmath's (< 2^-110) decide.
#include "../../common/math_tail.h"
#include "../math_verify.h"

namespace {
long double sinh_ld(long double x) { return sinhl(x); }
__float128 sinh_q(__float128 x) { return sinhq(x); }
long double cosh_ld(long double x) { return coshl(x); }
__float128 cosh_q(__float128 x) { return coshq(x); }
long double tan_ld(long double x) { return tanl(x); }
__float128 tan_q(__float128 x) { return tanq(x); }
long double log10_ld(long double x) { return log10l(x); }
__float128 log10_q(__float128 x) { return log10q(x); }
long double asinh_ld(long double x) { return asinhl(x); }
__float128 asinh_q(__float128 x) { return asinhq(x); }
long double acosh_ld(long double x) { return acoshl(x); }
__float128 acosh_q(__float128 x) { return acoshq(x); }
long double atanh_ld(long double x) { return atanhl(x); }
__float128 atanh_q(__float128 x) { return atanhq(x); }

verify::RegisterUnary sinhf_case({"sinhf", repmode::cr_sinhf, sinh_ld, sinh_q});
verify::RegisterUnary coshf_case({"coshf", repmode::cr_coshf, cosh_ld, cosh_q});
verify::RegisterUnary tanf_case({"tanf", repmode::cr_tanf, tan_ld, tan_q});
verify::RegisterUnary log10f_case({"log10f", repmode::cr_log10f, log10_ld, log10_q});
verify::RegisterUnary asinhf_case({"asinhf", repmode::cr_asinhf, asinh_ld, asinh_q});
verify::RegisterUnary acoshf_case({"acoshf", repmode::cr_acoshf, acosh_ld, acosh_q});
verify::RegisterUnary atanhf_case({"atanhf", repmode::cr_atanhf, atanh_ld, atanh_q});

verify::RegisterDouble sinh_case({"sinh", repmode::repmode_sinh, sinh_q, 1e-30, 720.0});
verify::RegisterDouble sinh_mid_case({"sinh_mid", repmode::repmode_sinh, sinh_q, 1e-3, 10.0});
verify::RegisterDouble cosh_case({"cosh", repmode::repmode_cosh, cosh_q, 1e-30, 720.0});
verify::RegisterDouble tan_case({"tan", repmode::repmode_tan, tan_q, 1e-30, 1e300});
verify::RegisterDouble tan_mid_case({"tan_mid", repmode::repmode_tan, tan_q, 1e-3, 1e3});
verify::RegisterDouble log10_case({"log10", repmode::repmode_log10, log10_q, 1e-300, 1e300});
verify::RegisterDouble log10_mid_case({"log10_mid", repmode::repmode_log10, log10_q, 0.5, 2.0});
verify::RegisterDouble asinh_case({"asinh", repmode::repmode_asinh, asinh_q, 1e-30, 1e300});
verify::RegisterDouble asinh_mid_case({"asinh_mid", repmode::repmode_asinh, asinh_q, 1e-3, 10.0});
verify::RegisterDouble acosh_case({"acosh", repmode::repmode_acosh, acosh_q, 1.0, 1e300});
verify::RegisterDouble acosh_mid_case({"acosh_mid", repmode::repmode_acosh, acosh_q, 1.0, 1.5});
verify::RegisterDouble atanh_case({"atanh", repmode::repmode_atanh, atanh_q, 1e-30, 1.0});
verify::RegisterDouble atanh_mid_case({"atanh_mid", repmode::repmode_atanh, atanh_q, 0.25, 1.0});
}  // namespace

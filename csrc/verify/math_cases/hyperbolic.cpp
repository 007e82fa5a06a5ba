// cr_tanhf / cr_sigmoidf and the float64 versions (csrc/common/math_hyperbolic.h), with
// their AVX2 array paths (csrc/cpu/vec_math_hyperbolic_avx2.h).
//
// References. tanh: glibc tanhl (x87, within 3 ulp of 64 bits: < 2^-62 relative) and
// tanhq (< 2^-110). sigmoid: 1/(1 + expl(-x)): expl is within 2 ulp (< 2^-62), the sum
// with 1 adds one rounding (2^-64) and no cancellation (both terms positive), the
// division another (2^-64): < 2^-61 relative. Over the subnormal output range
// (-104 < x < -87.3) expl(-x) <= e^104 ~ 2^150 and 1/(1 + expl(-x)) >= 2^-151 are normal
// long doubles (and normal __float128), so the bound holds there too, and the final
// conversion to float32 rounds to the subnormal grid once. The __float128 version
// (expq < 2^-111, two roundings of 2^-113) is < 2^-110.
#include "../../common/math_hyperbolic.h"
#include "../../cpu/vec_math_hyperbolic_avx2.h"
#include "../math_verify.h"

namespace {
long double tanh_ld(long double x) { return tanhl(x); }
__float128 tanh_q(__float128 x) { return tanhq(x); }
long double sigmoid_ld(long double x) { return 1.0L / (1.0L + expl(-x)); }
__float128 sigmoid_q(__float128 x) { return (__float128)1 / ((__float128)1 + expq(-x)); }

verify::RegisterUnary tanhf_case({"tanhf", repmode::cr_tanhf, tanh_ld, tanh_q, repmode::cpu::tanh_array_avx2});
verify::RegisterUnary sigmoidf_case({"sigmoidf", repmode::cr_sigmoidf, sigmoid_ld, sigmoid_q,
                                     repmode::cpu::sigmoid_array_avx2});
verify::RegisterDouble tanh_case({"tanh", repmode::repmode_tanh, tanh_q, 1e-30, 30.0});
verify::RegisterDouble tanh_mid_case({"tanh_mid", repmode::repmode_tanh, tanh_q, 1e-3, 20.0});
verify::RegisterDouble sigmoid_case({"sigmoid", repmode::repmode_sigmoid, sigmoid_q, 1e-20, 750.0});
verify::RegisterDouble sigmoid_mid_case({"sigmoid_mid", repmode::repmode_sigmoid, sigmoid_q, 1e-3, 40.0});
}  // namespace

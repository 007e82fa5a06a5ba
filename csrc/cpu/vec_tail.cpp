// AVX2 and AVX-512 array versions of float32 tan, sinh and cosh, with the bits of the scalar
// functions cr_tanf, cr_sinhf, cr_coshf (csrc/common/math_tail.h) on every input.
//
// These functions are correctly rounded: each float32 input has one right result, so an array
// version may compute it another way, provided it never returns another value. The lane
// kernels (vec_tail_lanes.h, compiled once per ISA) evaluate in double, test whether the value
// could round differently from the exact result (f32_boundary_within with a tolerance far
// above the error bound), and give the rare lanes that fail, and the inputs outside the fast
// range, to the scalar function. csrc/verify/check_tail_simd.cpp compares both ISA paths with the
// scalar functions on all 2^32 inputs (docs/evidence.md), which is the proof that no bit changes.
//
// sinh, cosh: the scalar fast path itself, lane by lane: math_tail.h sinhcoshf_impl's IEEE
// double operations in its order (exp_parts, E + s p, 1/E, (E -+ 1/E)/2; sinh's a < 1/4 series),
// the same table entries (gathered), the same rounding test (kTailFastTol), the same constant
// results (|x| < 2^-12, |x| > 89.5, inf) by blends, NaN to the scalar function. The one rewrite:
// s = T_j * 2^m is exact, so it is formed as bits(T_j) + (m << 52) (as in
// vec_math_hyperbolic_avx2.h).
//
// tan: a cheaper algorithm than cr_tanf's (two Payne-Hanek reductions, sin and cos each from a
// 64-entry table), for 2^-12 <= |x| < 2^18 (a = |x|, u = 2^-53 the unit roundoff):
//  * k = RN(a c + 1.5 2^52) - 1.5 2^52 with c = RN(2/pi), one fma: the integer nearest a c, and
//    |a c - a 2/pi| < 2^18 * 2^-54, so |a - k pi/2| <= pi/4 + 2^-35.
//  * r = RN(r1 - k P2), r1 = fma(-k, P1, a) = a - k P1 exactly (a and k P1 are multiples of
//    2^-52 and |r1| < 1), with pi/2 = P1 + P2 + (< 2^-108.9). Every float32 a >= 2^-12 is more
//    than 2^-33.2 away from a multiple of pi/2 (math_trig.h: |f| > 2^-29.86 in units of pi/32),
//    and the dropped k (pi/2 - P1 - P2) is below 2^17.4 * 2^-108.9 = 2^-91.5, so
//    r = r*(1 + d), r* = a - k pi/2 exactly, |d| < u + 2^-58.3 < 1.03 u. The condition number of
//    tan and cot at r*, 2 r*/sin(2 r*) <= pi/2 (|r*| <= pi/4 + 2^-35), makes that < 1.7 u of tan a.
//  * sin r ~ r + r z S(z), cos r ~ 1 + z C(z), z = RN(r^2), S and C the Taylor polynomials to
//    r^15/15! and r^16/16! (truncation < 0.6 u and < 2^-58 relative on |r| <= pi/4 + 2^-35),
//    Horner's rule with fma, coefficients rounded to double. First order: the r^3 term
//    (< 0.103 |r|) carries < 3.5 u of itself, the last fma rounds once: sin r within 2 u; z C(z)
//    (<= 0.309 in size) carries < 2.5 u of itself, over cos r >= 0.707, plus the last rounding:
//    cos r within 2.1 u.
//  * tan(k pi/2 + r) = sin r / cos r (k even) or -cos r / sin r (k odd), one division (u):
//    < 7 u in all, against the rounding test's 512 u (kTailFastTol, as the scalar fast paths):
//    about one lane in 2^19 goes to cr_tanf, as do |x| >= 2^18, inf and NaN. |x| < 2^-12 gives
//    x (as cr_tanf).
//
// Rounding: (float)v is the IEEE conversion (round to nearest even), as in the scalar code.
// No subnormal intermediate matters (FTZ is refused by the mode anyway): the kept results are
// normal float32 values.
#include "vec_tail.h"

#include <cstring>

#include "../common/elementwise.h"
#include "../common/math_tail.h"

namespace repmode::cpu {
namespace vt_common {

// Rounding-test tolerance in double ulps, the scalar fast paths' (math_tail.h).
constexpr uint64_t kTol = math_detail::tail::kTailFastTol;
// Input thresholds (float32 bit patterns of |x|).
constexpr uint32_t kTinyBits = 0x39800000u;        // 2^-12 (cr_tanf, cr_sinhf, cr_coshf: below it x or 1)
constexpr uint32_t kTanFastEndBits = 0x48800000u;  // 2^18: from here on, cr_tanf
constexpr uint32_t kSinhHugeBits = 0x42b30000u;    // 89.5: above it, +-inf (sinhcoshf_impl)

// tan: 2/pi rounded to double; pi/2 = kPio2_1 + kPio2_2 + (< 2^-108.9), each piece the double
// nearest the remainder (mpmath, 600 bits); 1.5 2^52 for rounding to an integer.
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPio2_1 = 0x1.921fb54442d18p+0;
constexpr double kPio2_2 = 0x1.1a62633145c07p-54;
constexpr double kRoundShift = 0x1.8p52;
// Taylor coefficients (-1)^(j+1)/(2j+3)! (sin r = r + r^3 S(r^2)) and (-1)^(j+1)/(2j+2)!
// (cos r = 1 + r^2 C(r^2)), j = 0..7, rounded to double (the lanes use kSin[0..6], kCos[0..7]).
constexpr double kSin[8] = {-0x1.5555555555555p-3,  0x1.1111111111111p-7,   -0x1.a01a01a01a01ap-13,
                            0x1.71de3a556c734p-19,  -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
                            -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49};
constexpr double kCos[8] = {-0x1.0000000000000p-1,  0x1.5555555555555p-5,   -0x1.6c16c16c16c17p-10,
                            0x1.a01a01a01a01ap-16,  -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29,
                            -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45};

// sinh_poly's coefficients (math_tail.h): the very doubles it reads from inv_factorial.
struct SinhCoefs {
  double i3, i5, i7, i9, i11;
};
inline SinhCoefs sinh_coefs() {
  using math_detail::inv_factorial;
  return {inv_factorial(3)[0], inv_factorial(5)[0], inv_factorial(7)[0], inv_factorial(9)[0], inv_factorial(11)[0]};
}

}  // namespace vt_common
}  // namespace repmode::cpu

#if defined(__x86_64__)

#include <immintrin.h>

#define VT_NS repmode_vt512
#define VT_W 8
#define VT_U 2
#define VT_TARGET "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"
#include "vec_tail_lanes.h"
#undef VT_NS
#undef VT_W
#undef VT_U
#undef VT_TARGET

#define VT_NS repmode_vt256
#define VT_W 4
#define VT_U 4
#define VT_TARGET "avx2,fma"
#include "vec_tail_lanes.h"
#undef VT_NS
#undef VT_W
#undef VT_U
#undef VT_TARGET

#endif

namespace repmode::cpu {

bool tail_array_op(int op) { return op == int(EwOp::tan) || op == int(EwOp::sinh) || op == int(EwOp::cosh); }

void tail_array(int op, const float* in, float* out, int64_t n, Isa isa) {
#if defined(__x86_64__)
  const int k = op == int(EwOp::tan) ? 0 : op == int(EwOp::sinh) ? 1 : 2;
  if (isa == Isa::avx512) {
    if (k == 0) return repmode_vt512::op_array<0>(in, out, n);
    if (k == 1) return repmode_vt512::op_array<1>(in, out, n);
    return repmode_vt512::op_array<2>(in, out, n);
  }
  if (isa == Isa::avx2) {
    if (k == 0) return repmode_vt256::op_array<0>(in, out, n);
    if (k == 1) return repmode_vt256::op_array<1>(in, out, n);
    return repmode_vt256::op_array<2>(in, out, n);
  }
#endif
  (void)op, (void)in, (void)out, (void)n, (void)isa;
}

}  // namespace repmode::cpu

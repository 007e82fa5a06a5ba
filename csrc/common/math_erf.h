// Error function and complementary error function whose bits are the same on every CPU
// and every CUDA GPU (the rules of math.h apply: IEEE-754 basic operations and explicit
// repmode_fma only, -ffp-contract=off / --fmad=false, no fast-math).
//
//   float  cr_erff(float)        correctly rounded (round to nearest even) for all inputs
//   float  cr_erfcf(float)       correctly rounded for all inputs
//   double repmode_erf(double)   relative error < 2^-50 proven, 2.97 ulp measured (not
//   double repmode_erfc(double)  < 2^-50.6 proven, 3.24 ulp measured      always CR)
//
// Method (float32). Both functions first evaluate a fast approximation in double
// arithmetic with a proven relative error below 2^-50 and round it with the test
// fast_path_is_hard (could the exact value be on the other side of a float32 rounding
// boundary, assuming an error of up to kFastEps = 2^-49?). The few inputs that fail it
// go to an accurate path in double-double (relative error < 2^-94, 2^-102 measured),
// whose own rounding test is never hard on any float32 input: csrc/verify/check_math.cpp runs
// the accurate path alone over every input (cases erff_paths, erfcf_paths).
//  * erf(|x|), |x| < 5.9375: 48 polynomials of degree 9 in t = |x| - k/8, k = round(8|x|)
//    (rows of kErfPoly; row 0 is odd in |x| on [0, 1/16]), evaluated by erf_eval without
//    fma. float32 uses rows 0..31 (|erf(x)| rounds to 1 from |x| = 3.9192059).
//  * erfc(x) for x >= 1/2: exp(-x^2) * erfcx(x) with erfcx(x) = exp(x^2) erfc(x) from 46
//    degree-10 polynomials on x in [2^e (1 + j/8), 2^e (1 + (j+1)/8)) (kErfcxPoly) and
//    exp(-x^2) from math.h's exp_fast (x^2 is exact in double for a float32 x).
//    For x < 1/2: erfc(x) = 1 - erf(x) (x >= 0; erf(x) <= 0.5205) or 1 + erf(|x|).
//  * accurate path: the Taylor series of erf around c = k/8 (k = round(8|x|) <= 80),
//      erf(c + t) = erf(c) + (2/sqrt(pi)) e^(-c^2) F(t),  F(t) = int_0^t e^(-2cs - s^2) ds,
//    with erfc(c) and (2/sqrt(pi)) e^(-c^2) tabulated in double-double (kErfAcc) and F's
//    terms from the recurrence of its differential equation F'' = -(2c + 2t) F'.
//  * |x| < 2^-125 (erf) is decided by (2/sqrt(pi)) x in double-double (erff_tiny).
//
// Constants: computed with mpmath (256 to 400 bits). Polynomials: relative least squares
// on Chebyshev nodes (near-minimax) at 256 bits, coefficients rounded to double; their
// errors (listed per row) were then measured with the rounded coefficients on a grid of
// 600 (erf) / 500 (erfcx) points per row and enlarged by 5%. kErfAcc rows: erfc(k/8)
// and 2/sqrt(pi) * exp(-(k/8)^2), each rounded to hi + lo. Thresholds: the float32 (or
// float64) where the rounded result becomes constant, found by bisection with mpmath.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"

namespace repmode {
namespace erf_detail {

using math_detail::abs_of;
using math_detail::DD;
using math_detail::dd_add;
using math_detail::dd_mul;
using math_detail::dd_mul_d;
using math_detail::fast_two_sum;
using math_detail::pow2;
using math_detail::round_to_f32;
using math_detail::two_sum;

// 2/sqrt(pi) = kTwoOverSqrtPiHi + kTwoOverSqrtPiLo (error < 2^-107 relative).
constexpr double kTwoOverSqrtPiHi = 0x1.20dd750429b6dp+0;
constexpr double kTwoOverSqrtPiLo = 0x1.1ae3a914fed80p-56;

// ---- fast erf polynomials ----
//
// Row k (10 doubles: a1, a2, ..., a9, a0): erf(k/8 + t) ~ a0 + a1 t + ... + a9 t^9 for
// t in [-1/16, 1/16] (row 0: t = |x| in [0, 1/16], odd coefficients only). The comment
// of each row gives the relative error of its polynomial (coefficients as stored); with
// the rounding errors of erf_eval (below) the worst is 2^-50.03 (row 1, near x = 1/16),
// rows 3..47 stay below 2^-51.6. Bound of erf_eval: a running error bound evaluated at
// each point of the grid (exact node values, |error| <= e_a + e_b + u |a + b| for
// additions, |a| e_b + |b| e_a + e_a e_b + u |a b| for products, u = 2^-53; additions of
// 0 and products by 0 exact), plus the polynomial's error there, enlarged by 5%.
REPMODE_HD const double* erf_row(int k) {
  // clang-format off
  static constexpr double kErfPoly[48 * 10] = {
      // row 0: [0, 1/16], odd, approximation error 2^-56.0
      0x1.20dd750429b6dp+0, 0.0, -0x1.812746b037889p-2, 0.0, 0x1.ce2f219d873c5p-4,
      0.0, -0x1.b82cc477be4dcp-6, 0.0, 0x1.55cfdd0358a98p-8, 0.0,
      // row 1: [1/16, 3/16], approximation error 2^-52.2
      0x1.1c62fa1e869b7p+0, -0x1.1c62fa1e86652p-3, -0x1.6f552dbcc548ap-2, 0x1.196c9cd56d0a6p-4, 0x1.aaba625ace536p-4,
      -0x1.734e7f84fda7dp-6, -0x1.89261a522dab3p-6, 0x1.6eb3c3b4a42ffp-8, 0x1.284476ffd8b9ep-8, 0x1.1f5e1a35c3b89p-3,
      // row 2: [3/16, 5/16], approximation error 2^-52.3
      0x1.0f5d1602f7e41p+0, -0x1.0f5d1602f7b51p-2, -0x1.3c974458cd877p-2, 0x1.040e8a6a909d6p-3, 0x1.47e5d0057f401p-4,
      -0x1.4c0b042a69beep-5, -0x1.08d9bc54fad5ap-6, 0x1.3d1f79c85c1eap-7, 0x1.56bf9694f26cbp-9, 0x1.1af54e232d609p-2,
      // row 3: [5/16, 7/16], approximation error 2^-53.9
      0x1.f5f0cdaf15314p-1, -0x1.78749a434fb1bp-2, -0x1.e106c51d2161fp-3, 0x1.5529abc9cbfb1p-3, 0x1.7488b8cb006c6p-5,
      -0x1.9a7921e0edb09p-5, -0x1.65c28a246d467p-8, 0x1.6ff6592fe2dfcp-7, 0x1.1ad9357950391p-13, 0x1.9dd0d2b721f39p-2,
      // row 4: [7/16, 9/16], approximation error 2^-54.3
      0x1.c1efca49a5012p-1, -0x1.c1efca49a4d90p-2, -0x1.2bf531866f7fdp-3, 0x1.76f27de587b67p-3, 0x1.dfeeb65e3920fp-8,
      -0x1.99f11f1032f6ap-5, 0x1.623b43c75901cp-8, 0x1.48bcd3a497febp-7, -0x1.1ab4d06df322ap-9, 0x1.0a7ef5c18edd2p-1,
      // row 5: [9/16, 11/16], approximation error 2^-54.1
      0x1.86e9694134b9ep-1, -0x1.e8a3c39181d58p-2, -0x1.c81050216b1bdp-5, 0x1.6963c8a270b9bp-3, -0x1.c1242de622f2ap-6,
      -0x1.52b25966a8f3ep-5, 0x1.c7cd3dc1a2a8bp-7, 0x1.b5b6fef7cc8b2p-8, -0x1.db0bde86c0a89p-9, 0x1.3f196dcd0f135p-1,
      // row 6: [11/16, 13/16], approximation error 2^-53.5
      0x1.492e42d78d2c5p-1, -0x1.edc5644353c73p-2, 0x1.b6e8591f6557dp-6, 0x1.349b5eaa60250p-3, -0x1.b42a188bd04dfp-5,
      -0x1.b847800964fa1p-6, 0x1.2e0ae207b5553p-6, 0x1.2defeff520195p-9, -0x1.03a573d1df8a6p-8, 0x1.6c1c9759d0e5fp-1,
      // row 7: [13/16, 15/16], approximation error 2^-54.3
      0x1.0cab61f084b93p-1, -0x1.d62beb64e85b1p-2, 0x1.7c9d756a11979p-4, 0x1.cc60568057358p-4, -0x1.1350f4b24a7f6p-4,
      -0x1.53bb8aa06aab4p-7, 0x1.30ac1b1634112p-6, -0x1.e1a8f9ffb798ap-10, -0x1.aa7d06ce6c5f4p-9, 0x1.91724951b8fc6p-1,
      // row 8: [15/16, 17/16], approximation error 2^-54.8
      0x1.a911f096fbc26p-2, -0x1.a911f096fbe1bp-2, 0x1.1b614b0f52c23p-3, 0x1.1b614b133dc9dp-4, -0x1.1b614b10fd27fp-4,
      0x1.2e44f5d05677bp-8, 0x1.f0970bff90449p-7, -0x1.38488ed4fc9c3p-8, -0x1.ee4253d9c8e9fp-10, 0x1.af767a741088bp-1,
      // row 9: [17/16, 19/16], approximation error 2^-55.9
      0x1.45e99bcbb7915p-2, -0x1.6ea6cf452ea10p-2, 0x1.4cb3cf0aa1007p-3, 0x1.ca50832539af7p-6, -0x1.f65d15f668fd6p-5,
      0x1.fd1c197a7efeep-7, 0x1.3acc976b0bf31p-7, -0x1.8a86f3c384a5dp-8, -0x1.7c868c4bfe9abp-12, 0x1.c6dad2829ec62p-1,
      // row 10: [19/16, 21/16], approximation error 2^-53.8
      0x1.e4652fadcb6b2p-3, -0x1.2ebf3dcc9f374p-2, 0x1.571d01c5c5a96p-3, -0x1.93a9a792e27bfp-8, -0x1.8281ce0fcdc56p-5,
      0x1.5cffe7422a164p-6, 0x1.db445c1ad3287p-9, -0x1.74e5370758d46p-8, 0x1.ca1a5856697aap-11, 0x1.d8865d98abe01p-1,
      // row 11: [21/16, 23/16], approximation error 2^-56.1
      0x1.5ce595c455b0ap-3, -0x1.dfbbadedf5e37p-3, 0x1.4374d82e04f3cp-3, -0x1.f3b8d5290ff51p-6, -0x1.f572c4d043b24p-6,
      0x1.6b16e990d1b4dp-6, -0x1.73fea44a29e1bp-10, -0x1.170b3a847f7dcp-8, 0x1.9ca7e9f8b5b3ep-10, 0x1.e5768c3b4a3fcp-1,
      // row 12: [23/16, 25/16], approximation error 2^-54.6
      0x1.e723726b824a9p-4, -0x1.6d5a95d0a1b33p-3, 0x1.1c2a02beb6c6cp-3, -0x1.6d5a95d138bdbp-5, -0x1.e723727538578p-7,
      0x1.3ca3da7ab8864p-6, -0x1.36d70d638f9f2p-8, -0x1.35cc96be086d7p-9, 0x1.bf8230b3b7c63p-10, 0x1.eea5557137ae0p-1,
      // row 13: [25/16, 27/16], approximation error 2^-55.5
      0x1.499d478bca735p-4, -0x1.0bcfca21946b8p-3, 0x1.d6631e1a28ff0p-4, -0x1.974c036aad111p-5, -0x1.17d430cded35dp-9,
      0x1.d8580c3b80392p-7, -0x1.954a9c76fc599p-8, -0x1.3015caa8f92f2p-11, 0x1.7176b32f23d6cp-10, 0x1.f4f693b67bd77p-1,
      // row 14: [27/16, 29/16], approximation error 2^-55.3
      0x1.b055303221015p-5, -0x1.7a4a8a2bdcb3ep-4, 0x1.7148c3d57c2c9p-4, -0x1.8a0da545da734p-5, 0x1.b22257dddfc37p-8,
      0x1.25b3987b2eaf5p-7, -0x1.8d10fc2928029p-8, 0x1.7c7e1137cc509p-11, 0x1.d4cd3e5fcababp-11, 0x1.f92d077f8d56dp-1,
      // row 15: [29/16, 31/16], approximation error 2^-54.8
      0x1.12ceb37ff9bc4p-5, -0x1.01a1c847f9f89p-4, 0x1.143d1c6f4ef56p-4, -0x1.5a31652336cd5p-5, 0x1.779b1e5a4804cp-7,
      0x1.0d09d45f084abp-8, -0x1.42fcc8e38579ep-8, 0x1.75ffcc7c44294p-10, 0x1.7cb59eb10177ep-12, 0x1.fbe61eef4cf6ap-1,
      // row 16: [31/16, 33/16], approximation error 2^-55.2
      0x1.529b9e8cf9a1fp-6, -0x1.529b9e8cf96c1p-5, 0x1.8b0ae3a47860dp-5, -0x1.1a2c597729332p-5, 0x1.ace7405067954p-7,
      0x1.e195b95cf4251p-12, -0x1.bae0d1c62ae0ep-9, 0x1.a067fea73c928p-10, -0x1.9afe22cf369e2p-15, 0x1.fd9ae142795e3p-1,
      // row 17: [33/16, 35/16], approximation error 2^-56.9
      0x1.94624e78e0fafp-7, -0x1.ada873606ed84p-6, 0x1.0ea475da3bbc8p-5, -0x1.afe553fbd7bbdp-6, 0x1.9973b48dc16a8p-7,
      -0x1.dd78a79b34069p-10, -0x1.ea03ffeb1e1f2p-10, 0x1.6a523ac36892bp-10, -0x1.2ec908bc47444p-12, 0x1.fea4218d6594ap-1,
      // row 18: [35/16, 37/16], approximation error 2^-55.0
      0x1.d4143a9dfe966p-8, -0x1.074b60f8df2fcp-6, 0x1.63ef61e824078p-6, -0x1.38a98327af593p-6, 0x1.5d3b17be72ca0p-7,
      -0x1.7cae09edbd0f2p-9, -0x1.5f8371a898a15p-11, 0x1.05fb46f078517p-10, -0x1.8296f5e660d90p-12, 0x1.ff404760319b4p-1,
      // row 19: [37/16, 39/16], approximation error 2^-55.9
      0x1.06918b6355625p-8, -0x1.37ccd585f5915p-7, 0x1.c1ec102e36167p-7, -0x1.ae59615e297cep-7, 0x1.11dae4748ea6ap-7,
      -0x1.982b36edd77cep-9, 0x1.02832ac740daap-13, 0x1.37c3cc8431d1cp-11, -0x1.619158a22b75fp-12, 0x1.ff9960f3eb327p-1,
      // row 20: [39/16, 41/16], approximation error 2^-54.2
      0x1.1d83170fbf6fcp-9, -0x1.64e3dcd3afcc8p-8, 0x1.119da0c46cc21p-7, -0x1.1a89b97ae73bbp-7, 0x1.90e8128460e60p-8,
      -0x1.6ecdd5f6f695ep-9, 0x1.1c61046dbd3bcp-11, 0x1.122373c96958ep-12, -0x1.0662a7f3ebca8p-12, 0x1.ffcaa8f4c9beap-1,
      // row 21: [41/16, 43/16], approximation error 2^-57.1
      0x1.2ce898809244ep-10, -0x1.8af14828c0ec9p-9, 0x1.407fbd18f1457p-8, -0x1.62d4c6d0d3f7cp-8, 0x1.146c4b3d57fc8p-8,
      -0x1.267f50f41ca85p-9, 0x1.64f8a09302f63p-11, 0x1.28ad02969832cp-15, -0x1.404235c89e040p-13, 0x1.ffe514bbdc197p-1,
      // row 22: [43/16, 45/16], approximation error 2^-54.2
      0x1.3360ccd23db39p-11, -0x1.a6a519a1163f5p-10, 0x1.69cf466cce686p-9, -0x1.ab0c273520f2cp-9, 0x1.69359603e56cfp-9,
      -0x1.b2757b85b117dp-10, 0x1.52b63d12c0df0p-11, -0x1.7316d588246b6p-14, -0x1.2b71d6bcd39a6p-14, 0x1.fff2cfb0453d9p-1,
      // row 23: [45/16, 47/16], approximation error 2^-55.8
      0x1.30538fbb77ecap-12, -0x1.b5781e9d7e1a5p-11, 0x1.89e17c074e0cbp-10, -0x1.ed4ac7d412bcfp-10, 0x1.c11f2701b1293p-10,
      -0x1.2add300f68509p-10, 0x1.151f8dad23554p-11, -0x1.1bb4e0f884008p-13, -0x1.116fcd6f9c22ap-16, 0x1.fff9ba420e834p-1,
      // row 24: [47/16, 49/16], approximation error 2^-54.0
      0x1.2408e9ba3327bp-13, -0x1.b60d5e974e561p-12, 0x1.9db74b1d1f052p-11, -0x1.11c85b1b5baeep-10, 0x1.0a7b55434d940p-10,
      -0x1.82f247a0e6f91p-11, 0x1.998b66e5fc827p-12, -0x1.1a53e8429731fp-13, 0x1.cebf4d114e820p-17, 0x1.fffd1ac4135f9p-1,
      // row 25: [49/16, 51/16], approximation error 2^-56.0
      0x1.0f9e1b4dd36dap-14, -0x1.a8670aa99b285p-13, 0x1.a3737e2a309b3p-12, -0x1.24544f0139b87p-11, 0x1.2e7e76392ecfcp-11,
      -0x1.da497743a5ac1p-12, 0x1.176d08c2072c1p-12, -0x1.d2839f6619558p-14, 0x1.a9d7ea8d885d9p-16, 0x1.fffeb3ebb267bp-1,
      // row 26: [51/16, 53/16], approximation error 2^-54.0
      0x1.e9b5e8d00ce6ep-16, -0x1.8de3cd290989ep-14, 0x1.9aa489e3cc1d2p-13, -0x1.2c7d5ef23874ap-12, 0x1.490a4d1f6fca4p-12,
      -0x1.14545f9c40706p-12, 0x1.647f82a856dcap-13, -0x1.568cc45764fd0p-14, 0x1.b23eccbde5b73p-16, 0x1.ffff6f9f67e55p-1,
      // row 27: [53/16, 55/16], approximation error 2^-54.3
      0x1.abe09e9144b5ap-17, -0x1.690585ca8e366p-15, 0x1.84522fe881f40p-14, -0x1.298f8d4d7cdadp-13, 0x1.57757786b5783p-13,
      -0x1.330a96642c442p-13, 0x1.ac999f772a0c0p-14, -0x1.cc75dee312ccdp-15, 0x1.64a6d491fb78cp-16, 0x1.ffffc316d9ed0p-1,
      // row 28: [55/16, 57/16], approximation error 2^-54.1
      0x1.6a597219a93dfp-18, -0x1.3d0e43d66c7d4p-16, 0x1.62ccea63ca40bp-15, -0x1.1c077229f98ebp-14, 0x1.586bafcbf3ff2p-14,
      -0x1.4615152da2d6fp-14, 0x1.e827f0c8ca1fdp-15, -0x1.1fc449c4c08b9p-15, 0x1.014991d095082p-16, 0x1.ffffe710d565ep-1,
      // row 29: [57/16, 59/16], approximation error 2^-57.8
      0x1.296a70f414066p-19, -0x1.0d88765d25f60p-17, 0x1.394b1fa66e312p-16, -0x1.05760aea1a7fdp-15, 0x1.4c1fe49277a2fp-15,
      -0x1.4b97dbfa0e4b2p-15, 0x1.085bfcf5ad834p-15, -0x1.51a62edaca494p-16, 0x1.51af8eed84660p-17, 0x1.fffff618c3da6p-1,
      // row 30: [59/16, 61/16], approximation error 2^-54.3
      0x1.d9371e2ff7c7dp-21, -0x1.bba3ac4cd624cp-19, 0x1.0b6a7b0f15c2ap-17, -0x1.d06f58a4d8420p-17, 0x1.3436bcaf67e1fp-16,
      -0x1.435755c27587bp-16, 0x1.110dc0dc87892p-16, -0x1.76412d02b72c5p-17, 0x1.9a84c996ee52bp-18, 0x1.fffffc2f171e3p-1,
      // row 31: [61/16, 63/16], approximation error 2^-54.1
      0x1.6ce1aa3fd8485p-22, -0x1.617a9ceddae5ap-20, 0x1.b95fa399a345ep-19, -0x1.8e1fc4130e33ap-18, 0x1.137174aa88f8fp-17,
      -0x1.2eb288744e3f8p-17, 0x1.0d85e35937663p-17, -0x1.88e2b6fb78648p-18, 0x1.e7aae3690707dp-19, 0x1.fffffe92ced93p-1,
      // row 32: [63/16, 65/16], approximation error 2^-55.9
      0x1.10b1488aeb2c9p-23, -0x1.10b1488ab833cp-21, 0x1.603a5308adedbp-20, -0x1.4980e2b863d4ep-19, 0x1.da5f111d12f71p-19,
      -0x1.104fc4dfcec45p-18, 0x1.fd7bd171004a8p-19, -0x1.8a0d84a577ee4p-19, 0x1.f54c56dfc230bp-20, 0x1.ffffff7b91176p-1,
      // row 33: [65/16, 67/16], approximation error 2^-54.4
      0x1.8b0cfce057b49p-25, -0x1.976564c6ea83dp-23, 0x1.0fdac5599abd9p-21, -0x1.07600d16b5038p-20, 0x1.89ca7794e75fcp-20,
      -0x1.d7396bd418efep-20, 0x1.cd9d58fac7362p-20, -0x1.78765f9e37e4bp-20, 0x1.fd83261765596p-21, 0x1.ffffffd169d0cp-1,
      // row 34: [67/16, 69/16], approximation error 2^-59.7
      0x1.155a09065d68ep-26, -0x1.26afa9964f87dp-24, 0x1.95ea6fdfbb94cp-23, -0x1.96ba744df16a0p-22, 0x1.3b468072d6feep-21,
      -0x1.88679e38fcd3ap-21, 0x1.916dc68f09316p-21, -0x1.57e0ac8380146p-21, 0x1.ec4c0bb170fd4p-22, 0x1.fffffff01a8b6p-1,
      // row 35: [69/16, 71/16], approximation error 2^-56.5
      0x1.7974e743ded97p-28, -0x1.9cd7dcf159525p-26, 0x1.252af6f44904fp-24, -0x1.2f7355c8de8b5p-23, 0x1.e71030447133dp-23,
      -0x1.3aaf7467886aep-22, 0x1.4f6031b7bcb34p-22, -0x1.2cccb0e570b86p-22, 0x1.c564698081920p-23, 0x1.fffffffabd229p-1,
      // row 36: [71/16, 73/16], approximation error 2^-56.1
      0x1.f1e3523b42424p-30, -0x1.180fde4082e0ap-27, 0x1.99b8665593d15p-26, -0x1.b598ccea52fe2p-25, 0x1.6b1bafffa2de5p-24,
      -0x1.e64e971b81a32p-24, 0x1.0d66babf5bdc1p-23, -0x1.f892e379f0c21p-24, 0x1.8ed7bf0febf3ep-24, 0x1.fffffffe4fa30p-1,
      // row 37: [73/16, 75/16], approximation error 2^-54.5
      0x1.3e44e453021d0p-31, -0x1.6fffa7fe860a3p-29, 0x1.1508f7686e89dp-27, -0x1.30fd0dda86094p-26, 0x1.0556333290990p-25,
      -0x1.6a3894d78cef7p-25, 0x1.a06e3abe06ad6p-25, -0x1.9634cd1c4efb6p-25, 0x1.4fb025626f162p-25, 0x1.ffffffff79626p-1,
      // row 38: [75/16, 77/16], approximation error 2^-54.0
      0x1.8a61745ec883bp-33, -0x1.d453ba2e18eeep-31, 0x1.6a8aeba398134p-29, -0x1.9b017d30268a4p-28, 0x1.6b43ca8a253bep-27,
      -0x1.042d72d2a27c8p-26, 0x1.35db1fa0098dfp-26, -0x1.3a2ae1a9eb685p-26, 0x1.0eb03617ac55dp-26, 0x1.ffffffffd759dp-1,
      // row 39: [77/16, 79/16], approximation error 2^-54.4
      0x1.d9a880f307eb1p-35, -0x1.20a2ae921ca09p-32, 0x1.cb2a2e54c8c89p-31, -0x1.0bc6eef1be0b5p-29, 0x1.e7ba59765eaf1p-29,
      -0x1.6890816e5e180p-28, 0x1.bc286901077f3p-28, -0x1.d33ab5f281427p-28, 0x1.a2b8a7bfec11cp-28, 0x1.fffffffff4188p-1,
      // row 40: [79/16, 81/16], approximation error 2^-55.2
      0x1.13af4f04fa8d7p-36, -0x1.589b22c3271b7p-34, 0x1.196da0a93891cp-32, -0x1.516d3fc8180a1p-31, 0x1.3c51d2556600dp-30,
      -0x1.e2313cdb88d28p-30, 0x1.32c5417e3f50ep-29, -0x1.4e417f6730a2dp-29, 0x1.36ed25a108416p-29, 0x1.fffffffffc9e8p-1,
      // row 41: [81/16, 83/16], approximation error 2^-55.6
      0x1.370ab8327c6f1p-38, -0x1.8e85bbfc21cc0p-36, 0x1.4decacbdaf8cbp-34, -0x1.9b3c5a0b6bc23p-33, 0x1.8c78e6dbf08c5p-32,
      -0x1.3739a8efb43c8p-31, 0x1.9887bff45a9cap-31, -0x1.cc615f849328ep-31, 0x1.bbb0fa3bd6894p-31, 0x1.ffffffffff11ap-1,
      // row 42: [83/16, 85/16], approximation error 2^-54.9
      0x1.5422ef5d8b782p-40, -0x1.be6dda244c70ep-38, 0x1.7f8a0f3b69b6fp-36, -0x1.e4cb5161a36a0p-35, 0x1.e044b7bbb1130p-34,
      -0x1.83e5c5a44d2f5p-33, 0x1.06572ae4bbfc5p-32, -0x1.315a479d809e7p-32, 0x1.3065a434fd4bdp-32, 0x1.ffffffffffc05p-1,
      // row 43: [85/16, 87/16], approximation error 2^-55.8
      0x1.68823e529a23cp-42, -0x1.e46f03b62478fp-40, 0x1.aa76120ad567fp-38, -0x1.146fb323674d9p-36, 0x1.192d3dda5e299p-35,
      -0x1.d2e480302bd16p-35, 0x1.450a3408152e4p-34, -0x1.864a0ae31c1fdp-34, 0x1.91d903c482a41p-34, 0x1.ffffffffffef8p-1,
      // row 44: [87/16, 89/16], approximation error 2^-54.8
      0x1.7258610b3f588p-44, -0x1.fd398563d5f48p-42, 0x1.cb12e2f0a9a49p-40, -0x1.31012463d9f76p-38, 0x1.3e4a233785607p-37,
      -0x1.0f6a7ae7a3a71p-36, 0x1.84a0acdedd687p-36, -0x1.e0da8269d6d4cp-36, 0x1.fead8accc0dacp-36, 0x1.fffffffffffbep-1,
      // row 45: [89/16, 91/16], approximation error 2^-55.8
      0x1.70beaf9c857a8p-46, -0x1.03461372b582fp-43, 0x1.de74c0d55c358p-42, -0x1.459c88c975282p-40, 0x1.5c5ee8d126084p-39,
      -0x1.30debbfd0b79bp-38, 0x1.c081fcdca1c18p-38, -0x1.1da14611966cdp-37, 0x1.388434b970fb4p-37, 0x1.ffffffffffff0p-1,
      // row 46: [91/16, 93/16], approximation error 2^-55.3
      0x1.63daf8b4b8c6bp-48, -0x1.ff8ac571ee727p-46, 0x1.e2d06d673528cp-44, -0x1.505d9e1d3e1c3p-42, 0x1.70b7071e7be11p-41,
      -0x1.4ae72d9e14489p-40, 0x1.f3beaeeffe947p-40, -0x1.474ef4b9a9138p-39, 0x1.7089a03a69d5ap-39, 0x1.ffffffffffffcp-1,
      // row 47: [93/16, 95/16], approximation error 2^-55.9
      0x1.4cd9c041ade4ep-50, -0x1.e8dfd25f41e99p-48, 0x1.d7c149877a2f6p-46, -0x1.50429eca919efp-44, 0x1.796a91bad2288p-43,
      -0x1.5b210f483cff2p-42, 0x1.0cafdea815fe3p-41, -0x1.67a26c577543ep-41, 0x1.c53816bd418d6p-41, 0x1.fffffffffffffp-1,
  };
  // clang-format on
  return kErfPoly + 10 * k;
}

// erfcx rows (12 doubles): center c, then b10, ..., b0: exp(x^2) erfc(x) ~ sum b_j t^j,
// t = x - c. Row i covers [2^e (1 + j/8), 2^e (1 + (j+1)/8)) with i = 8 (e + 1) + j,
// x in [1/2, 28). Relative error of each polynomial (listed per row) plus that of its
// evaluation by Horner's rule in erfcx_poly (a running bound from the ratios
// |P_(j+1)(t) t / P_j(t)| of the partial polynomials, maximised over the grid, +1%):
// below 2^-51.86 for every row.
REPMODE_HD const double* erfcx_row(int i) {
  // clang-format off
  static constexpr double kErfcxPoly[46 * 12] = {
      // row 0: center 0.53125, approximation error 2^-53.5
      0x1.1000000000000p-1, 0x1.b49dd6f1d8cc5p-11, -0x1.19a0067118524p-9, 0x1.5b98c4237d083p-8,
      -0x1.990928be18c93p-7, 0x1.c83f33aa22118p-6, -0x1.df18cee6daf1bp-5, 0x1.d571fdb4ec86ep-4,
      -0x1.a821c8b450066p-3, 0x1.5b61f82a5b851p-2, -0x1.f6a5625dbca39p-2, 0x1.3334ea3613de0p-1,
      // row 1: center 0.59375, approximation error 2^-54.4
      0x1.3000000000000p-1, 0x1.528ce86df84f1p-11, -0x1.baca68694d916p-10, 0x1.153ec490afecfp-8,
      -0x1.4b486c3753458p-7, 0x1.7798454aa2ee1p-6, -0x1.9160946e0a3a7p-5, 0x1.90dae008a54d1p-4,
      -0x1.71dd5747519e2p-3, 0x1.363b25ed7ee17p-2, -0x1.cd991ffa808c8p-2, 0x1.242708751d9a7p-1,
      // row 2: center 0.65625, approximation error 2^-54.1
      0x1.5000000000000p-1, 0x1.076206e0fc383p-11, -0x1.5d3d18f56d90dp-10, 0x1.bbb3d8c1b4471p-9,
      -0x1.0d2b6513879a0p-7, 0x1.362c2a0cdd71ap-6, -0x1.514c7723417b8p-5, 0x1.574e36a137346p-4,
      -0x1.43757462ea8cbp-3, 0x1.15c9a58110905p-2, -0x1.a8e46be6e2c85p-2, 0x1.164fc6284ab1ep-1,
      // row 3: center 0.71875, approximation error 2^-53.6
      0x1.7000000000000p-1, 0x1.9b268e3431ea1p-12, -0x1.14580d510bdb2p-10, 0x1.642f4888c00afp-9,
      -0x1.b6c79488be85ap-8, 0x1.00ef81619a937p-6, -0x1.1c4d642c0bcedp-5, 0x1.26df710907955p-4,
      -0x1.1ba8ab3ac2a54p-3, 0x1.f2c0ac1b437c1p-3, -0x1.87fbbe45de3c9p-2, 0x1.098ea367ecbccp-1,
      // row 4: center 0.78125, approximation error 2^-54.9
      0x1.9000000000000p-1, 0x1.41f1e3c053032p-12, -0x1.b6b89e64e7948p-11, 0x1.1ed3bdc7130cep-9,
      -0x1.66bc8e17f97f6p-8, 0x1.aaf565fdb5172p-7, -0x1.e0acd93de79f5p-6, 0x1.fbfb915a74e99p-5,
      -0x1.f2da4c8e0115cp-4, 0x1.c0db0e94b2e14p-3, -0x1.6a676e6756483p-2, 0x1.fb8e558b14d90p-2,
      // row 5: center 0.84375, approximation error 2^-54.7
      0x1.b000000000000p-1, 0x1.f9c97af8968e0p-13, -0x1.5d5889465c8c1p-11, 0x1.cf6020ec85545p-10,
      -0x1.262f047870d35p-8, 0x1.63cbe6efb6090p-7, -0x1.97832a2ad3175p-6, 0x1.b6c442fdd827fp-5,
      -0x1.b7ccc69dd6f9fp-4, 0x1.94ec854982c56p-3, -0x1.4fc092b633c90p-2, 0x1.e5c0be6e7d145p-2,
      // row 6: center 0.90625, approximation error 2^-55.1
      0x1.d000000000000p-1, 0x1.8e8ba852033c8p-13, -0x1.1708efc4b74e5p-11, 0x1.776e68390de0ep-10,
      -0x1.e3ed8a865c780p-9, 0x1.295b05fbd25e8p-7, -0x1.5a752bf606e7cp-6, 0x1.7c015c685787fp-5,
      -0x1.84b9d95908c0dp-4, 0x1.6e24e4b083bb5p-3, -0x1.37ae69215ef93p-2, 0x1.d188819e7fef8p-2,
      // row 7: center 0.96875, approximation error 2^-57.0
      0x1.f000000000000p-1, 0x1.3b01f03648416p-13, -0x1.bf19c1dadff5cp-12, 0x1.311575626fe0cp-10,
      -0x1.8f302cb16704fp-9, 0x1.f270cbd6f22fcp-8, -0x1.275c656c8402bp-6, 0x1.49fb0d91297cap-5,
      -0x1.586f59f62015ep-4, 0x1.4bd3765bcc48fp-3, -0x1.21e42f10c2fb8p-2, 0x1.bebec8c623082p-2,
      // row 8: center 1.0625, approximation error 2^-55.5
      0x1.1000000000000p+0, 0x1.bd800019b4e99p-14, -0x1.42b31c51f26a6p-12, 0x1.c16bcadc505a0p-11,
      -0x1.2cabe8edfb268p-9, 0x1.807142df42decp-8, -0x1.d352a2835d024p-7, 0x1.0c4c6c3e581c5p-5,
      -0x1.20926c49bc26ap-4, 0x1.1f73ffa65802dp-3, -0x1.04ec886c0552fp-2, 0x1.a4f550c5f1a99p-2,
      // row 9: center 1.1875, approximation error 2^-53.6
      0x1.3000000000000p+0, 0x1.1b4fbdffdc94ep-14, -0x1.a58ec461f0c8ep-13, 0x1.2ded17a443bedp-11,
      -0x1.a01dd5521a72cp-10, 0x1.127f6dc27df7fp-8, -0x1.5908bd6c7b9e7p-7, 0x1.9abcc2c9dcb36p-6,
      -0x1.cb858a0b1dcc4p-5, 0x1.de35ab5b880c5p-4, -0x1.c841f18283f7ap-3, 0x1.8674923c605e1p-2,
      // row 10: center 1.3125, approximation error 2^-53.8
      0x1.5000000000000p+0, 0x1.6c79c3ab5c81cp-15, -0x1.1674573524d5fp-13, 0x1.9a25bed4e30fbp-12,
      -0x1.23092674789ecp-10, 0x1.8c10e9aae187cp-9, -0x1.014991d6e27bcp-7, 0x1.3d5e9f54c97f0p-6,
      -0x1.711413b59aedfp-5, 0x1.90e47c99926d2p-4, -0x1.917d7928e2332p-3, 0x1.6bb376a9390cdp-2,
      // row 11: center 1.4375, approximation error 2^-56.2
      0x1.7000000000000p+0, 0x1.da19bca7bb811p-16, -0x1.73dd2779a5e63p-14, 0x1.198a1ddb62138p-12,
      -0x1.9b4f01aa501e8p-11, 0x1.209579b132f7ap-9, -0x1.835e05b413795p-8, 0x1.eedbaf5ddfe03p-7,
      -0x1.2ae454cdcb75dp-5, 0x1.528b08cb62361p-4, -0x1.63698e1f5ae48p-3, 0x1.5416a05961e1cp-2,
      // row 12: center 1.5625, approximation error 2^-54.7
      0x1.9000000000000p+0, 0x1.37a968dde1054p-16, -0x1.f5d3ef33fe2adp-15, 0x1.86793db9ceebdp-13,
      -0x1.2586a38bb66a2p-11, 0x1.a88dd7191fedfp-10, -0x1.2642531b083e2p-8, 0x1.8519019636624p-7,
      -0x1.e7e4fd2df9034p-6, 0x1.1fdbb34b82defp-4, -0x1.3c5e938b9cefbp-3, 0x1.3f20d017f3530p-2,
      // row 13: center 1.6875, approximation error 2^-54.3
      0x1.b000000000000p+0, 0x1.9e039932bd899p-17, -0x1.560ab2277c34ap-15, 0x1.1172b33cb6e02p-13,
      -0x1.a6efb8a5d6343p-12, 0x1.3b26815b35f8ap-10, -0x1.c2f162810d7c4p-9, 0x1.346c4610698ffp-7,
      -0x1.9126c9e5ff85cp-6, 0x1.ecaedd6244629p-5, -0x1.1b110b4094c34p-3, 0x1.2c6c3d2ac6111p-2,
      // row 14: center 1.8125, approximation error 2^-58.3
      0x1.d000000000000p+0, 0x1.15c0676ca422bp-17, -0x1.d6d4861172151p-16, 0x1.82a06a05e73bcp-14,
      -0x1.337da5d015451p-12, 0x1.d7fa1b611f757p-11, -0x1.5c644ff1e4030p-9, 0x1.ecb8b2b74bdf9p-8,
      -0x1.4c2309f687ae4p-6, 0x1.a82dedb53def2p-5, -0x1.fcf6c328b302ep-4, 0x1.1ba58e2518db3p-2,
      // row 15: center 1.9375, approximation error 2^-53.4
      0x1.f000000000000p+0, 0x1.784a6014c0b8ep-18, -0x1.471db609e0c68p-16, 0x1.13d2b1a11f645p-14,
      -0x1.c30c159a169edp-13, 0x1.646338edc137cp-11, -0x1.0f4ab647ce9dap-9, 0x1.8c7595ee7a8acp-8,
      -0x1.14d04d95e01f6p-6, 0x1.6f4730a4cfc21p-5, -0x1.cb9b1437dd505p-4, 0x1.0c8803dfa92b2p-2,
      // row 16: center 2.125, approximation error 2^-54.3
      0x1.1000000000000p+1, 0x1.abbd4851f7622p-19, -0x1.8241d0d0e6437p-17, 0x1.51e0598a5c05ep-15,
      -0x1.1fc841d2ca6aap-13, 0x1.dab55d70bb99dp-12, -0x1.7a181937166c5p-10, 0x1.21decee0eeaafp-8,
      -0x1.aa2443aac5be7p-7, 0x1.2adaf7aaf55e0p-5, -0x1.8d6f73d5aa122p-4, 0x1.f0fd28fdc20abp-3,
      // row 17: center 2.375, approximation error 2^-53.7
      0x1.3000000000000p+1, 0x1.9e4b3e5188950p-20, -0x1.88e169da14a7dp-18, 0x1.69c31c0f00627p-16,
      -0x1.44f89f7568ad4p-14, 0x1.1b649b9be1589p-12, -0x1.deb45ead07884p-11, 0x1.8680d28749c18p-9,
      -0x1.32a8abc8da824p-7, 0x1.cdc880a056a23p-6, -0x1.4baeac94dc8b2p-4, 0x1.c3987d04d0b98p-3,
      // row 18: center 2.625, approximation error 2^-55.4
      0x1.5000000000000p+1, 0x1.9ecb231ba6927p-21, -0x1.9c9e517f65f5dp-19, 0x1.8f690cd3f4691p-17,
      -0x1.79da7d6e0ec9bp-15, 0x1.5bd1dd6442c86p-13, -0x1.36e99414d99ecp-11, 0x1.0d40a2ab36ceap-9,
      -0x1.c28dd3c4d5c82p-8, 0x1.6afd3ba3fa642p-6, -0x1.18737afe106cep-4, 0x1.9d7738e1f4db7p-3,
      // row 19: center 2.875, approximation error 2^-54.3
      0x1.7000000000000p+1, 0x1.ac580a9690254p-22, -0x1.be734360d6fc8p-20, 0x1.c5b4636dac28ap-18,
      -0x1.c35c1ff3025a1p-16, 0x1.b5d78b2f3481bp-14, -0x1.9d6f222eeeedcp-12, 0x1.7b404aa4defa5p-10,
      -0x1.512f92fca6810p-8, 0x1.21c23afa33c46p-6, -0x1.dfc0205709b2cp-5, 0x1.7d0a5e9dd5710p-3,
      // row 20: center 3.125, approximation error 2^-53.9
      0x1.9000000000000p+1, 0x1.c74cfebeb0a21p-23, -0x1.f0a23ba0caf4cp-21, 0x1.0894866cc2bb1p-18,
      -0x1.146336af98ba1p-16, 0x1.1a12c4a4210a2p-14, -0x1.18d4654b8d4f2p-12, 0x1.104973fea348dp-10,
      -0x1.009a927223847p-8, 0x1.d503e1d20090ep-7, -0x1.9e8803e177224p-5, 0x1.612a8125451bdp-3,
      // row 21: center 3.375, approximation error 2^-55.7
      0x1.b000000000000p+1, 0x1.f12fd23ff53e6p-24, -0x1.1b735fd98a6a2p-21, 0x1.3c3b5bd348ecfp-19,
      -0x1.5a6113c177fd4p-17, 0x1.7350e3a0ec9a0p-15, -0x1.85118471a6023p-13, 0x1.8de5f26a7e76bp-11,
      -0x1.8c84c13afb6e4p-9, 0x1.804cc15714188p-7, -0x1.696d353f008b5p-5, 0x1.48f8f10299b71p-3,
      // row 22: center 3.625, approximation error 2^-58.0
      0x1.d000000000000p+1, 0x1.16644416a22ffp-24, -0x1.4b6db717571dfp-22, 0x1.82a906cd21a97p-20,
      -0x1.bb738610e40e0p-18, 0x1.f28b1c3792b82p-16, -0x1.1267afc6eeb91p-13, 0x1.276b01ef6fa09p-11,
      -0x1.36992d37bbe86p-9, 0x1.3e68313870541p-7, -0x1.3dacc8d85f6c4p-5, 0x1.33cb19179d7f6p-3,
      // row 23: center 3.875, approximation error 2^-53.2
      0x1.f000000000000p+1, 0x1.3f31ad8cbf648p-25, -0x1.8c4fa2c06e042p-23, 0x1.e2df7b4fd6626p-21,
      -0x1.2186f3f46b7fbp-18, 0x1.54d6c39ca4995p-16, -0x1.898597a0859dap-14, 0x1.bd21af8e75ee0p-12,
      -0x1.ecb581c2b7dcbp-10, 0x1.0a7a05d3387a8p-7, -0x1.193eb7b9bf564p-5, 0x1.211c625924e34p-3,
      // row 24: center 4.25, approximation error 2^-52.9
      0x1.1000000000000p+2, 0x1.21c7876a6bc35p-26, -0x1.7ea8d84d00a7dp-24, 0x1.ee323757521b5p-22,
      -0x1.3c064cc8e41d5p-19, 0x1.8d8e5996be213p-17, -0x1.eb88e16b1dd09p-15, 0x1.2a660fdec2da9p-12,
      -0x1.6373226ed3b52p-10, 0x1.9ef71691a5511p-8, -0x1.da39533524979p-6, 0x1.08e62ce8c89adp-3,
      // row 25: center 4.75, approximation error 2^-54.7
      0x1.3000000000000p+2, 0x1.aee4df1215223p-28, -0x1.335d98ee197f4p-25, 0x1.ae1eeb5f35f6bp-23,
      -0x1.2a618d18f3c86p-20, 0x1.9818c0b911fa8p-18, -0x1.12f17468a28f5p-15, 0x1.6cc10c1626abep-13,
      -0x1.dc1af8839b39cp-11, 0x1.317c144f8b414p-8, -0x1.81149bc4a104ep-6, 0x1.dc603a3e77e9bp-4,
      // row 26: center 5.25, approximation error 2^-54.9
      0x1.5000000000000p+2, 0x1.57bf2840c66f3p-29, -0x1.07d3ee4be4a8ep-26, 0x1.8e36cad91c33fp-24,
      -0x1.2a42baad222c8p-21, 0x1.b93f4746f16d3p-19, -0x1.4230e3ee47edep-16, 0x1.d03e19aa11f24p-14,
      -0x1.49d492a39bbc9p-11, 0x1.cdeae21161621p-9, -0x1.3e981b3b13591p-6, 0x1.b096face146fep-4,
      // row 27: center 5.75, approximation error 2^-55.4
      0x1.7000000000000p+2, 0x1.23d3b8aa1aca1p-30, -0x1.e024f0adf0bf2p-28, 0x1.853097809a3e7p-25,
      -0x1.395b67b1acc38p-22, 0x1.f31a32680efbbp-20, -0x1.8900e0d7936a9p-17, 0x1.31dddbe436613p-14,
      -0x1.d662fda6d2b38p-12, 0x1.6535040e2c859p-9, -0x1.0bc46cdc18fe7p-6, 0x1.8c14049cd551ep-4,
      // row 28: center 6.25, approximation error 2^-53.7
      0x1.9000000000000p+2, 0x1.05cd85542023bp-31, -0x1.cc0ca54bb39bfp-29, 0x1.8ef51e5bb7c28p-26,
      -0x1.57ebb46b29f20p-23, 0x1.259fcb4a84902p-20, -0x1.f06780886faefp-18, 0x1.9f57d767b6792p-15,
      -0x1.57e0ab4d7bb3dp-12, 0x1.19a2448fc71d8p-9, -0x1.c82c132848f68p-7, 0x1.6d2f811bf7397p-4,
      // row 29: center 6.75, approximation error 2^-53.4
      0x1.b000000000000p+2, 0x1.ed65547d03e75p-33, -0x1.cd7785567134ap-30, 0x1.aa9ebbd3c9f5ap-27,
      -0x1.884eecd5a8ab7p-24, 0x1.65acd3c7a5911p-21, -0x1.433e289556539p-18, 0x1.21808c22d6f83p-15,
      -0x1.00e4e3d2d7e00p-12, 0x1.c39a4935fa769p-10, -0x1.8914e8736d77ep-7, 0x1.52b80d463c470p-4,
      // row 30: center 7.25, approximation error 2^-54.8
      0x1.d000000000000p+2, 0x1.e5d28c6b187d1p-34, -0x1.e2357338052abp-31, 0x1.d9aedfaca6020p-28,
      -0x1.cf16a535932bap-25, 0x1.c147c334edce2p-22, -0x1.b07c4a8797ffcp-19, 0x1.9d0000a8e2a9ep-16,
      -0x1.872cdb81fd8b8p-13, 0x1.6f68a6f3153a2p-10, -0x1.5621e47157306p-7, 0x1.3bcc59a28358cp-4,
      // row 31: center 7.75, approximation error 2^-54.4
      0x1.f000000000000p+2, 0x1.f1a1e15b06cb0p-35, -0x1.0558a574513a3p-31, 0x1.0ff6c6f730659p-28,
      -0x1.19cbdfaee121ep-25, 0x1.21fd1612f9141p-22, -0x1.285655d6cd91dp-19, 0x1.2cab802c99d28p-16,
      -0x1.2ed983856c962p-13, 0x1.2ec8136aa630fp-10, -0x1.2c6aebe4718c2p-7, 0x1.27c2b4d2f8988p-4,
      // row 32: center 8.5, approximation error 2^-55.0
      0x1.1000000000000p+3, 0x1.87b56f3ba620ap-36, -0x1.be0855f024877p-33, 0x1.f4615c59d70fep-30,
      -0x1.1960691c16dcep-26, 0x1.3a9b81a10175bp-23, -0x1.5da899a609124p-20, 0x1.82426c752615ap-17,
      -0x1.a80f2934c3f0fp-14, 0x1.cea22f2be0666p-11, -0x1.f57cad15dbe59p-8, 0x1.0e078051f491dp-4,
      // row 33: center 9.5, approximation error 2^-55.6
      0x1.3000000000000p+3, 0x1.f257d77974c44p-38, -0x1.39191859c0641p-34, 0x1.84a22770017dcp-31,
      -0x1.e35d91290f4c7p-28, 0x1.2b25ebe25fddbp-24, -0x1.7074a62c4015ep-21, 0x1.c3904bd3ede52p-18,
      -0x1.134ff44255db7p-14, 0x1.4dfd333e22432p-11, -0x1.93108c9356f3cp-8, 0x1.e3db9bbbefc9ep-5,
      // row 34: center 10.5, approximation error 2^-54.5
      0x1.5000000000000p+3, 0x1.5f4eccaacdf45p-39, -0x1.e341c95624907p-36, 0x1.48ff24f25dce6p-32,
      -0x1.c0b33a0eb6be0p-29, 0x1.30be82d59cb7dp-25, -0x1.9c3efc074cdeap-22, 0x1.15adcc42ea5dfp-18,
      -0x1.74815702729b0p-15, 0x1.f197309556b69p-12, -0x1.4ae8bbe708549p-8, 0x1.b634a500659c3p-5,
      // row 35: center 11.5, approximation error 2^-54.3
      0x1.7000000000000p+3, 0x1.0e0a7d92e0e96p-40, -0x1.93dbb82fd881cp-37, 0x1.2b62e0f31b782p-33,
      -0x1.bc7f35a4ebbf4p-30, 0x1.48d73b62d90acp-26, -0x1.e4dce6b57cd0ap-23, 0x1.6433d10f6a16ep-19,
      -0x1.04c16683503cap-15, 0x1.7c66d2a104793p-12, -0x1.14782b97452f3p-8, 0x1.90658c4eb57cbp-5,
      // row 36: center 12.5, approximation error 2^-55.8
      0x1.9000000000000p+3, 0x1.beeb6ff1b4a69p-42, -0x1.6928f57aa1046p-38, 0x1.21b2100c69d94p-34,
      -0x1.d14b24aaa39d9p-31, 0x1.7490dc0d630e4p-27, -0x1.296db58cb75bfp-23, 0x1.d976d0b37886bp-20,
      -0x1.77b3f7978c407p-16, 0x1.2937870fcdf5dp-12, -0x1.d4cddeef787a9p-9, 0x1.7093453935bbap-5,
      // row 37: center 13.5, approximation error 2^-53.8
      0x1.b000000000000p+3, 0x1.8a140475514d3p-43, -0x1.5659ca9bcd1c7p-39, 0x1.27814bfaec103p-35,
      -0x1.fea8411611e4ap-32, 0x1.b81a86ae6843bp-28, -0x1.7a51b0afd2722p-24, 0x1.445d3c99eaf05p-20,
      -0x1.1560775b6a835p-16, 0x1.d9243e5cacb1bp-13, -0x1.9276b60443f7cp-9, 0x1.556d4dd1f605cp-5,
      // row 38: center 14.5, approximation error 2^-55.4
      0x1.d000000000000p+3, 0x1.6f35cc4c29153p-44, -0x1.555c372d319abp-40, 0x1.3b8cd9331c402p-36,
      -0x1.23f2ef6ebdc7ap-32, 0x1.0d829aa6b6743p-28, -0x1.f0785ebbb37cdp-25, 0x1.c83e256c7b5a8p-21,
      -0x1.a2517ed6ff5acp-17, 0x1.7eaa573db0fa8p-13, -0x1.5d3dd94e2ae31p-9, 0x1.3dfeb746148ecp-5,
      // row 39: center 15.5, approximation error 2^-53.8
      0x1.f000000000000p+3, 0x1.6724fe0e724d5p-45, -0x1.63cae86bff7d6p-41, 0x1.5ebad389910dbp-37,
      -0x1.5a019f361ae41p-33, 0x1.54acba8b69f9cp-29, -0x1.4ec25b41463cep-25, 0x1.484a4e903c5abp-21,
      -0x1.414ce1ffcc5bap-17, 0x1.39d30f8ceebcdp-13, -0x1.31e66a6386f9fp-9, 0x1.29910a1ff7b0ep-5,
      // row 40: center 17.0, approximation error 2^-53.0
      0x1.1000000000000p+4, 0x1.0b63a54185308p-46, -0x1.21a8721744c97p-42, 0x1.362041ee9d466p-38,
      -0x1.4e8d2cade4c9cp-34, 0x1.6851587e216a8p-30, -0x1.836965f56cb28p-26, 0x1.9fd8ef215c374p-22,
      -0x1.bd9f058f3fe56p-18, 0x1.dcb8a7c6aee7cp-14, -0x1.fd20a0cb710bcp-10, 0x1.0f67b1bff7645p-5,
      // row 41: center 19.0, approximation error 2^-54.8
      0x1.3000000000000p+4, 0x1.4121fc2d723b9p-48, -0x1.83561b07fe23bp-44, 0x1.cecc55bee72c7p-40,
      -0x1.162a0f392a67fp-35, 0x1.4df140c34657ep-31, -0x1.905c1569207eep-27, 0x1.df572c704677fp-23,
      -0x1.1e90357c97d3dp-18, 0x1.562a96b0758a5p-14, -0x1.98006b41c68f1p-10, 0x1.e5d6a9f4cc3eap-6,
      // row 42: center 21.0, approximation error 2^-54.7
      0x1.5000000000000p+4, 0x1.b19af71d0e923p-50, -0x1.2038d5d070d54p-45, 0x1.7c345d2886829p-41,
      -0x1.f80d6f22acb0dp-37, 0x1.4dc261cc7e925p-32, -0x1.b9813b1d3bbcfp-28, 0x1.23b1721d519d5p-23,
      -0x1.8100c74fdcf59p-19, 0x1.fb98687d18231p-15, -0x1.4e3cc52793c3dp-10, 0x1.b7ad8ef8307ccp-6,
      // row 43: center 23.0, approximation error 2^-55.1
      0x1.7000000000000p+4, 0x1.4269c60c1fe94p-51, -0x1.d4759546b2ba7p-47, 0x1.5220727f0ab63p-42,
      -0x1.ea27093253cdfp-38, 0x1.62f12bf118c77p-33, -0x1.00ca3ad7bd45cp-28, 0x1.73371e27f3b1fp-24,
      -0x1.0c109a7618604p-19, 0x1.82cb1527ef460p-15, -0x1.16cb03a88c8f0p-10, 0x1.91853accde052p-6,
      // row 44: center 25.0, approximation error 2^-53.5
      0x1.9000000000000p+4, 0x1.03f1cc351501ap-52, -0x1.99dec5a29a1cfp-48, 0x1.415b4ff686846p-43,
      -0x1.f9b4b192c161bp-39, 0x1.8d98933ae0c7dp-34, -0x1.3859b1f3286f6p-29, 0x1.ea608ac1f5ffap-25,
      -0x1.80a1dc85d71c3p-20, 0x1.2d73a48df2c39p-15, -0x1.d8252a832fb4cp-11, 0x1.7173c308c43e9p-6,
      // row 45: center 27.0, approximation error 2^-54.1
      0x1.b000000000000p+4, 0x1.060b8ef28c552p-53, -0x1.7841be752c182p-49, 0x1.4341866d24f18p-44,
      -0x1.1253b769ddc01p-39, 0x1.d17418a97e7f4p-35, -0x1.8a9a07e74309ep-30, 0x1.4e4f0dba28cd9p-25,
      -0x1.1b0953da04cf1p-20, 0x1.deee0c8da2571p-16, -0x1.94ed2196647d1p-11, 0x1.561fcfda08321p-6,
  };
  // clang-format on
  return kErfcxPoly + 12 * i;
}

// Accurate-path rows k = 0..80 (c = k/8): erfc(c) = [0] + [1], (2/sqrt(pi)) e^(-c^2) = [2] + [3].
REPMODE_HD const double* erf_acc_row(int k) {
  // clang-format off
  static constexpr double kErfAcc[81 * 4] = {
      0x1.0000000000000p+0, 0.0, 0x1.20dd750429b6dp+0, 0x1.1ae3a914fed80p-56,  // c = 0/8
      0x1.b82879728f11ep-1, -0x1.742db5924f83dp-55, 0x1.1c62fa1e869b6p+0, 0x1.ce6909ad6a1e7p-55,  // c = 1/8
      0x1.728558ee694fcp-1, -0x1.208b6f02df46ap-55, 0x1.0f5d1602f7e41p+0, -0x1.3e41778d4b1eep-55,  // c = 2/8
      0x1.311796a46f064p-1, -0x1.74c71fef1759ep-55, 0x1.f5f0cdaf15313p-1, 0x1.dff29f5ad8117p-60,  // c = 3/8
      0x1.eb02147ce245cp-2, -0x1.5e809f1a31a28p-56, 0x1.c1efca49a5011p-1, 0x1.4c081d7f49500p-55,  // c = 4/8
      0x1.81cd2465e1d96p-2, 0x1.f25f4f6fdf70bp-56, 0x1.86e9694134b9ep-1, -0x1.3bda1314b1d68p-55,  // c = 5/8
      0x1.27c6d14c5e341p-2, 0x1.3af3434d0eeabp-57, 0x1.492e42d78d2c5p-1, -0x1.8bd386a7ba3f6p-55,  // c = 6/8
      0x1.ba36dab91c0e9p-3, 0x1.3c896e9a97c59p-58, 0x1.0cab61f084b93p-1, 0x1.098a511a778e7p-56,  // c = 7/8
      0x1.4226162fbddd5p-3, -0x1.b40443f6ec34ap-59, 0x1.a911f096fbc26p-2, -0x1.086a09f735b33p-56,  // c = 8/8
      0x1.c9296beb09cf1p-4, -0x1.5224acd170beep-59, 0x1.45e99bcbb7915p-2, 0x1.7bcd0125a8155p-56,  // c = 9/8
      0x1.3bcd133aa0ffcp-4, -0x1.89da82345938bp-62, 0x1.e4652fadcb6b2p-3, -0x1.e950836901024p-61,  // c = 10/8
      0x1.a8973c4b5c03ep-5, 0x1.d27662c1d9dc2p-59, 0x1.5ce595c455b0ap-3, 0x1.c317415c2c6e1p-59,  // c = 11/8
      0x1.15aaa8ec85205p-5, -0x1.e86ee834da4cep-61, 0x1.e723726b824a9p-4, -0x1.2203197eea764p-59,  // c = 12/8
      0x1.612d893085125p-6, -0x1.7847afe4f2a7bp-62, 0x1.499d478bca735p-4, 0x1.31c41d17378e2p-60,  // c = 13/8
      0x1.b4be201caa4b4p-7, -0x1.6abde927f9cddp-61, 0x1.b055303221015p-5, 0x1.cba9ea60ed019p-59,  // c = 14/8
      0x1.0678442cc256fp-7, -0x1.77b62199d8601p-61, 0x1.12ceb37ff9bc3p-5, 0x1.a3b0b09d34761p-59,  // c = 15/8
      0x1.328f5ec350e67p-8, -0x1.ca006412e68d0p-62, 0x1.529b9e8cf9a1ep-6, 0x1.b47becf12c4e4p-61,  // c = 16/8
      0x1.5bde729a6b60fp-9, 0x1.999ec7becc5c7p-65, 0x1.94624e78e0fafp-7, -0x1.41864737c78ffp-61,  // c = 17/8
      0x1.7f713f9cc9784p-10, -0x1.4207143202515p-64, 0x1.d4143a9dfe965p-8, -0x1.6eec3c35c7ed7p-63,  // c = 18/8
      0x1.9a7c305336484p-11, 0x1.6394dd2ff0093p-65, 0x1.06918b6355624p-8, 0x1.21b463b8e3a00p-62,  // c = 19/8
      0x1.aab859b20ac9ep-12, 0x1.88f4ff748376bp-66, 0x1.1d83170fbf6fbp-9, 0x1.ea3671efbb74ap-63,  // c = 20/8
      0x1.aeb4423e690e7p-13, -0x1.a732e928e4c5dp-68, 0x1.2ce898809244ep-10, 0x1.092b45493a9e8p-64,  // c = 21/8
      0x1.a609f7584d32bp-14, 0x1.d92f3f7ab9ef5p-68, 0x1.3360ccd23db3ap-11, 0x1.39e15444e9dddp-69,  // c = 22/8
      0x1.916f7c5f2f764p-15, 0x1.84e95673c70a1p-70, 0x1.30538fbb77ecdp-12, 0x1.8c5e8c1b3532fp-69,  // c = 23/8
      0x1.729df6503422ap-16, 0x1.784ca4c429a15p-73, 0x1.2408e9ba3327fp-13, -0x1.7e1d81587040cp-67,  // c = 24/8
      0x1.4c144d984e1b8p-17, 0x1.2d1f7068bf3fbp-74, 0x1.0f9e1b4dd36dfp-14, -0x1.3fedc80d9c7aep-71,  // c = 25/8
      0x1.20c1303550f0ep-18, -0x1.20ee80d2c8d09p-73, 0x1.e9b5e8d00ce77p-16, -0x1.cbbe2ecd1cfacp-70,  // c = 26/8
      0x1.e749309831666p-20, -0x1.76172989e68aep-76, 0x1.abe09e9144b5ep-17, 0x1.308300923fe4bp-71,  // c = 27/8
      0x1.8ef2a9a18d857p-21, -0x1.2d76dc03e80a5p-75, 0x1.6a597219a93dap-18, -0x1.cbf8fbc2cd5cdp-72,  // c = 28/8
      0x1.3ce784b411931p-22, -0x1.8c77157062626p-76, 0x1.296a70f414053p-19, 0x1.036e65808a17dp-74,  // c = 29/8
      0x1.e87470e4f4246p-24, -0x1.cafa3aa5b4314p-82, 0x1.d9371e2ff7c35p-21, 0x1.0aed0951e078dp-75,  // c = 30/8
      0x1.6d3126d74b6ccp-25, -0x1.301eb5249fe1dp-79, 0x1.6ce1aa3fd7bddp-22, 0x1.bf15b0bc56aabp-80,  // c = 31/8
      0x1.08ddd13bd35e7p-26, -0x1.615db40319381p-80, 0x1.10b1488aeb235p-23, -0x1.cd75b4828c0c0p-81,  // c = 32/8
      0x1.74b179d1eba81p-28, -0x1.83473776fe2fcp-82, 0x1.8b0cfce0579e0p-25, -0x1.e8bad9967ec2cp-79,  // c = 33/8
      0x1.fcae93fb7323cp-30, 0x1.35a3596692c9cp-84, 0x1.155a09065d4f7p-26, -0x1.7c5d6c7140f80p-81,  // c = 34/8
      0x1.50b75c536f927p-31, -0x1.3c10e160b737ep-89, 0x1.7974e743dea3dp-28, -0x1.b6101ddd90bdbp-82,  // c = 35/8
      0x1.b05cfe2e99435p-33, -0x1.a071ed80552c6p-87, 0x1.f1e3523b41d7dp-30, -0x1.7303536c50b37p-84,  // c = 36/8
      0x1.0d3b35021d695p-34, -0x1.42a25e7a42894p-89, 0x1.3e44e45301b92p-31, 0x1.1a5c00d13a5f2p-85,  // c = 37/8
      0x1.453141082302ap-36, -0x1.1a101007d8742p-90, 0x1.8a61745ec7d1dp-33, 0x1.9d509f787b50ep-88,  // c = 38/8
      0x1.7cef42e9a617dp-38, 0x1.22a7daf8a3e2fp-92, 0x1.d9a880f306bd8p-35, -0x1.fbec4689ff1dap-94,  // c = 39/8
      0x1.b0c1a759f7739p-40, -0x1.b28568855c7a1p-94, 0x1.13af4f04f9998p-36, -0x1.0532e647cd418p-90,  // c = 40/8
      0x1.dcc4fabf32f1cp-42, -0x1.748a050f39acfp-96, 0x1.370ab8327af5ep-38, -0x1.1cdf083ee84bcp-92,  // c = 41/8
      0x1.fd5f08ad2b29ap-44, 0x1.e5b1d0c5bf934p-99, 0x1.5422ef5d8949dp-40, 0x1.ff62258857350p-96,  // c = 42/8
      0x1.07dd6833bb380p-45, -0x1.63b11e0c47d2ap-99, 0x1.68823e52970bep-42, 0x1.24038ae49efbdp-98,  // c = 43/8
      0x1.09182b326b229p-47, -0x1.22e85b13a8e1dp-102, 0x1.7258610b3b233p-44, -0x1.60bc7761ca394p-101,  // c = 44/8
      0x1.0241de6c31e5bp-49, -0x1.636c6dd3916b0p-103, 0x1.70beaf9c7ffb6p-46, -0x1.b0d0718f5cfd3p-103,  // c = 45/8
      0x1.e7eea02e4ed88p-52, -0x1.824cc1e2339a2p-106, 0x1.63daf8b4b1e0cp-48, 0x1.f38800a69fe98p-105,  // c = 46/8
      0x1.bef1b1a12823ep-54, -0x1.b1807c3b357d3p-108, 0x1.4cd9c04158cd7p-50, 0x1.533947579e54dp-104,  // c = 47/8
      0x1.8cf81557d20b6p-56, 0x1.a7fff0cc732c0p-112, 0x1.2dc119095729fp-52, -0x1.1566d13fe4564p-106,  // c = 48/8
      0x1.55df1790f2f61p-58, 0x1.ec3d39d9bc1d6p-113, 0x1.09257fca001c0p-54, -0x1.baeb82076e9dap-109,  // c = 49/8
      0x1.1d791bb1324a1p-60, 0x1.4c1d1176d0d26p-114, 0x1.c39fa0d4a5a2bp-57, -0x1.3e412d0e7cc0cp-117,  // c = 50/8
      0x1.ce42dd8e4fa23p-63, 0x1.8bad2d1795b81p-117, 0x1.74ca889bbacd5p-59, 0x1.9dc85afd5c571p-113,  // c = 51/8
      0x1.6ae172414cebap-65, -0x1.4ce015960b1e5p-122, 0x1.2a406e25fcb44p-61, 0x1.2c90fc3a95361p-117,  // c = 52/8
      0x1.1432649c86c4dp-67, -0x1.76681db3323e7p-121, 0x1.ce8cc007a6432p-64, -0x1.c386f701261b1p-120,  // c = 53/8
      0x1.97a3dc62119c8p-70, 0x1.bb8349c77f884p-125, 0x1.5ba462dee8a02p-66, 0x1.25a7cc4c6e2b7p-120,  // c = 54/8
      0x1.23a85891dc72bp-72, 0x1.fe4810babd776p-127, 0x1.fa7b9159fc471p-69, -0x1.0b6a8e5b40bc7p-123,  // c = 55/8
      0x1.94a28136fa731p-75, 0x1.491f9e70583a0p-129, 0x1.659917bbb6632p-71, -0x1.295de8b9355b3p-126,  // c = 56/8
      0x1.1022313b11381p-77, 0x1.e521cbf9cf10ep-131, 0x1.e96c265c21fbfp-74, -0x1.4ba831c003c2bp-128,  // c = 57/8
      0x1.62e225ebca190p-80, 0x1.24abc2451f08ep-137, 0x1.449de67f2c6b2p-76, -0x1.be853b05e28fcp-130,  // c = 58/8
      0x1.c0aee6d6b1406p-83, 0x1.01c2b84c30198p-139, 0x1.a15d86bb23572p-79, -0x1.acbf4366253cbp-133,  // c = 59/8
      0x1.12fc6cdafd10dp-85, 0x1.add6ff295f6bap-139, 0x1.040d4ab2de626p-81, 0x1.015f3353efb8ap-137,  // c = 60/8
      0x1.46c779ebb14aep-88, 0x1.61c0b9f885047p-144, 0x1.3a1882865d26ep-84, -0x1.76c19317e6c5dp-138,  // c = 61/8
      0x1.7879eb52380edp-91, 0x1.e4289f32a4be0p-146, 0x1.6fb2eaf7d8102p-87, 0x1.99df229b8b64ep-141,  // c = 62/8
      0x1.a47db588b15cfp-94, 0x1.6268156643083p-148, 0x1.a134d30d655e4p-90, 0x1.29888cf2f3331p-146,  // c = 63/8
      0x1.c74fc41217dfbp-97, 0x1.dae003e8b6247p-151, 0x1.cad0afbb569b1p-93, -0x1.62d4db649f81cp-150,  // c = 64/8
      0x1.ddf56913a541ep-100, 0x1.099b82891a35dp-154, 0x1.e90cb5cac7057p-96, -0x1.2d793a7ccdd64p-152,  // c = 65/8
      0x1.e667d9a8bcd9ep-103, 0x1.ab4626748c58dp-158, 0x1.f93d0d186fbcdp-99, -0x1.75edee969993dp-154,  // c = 66/8
      0x1.dfe0c1b8af1f3p-106, 0x1.2e9765a21e903p-161, 0x1.f9e77238e0031p-102, 0x1.d467693949a9fp-156,  // c = 67/8
      0x1.caf8458ad2a12p-109, -0x1.4b7e45919ceb0p-163, 0x1.eafc2b00a99b1p-105, 0x1.49df56bf117bcp-160,  // c = 68/8
      0x1.a98e26924c6c8p-112, -0x1.b4fab86673155p-166, 0x1.cdd86b83e679dp-108, -0x1.2ef1dd410d4e6p-163,  // c = 69/8
      0x1.7e82cde922833p-115, -0x1.0ddc41036f42dp-169, 0x1.a511aa3827999p-111, -0x1.028d090ea8c3dp-165,  // c = 70/8
      0x1.4d4ec8ea8ee67p-118, -0x1.61d73c8f3ef76p-172, 0x1.7414e5b5ca43cp-114, 0x1.ec33c601742a0p-168,  // c = 71/8
      0x1.198d422be3f8cp-121, 0x1.36ba610a005ffp-176, 0x1.3ead7491061afp-117, 0x1.e3564c17af9cep-171,  // c = 72/8
      0x1.cd1db96a6c6efp-125, -0x1.a3529be138ff8p-180, 0x1.088a80b837328p-120, 0x1.8b6f0a6cbd9c6p-175,  // c = 73/8
      0x1.6e0c8fadbb050p-128, -0x1.5f2ecaa398ef9p-186, 0x1.a9b07f491a273p-124, 0x1.2acd59c29b50ap-180,  // c = 74/8
      0x1.19b0f23241b88p-131, -0x1.b6b4a43d5e1bep-186, 0x1.4bf6ca87a4707p-127, 0x1.431983eb49a3ep-182,  // c = 75/8
      0x1.a4480db60fe17p-135, 0x1.c96ff9dc62e09p-189, 0x1.f5d1c58fdc6acp-131, -0x1.9fd5682d2fb99p-185,  // c = 76/8
      0x1.2feeed430b87bp-138, 0x1.47bffa3906326p-194, 0x1.6f9f62ec4193ap-134, 0x1.6cc2d3cff413ap-189,  // c = 77/8
      0x1.aa222a98ba953p-142, 0x1.13a8ebda11769p-196, 0x1.0506e21782262p-137, -0x1.2a1f4382f3e73p-192,  // c = 78/8
      0x1.219685023e1bep-145, -0x1.738eb42b5af0fp-199, 0x1.67464f8a36affp-141, -0x1.38482c29a47d0p-198,  // c = 79/8
      0x1.7d8a7f2a8a2d0p-149, -0x1.8b231dcfa8e27p-203, 0x1.df49a10ccc568p-145, -0x1.14355cfe17b19p-200,  // c = 80/8
  };
  // clang-format on
  return kErfAcc + 4 * k;
}

// The fast erf evaluation on row r at t: Estrin's scheme for the degree-8 polynomial
// a1 + a2 t + ... + a9 t^8 (short dependency chains, for the SIMD version), then
// a0 + t * that, so the error of the first part is damped by |t * ...| / |erf|.
// No fma: the same operations in the same order on every platform; the SIMD version
// (csrc/cpu/vec_math_erf_avx2.h) performs these very operations.
REPMODE_HD double erf_eval(const double* r, double t) {
  double t2 = t * t;
  double q0 = r[0] + r[1] * t;
  double q1 = r[2] + r[3] * t;
  double q2 = r[4] + r[5] * t;
  double q3 = r[6] + r[7] * t;
  double t4 = t2 * t2;
  double u0 = q0 + t2 * q1;
  double u1 = q2 + t2 * q3;
  double t8 = t4 * t4;
  double v = u0 + t4 * u1;
  double w = v + t8 * r[8];
  return r[9] + t * w;
}

// erf(|x|) for a float32 |x| = axf < 3.9375, relative error < 2^-50.03 (erf_row).
// The row k = round(8 axf), ties to even, comes from s = axf + 2^20: floats in
// [2^20, 2^21) are the multiples of 1/8, so the addition rounds axf to k/8 (nearest,
// ties to even) and the low 23 bits of s hold k. c = s - 2^20 = k/8 is exact, and so is
// t = axf - c in float: for k = 0 it is axf; for k >= 1, axf >= 1/16 is a multiple of
// 2^-27 and |t| <= 1/16, so t is a multiple of 2^-27 below 2^-4 (at most 24 bits).
REPMODE_HD int erf_row_index(float s) { return int(bits_of(s) - 0x49800000u); }
REPMODE_HD double erf_poly_f(float axf) {
  float s = axf + 0x1p20f;
  return erf_eval(erf_row(erf_row_index(s)), double(axf - (s - 0x1p20f)));
}

// erf(ax) for a float64 0 <= ax < 5.9375, the same rows: k = round(8 ax) by the 2^52
// shift (ties to even), t = ax - k/8 exact (Sterbenz: c/2 <= ax <= 2c for c = k/8 >= 1/8).
REPMODE_HD double erf_poly_d(double ax) {
  double kd = (ax * 8.0 + 0x1p52) - 0x1p52;
  return erf_eval(erf_row(int(kd)), ax - kd * 0.125);
}

// exp(x^2) erfc(x) for 1/2 <= x < 28, row i (see erfcx_row), relative error < 2^-51.86.
// t = x - c is exact (Sterbenz). Horner's rule without fma (scalar only, no SIMD twin).
REPMODE_HD double erfcx_poly(double x, int i) {
  const double* r = erfcx_row(i);
  double t = x - r[0];
  double p = r[1];
  p = p * t + r[2];
  p = p * t + r[3];
  p = p * t + r[4];
  p = p * t + r[5];
  p = p * t + r[6];
  p = p * t + r[7];
  p = p * t + r[8];
  p = p * t + r[9];
  p = p * t + r[10];
  p = p * t + r[11];
  return p;
}

// The rounding test of the single-double fast paths. Let y > 0 be a normal double with
// |y - f| <= 2^-49 |f| for the exact value f, and 2^e <= y < 2^(e+1). Then
// |y - f| <= 2^-49 2^(e+1) (1 + 2^-48) < 16.01 ulp(y), ulp(y) = 2^(e-52). The float32
// rounding boundaries in y's binade are the doubles whose low 29 bits are 0x10000000;
// those of other binades are at least 2^(e-25) away from any such y. So when the low 29
// bits of y differ from 0x10000000 by more than 16, no boundary lies between y and f,
// and (float)y is the correctly rounded f (when f is in the normal float32 range).
// Computed branch-free: (bits + 16 - 2^28) mod 2^29 <= 32 exactly when
// |low29 - 2^28| <= 16.
constexpr uint64_t kFastUlps = 16;
constexpr double kFastEps = 0x1p-49;  // the relative error the test assumes
REPMODE_HD bool fast_path_is_hard(double y) {
  return ((bits_of(y) + (kFastUlps - 0x10000000ull)) & 0x1fffffffull) <= 2 * kFastUlps;
}

// a / d in double-double for a positive integer d < 2^26: q1 = RN(a.hi / d), the
// remainder a.hi - q1 d is exact (fma), and the correction q2 = (r + a.lo) / d adds
// relative errors < 2^-104.
REPMODE_HD DD dd_div_d(DD a, double d) {
  double q1 = a.hi / d;
  double r = repmode_fma(-q1, d, a.hi);
  return fast_two_sum(q1, (r + a.lo) / d);
}

enum class ErfKind { erf, erfc, erfc_neg };

// Accurate erf(ax) (kind erf), erfc(ax) (erfc) or erfc(-ax) = 1 + erf(ax) (erfc_neg) as a
// double-double, for a float32 value 0 < ax < 10.0625 (erf: ax < 3.9375).
//
// With c = k/8, k = round(8 ax), t = ax - c (exact, |t| <= 1/16; k = 0: t = ax < 1/16):
//   erf(ax) = erf(c) + S F(t),  erfc(ax) = erfc(c) - S F(t),  S = (2/sqrt(pi)) e^(-c^2),
//   F(t) = int_0^t e^(-2cs - s^2) ds = sum_(n>=1) W_n,  W_1 = t,  W_2 = -c t^2,
//   W_(n+2) = (A (n+1) W_(n+1) + B n W_n) / ((n+1)(n+2)),  A = -2ct,  B = -2t^2,
// the Taylor coefficients of F (F'' = -(2c + 2t) F') times t^n. Exactness: for k >= 1,
// ax >= 1/16 is a multiple of 2^-27, so t has at most 23 significant bits and c (k <= 80)
// at most 7: A, W_2, A (n+1) and B n (n < 64) are exact doubles; for k = 0, A = 0 and B
// has <= 48 bits, B n exact for n < 32, and the loop stops before n = 25 there.
//
// Error. The loop stops once |W_(n+1)| + |W_(n+2)| <= 2^-112 |t|; from then on every
// term is at most rho = (|A| + |B|)/(n+3) < 0.33 times the larger of the two before it,
// so the neglected tail is below 2^-112 |t| * 2 rho / (1 - rho) < 2^-112 |t|. Each step
// adds an absolute error below about 2^-103 (|A| (n+1) |W_(n+1)| + |B| n |W_n|)/((n+1)(n+2))
// (dd_mul_d, dd_add, dd_div_d at < 2^-104.5 each), which the recurrence damps by the same
// factor rho per later step, so F carries an absolute error below about
// 2^-101 sum |W_n| <= 2^-101 e^(|A| + |B|) |t| < 2^-99.1 |t| (|A| + |B| < 1.28). Since
// |F(t)| >= e^(-|A| - t^2) |t| >= 0.27 |t|, that is < 2^-97.2 relative. S, erfc(c) and
// 1 - erfc(c) carry < 2^-105; the final addition loses at most a factor
// kappa = (|erf(c)| + |S F|)/erf(ax) <= 3.0 (erf), (erfc(c) + |S F|)/erfc(ax) <= 6.1 (erfc)
// (maximised over all rows with mpmath), and <= 2.1 for erfc_neg (a sum in [1, 2]).
// Total < 6.1 * 2^-97 < 2^-94 relative, against kAccurateEps = 2^-85; measured against
// __float128 on 2*10^6 random inputs: < 2^-102.3.
REPMODE_HD DD erf_accurate(double ax, ErfKind kind) {
  int k = int(ax * 8.0 + 0.5);
  const double* row = erf_acc_row(k);
  double c = double(k) * 0.125;
  double t = ax - c;
  double A = -2.0 * (c * t);
  double B = -2.0 * (t * t);
  DD w0 = {t, 0.0};
  DD w1 = {0.5 * (A * t), 0.0};  // -c t^2
  DD f = two_sum(t, w1.hi);
  double tiny = 0x1p-112 * abs_of(t);
  for (int n = 1; n < 48; ++n) {
    DD num = dd_add(dd_mul_d(w1, A * double(n + 1)), dd_mul_d(w0, B * double(n)));
    DD w2 = dd_div_d(num, double((n + 1) * (n + 2)));
    f = dd_add(f, w2);
    w0 = w1;
    w1 = w2;
    if (abs_of(w0.hi) + abs_of(w1.hi) <= tiny) break;
  }
  DD sf = dd_mul(DD{row[2], row[3]}, f);
  if (kind == ErfKind::erfc) return dd_add(DD{row[0], row[1]}, DD{-sf.hi, -sf.lo});
  // base - erfc(c), base = 1 (erf) or 2 (erfc(-ax) = 2 - erfc(ax)); exact two_sum, then
  // the tail. For k = 0 (erfc(0) = 1) the erf base is exactly 0.
  DD b = two_sum(kind == ErfKind::erf ? 1.0 : 2.0, -row[0]);
  b = fast_two_sum(b.hi, b.lo - row[1]);
  return dd_add(b, sf);
}

// Correctly rounded float32 of an accurate-path value v = y.hi + y.lo > 0 (erf_accurate's
// bound < 2^-94 is within kAccurateEps = 2^-85 of math.h). Diagnostics for the verifier:
// *path = 2, or 3 if the value lies within kAccurateEps of a rounding boundary (then the
// result could be wrong; no float32 input does that: cases erff_paths and erfcf_paths of
// csrc/verify/check_math.cpp).
REPMODE_HD uint32_t round_accurate(DD y, int* path) {
  bool hard;
  uint32_t b = round_to_f32(y.hi, y.lo, math_detail::kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return b;
}

REPMODE_HD_COLD float erff_accurate_path(double ax, uint32_t sign, int* path) {
  return float_from_bits(round_accurate(erf_accurate(ax, ErfKind::erf), path) | sign);
}

// |x| < 2^-125 (bits below 0x01000000): zeros, subnormals and the lowest normal binade.
// There x = ax * 2^-149 exactly (ax the integer of the bits: the exponent field is 0 or
// 1), erf(x) = (2/sqrt(pi)) x (1 - x^2/3 + ...) with x^2 < 2^-250, and
// (2/sqrt(pi)) * ax in double-double (dd_mul_d: error < 2^-104) scaled exactly by 2^-149
// (normal doubles, no FTZ dependence) is rounded by integer arithmetic, subnormal
// results included.
REPMODE_HD_COLD float erff_tiny(uint32_t ax, uint32_t sign, int* path) {
  if (ax == 0) return float_from_bits(sign);  // erf(+-0) = +-0
  DD v = dd_mul_d(DD{kTwoOverSqrtPiHi, kTwoOverSqrtPiLo}, double(int32_t(ax)));
  return float_from_bits(round_accurate(DD{v.hi * 0x1p-149, v.lo * 0x1p-149}, path) | sign);
}

// cr_erff with diagnostics (path: 0 special, 1 fast, 2 accurate or tiny, 3 accurate but
// within its error bound of a rounding boundary, never observed).
//
// Fast path: erf_poly_f's value y has relative error < 2^-50.03 < kFastEps, so when
// fast_path_is_hard(y) is false, (float)y is the correctly rounded erf(|x|) (a normal
// float: erf(|x|) > |x| >= 2^-125). Otherwise the accurate path decides; over all float32
// inputs its own test is never hard (exhaustive check, case erff_paths).
REPMODE_HD float cr_erff_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  uint32_t sign = ux & 0x80000000u;
  if (path) *path = 0;
  // |x| >= 0x1.f5a88ap+1 = 3.9192059: erfc(|x|) < 2^-25 (mpmath), so |erf(x)| lies
  // above the boundary 1 - 2^-25 and rounds to 1; also +-inf. NaN -> canonical NaN.
  if (ax >= 0x407ad445u) {
    if (ax > 0x7f800000u) return Canonical<float>::nan();
    return float_from_bits(sign | 0x3f800000u);
  }
  if (ax < 0x01000000u) return erff_tiny(ax, sign, path);
  double y = erf_poly_f(float_from_bits(ax));  // |x| >= 2^-125, a normal float
  if (!fast_path_is_hard(y)) {
    if (path) *path = 1;
    return float_from_bits(bits_of(float(y)) | sign);
  }
  return erff_accurate_path(double(float_from_bits(ax)), sign, path);
}

REPMODE_HD_COLD float erfcf_accurate_path(double x, int* path) {
  DD y = x < 0.0 ? erf_accurate(-x, ErfKind::erfc_neg) : erf_accurate(x, ErfKind::erfc);
  return float_from_bits(round_accurate(y, path));
}

// cr_erfcf with diagnostics (paths as for cr_erff_impl).
//
// Fast path, relative error < 2^-50.6 in every branch, within kFastEps:
//  * 0 < x < 1/2: v = 1 - erf_poly_f(x). The error of erf_poly_f (per row: 2^-50.03 for
//    rows 0..2, 2^-51.64 row 3, 2^-51.94 row 4) is scaled by erf(x)/erfc(x) (<= 0.52,
//    0.87, 1.09 on those rows), plus the rounding of the subtraction (2^-53): < 2^-50.66.
//    x < 0: v = 1 + erf_poly_f(|x|) in [1, 2]: < 2^-50.03 / 2 + 2^-53 < 2^-50.71.
//  * x >= 1/2: exp(-x^2) = (e.hi + e.lo) 2^m with error < 2^-58.3 (exp_fast; x*x is exact
//    for a float32 x), so e.hi is within 2^-53 + 2^-58.3 < 2^-52.93 of it; erfcx_poly
//    < 2^-51.86; the product rounds once (2^-53): < 2^-50.92 in all. The
//    scaling by 2^m is exact (normal doubles). Results below 2^-126 (x > 9.19) are rounded
//    by integer arithmetic (round_to_f32, with the same bound), so FTZ cannot matter.
REPMODE_HD float cr_erfcf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-26 (zeros and subnormals included): erfc(x) = 1 - (2/sqrt(pi)) x (1 + ...)
  // lies strictly between the boundaries 1 - 2^-25 and 1 + 2^-24.
  if (ax < 0x32800000u) return 1.0f;
  // x >= 0x1.41bbf8p+3 = 10.054195: erfc(x) <= 2^-150 (mpmath: 0.99999 * 2^-150; the
  // float below gives 1.00001 * 2^-150), half the least subnormal: rounds to +0 (ties to
  // even); also +inf.
  if (ux >= 0x4120ddfcu && ux <= 0x7f800000u) return 0.0f;
  // x <= -0x1.ea8f96p+1 = -3.8325069: erfc(|x|) < 2^-24, so erfc(x) = 2 - erfc(|x|) lies
  // above the boundary 2 - 2^-24 and rounds to 2; also -inf.
  if (ux >= 0xc07547cbu) return 2.0f;
  double x = double(xf);  // |x| >= 2^-26: normal
  if (x < 0.5) {
    double p = erf_poly_f(float_from_bits(ax));
    double v = x < 0.0 ? 1.0 + p : 1.0 - p;
    if (!fast_path_is_hard(v)) {
      if (path) *path = 1;
      return float(v);
    }
  } else {
    int m;
    DD e = math_detail::exp_fast(-(x * x), m);  // m in [-147, -1]
    double v = (e.hi * erfcx_poly(x, int(ux >> 20) - 0x3f0)) * pow2(m);
    if (v >= 0x1p-126) {
      if (!fast_path_is_hard(v)) {
        if (path) *path = 1;
        return float(v);
      }
    } else {
      bool hard;
      uint32_t b = round_to_f32(v, 0.0, kFastEps, &hard);
      if (!hard) {
        if (path) *path = 1;
        return float_from_bits(b);
      }
    }
  }
  return erfcf_accurate_path(x, path);
}

}  // namespace erf_detail

// Correctly rounded erf for float32 (see cr_erff_impl). erf(+-0) = +-0, erf(+-inf) = +-1,
// NaN -> canonical NaN.
REPMODE_HD float cr_erff(float x) { return erf_detail::cr_erff_impl(x, nullptr); }

// Correctly rounded erfc for float32 (see cr_erfcf_impl). erfc(+-0) = 1, erfc(+inf) = +0,
// erfc(-inf) = 2, underflows through the subnormals to +0 from x = 10.0541954;
// NaN -> canonical NaN.
REPMODE_HD float cr_erfcf(float x) { return erf_detail::cr_erfcf_impl(x, nullptr); }

// erf for float64: erf_poly_d (the float32 fast path's polynomials, in double) on
// 2^-27 <= |x| < 5.9216 (|erf| rounds to 1 above), a fixed sequence of IEEE operations.
// Relative error < 2^-50.03 (erf_row's bound), i.e. < 8 ulp; measured against __float128
// over 3*10^7 random |x| log-uniform in [1e-320, 6.5] (csrc/verify/check_math.cpp, case erf):
// at most 2.97 ulp (near x = 1/16, where erf is half of row 1's constant term), 1.1% not
// correctly rounded. NaN -> canonical NaN, erf(+-0) = +-0, erf(+-inf) = +-1.
// Subnormal |x|: erf(x) = (2/sqrt(pi)) x (1 + O(2^-2044)), x = n 2^-1074 with the integer n
// from the bits, the product rounded to an integer multiple of 2^-1074 by integer-exact
// arithmetic (FTZ/DAZ cannot matter). For 2^-1022 <= |x| < 2^-900 some products inside
// erf_eval are subnormal; each is then added to a coefficient >= 2^-10 and lies below
// 2^-1000, far below half its ulp, so flushing it changes nothing.
REPMODE_HD double repmode_erf(double x) {
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  uint64_t sign = ux & 0x8000000000000000ull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax >= 0x4017afb48dc96627ull) return double_from_bits(sign | 0x3ff0000000000000ull);  // |x| >= 5.9215871957945073
  if (ax < 0x0010000000000000ull) {
    if (ax == 0) return x;
    // n = RN((2/sqrt(pi)) * ax) < 1.13 * 2^52: the bits of the result (2^52 encodes
    // 2^-1022, the least normal).
    math_detail::DD v = math_detail::dd_mul_d(
        math_detail::DD{erf_detail::kTwoOverSqrtPiHi, erf_detail::kTwoOverSqrtPiLo}, double(int64_t(ax)));
    // (v.hi >= 2^52 is itself the integer: v.hi = RN(v.hi + v.lo), ties to even.)
    double d;
    double n = v.hi >= 0x1p52 ? v.hi : math_detail::round_to_integer(v.hi, v.lo, d);
    return double_from_bits(sign | uint64_t(n));
  }
  double a = double_from_bits(ax);
  if (ax < 0x3e40000000000000ull && ax >= 0x07b0000000000000ull) {
    // 2^-900 <= |x| < 2^-27: (2/sqrt(pi)) |x| in double-double (fma) minus its x^2/3 part
    // (< 2^-55.5 relative; the next term is below 2^-109), nearly always correctly rounded.
    // From 2^-900 on, v.lo is 0 or far above 2^-1022, so a subnormal x^2 or correction
    // (zero under FTZ) is far below half an ulp of v.lo and changes nothing.
    math_detail::DD v =
        math_detail::dd_mul_d(math_detail::DD{erf_detail::kTwoOverSqrtPiHi, erf_detail::kTwoOverSqrtPiLo}, a);
    return double_from_bits(bits_of(v.hi + (v.lo - v.hi * ((a * a) * (1.0 / 3.0)))) | sign);
  }
  return double_from_bits(bits_of(erf_detail::erf_poly_d(a)) | sign);
}

// erfc for float64, the same branches as cr_erfcf: 1 -+ erf_poly_d(|x|) for x < 1/2, and
// exp(-x^2) * erfcx(x) above, with x^2 = h + l exact (two_prod), exp(-x^2) =
// exp_fast(-h) (1 - l) (|l| < 2^-43, the neglected l^2/2 < 2^-87), and the product
// e.hi r + e.lo r. Subnormal results (x > 26.54) are encoded by integer arithmetic.
// Relative error < 2^-50.6 (erfcx_poly 2^-51.86, three roundings, exp_fast 2^-58.3; or
// as cr_erfcf's x < 1/2 branch), i.e. < 5.3 ulp; measured against __float128 over 3*10^7
// random |x| log-uniform in [1e-20, 28] (case erfc): at most 3.24 ulp, 3.1% not
// correctly rounded. NaN -> canonical NaN, erfc(+inf) = +0, erfc(-inf) = 2.
REPMODE_HD double repmode_erfc(double x) {
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax < 0x3c80000000000000ull) return 1.0;  // |x| < 2^-55
  if (x >= 27.226017111108362) return 0.0;     // erfc(x) < 2^-1075 (includes +inf)
  if (x <= -5.8635847487551676) return 2.0;    // erfc(|x|) < 2^-53 (includes -inf)
  if (x < 0.5) {
    double p = erf_detail::erf_poly_d(math_detail::abs_of(x));
    return x < 0.0 ? 1.0 + p : 1.0 - p;
  }
  math_detail::DD sq = math_detail::two_prod(x, x);
  int m;
  math_detail::DD e = math_detail::exp_fast(-sq.hi, m);  // m >= -1071
  double r = erf_detail::erfcx_poly(x, int(ux >> 49) - 0x1ff0);
  r = r - r * sq.lo;
  double y = e.hi * r + e.lo * r;  // in [0.02, 1.3]
  // A normal result (decided from the exponents, not from a possibly flushed product) is
  // the exact scaling y 2^m (m >= -1022 there, as y < 2).
  if (math_detail::exponent_of(y) + m >= -1022) return y * math_detail::pow2(m);
  // Below 2^-1022: y 2^(m+1074) < 2^52 rounded to an integer is the bit pattern.
  double d;
  double n = math_detail::round_to_integer(y * math_detail::pow2(m + 1074), 0.0, d);
  return double_from_bits(uint64_t(n));
}

}  // namespace repmode

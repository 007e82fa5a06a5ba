// Bessel functions and orthogonal polynomials (issue 26) with the same bits on every CPU and GPU.
//
// Not correctly rounded: each function is ONE fixed formula of IEEE-754 basic operations, explicit
// fmas and repmode's own exp / log / sin / cos / acos (math.h, math_trig.h, math_atan.h). The
// Bessel functions are evaluated in double-double and rounded once to double; the float32
// functions are the double function of the (exactly widened) argument, rounded once to float32.
// The measured errors (against mpmath, next to native torch's on the same inputs) are in
// docs/math.md, "Bessel functions and orthogonal polynomials"; the formulas and the special values
// in docs/semantics.md, "Special functions (Bessel family and orthogonal polynomials)".
//
//   repmode_i0, repmode_i0e, repmode_i1, repmode_i1e   modified Bessel functions of the first
//        kind and their scaled forms e^-|x| I(x): Cephes' Chebyshev expansions (torch's
//        coefficients, stored as double-doubles), Clenshaw in double-double; the factor e^|x| is
//        exp_accurate's double-double, applied once (I0 is finite up to x = 713.98, where torch's
//        exp(x) * ... overflows from 709.78 on).
//   repmode_k0, repmode_k1, repmode_k0e, repmode_k1e   second kind and e^x K(x): Cephes'
//        expansions on (0, 2] and (2, inf), log(x/2) from log_fast, e^-x (e^x) as above.
//   repmode_j0, repmode_j1, repmode_y0, repmode_y1   Bessel functions of the first and second
//        kind: Cephes' j0.c / j1.c / y0.c / y1.c as designed (torch drops two leading 1s), in
//        double-double, the phase x - pi/4 (3pi/4) exact from the exact argument reduction.
//   repmode_spherical_j0   sin(x)/x: torch's Taylor polynomial with torch's fmas for |x| < 1/2
//        (native bits), sin_accurate(|x|) / |x| in double-double above.
//   repmode_kaiser   the Kaiser window's value I0(y)/I0(beta) in double-double.
//   chebyshev_*, hermite_*, laguerre_l, legendre_p   torch's recurrences, step for step in the
//        input's own type T with the fmas torch's compiled kernels use (native bits), with
//        torch's special cases (|x| == 1, n < 0, Hermite's degree limits); where torch switches
//        to a trigonometric form (|x| < 1 and n above 4, 6 or 8) repmode evaluates that form in
//        double with its own acos / cos / sin and rounds once to T.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "math_atan.h"        // repmode_acos, dd_sqrt
#include "math_hyperbolic.h"  // dd_div
#include "math_trig.h"        // repmode_sin, repmode_cos, sin_accurate

namespace repmode {
namespace math_detail {
namespace bessel {

// Cephes' Chebyshev coefficients (torch's ATen/native/Math.h, which are Cephes'), each as a
// double-double hi + lo: the 21-digit decimal value to 2^-106 (generated from the decimal strings
// with Python's decimal module), so the coefficients add no rounding error of their own.
// 30 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* i0a() {
  // clang-format off
  static constexpr double t[60] = {
      -0x1.45cb72134d0efp-58, 0x1.5a187a3b02fd8p-113,  // -4.41534164647933937950e-18
      0x1.33362977da589p-55, -0x1.e9c15b85bde0dp-109,  // +3.33079451882223809783e-17
      -0x1.184eb721ebbb4p-52, 0x1.a968c2de3d213p-106,  // -2.43127984654795469359e-16
      0x1.ee6d893f65ebap-50, -0x1.bc45cf657edcdp-105,  // +1.71539128555513303061e-15
      -0x1.a5022c297fbebp-47, -0x1.64a13cce42dacp-102,  // -1.16853328779934516808e-14
      0x1.59b464b262627p-44, -0x1.73501ad6bf8f8p-98,  // +7.67618549860493561688e-14
      -0x1.1164c62ee1af0p-41, -0x1.f8c8403049428p-95,  // -4.85644678311192946090e-13
      0x1.9fe2fe19bd324p-39, -0x1.e9674090ff13ep-95,  // +2.95505266312963983461e-12
      -0x1.2fc957a946abcp-36, 0x1.ff87ac2aaf017p-90,  // -1.72682629144155570723e-11
      0x1.a98becc743c10p-34, -0x1.7f9600b1f947bp-91,  // +9.67580903537323691224e-11
      -0x1.1d4fe13ae9556p-31, -0x1.830eb155947b1p-86,  // -5.18979560163526290666e-10
      0x1.6d903a454cb34p-29, 0x1.d23e52474d6e7p-85,  // +2.65982372468238665035e-09
      -0x1.beaf68c0b30abp-27, 0x1.45f27f4ec71e6p-84,  // -1.30002500998624804212e-08
      0x1.03b769d4d6435p-24, 0x1.f060dc3eb48fcp-79,  // +6.04699502254191894932e-08
      -0x1.1ec638f227f8dp-22, 0x1.7ff140e5e4ef9p-76,  // -2.67079385394061173391e-07
      0x1.2bf24978cf4acp-20, 0x1.2f4d9b6cdcd8bp-74,  // +1.11738753912010371815e-06
      -0x1.2866fcba56427p-18, -0x1.b7a8aed6d2363p-75,  // -4.41673835845875056359e-06
      0x1.13f58be9a2859p-16, 0x1.c3e3b9c51ae76p-70,  // +1.64484480707288970893e-05
      -0x1.e2b2659c41d5ap-15, 0x1.9058ec6056ce7p-69,  // -5.75419501008210370398e-05
      0x1.8b51b74107cabp-13, 0x1.0315804da9ef0p-67,  // +1.88502885095841655729e-04
      -0x1.2e2fd1f15eb52p-11, -0x1.811f6cf0907dfp-67,  // -5.76375574538582365885e-04
      0x1.adc758a12100ep-10, 0x1.1a02782877bdbp-64,  // +1.63947561694133579842e-03
      -0x1.1b65e201aa849p-8, -0x1.1f90b7b4036fcp-66,  // -4.32430999505057594430e-03
      0x1.59961f3dde3ddp-7, 0x1.0f58f7d95e4bcp-61,  // +1.05464603945949983183e-02
      -0x1.84e9ef121b6f0p-6, 0x1.f2823a8130914p-60,  // -2.37374148058994688156e-02
      0x1.93e8acea8a32dp-5, -0x1.d4f88f322c61ep-59,  // +4.93052842396707084878e-02
      -0x1.84b70342d06eap-4, -0x1.8edc79c796c85p-58,  // -9.49010970480476444210e-02
      0x1.5f7ac77ac88c0p-3, 0x1.f23577ade89c8p-58,  // +1.71620901522208775349e-01
      -0x1.37febc057cd8dp-2, 0x1.d59fab7df2838p-59,  // -3.04682672343198398683e-01
      0x1.5a84e9035a22ap-1, 0x1.56933e30830c0p-56,  // +6.76795274409476084995e-01
  };
  // clang-format on
  return t;
}
// 25 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* i0b() {
  // clang-format off
  static constexpr double t[50] = {
      -0x1.0adb754ca8b19p-57, -0x1.a54c57cf08fedp-113,  // -7.23318048787475395456e-18
      -0x1.646da66119130p-58, -0x1.fb4b036923dc0p-113,  // -4.83050448594418207126e-18
      0x1.9be1812d98421p-55, 0x1.9b1023947cea6p-109,  // +4.46562142029675999901e-17
      0x1.3f3dd076041cdp-55, -0x1.a2497a17b7e28p-110,  // +3.46122286769746109310e-17
      -0x1.4600babd21fe4p-52, 0x1.528cdf2cfe637p-106,  // -2.82762398051658348494e-16
      -0x1.8aee7d908de38p-52, -0x1.1ef5fbf6e6e8cp-106,  // -3.42548561967721913462e-16
      0x1.fee7da3eafb1fp-50, 0x1.7a59c7da6da96p-104,  // +1.77256013305652638360e-15
      0x1.12a919094e6d7p-48, 0x1.59b4334d503b8p-106,  // +3.81168066935262242075e-15
      -0x1.583fe7e65629ap-47, -0x1.b9ad62ed63f23p-102,  // -9.55484669882830764870e-15
      -0x1.75d99cf68bb32p-45, 0x1.ea5d18aa29085p-100,  // -4.15056934728722208663e-14
      0x1.156ff0d5fc545p-46, -0x1.a4d8dd67d2d5ep-100,  // +1.54008621752140982691e-14
      0x1.b1c8c6b83c073p-42, 0x1.cf4a7aae79d1cp-97,  // +3.85277838274214270114e-13
      0x1.94347fa268cecp-41, 0x1.bc094779ac582p-96,  // +7.18012445138366623367e-13
      -0x1.f904303178d66p-40, 0x1.624ecea9d62c0p-95,  // -1.79417853150680611778e-12
      -0x1.d0fd7357e7bf2p-37, 0x1.d35faf3107ee2p-93,  // -1.32158118404477131188e-11
      -0x1.1511d08397425p-35, 0x1.bff16a9a844b5p-89,  // -3.14991652796324136454e-11
      0x1.a24feabe8004fp-37, -0x1.af54f041c5d50p-91,  // +1.18891471078464383424e-11
      0x1.0f9ccc0f46f75p-31, -0x1.ceb392a618e76p-85,  // +4.94060238822496958910e-10
      0x1.d2c64a9225b87p-29, -0x1.9047b79c65fc6p-83,  // +3.39623202570838634515e-09
      0x1.8569280d6d56dp-26, 0x1.0736383dfe636p-82,  // +2.26666899049817806459e-08
      0x1.b8007d9cd616ep-23, -0x1.7cfd80543c53ap-77,  // +2.04891858946906374183e-07
      0x1.8412bc101c586p-19, -0x1.9456c8c70c8e1p-73,  // +2.89137052083475648297e-06
      0x1.20fa378999e52p-14, -0x1.a0c977408a6b8p-68,  // +6.88975834691682398426e-05
      0x1.b998ca2e59049p-9, -0x1.d041742777e7dp-63,  // +3.36911647825569408990e-03
      0x1.9be62aca809cbp-1, 0x1.a4044642aebd5p-55,  // +8.04490411014108831608e-01
  };
  // clang-format on
  return t;
}
// 29 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* i1a() {
  // clang-format off
  static constexpr double t[58] = {
      0x1.99f2a0c3c4014p-59, 0x1.23fd2f9d228d5p-115,  // +2.77791411276104639959e-18
      -0x1.857d0c38a0576p-56, -0x1.93a6214452385p-110,  // -2.11142121435816608115e-17
      0x1.663e3e593bfacp-53, -0x1.2c3cf0065c400p-107,  // +1.55363195773620046921e-16
      -0x1.3eaaa7e0d1573p-50, -0x1.305f42652a9cbp-104,  // -1.10559694773538630805e-15
      0x1.11d7f0615290cp-47, -0x1.dcc5152543f30p-101,  // +7.60068429473540693410e-15
      -0x1.c628e1c8f0b3bp-45, 0x1.54c20c17732b2p-100,  // -5.04218550472791168711e-14
      0x1.6af784779d955p-42, -0x1.885b4d83b32c5p-98,  // +3.22379336594557470981e-13
      -0x1.173835fb70366p-39, -0x1.83b469af51b73p-94,  // -1.98397439776494371520e-12
      0x1.9cee2b21d3154p-37, 0x1.f9ac9d6f8590ap-92,  // +1.17361862988909016308e-11
      -0x1.2510397eb07dep-34, -0x1.ec149bd9dc75dp-88,  // -6.66348972350202774223e-11
      0x1.8ea34b43fdf6cp-32, -0x1.a5854259d56e6p-86,  // +3.62559028155211703701e-10
      -0x1.0361b28ea67e6p-29, 0x1.7a64be9e847dcp-83,  // -1.88724975172282928790e-09
      0x1.4258e02395010p-27, -0x1.f318d251e649bp-81,  // +9.38153738649577178388e-09
      -0x1.7dd3e24b8c3e8p-25, -0x1.515aa8d7a5a5ep-82,  // -4.44505912879632808065e-08
      0x1.ae344b347d108p-23, -0x1.f1b79de6229e2p-78,  // +2.00329475355213526229e-07
      -0x1.cc0798363992ap-21, 0x1.7f9b623d2bdc8p-81,  // -8.56872026469545474066e-07
      0x1.d1c4ed511afc5p-19, 0x1.ecb968c6c7ff2p-76,  // +3.47025130813767847674e-06
      -0x1.bd5f9b8debbcfp-17, 0x1.0e73c16d76b75p-75,  // -1.32731636560394358279e-05
      0x1.911b542c70d0bp-15, 0x1.0720ab7e3b891p-74,  // +4.78156510755005422638e-05
      -0x1.533cad3d694fep-13, -0x1.4688d6861de12p-69,  // -1.61760815825896745588e-04
      0x1.0c95db6c6df7dp-11, 0x1.05b0684ccad09p-66,  // +5.12285956168575772895e-04
      -0x1.8cc620b3cd4a4p-10, 0x1.647719c02119ap-68,  // -1.51357245063125314899e-03
      0x1.1065349d3a1b4p-8, -0x1.713a97fc42901p-65,  // +4.15642294431288815669e-03
      -0x1.5a29f7913a26ap-7, -0x1.bc775c52220fap-61,  // -1.05640848946261981558e-02
      0x1.951e3e7bb2349p-6, 0x1.54b1c52aeb092p-61,  // +2.47264490306265168283e-02
      -0x1.b1bbc537c9ebcp-5, -0x1.8a0439832d266p-59,  // -5.29459812080949914269e-02
      0x1.a46dad536f53cp-4, 0x1.3e4a8e6857b1ep-61,  // +1.02643658689847095384e-01
      -0x1.694d10469192ep-3, 0x1.08990f9f942d7p-57,  // -1.76416518357834055153e-01
      0x1.02a63724a7ffap-2, 0x1.b40bc08a11c9cp-58,  // +2.52587186443633654823e-01
  };
  // clang-format on
  return t;
}
// 25 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* i1b() {
  // clang-format off
  static constexpr double t[50] = {
      0x1.1556db352e8e6p-57, -0x1.0ab719a408594p-111,  // +7.51729631084210481353e-18
      0x1.45b8aea87b950p-58, 0x1.57bf5310e860ap-112,  // +4.41434832307170791151e-18
      -0x1.acea3b2532277p-55, 0x1.fc52e3917cd6bp-109,  // -4.65030536848935832153e-17
      -0x1.2806c9c773320p-55, -0x1.536c68c96865fp-109,  // -3.20952592199342395980e-17
      0x1.55915fceb588ap-52, 0x1.e4b220267372bp-108,  // +2.96262899764595013876e-16
      0x1.7d68e5f04a2d1p-52, -0x1.ecbc7bf5b10bap-106,  // +3.30820231092092828324e-16
      -0x1.0efcd8bc4d22ap-49, 0x1.3df118dece90bp-104,  // -1.88035477551078244854e-15
      -0x1.12db5138afbc7p-48, -0x1.584afb6abd66bp-102,  // -3.81440307243700780478e-15
      0x1.776e1762d31e8p-47, 0x1.c2fd1ddbb42bap-101,  // +1.04202769841288027642e-14
      0x1.80d3c26b3281ep-45, 0x1.f26873e4c4d19p-99,  // +4.27244001671195135429e-14
      -0x1.7a9482e6d22a0p-46, -0x1.5c0d0a5014e89p-103,  // -2.10154184277266431302e-14
      -0x1.cbc458e73e255p-42, 0x1.5a1df7610ca0bp-97,  // -4.08355111109219731823e-13
      -0x1.953e1076ab493p-41, -0x1.3a4a6534598c7p-96,  // -7.19855177624590851209e-13
      0x1.1e7d3f6439fa3p-39, -0x1.ecf2d355a0cf5p-95,  // +2.03562854414708950722e-12
      0x1.f101f653c457bp-37, -0x1.66e7fd53b548dp-91,  // +1.41258074366137813316e-11
      0x1.1e1a1f1587865p-35, -0x1.3d0c6bc5cc4cep-89,  // +3.25260358301548823856e-11
      -0x1.4dcf9d4504c0cp-36, 0x1.09a92362d4d09p-92,  // -1.89749581235054123450e-11
      -0x1.334ca5423dd80p-31, -0x1.785414f539d62p-89,  // -5.58974346219658380687e-10
      -0x1.0790b9ad53528p-28, -0x1.c922d5141b06dp-86,  // -3.83538038596423702205e-09
      -0x1.c415394bb46c1p-26, 0x1.053e58d25102fp-80,  // -2.63146884688951950684e-08
      -0x1.0dbfd2e9e5443p-22, -0x1.5405462728115p-77,  // -2.51223623787020892529e-07
      -0x1.048df49ca0373p-18, 0x1.e41182b8e1ff5p-73,  // -3.88256480887769039346e-06
      -0x1.cfd7f804aa9a6p-14, -0x1.af272b91d70c2p-69,  // -1.10588938762623716291e-04
      -0x1.3fda053fcdb4cp-7, 0x1.5cc40029a3783p-62,  // -9.76109749136146840777e-03
      0x1.8ea18b55b1514p-1, 0x1.1cbe705ada526p-56,  // +7.78576235018280120474e-01
  };
  // clang-format on
  return t;
}
// 10 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* k0a() {
  // clang-format off
  static constexpr double t[20] = {
      0x1.3cee1e6a7fd77p-53, 0x1.9cf54fe9e9bc3p-107,  // +1.37446543561352307156e-16
      0x1.7fb0ac384c2aap-45, -0x1.55de69d6c4dcdp-100,  // +4.25981614279661018399e-14
      0x1.6c25c47512144p-37, 0x1.3f1916cece398p-92,  // +1.03496952576338420167e-11
      0x1.05c1367e58a13p-29, -0x1.d958911b5c44cp-83,  // +1.90451637722020886025e-09
      0x1.102bce7f95efcp-22, 0x1.0aca9a6e7a358p-77,  // +2.53479107902614945675e-07
      0x1.7f900fe8cfca0p-16, -0x1.93607812a007fp-70,  // +2.28621210311945178607e-05
      0x1.4b82e75633d73p-10, -0x1.eb86557d99067p-65,  // +1.26461541144692592338e-03
      0x1.26bf6554a9085p-5, 0x1.3ae507b9eb1acp-60,  // +3.59799365153615016266e-02
      0x1.608d881213db9p-2, -0x1.33e3b2b6b46a7p-57,  // +3.44289899924628486886e-01
      -0x1.12166e9d2f61fp-1, 0x1.2bfba1b554f7bp-59,  // -5.35327393233902768720e-01
  };
  // clang-format on
  return t;
}
// 25 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* k0b() {
  // clang-format off
  static constexpr double t[50] = {
      0x1.871a5cf8c9ee1p-58, -0x1.380b6cab3228ep-112,  // +5.30043377268626276149e-18
      -0x1.2fecc93812603p-56, -0x1.61a8072fe9765p-110,  // -1.64758043015242134646e-17
      0x1.e092e41a8cdf4p-55, 0x1.2e26e0046278ap-109,  // +5.21039150503902756861e-17
      -0x1.82f9474d77641p-53, -0x1.517a14a77a580p-107,  // -1.67823109680541210385e-16
      0x1.3dbf96b94785bp-51, 0x1.4430a6eb27294p-107,  // +5.51205597852431940784e-16
      -0x1.0a690ecfadd36p-49, -0x1.df37fd15a3c91p-103,  // -1.84859337734377901440e-15
      0x1.c8d9c4a7ddc98p-48, 0x1.cb5d158f03b25p-105,  // +6.34007647740507060557e-15
      -0x1.9145ebb056fc2p-46, -0x1.351c5804bdc45p-100,  // -2.22751332699166985548e-14
      0x1.69c4ecd94cfe2p-44, -0x1.de75476f27fcbp-104,  // +8.03289077536357521100e-14
      -0x1.4f87721a470d1p-42, -0x1.236906042978dp-96,  // -2.98009692317273043925e-13
      0x1.40fa32fccfc25p-40, -0x1.a852c383a5fcdp-94,  // +1.14034058820847496303e-12
      -0x1.3dafc3f005143p-38, -0x1.3a94bfdd7beedp-94,  // -4.51459788337394416547e-12
      0x1.46808475fbcc7p-36, 0x1.b3c31543c9b99p-90,  // +1.85594911495471785253e-11
      -0x1.5df95d2e7c935p-34, -0x1.9594ddc086297p-88,  // -7.95748924447710747776e-11
      0x1.8956c819ff608p-32, 0x1.df5cff61880bep-86,  // +3.57739728140030116597e-10
      -0x1.d29d5f22bf5dbp-30, 0x1.de99761bbdd9dp-84,  // -1.69753450938905987466e-09
      0x1.269a0033f428ep-27, 0x1.f7f8327845debp-81,  // +8.57403401741422608519e-09
      -0x1.905541b54f2afp-25, 0x1.563853d737f10p-85,  // -4.66048989768794782956e-08
      0x1.2915981e3e46fp-22, 0x1.d5091f9a3ca72p-76,  // +2.76681363944501510342e-07
      -0x1.ebb547f18d3a9p-20, 0x1.a9bd234363c21p-75,  // -1.83175552271911948767e-06
      0x1.d413fcc7470a9p-17, -0x1.fb434b19fc21cp-71,  // +1.39498137188764993662e-05
      -0x1.0d797e7889f42p-13, -0x1.55a8015b879aap-67,  // -1.28495495816278026384e-04
      0x1.9b891fca79342p-10, 0x1.050792be59061p-64,  // +1.56988388573005337491e-03
      -0x1.019f72d4ff71ep-5, 0x1.a858181a033bcp-60,  // -3.14481013119645005427e-02
      0x1.385bd9f4e6907p+1, -0x1.81e3d7bbb0e9cp-56,  // +2.44030308206595545468e+00
  };
  // clang-format on
  return t;
}
// 11 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* k1a() {
  // clang-format off
  static constexpr double t[22] = {
      -0x1.032283d3cda56p-57, 0x1.74ce563b3b8c0p-111,  // -7.02386347938628759343e-18
      -0x1.5dd517a0399e0p-49, 0x1.2458995ecb9e3p-105,  // -2.42744985051936593393e-15
      -0x1.77502ddd0e045p-41, 0x1.e1dccd8042df3p-95,  // -6.66690169419932900609e-13
      -0x1.3663bb84626cap-33, 0x1.a1576a5d2b5e2p-88,  // -1.41148839263352776110e-10
      -0x1.7c41d145c31d0p-26, 0x1.9a27bf22c7734p-80,  // -2.21338763073472585583e-08
      -0x1.469b32c832e3ap-19, 0x1.3903c5885c2e6p-73,  // -2.43340614156596823496e-06
      -0x1.6ade2e5a3bd02p-13, -0x1.081c70a045bd0p-67,  // -1.73028895751305206302e-04
      -0x1.c92939d7d4192p-8, -0x1.e07571e60a1c4p-63,  // -6.97572385963986435018e-03
      -0x1.f637243c1db74p-4, 0x1.898a55f34e343p-59,  // -1.22611180822657148235e-01
      -0x1.69a1b757b0dd4p-2, -0x1.a98772bcb4e64p-61,  // -3.53155960776544875667e-01
      0x1.867a1361008cap+0, 0x1.ea31e34f232c1p-59,  // +1.52530022733894777053e+00
  };
  // clang-format on
  return t;
}
// 25 coefficients, each as hi + lo (the decimal value of torch's Math.h to 2^-106)
REPMODE_HD const double* k1b() {
  // clang-format off
  static constexpr double t[50] = {
      -0x1.a8c5d42c43a08p-58, 0x1.168c92903f8efp-112,  // -5.75674448366501715755e-18
      0x1.4af1a838f5ed3p-56, 0x1.95b42ef57e787p-111,  // +1.79405087314755922667e-17
      -0x1.0661517771d52p-54, -0x1.311bada04cf97p-109,  // -5.68946255844285935196e-17
      0x1.a7d5e44ee2c0bp-53, -0x1.f300c0d1a571ep-107,  // +1.83809354436663880070e-16
      -0x1.5d2a3d8758ef2p-51, -0x1.65d0caa6b104cp-105,  // -6.05704724837331885336e-16
      0x1.25cedefee81bdp-49, 0x1.6c5f03614f03dp-103,  // +2.03870316562433424052e-15
      -0x1.f9d52364185abp-48, 0x1.e33118c9a56c9p-102,  // -7.01983709041831346144e-15
      0x1.be3e959151f65p-46, 0x1.d6ee75c4a2625p-102,  // +2.47715442448130437068e-14
      -0x1.94465d4cbcfb3p-44, -0x1.55d0f7ca8977ap-98,  // -8.97670518232499435011e-14
      0x1.78ffa040ab0b1p-42, -0x1.0896cd367cee7p-97,  // +3.34841966607842919884e-13
      -0x1.6adec61fc88f8p-40, -0x1.5daf8532905bfp-96,  // -1.28917396095102890680e-12
      0x1.69ab846c04f10p-38, 0x1.909c8ade3f42ap-93,  // +5.13963967348173025100e-12
      -0x1.76b539401ce7bp-36, -0x1.aa9b7476c07f5p-90,  // -2.12996783842756842877e-11
      0x1.956d008a42f6ap-34, -0x1.43e22d1b9f3bep-88,  // +9.21831518760500529508e-11
      -0x1.ccbc00365cf27p-32, -0x1.42c2564956a5fp-89,  // -4.19035475934189648750e-10
      0x1.14f242a73d24ep-29, -0x1.584fb1d4b3834p-83,  // +2.01504975519703286596e-09
      -0x1.637a49fe1e088p-27, -0x1.224ef89573b4ep-82,  // -1.03457624656780970260e-08
      0x1.ed27c668fc461p-25, -0x1.024ffb39e7cb7p-84,  // +5.74108412545004946722e-08
      -0x1.780528fada5c6p-22, -0x1.aff7f25feb410p-80,  // -3.50196060308781257119e-07
      0x1.42fe31752d1b6p-19, 0x1.462e2c95f4af1p-73,  // +2.40648494783721712015e-06
      -0x1.44d711dcdb2e5p-16, 0x1.21b3c4ba32536p-71,  // -1.93619797416608296024e-05
      0x1.9965888f6908ep-13, 0x1.aa10e10c7efa3p-67,  // +1.95215518471351631108e-04
      -0x1.76946be66b48ap-9, -0x1.9ebf6d189fa76p-63,  // -2.85781685962277938680e-03
      0x1.a9abef9e023fbp-4, 0x1.ac90fdc333a74p-59,  // +1.03923736576817238437e-01
      0x1.5c3d7aa062c8ap+1, 0x1.3960101ba6eefp-56,  // +2.72062619048444266945e+00
  };
  // clang-format on
  return t;
}

REPMODE_HD DD dd_neg(DD a) { return DD{-a.hi, -a.lo}; }

// Cephes' chbevl in double-double: the Clenshaw recurrence b0 = (y b1 - b2) + c[i], i = 1 .. n-1,
// from b0 = c[0], b1 = b2 = 0, each step with dd_mul / dd_add (relative error ~2^-104 each; the
// recurrence is stable on [-2, 2]); the value is (b0 - b2) / 2.
REPMODE_HD DD chbevl_dd(DD y, const double* c, int n) {
  DD b0 = DD{c[0], c[1]}, b1 = DD{0.0, 0.0}, b2 = DD{0.0, 0.0};
  for (int i = 1; i < n; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = dd_add(dd_add(dd_mul(y, b1), dd_neg(b2)), DD{c[2 * i], c[2 * i + 1]});
  }
  DD d = dd_add(b0, dd_neg(b2));
  return DD{0.5 * d.hi, 0.5 * d.lo};
}

// The Chebyshev argument k/a - 2 (k = 32 or 8, 0 < a < inf) as a double-double: q = RN(k/a), its
// exact remainder k - q a (one fma), then q + rem/a - 2.
REPMODE_HD DD inv_arg(double k, double a) {
  double q = k / a;
  double rem = repmode_fma(-q, a, k);
  return dd_add(DD{q, rem / a}, DD{-2.0, 0.0});
}
// a/2 - 2 (a >= 0): exact as a double-double (two_sum; a/2 exact unless a is subnormal, where the
// lost 2^-1075 is irrelevant beside 2).
REPMODE_HD DD half_arg(double a) { return two_sum(0.5 * a, -2.0); }
// x^2 - 2 (0 < x <= 2): two_prod exact (its low part flushes to 0 for x < 2^-511, far below 2^-104 of 2).
REPMODE_HD DD square_arg(double x) { return dd_add(two_prod(x, x), DD{-2.0, 0.0}); }

// e^s v for |s| <= 750 and a double-double v: e^s = (hi + lo) 2^m (exp_accurate, < 2^-98
// relative), the double-double product rounded once to double (dd_mul, < 2^-100), then scaled by
// 2^m exactly in two steps (the first keeps the value normal; the second rounds once if the
// result is subnormal, or overflows to inf past the largest double). An infinite v gives v.
REPMODE_HD double exp_times(double s, DD v) {
  if (v.hi - v.hi != 0.0) return v.hi;
  int m;
  DD e = exp_accurate(s, m);
  DD p = dd_mul(e, v);
  double r = p.hi + p.lo;
  int m1 = m / 2;
  return (r * pow2(m1)) * pow2(m - m1);
}
// e^s for |s| <= 2 as a double-double (no scaling issue: 2^m exact on both parts).
REPMODE_HD DD exp_dd_small(double s) {
  int m;
  DD e = exp_accurate(s, m);
  double f = pow2(m);
  return DD{e.hi * f, e.lo * f};
}

REPMODE_HD bool is_nan(double x) { return x != x; }

// log(x/2) for 0 < x < inf as a double-double: log_fast of x = M 2^e with the exponent lowered
// by one (exact for every x, subnormals included; < 2^-57.4 relative).
REPMODE_HD DD log_half(double x) {
  int e;
  double M = split_double(bits_of(x), e);
  return log_fast(M, e - 1);
}

// The Chebyshev argument a/2 - 2 for a double-double a >= 0: exact for a double a (a/2 exact
// unless a is subnormal, where the lost 2^-1075 is irrelevant beside 2), < 2^-104 otherwise.
REPMODE_HD DD half_arg_dd(DD a) { return dd_add(DD{0.5 * a.hi, 0.5 * a.lo}, DD{-2.0, 0.0}); }
// 32/a - 2 for a double-double a > 8 (dd_div: < 2^-100).
REPMODE_HD DD inv_arg_dd(DD a) { return dd_add(dd_div(DD{32.0, 0.0}, a), DD{-2.0, 0.0}); }

// e^-a I0(a) and e^-a I1(a) for a = |x|, 0 <= a < inf, as double-doubles: a <= 8: C(a/2 - 2; A0),
// a C(a/2 - 2; A1); a > 8: C(32/a - 2; B) / sqrt(a) (dd_sqrt, dd_div: < 2^-100).
REPMODE_HD DD i0e_dd(DD a) {
  if (a.hi <= 8.0) return chbevl_dd(half_arg_dd(a), i0a(), 30);
  return dd_div(chbevl_dd(inv_arg_dd(a), i0b(), 25), atan_detail::dd_sqrt(a));
}
REPMODE_HD DD i0e_dd(double a) {
  if (a <= 8.0) return chbevl_dd(half_arg(a), i0a(), 30);
  return dd_div(chbevl_dd(inv_arg(32.0, a), i0b(), 25), atan_detail::dd_sqrt(DD{a, 0.0}));
}
REPMODE_HD DD i1e_dd(double a) {
  if (a <= 8.0) return dd_mul_d(chbevl_dd(half_arg(a), i1a(), 29), a);
  return dd_div(chbevl_dd(inv_arg(32.0, a), i1b(), 25), atan_detail::dd_sqrt(DD{a, 0.0}));
}

// K0 and K1 on (0, 2] as double-doubles: C(x^2 - 2; K0A) - log(x/2) I0(x) and
// log(x/2) I1(x) + C(x^2 - 2; K1A) / x, with I = e^x (double-double) times the scaled form.
// K1 of x < 2^-1000 is C/x alone (the log term is below 2^-900 of it; C/x may overflow).
REPMODE_HD DD k0_small(double x) {
  DD i0 = dd_mul(exp_dd_small(x), i0e_dd(x));
  return dd_add(chbevl_dd(square_arg(x), k0a(), 10), dd_neg(dd_mul(log_half(x), i0)));
}
REPMODE_HD DD k1_small(double x) {
  DD c = chbevl_dd(square_arg(x), k1a(), 11);
  if (x < 0x1p-1000) return DD{c.hi / x, 0.0};
  DD i1 = dd_mul(exp_dd_small(x), i1e_dd(x));
  return dd_add(dd_mul(log_half(x), i1), dd_div(c, DD{x, 0.0}));
}
// e^x K0 and e^x K1 on (2, inf): C(8/x - 2; B) / sqrt(x).
REPMODE_HD DD k0e_large(double x) {
  return dd_div(chbevl_dd(inv_arg(8.0, x), k0b(), 25), atan_detail::dd_sqrt(DD{x, 0.0}));
}
REPMODE_HD DD k1e_large(double x) {
  return dd_div(chbevl_dd(inv_arg(8.0, x), k1b(), 25), atan_detail::dd_sqrt(DD{x, 0.0}));
}

// ---- Bessel functions of the first kind, J0 and J1 (Cephes' j0.c / j1.c) ----
// The coefficient tables of torch's bessel_j0_forward / bessel_j1_forward (Cephes'), as hi + lo.
// torch's bessel_j0_forward PP: 7 coefficients as hi + lo
REPMODE_HD const double* j0_pp() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.a1d30983b6b27p-11, -0x1.3a32725131e3bp-68,  // +7.96936729297347051624e-04
      0x1.534b0b35dd1cfp-4, 0x1.23e1fc2c843a7p-64,  // +8.28352392107440799803e-02
      0x1.3d5214e680b98p+0, 0x1.b83ef996f06bcp-54,  // +1.23953371646414299388e+00
      0x1.5c9fbe97a0956p+2, 0x1.7e3a618fb4a86p-52,  // +5.44725003058768775090e+00
      0x1.17e8c69409888p+3, 0x1.6cad44bd83932p-51,  // +8.74716500199817011941e+00
      0x1.53684a59425a1p+2, -0x1.cf58106c76ef0p-53,  // +5.30324038235394892183e+00
      0x1.0000000000000p+0, -0x1.41904ae334a7fp-59,  // +9.99999999999999997821e-01
  };
  // clang-format on
  return t;
}
// torch's bessel_j0_forward PQ: 7 coefficients as hi + lo
REPMODE_HD const double* j0_pq() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.e4a80ce039737p-11, -0x1.3deba7fdf9a56p-65,  // +9.24408810558863637013e-04
      0x1.5ebc5ab5454e3p-4, -0x1.f41d31d5caacbp-58,  // +8.56288474354474431428e-02
      0x1.40e72c9b3069fp+0, 0x1.75efb3ddf98d9p-55,  // +1.25352743901058953537e+00
      0x1.5e247e68162bbp+2, 0x1.1efe7caceade8p-53,  // +5.47097740330417105182e+00
      0x1.18618ea1b21a1p+3, 0x1.f9210a0e6777dp-51,  // +8.76190883237069594232e+00
      0x1.53965ed423a19p+2, -0x1.c012286e4f907p-52,  // +5.30605288235394617618e+00
      0x1.0000000000000p+0, 0x1.41b6124b48c52p-59,  // +1.00000000000000000218e+00
  };
  // clang-format on
  return t;
}
// torch's bessel_j0_forward QP: 8 coefficients as hi + lo
REPMODE_HD const double* j0_qp() {
  // clang-format off
  static constexpr double t[16] = {
      -0x1.7474238a5384ap-7, 0x1.7d54a09e0b9c9p-61,  // -1.13663838898469149931e-02
      -0x1.4853b3a321174p+0, -0x1.c2b531de719b4p-55,  // -1.28252718670509318512e+00
      -0x1.38dcff50e2c0cp+4, -0x1.9bd2fe288a601p-52,  // -1.95539544257735972385e+01
      -0x1.74d2f5a6de8c4p+6, 0x1.b733ea8bff70dp-49,  // -9.32060152123768231369e+01
      -0x1.635cc20cae8eap+7, 0x1.60ce09708fa6ap-48,  // -1.77681167980488050595e+02
      -0x1.2627aec17392dp+7, 0x1.cb92faefd4713p-47,  // -1.47077505154951170175e+02
      -0x1.9b48c55b218cdp+5, 0x1.525b31cf24204p-52,  // -5.14105326766599330220e+01
      -0x1.83358d1b9a1ddp+2, 0x1.e4c477cf1bb63p-52,  // -6.05014350600728481186e+00
  };
  // clang-format on
  return t;
}
// torch's bessel_j0_forward QQ: 7 coefficients as hi + lo
REPMODE_HD const double* j0_qq() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.01457413c25acp+6, 0x1.e6e54d6810f95p-48,  // +6.43178256118178023184e+01
      0x1.ac370b1759c7fp+9, 0x1.eff6d3ce41433p-47,  // +8.56430025976980587198e+02
      0x1.e54cdbd748cb5p+11, -0x1.69e828dfb2340p-43,  // +3.88240183605401609683e+03
      0x1.c4877bdefd63ep+12, -0x1.39628f9b3d5ecp-42,  // +7.24046774195652478189e+03
      0x1.72aba1d733b11p+12, 0x1.d5bde99008482p-42,  // +5.93072701187316984827e+03
      0x1.01c2fc7319e82p+11, 0x1.f056b4b21b92ep-43,  // +2.06209331660327847417e+03
      0x1.e402f06280a54p+7, -0x1.4492cc0ca2946p-47,  // +2.42005740240291393179e+02
  };
  // clang-format on
  return t;
}
// torch's bessel_j0_forward RP: 4 coefficients as hi + lo
REPMODE_HD const double* j0_rp() {
  // clang-format off
  static constexpr double t[8] = {
      -0x1.1dc53ad1c8325p+32, -0x1.0501f742ee6f6p-25,  // -4.79443220978201773821e+09
      0x1.c7751c772990dp+40, 0x1.aa262ebdd8933p-14,  // +1.95617491946556577543e+12
      -0x1.c5614e0d900f7p+47, 0x1.4db59578a2a91p-9,  // -2.49248344360967716204e+14
      0x1.13ef869ff5fb4p+53, -0x1.855da272862f6p-1,  // +9.70862251047306323952e+15
  };
  // clang-format on
  return t;
}
// torch's bessel_j0_forward RQ: 8 coefficients as hi + lo
REPMODE_HD const double* j0_rq() {
  // clang-format off
  static constexpr double t[16] = {
      0x1.f3902a696b78cp+8, -0x1.5830e40781813p-47,  // +4.99563147152651017219e+02
      0x1.536cb36a21a67p+17, -0x1.1fe70c3b58cc4p-37,  // +1.73785401676374683123e+05
      0x1.719342eac0634p+25, -0x1.11b54076d38d7p-29,  // +4.84409658339962045305e+07
      0x1.4d5b009444914p+33, 0x1.b1c78f8078fccp-21,  // +1.11855537045356834862e+10
      0x1.ebeb372182e46p+40, 0x1.68d1fb8ad0531p-14,  // +2.11277520115489217587e+12
      0x1.1a6a28c9748e9p+48, 0x1.5d35653c9abb0p-6,  // +3.10518229857422583814e+14
      0x1.c41417e7b2e9cp+54, -0x1.ab5dcc63f1412p+0,  // +3.18121955943204943306e+16
      0x1.7be34c7b662ccp+60, -0x1.fc5c28f5c28f6p+6,  // +1.71086294081043136091e+18
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward PP: 7 coefficients as hi + lo
REPMODE_HD const double* j1_pp() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.8f92c4c6c651bp-11, -0x1.cc361decc4b41p-66,  // +7.62125616208173112003e-04
      0x1.2b948a3fec4b6p-4, 0x1.abb2f5de879c7p-60,  // +7.31397056940917570436e-02
      0x1.208fec21596d6p+0, -0x1.92e261a3660e6p-54,  // +1.12719608129684925192e+00
      0x1.472c4f8b13a6ap+2, 0x1.4cea1c319d460p-54,  // +5.11207951146807644818e+00
      0x1.0d91c8b5d2f16p+3, 0x1.a9237dce170b4p-53,  // +8.42404590141772420927e+00
      0x1.4dbaa142f81a2p+2, -0x1.12bb7638951acp-52,  // +5.21451598682361504063e+00
      0x1.0000000000000p+0, 0x1.76d67ca791d9fp-59,  // +1.00000000000000000254e+00
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward PQ: 7 coefficients as hi + lo
REPMODE_HD const double* j1_pq() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.2b89b13443d69p-11, 0x1.c749d3f9f6572p-65,  // +5.71323128072548699714e-04
      0x1.19fdd5948aa83p-4, -0x1.24046a83e4c48p-58,  // +6.88455908754495404082e-02
      0x1.1aea9b850eed6p+0, -0x1.52e4caf5a4352p-54,  // +1.10514232634061696926e+00
      0x1.44ba2f7d251a1p+2, -0x1.5b1aeadacd971p-52,  // +5.07386386128601488557e+00
      0x1.0ccb9dda2fd65p+3, 0x1.68e30fdfe1487p-55,  // +8.39985554327604159757e+00
      0x1.4d6dd4762b4d9p+2, -0x1.f8c2c7b003f9cp-52,  // +5.20982848682361821619e+00
      0x1.0000000000000p+0, -0x1.76b0b53f7dbccp-59,  // +9.99999999999999997461e-01
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward QP: 8 coefficients as hi + lo
REPMODE_HD const double* j1_qp() {
  // clang-format off
  static constexpr double t[16] = {
      0x1.a27fa6b70ba40p-5, 0x1.c867f1c0bbf42p-59,  // +5.10862594750176621635e-02
      0x1.3edb5c66d8fd6p+2, 0x1.fd9f0601f4ab9p-52,  // +4.98213872951233449420e+00
      0x1.2f4b99acf1c67p+6, -0x1.dfbd60d20ad7ap-49,  // +7.58238284132545283818e+01
      0x1.6ec7947aa180dp+8, -0x1.99258aa4d3927p-46,  // +3.66779609360150777800e+02
      0x1.636d9b66f6e50p+9, -0x1.e928d0b7394dfp-46,  // +7.10856304998926107277e+02
      0x1.2abeab9e802d0p+9, 0x1.2bd058e0df21dp-46,  // +5.97489612400613639965e+02
      0x1.a760a4c54bb0bp+7, 0x1.b2238d222ceb2p-49,  // +2.11688757100572135698e+02
      0x1.934ff4d159eb5p+4, 0x1.e48be1a5c6a23p-55,  // +2.52070205858023719784e+01
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward QQ: 7 coefficients as hi + lo
REPMODE_HD const double* j1_qq() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.28f3060895077p+6, -0x1.f7ffc27390d8fp-51,  // +7.42373277035675149943e+01
      0x1.081cba20e5f6fp+10, -0x1.988f72e30cb0cp-44,  // +1.05644886038262816351e+03
      0x1.37a691bfdfe81p+12, -0x1.ab8ec5170fe70p-45,  // +4.98641058337653607651e+03
      0x1.2ad28d280d118p+13, -0x1.08377480f2574p-41,  // +9.56231892404756170795e+03
      0x1.f3d0aa6973d14p+12, 0x1.0fa2330f05873p-42,  // +7.99704160447350683650e+03
      0x1.61462b4bd1781p+11, 0x1.b6e9058c6ffcap-43,  // +2.82619278517639096600e+03
      0x1.5017f6ae75997p+8, -0x1.2ea23f7166b33p-47,  // +3.36093607810698293419e+02
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward RP: 4 coefficients as hi + lo
REPMODE_HD const double* j1_rp() {
  // clang-format off
  static constexpr double t[8] = {
      -0x1.ad23c4cda4fc5p+29, -0x1.b307b373062efp-26,  // -8.99971225705559398224e+08
      0x1.a52ba0d438c6bp+38, 0x1.ddfcb1273b139p-19,  // +4.52228297998194034323e+11
      -0x1.08a92e6ccf175p+46, 0x1.1276fb09203a3p-11,  // -7.27494245221818276015e+13
      0x1.a2b42a697c482p+51, -0x1.564d7f0ed3d86p-3,  // +3.68295732863852883286e+15
  };
  // clang-format on
  return t;
}
// torch's bessel_j1_forward RQ: 8 coefficients as hi + lo
REPMODE_HD const double* j1_rq() {
  // clang-format off
  static constexpr double t[16] = {
      0x1.366b11b7086e7p+9, 0x1.ae0648a9ca1e9p-45,  // +6.20836478118054335476e+02
      0x1.f5eda0dd701b2p+17, -0x1.d9dedd34ec448p-38,  // +2.56987256757748830383e+05
      0x1.3e954dc92a1b1p+26, -0x1.dbc21d57ac15dp-29,  // +8.35146791431949253037e+07
      0x1.4a13f7befeac1p+34, -0x1.fc6fa7adae798p-20,  // +2.21511595479792499675e+10
      0x1.146fb8076ffa8p+42, 0x1.6ab931647c008p-14,  // +4.74914122079991414898e+12
      0x1.64b0a3eccf45fp+49, -0x1.496aad1d041ccp-6,  // +7.84369607876235854894e+14
      0x1.3e0bff4653f81p+56, -0x1.189a027525461p+1,  // +8.95222336184627338078e+16
      0x1.2779576702939p+62, -0x1.5066666666666p+5,  // +5.32278620332680085395e+18
  };
  // clang-format on
  return t;
}

// Squares of the first two zeros of J0 and of J1, and sqrt(2/pi), as double-doubles (mpmath, 300 bits).
constexpr double kJ0Z1Hi = 0x1.721fb80462bbbp+2, kJ0Z1Lo = 0x1.db60c816c15d3p-52;
constexpr double kJ0Z2Hi = 0x1.e78a4a621dd6fp+4, kJ0Z2Lo = -0x1.10d7c5048826bp-52;
constexpr double kJ1Z1Hi = 0x1.d5d2b4189822cp+3, kJ1Z1Lo = -0x1.c6a0d245172bap-54;
constexpr double kJ1Z2Hi = 0x1.89bf66072a432p+5, kJ1Z2Lo = 0x1.25355661cb79cp-51;
constexpr double kSqrt2OverPiHi = 0x1.9884533d43651p-1, kSqrt2OverPiLo = -0x1.cbc0d30ebfd15p-55;

// Cephes' polevl (n coefficients, the first the leading one) and p1evl (an implicit leading 1,
// then n coefficients), Horner's rule in double-double.
REPMODE_HD DD polevl_dd(DD z, const double* c, int n) {
  DD r = DD{c[0], c[1]};
  for (int i = 1; i < n; ++i) r = dd_add(dd_mul(r, z), DD{c[2 * i], c[2 * i + 1]});
  return r;
}
REPMODE_HD DD p1evl_dd(DD z, const double* c, int n) {
  DD r = DD{1.0, 0.0};
  for (int i = 0; i < n; ++i) r = dd_add(dd_mul(r, z), DD{c[2 * i], c[2 * i + 1]});
  return r;
}

// torch's bessel_y0_forward YP: 8 coefficients as hi + lo
REPMODE_HD const double* y0_yp() {
  // clang-format off
  static constexpr double t[16] = {
      0x1.e7437e896898fp+13, -0x1.87c585adbbe6bp-42,  // +1.55924367855235737965e+04
      -0x1.bf81f32e48896p+23, -0x1.f56e16ddc2236p-34,  // -1.46639295903971606143e+07
      0x1.43f78f0284cddp+32, -0x1.de3cf338b9e05p-22,  // +5.43526477051876500413e+09
      -0x1.c957be1d6bd2bp+39, 0x1.1196f8a1df2fdp-15,  // -9.82136065717911466409e+11
      0x1.3ea723cc3ac2dp+46, -0x1.9f82e7a66ce6bp-9,  // +8.75906394395366999549e+13
      -0x1.8a121d1d8cc02p+51, -0x1.8e26d4801f751p-3,  // -3.46628303384729719441e+15
      0x1.3a94b660b4003p+55, -0x1.fb81d7dbf4880p+1,  // +4.42733268572569800351e+16
      -0x1.06d4b5906367bp+54, -0x1.104ea4a8c154dp+0,  // -1.84950800436986690637e+16
  };
  // clang-format on
  return t;
}
// torch's bessel_y0_forward YQ: 7 coefficients as hi + lo
REPMODE_HD const double* y0_yq() {
  // clang-format off
  static constexpr double t[14] = {
      0x1.04522576dfcb6p+10, 0x1.9e95e58788f7ap-44,  // +1.04128353664259848412e+03
      0x1.31b76a907bc0cp+19, -0x1.52619c20bd061p-35,  // +6.26107330137134956842e+05
      0x1.007635164d101p+28, -0x1.a57396efa1287p-26,  // +2.68919633393814121987e+08
      0x1.41ddb2b8664bcp+36, 0x1.ac3edd976793ap-18,  // +8.64002487103935000337e+10
      0x1.275fcc57e828ep+44, -0x1.16807505659a9p-16,  // +2.02979612750105546709e+13
      0x1.68910dfeb596dp+51, -0x1.bd0d0678c0054p-3,  // +3.17157752842975028269e+15
      0x1.bd25fbcf9b5d0p+57, 0x1.9d2f1a9fbe76dp+1,  // +2.50596256172653059228e+17
  };
  // clang-format on
  return t;
}
// torch's bessel_y1_forward YP: 6 coefficients as hi + lo
REPMODE_HD const double* y1_yp() {
  // clang-format off
  static constexpr double t[12] = {
      0x1.2d2be62f9b6c5p+30, -0x1.b83948ca3eeb0p-24,  // +1.26320474790178026440e+09
      -0x1.2d72d58836521p+39, -0x1.aa7ff96813ee2p-17,  // -6.47355876379160291031e+11
      0x1.a0954b0910fefp+46, -0x1.bd1ed9dfdac69p-8,  // +1.14509511541823727583e+14
      -0x1.ce01a37a1b083p+52, -0x1.8a137f38c5437p-4,  // -8.12770255501325109621e+15
      0x1.679ad0b7366b1p+57, -0x1.b9ba5e353f7cfp+3,  // +2.02439475713594898196e+17
      -0x1.59e415dde2b17p+59, 0x1.a966666666666p+5,  // -7.78877196265950026825e+17
  };
  // clang-format on
  return t;
}
// torch's bessel_y1_forward YQ: 8 coefficients as hi + lo
REPMODE_HD const double* y1_yq() {
  // clang-format off
  static constexpr double t[16] = {
      0x1.29269a93f7ac2p+9, -0x1.c3755396bc813p-45,  // +5.94301592346128195359e+02
      0x1.cc160be58ef7fp+17, 0x1.d42d19c931b40p-37,  // +2.35564092943068577943e+05
      0x1.184efa9c8aceep+26, -0x1.07e2e71da5da9p-28,  // +7.34811944459721705660e+07
      0x1.178c3906b7b83p+34, -0x1.030d2ad4cd9ecp-20,  // +1.87601316108706159478e+10
      0x1.c3f5efda99316p+41, -0x1.586241be914acp-14,  // +3.88231277496238566008e+12
      0x1.1a326d71d1e4ep+49, -0x1.cff865d7cb2d9p-5,  // +6.20557727146953693363e+14
      0x1.e83e3c547a488p+55, 0x1.f923a29c779a7p-1,  // +6.87141087355300489866e+16
      0x1.b90f190f6747fp+61, 0x1.383d70a3d70a4p+7,  // +3.97270608116560655612e+18
  };
  // clang-format on
  return t;
}
constexpr double kTwoOverPiHi = 0x1.45f306dc9c883p-1, kTwoOverPiLo = -0x1.6b01ec5417056p-55;

// The large-argument forms, x > 5: with w = 5/x and z = w^2, P = polevl(PP)/polevl(PQ),
// Q = polevl(QP)/p1evl(QQ) (order 0 or 1 tables; Y0/Y1 share them with J0/J1),
//   J: sqrt(2/pi) (P cos(x - phi) - w Q sin(x - phi)) / sqrt(x)
//   Y: sqrt(2/pi) (P sin(x - phi) + w Q cos(x - phi)) / sqrt(x)
// phi = pi/4 (order 0) or 3pi/4 (order 1). The phase is exact: x = (n + f) pi/32 from the exact
// reduction, x - phi = (n - 8 + f) pi/32 or (n - 24 + f) pi/32, and sin_accurate gives sin and cos of
// those (< 2^-70 relative); everything else in double-double, rounded once.
REPMODE_HD double jy_large(double x, int order, bool y) {
  const double *pp = order ? j1_pp() : j0_pp(), *pq = order ? j1_pq() : j0_pq();
  const double *qp = order ? j1_qp() : j0_qp(), *qq = order ? j1_qq() : j0_qq();
  DD w = dd_div(DD{5.0, 0.0}, DD{x, 0.0});
  DD z = dd_mul(w, w);
  DD P = dd_div(polevl_dd(z, pp, 7), polevl_dd(z, pq, 7));
  DD Q = dd_mul(w, dd_div(polevl_dd(z, qp, 8), p1evl_dd(z, qq, 7)));
  uint64_t ax = bits_of(x);
  int n;
  DD f = trig::reduce_accurate((ax & 0xfffffffffffffull) | 0x10000000000000ull, trig::window_start_f64(ax), n);
  int shift = order ? 24 : 8;
  DD sn = trig::sin_accurate(n - shift, f);       // sin(x - phi)
  DD cs = trig::sin_accurate(n - shift + 16, f);  // cos(x - phi)
  DD v = y ? dd_add(dd_mul(P, sn), dd_mul(Q, cs)) : dd_add(dd_mul(P, cs), dd_neg(dd_mul(Q, sn)));
  DD r = dd_div(dd_mul(v, DD{kSqrt2OverPiHi, kSqrt2OverPiLo}), atan_detail::dd_sqrt(DD{x, 0.0}));
  return r.hi + r.lo;
}
REPMODE_HD double j_large(double x, int order) { return jy_large(x, order, false); }

// J0 and J1 for 0 <= a <= 5 as double-doubles (z = a^2 exact; the zeros' squares as double-doubles).
REPMODE_HD DD j0_small(double a) {
  DD z = two_prod(a, a);
  DD p = dd_mul(dd_add(z, DD{-kJ0Z1Hi, -kJ0Z1Lo}), dd_add(z, DD{-kJ0Z2Hi, -kJ0Z2Lo}));
  return dd_div(dd_mul(p, polevl_dd(z, j0_rp(), 4)), p1evl_dd(z, j0_rq(), 8));
}
REPMODE_HD DD j1_small(double a) {
  DD z = two_prod(a, a);
  DD p = dd_mul(dd_add(z, DD{-kJ1Z1Hi, -kJ1Z1Lo}), dd_add(z, DD{-kJ1Z2Hi, -kJ1Z2Lo}));
  return dd_div(dd_mul(dd_mul_d(p, a), polevl_dd(z, j1_rp(), 4)), p1evl_dd(z, j1_rq(), 8));
}
// log x for 0 < x < inf as a double-double (log_fast, < 2^-57.4 relative).
REPMODE_HD DD log_dd(double x) {
  int e;
  double M = split_double(bits_of(x), e);
  return log_fast(M, e);
}

}  // namespace bessel
}  // namespace math_detail

// ---- modified Bessel functions (float64; the float32 forms below round these once) ----
// Special values as torch: NaN -> NaN; I0(+-inf) = I1(+-inf) = NaN (torch's exp(x) * ... /
// sqrt(x) is inf/inf there); I0e(+-inf) = 0, I1e(+-inf) = +-0; I1 and I1e are odd with
// I1(-0) = +0 (torch negates only x < 0).
REPMODE_HD double repmode_i0e(double x) {
  using namespace math_detail;
  double a = abs_of(x);
  if (bessel::is_nan(x)) return Canonical<double>::nan();
  if (a == double_from_bits(0x7ff0000000000000ull)) return 0.0;
  DD r = bessel::i0e_dd(a);
  return r.hi + r.lo;
}
REPMODE_HD double repmode_i1e(double x) {
  using namespace math_detail;
  double a = abs_of(x);
  if (bessel::is_nan(x)) return Canonical<double>::nan();
  double r = 0.0;
  if (a != double_from_bits(0x7ff0000000000000ull)) {
    DD v = bessel::i1e_dd(a);
    r = v.hi + v.lo;
  }
  return x < 0.0 ? -r : r;
}
// I0, I1: e^a times the scaled form, rounded once (no intermediate overflow: finite up to
// x = 713.98); +inf beyond |x| = 715.
REPMODE_HD double repmode_i0(double x) {
  using namespace math_detail;
  double a = abs_of(x);
  if (!(a < double_from_bits(0x7ff0000000000000ull))) return Canonical<double>::nan();  // NaN, +-inf
  if (a > 715.0) return double_from_bits(0x7ff0000000000000ull);
  return bessel::exp_times(a, bessel::i0e_dd(a));
}
REPMODE_HD double repmode_i1(double x) {
  using namespace math_detail;
  double a = abs_of(x);
  if (!(a < double_from_bits(0x7ff0000000000000ull))) return Canonical<double>::nan();
  double r = a > 715.0 ? double_from_bits(0x7ff0000000000000ull) : bessel::exp_times(a, bessel::i1e_dd(a));
  return x < 0.0 ? -r : r;
}
// K0, K1, e^x K0, e^x K1 (torch's special values: x == +-0 -> +inf; x < 0 -> NaN; +inf -> 0).
REPMODE_HD double repmode_k0(double x) {
  using namespace math_detail;
  if (bessel::is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0x7ff0000000000000ull);
  if (x <= 2.0) {
    DD r = bessel::k0_small(x);
    return r.hi + r.lo;
  }
  if (x > 750.0) return 0.0;  // e^-750 sqrt(pi / 1500) < 2^-1082
  return bessel::exp_times(-x, bessel::k0e_large(x));
}
REPMODE_HD double repmode_k1(double x) {
  using namespace math_detail;
  if (bessel::is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0x7ff0000000000000ull);
  if (x <= 2.0) {
    DD r = bessel::k1_small(x);
    return r.hi + r.lo;
  }
  if (x > 750.0) return 0.0;
  return bessel::exp_times(-x, bessel::k1e_large(x));
}
REPMODE_HD double repmode_k0e(double x) {
  using namespace math_detail;
  if (bessel::is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0x7ff0000000000000ull);
  if (x <= 2.0) return bessel::exp_times(x, bessel::k0_small(x));
  if (x == double_from_bits(0x7ff0000000000000ull)) return 0.0;
  DD r = bessel::k0e_large(x);
  return r.hi + r.lo;
}
REPMODE_HD double repmode_k1e(double x) {
  using namespace math_detail;
  if (bessel::is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0x7ff0000000000000ull);
  if (x <= 2.0) return bessel::exp_times(x, bessel::k1_small(x));
  if (x == double_from_bits(0x7ff0000000000000ull)) return 0.0;
  DD r = bessel::k1e_large(x);
  return r.hi + r.lo;
}

// The Kaiser window's value at k (an integer 0 <= k <= 2a, a = (N - 1)/2 > 0, N < 2^26) for
// shape beta: I0(y) / I0(|beta|), y = |beta| sqrt(1 - ((k - a)/a)^2) = |beta| sqrt(k (2a - k)) / a
// with k (2a - k) an exact integer: y in double-double (dd_sqrt, dd_mul_d, dd_div: < 2^-100), the
// quotient as e^(y - |beta|) i0e(y) / i0e(|beta|) (no overflow for any beta), e^(d.hi + d.lo) =
// e^d.hi (1 + d.lo) (d.lo^2 < 2^-80), rounded once and scaled exactly. beta NaN or +-inf: NaN.
REPMODE_HD double repmode_kaiser(double k, double beta, double a) {
  using namespace math_detail;
  double b = abs_of(beta);
  if (!(b < double_from_bits(0x7ff0000000000000ull))) return Canonical<double>::nan();
  double K = k * ((a + a) - k);
  DD y = K == 0.0 ? DD{0.0, 0.0} : dd_div(dd_mul_d(atan_detail::dd_sqrt(DD{K, 0.0}), b), DD{a, 0.0});
  DD d = dd_add(y, DD{-b, 0.0});
  DD q = dd_div(bessel::i0e_dd(y), bessel::i0e_dd(DD{b, 0.0}));
  return bessel::exp_times(d.hi, dd_mul(q, DD{1.0, d.lo}));
}

// J0 (torch's special.bessel_j0; Cephes' j0.c): even; |x| < 1e-5: 1 - x^2/4 (the next term is
// below 2^-72); |x| <= 5: (z - r1^2)(z - r2^2) polevl(z, RP)/p1evl(z, RQ), z = x^2, with the zeros'
// squares as double-doubles (so the relative error stays small next to the first two zeros);
// above: j_large. torch evaluates RQ and QQ without their leading 1 (Cephes' p1evl), which puts
// its J0 off by up to ~1e-5 relative near |x| = 5; repmode evaluates Cephes' approximation as
// designed. Special values as torch: NaN and +-inf -> NaN.
REPMODE_HD double repmode_j0(double x) {
  using namespace math_detail;
  using namespace math_detail::bessel;
  double a = abs_of(x);
  if (!(a < double_from_bits(0x7ff0000000000000ull))) return Canonical<double>::nan();
  if (a < 1e-5) return 1.0 - a * a / 4.0;
  if (a <= 5.0) {
    DD r = j0_small(a);
    return r.hi + r.lo;
  }
  return j_large(a, 0);
}
// J1 (torch's special.bessel_j1; Cephes' j1.c): odd (x < 0: -J1(-x); -0 -> -0); |x| <= 5:
// x (z - r1^2)(z - r2^2) polevl(z, RP)/p1evl(z, RQ); above: j_large. NaN, +-inf -> NaN (torch).
REPMODE_HD double repmode_j1(double x) {
  using namespace math_detail;
  using namespace math_detail::bessel;
  double a = abs_of(x);
  if (!(a < double_from_bits(0x7ff0000000000000ull))) return Canonical<double>::nan();
  double r;
  if (a <= 5.0) {
    DD v = j1_small(a);
    r = v.hi + v.lo;
  } else {
    r = j_large(a, 1);
  }
  return bits_of(x) >> 63 ? -r : r;
}

// Y0, Y1 (torch's special.bessel_y0 / y1; Cephes' y0.c / y1.c): x == +-0 -> -inf, x < 0 -> NaN, NaN
// and +inf -> NaN (torch's values); 0 < x <= 5: Y0 = polevl(z, YP)/p1evl(z, YQ) + (2/pi) log(x) J0(x),
// Y1 = x polevl(z, YP)/p1evl(z, YQ) + (2/pi) (J1(x) log(x) - 1/x) (z = x^2; Y1 of x < 2^-1000 is
// -(2/pi)/x alone, the other terms below 2^-900 of it); x > 5: jy_large. All in double-double,
// rounded once (torch drops the leading 1 of p1evl here too and rounds every step).
REPMODE_HD double repmode_y0(double x) {
  using namespace math_detail;
  using namespace math_detail::bessel;
  if (is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0xfff0000000000000ull);
  if (x == double_from_bits(0x7ff0000000000000ull)) return Canonical<double>::nan();
  if (x > 5.0) return jy_large(x, 0, true);
  DD z = two_prod(x, x);
  DD r = dd_div(polevl_dd(z, y0_yp(), 8), p1evl_dd(z, y0_yq(), 7));
  r = dd_add(r, dd_mul(dd_mul(DD{kTwoOverPiHi, kTwoOverPiLo}, log_dd(x)), j0_small(x)));
  return r.hi + r.lo;
}
REPMODE_HD double repmode_y1(double x) {
  using namespace math_detail;
  using namespace math_detail::bessel;
  if (is_nan(x) || x < 0.0) return Canonical<double>::nan();
  if (x == 0.0) return double_from_bits(0xfff0000000000000ull);
  if (x == double_from_bits(0x7ff0000000000000ull)) return Canonical<double>::nan();
  if (x > 5.0) return jy_large(x, 1, true);
  if (x < 0x1p-1000) return -kTwoOverPiHi / x;
  DD z = two_prod(x, x);
  DD r = dd_mul_d(dd_div(polevl_dd(z, y1_yp(), 6), p1evl_dd(z, y1_yq(), 8)), x);
  DD t = dd_add(dd_mul(j1_small(x), log_dd(x)), dd_neg(dd_div(DD{1.0, 0.0}, DD{x, 0.0})));
  r = dd_add(r, dd_mul(DD{kTwoOverPiHi, kTwoOverPiLo}, t));
  return r.hi + r.lo;
}

// sin(x)/x (torch's spherical_bessel_j0): +-inf -> 0; |x| < 1/2: torch's Taylor polynomial in
// z = x^2 (coefficients -1/6, 1/120, ... each one IEEE division) by Horner's rule with one fma
// per step, z * inner + c (the operations torch's kernel compiles to: the same bits as native);
// |x| >= 1/2: sin|x| from the exact reduction and sin_accurate (< 2^-70 relative) divided by |x|
// in double-double, rounded once.
REPMODE_HD double repmode_spherical_j0(double x) {
  using namespace math_detail;
  uint64_t ax = bits_of(x) & 0x7fffffffffffffffull;
  double a = double_from_bits(ax);
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if (ax == 0x7ff0000000000000ull) return 0.0;
  if (a < 0.5) {
    double z = x * x;
    double h = repmode_fma(z, 1.0 / 6227020800.0, -1.0 / 39916800.0);
    h = repmode_fma(z, h, 1.0 / 362880.0);
    h = repmode_fma(z, h, -1.0 / 5040.0);
    h = repmode_fma(z, h, 1.0 / 120.0);
    h = repmode_fma(z, h, -1.0 / 6.0);
    return repmode_fma(z, h, 1.0);
  }
  int n;
  DD f = trig::reduce_accurate((ax & 0xfffffffffffffull) | 0x10000000000000ull, trig::window_start_f64(ax), n);
  DD q = dd_div(trig::sin_accurate(n, f), DD{a, 0.0});
  return q.hi + q.lo;
}

// float32: the float64 function of the exactly widened argument, rounded once.
REPMODE_HD float repmode_i0f(float x) { return canon(float(repmode_i0(double(x)))); }
REPMODE_HD float repmode_i0ef(float x) { return canon(float(repmode_i0e(double(x)))); }
REPMODE_HD float repmode_i1f(float x) { return canon(float(repmode_i1(double(x)))); }
REPMODE_HD float repmode_i1ef(float x) { return canon(float(repmode_i1e(double(x)))); }
REPMODE_HD float repmode_k0f(float x) { return canon(float(repmode_k0(double(x)))); }
REPMODE_HD float repmode_k1f(float x) { return canon(float(repmode_k1(double(x)))); }
REPMODE_HD float repmode_k0ef(float x) { return canon(float(repmode_k0e(double(x)))); }
REPMODE_HD float repmode_k1ef(float x) { return canon(float(repmode_k1e(double(x)))); }
REPMODE_HD float repmode_j0f(float x) { return canon(float(repmode_j0(double(x)))); }
REPMODE_HD float repmode_j1f(float x) { return canon(float(repmode_j1(double(x)))); }
REPMODE_HD float repmode_y0f(float x) { return canon(float(repmode_y0(double(x)))); }
REPMODE_HD float repmode_y1f(float x) { return canon(float(repmode_y1(double(x)))); }
REPMODE_HD float repmode_spherical_j0f(float x) { return canon(float(repmode_spherical_j0(double(x)))); }

#define REPMODE_BESSEL_OVERLOAD(name, f32, f64)          \
  REPMODE_HD float name##_of(float x) { return f32(x); } \
  REPMODE_HD double name##_of(double x) { return canon(f64(x)); }
REPMODE_BESSEL_OVERLOAD(bessel_i0, repmode_i0f, repmode_i0)
REPMODE_BESSEL_OVERLOAD(bessel_i0e, repmode_i0ef, repmode_i0e)
REPMODE_BESSEL_OVERLOAD(bessel_i1, repmode_i1f, repmode_i1)
REPMODE_BESSEL_OVERLOAD(bessel_i1e, repmode_i1ef, repmode_i1e)
REPMODE_BESSEL_OVERLOAD(bessel_k0, repmode_k0f, repmode_k0)
REPMODE_BESSEL_OVERLOAD(bessel_k1, repmode_k1f, repmode_k1)
REPMODE_BESSEL_OVERLOAD(bessel_k0e, repmode_k0ef, repmode_k0e)
REPMODE_BESSEL_OVERLOAD(bessel_k1e, repmode_k1ef, repmode_k1e)
REPMODE_BESSEL_OVERLOAD(spherical_bessel_j0, repmode_spherical_j0f, repmode_spherical_j0)
REPMODE_BESSEL_OVERLOAD(bessel_j0, repmode_j0f, repmode_j0)
REPMODE_BESSEL_OVERLOAD(bessel_j1, repmode_j1f, repmode_j1)
REPMODE_BESSEL_OVERLOAD(bessel_y0, repmode_y0f, repmode_y0)
REPMODE_BESSEL_OVERLOAD(bessel_y1, repmode_y1f, repmode_y1)
#undef REPMODE_BESSEL_OVERLOAD

// ---- orthogonal polynomials: torch's definitions (ATen/native/Math.h), step for step ----
namespace math_detail {
namespace poly {

// The degree: torch's static_cast<int64_t>(n) (truncation toward zero); NaN, +-inf and
// |n| >= 2^63 (undefined in C++; x86 gives INT64_MIN, which torch then treats as n < 0) -> -1.
template <typename T>
REPMODE_HD int64_t degree(T n) {
  if (!(n < T(9223372036854775808.0) && n > T(-9223372036854775808.0))) return -1;
  return int64_t(n);
}
template <typename T>
REPMODE_HD T absval(T x) {
  return x < T(0) ? -x : x;
}
template <typename T>
REPMODE_HD bool isnan_of(T x) {
  return x != x;
}
// The trigonometric forms, in double, rounded once to T.
REPMODE_HD double acos_d(double x) { return repmode_acos(x); }
REPMODE_HD double cos_d(double x) { return repmode_cos(x); }
REPMODE_HD double sin_d(double x) { return repmode_sin(x); }

// The three-term recurrence r = fma(y + y, q, -p) from (p, q) = (1, q1), k = 2 .. n, stopping
// early when q is NaN (torch's loop condition); y is x (Chebyshev) or 2x - 1 (shifted:
// torch's factor (x + x - 1) + (x + x - 1)). Every recurrence here writes torch's expression
// a*b - c*d as fma(a, b, -(c*d)): the one rounding per step torch's CPU kernels compile to (GCC
// contracts them on FMA hardware; checked bit for bit against native torch in the tests).
template <typename T>
REPMODE_HD T cheb_recurrence(T two_y, T q1, int64_t n) {
  T p = T(1), q = q1, r = q1;
  for (int64_t k = 2; k <= n && !isnan_of(q); ++k) {
    r = repmode_fma(two_y, q, -p);
    p = q;
    q = r;
  }
  return r;
}

// T_n(y) for |y| < 1: cos(n acos y) (torch: n > 6).
REPMODE_HD double cheb_t_trig(double y, int64_t n) { return cos_d(double(n) * acos_d(y)); }
// U_n(y): sin((n+1) t) / sin t, t = acos y; (n+1) cos((n+1) t) / y where sin t == 0.
REPMODE_HD double cheb_u_trig(double y, int64_t n) {
  double t = acos_d(y);
  double s = sin_d(t);
  if (s != 0.0) return sin_d(double(n + 1) * t) / s;
  return double(n + 1) * cos_d(double(n + 1) * t) / y;
}
// V_n(y): cos((n + 1/2) t) / cos(t/2) where sin(t/2) != 1, else +-(2n + 1) (the limit at y = -1).
REPMODE_HD double cheb_v_trig(double y, int64_t n) {
  double t = acos_d(y);
  if (sin_d(t / 2.0) != 1.0) return cos_d((double(n) + 0.5) * t) / cos_d(t / 2.0);
  return n % 2 == 0 ? double(n + n + 1) : double(-(n + n + 1));
}
// W_n(y): sin((n + 1/2) t) / sin(t/2) where cos(t/2) != 1, else the limits at y = +-1.
REPMODE_HD double cheb_w_trig(double y, int64_t n) {
  double t = acos_d(y);
  if (cos_d(t / 2.0) != 1.0) return sin_d((double(n) + 0.5) * t) / sin_d(t / 2.0);
  if (y > 0.0) return double(n + n + 1);
  return n % 2 == 0 ? 1.0 : -1.0;
}

}  // namespace poly
}  // namespace math_detail

// Chebyshev polynomials of the first to fourth kind, T_n, U_n, V_n, W_n (torch's special cases
// first: n < 0 -> 0; |x| == 1 -> the exact values; then the trigonometric form for |x| < 1 and
// large n; else the recurrence in T).
template <typename T>
REPMODE_HD T chebyshev_t_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (absval(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(1) : T(-1);
  if (n > 6 && absval(x) < T(1)) return canon(T(cheb_t_trig(double(x), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(x);
  return canon(cheb_recurrence(x + x, x, n));
}
template <typename T>
REPMODE_HD T chebyshev_u_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (absval(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(n + 1) : T(-(n + 1));
  if (n > 8 && absval(x) < T(1)) return canon(T(cheb_u_trig(double(x), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(x + x);
  return canon(cheb_recurrence(x + x, x + x, n));
}
template <typename T>
REPMODE_HD T chebyshev_v_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (absval(x) == T(1)) {
    if (x > T(0)) return T(1);
    return n % 2 == 0 ? T(n + n + 1) : T(-(n + n + 1));
  }
  if (n > 8 && absval(x) < T(1)) return canon(T(cheb_v_trig(double(x), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(x + x - T(1));
  return canon(cheb_recurrence(x + x, x + x - T(1), n));
}
template <typename T>
REPMODE_HD T chebyshev_w_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (absval(x) == T(1)) {
    if (x > T(0)) return T(n + n + 1);
    return n % 2 == 0 ? T(1) : T(-1);
  }
  if (n > 8 && absval(x) < T(1)) return canon(T(cheb_w_trig(double(x), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(x + x + T(1));
  return canon(cheb_recurrence(x + x, x + x + T(1), n));
}

// Shifted Chebyshev polynomials: the same with y = 2x - 1 written as torch writes it
// (x + x - 1); torch's special cases are x == 1 and x == 0, and the trigonometric form applies
// for |x + x - 1| < 1 and n > 6 (T, U, V) or n > 4 (W).
template <typename T>
REPMODE_HD T shifted_chebyshev_t_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (x == T(1)) return T(1);
  if (x == T(0)) return n % 2 == 0 ? T(1) : T(-1);
  const T y = x + x - T(1);
  if (n > 6 && absval(y) < T(1)) return canon(T(cheb_t_trig(double(y), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(y);
  return canon(cheb_recurrence(y + y, y, n));
}
template <typename T>
REPMODE_HD T shifted_chebyshev_u_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (x == T(1)) return T(n + 1);
  if (x == T(0)) return n % 2 == 0 ? T(n + 1) : T(-(n + 1));
  const T y = x + x - T(1);
  if (n > 6 && absval(y) < T(1)) return canon(T(cheb_u_trig(double(y), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(y + y);
  return canon(cheb_recurrence(y + y, y + y, n));
}
template <typename T>
REPMODE_HD T shifted_chebyshev_v_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (x == T(1)) return T(1);
  if (x == T(0)) return n % 2 == 0 ? T(n + n + 1) : T(-(n + n + 1));
  const T y = x + x - T(1);
  if (n > 6 && absval(y) < T(1)) return canon(T(cheb_v_trig(double(y), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(y + y - T(1));
  return canon(cheb_recurrence(y + y, y + y - T(1), n));
}
template <typename T>
REPMODE_HD T shifted_chebyshev_w_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (x == T(1)) return T(n + n + 1);
  if (x == T(0)) return n % 2 == 0 ? T(1) : T(-1);
  const T y = x + x - T(1);
  if (n > 4 && absval(y) < T(1)) return canon(T(cheb_w_trig(double(y), n)));
  if (n == 0) return T(1);
  if (n == 1) return canon(y + y + T(1));
  return canon(cheb_recurrence(y + y, y + y + T(1), n));
}

// Hermite polynomials (physicists' H_n, probabilists' He_n): n < 0 -> 0; n == 0 -> 1; n == 1 ->
// 2x (x); n above torch's limit (128 for float32, 512 for float64) -> NaN; else the recurrence
// H: r = (x + x) q - k p, k = 2, 4, .., 2n - 2;  He: r = x q - k p, k = 1 .. n - 1.
template <typename T>
REPMODE_HD int64_t hermite_limit() {
  return sizeof(T) == 4 ? 128 : 512;
}
template <typename T>
REPMODE_HD T hermite_h_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (n == 1) return canon(x + x);
  if (n > hermite_limit<T>()) return Canonical<T>::nan();
  T p = T(1), q = x + x, r = T(0);
  for (int64_t k = 2; k < n + n; k += 2) {
    r = repmode_fma(x + x, q, -(T(k) * p));
    p = q;
    q = r;
  }
  return canon(r);
}
template <typename T>
REPMODE_HD T hermite_he_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (n == 0) return T(1);
  if (n == 1) return canon(x);
  if (n > hermite_limit<T>()) return Canonical<T>::nan();
  T p = T(1), q = x, r = x;
  for (int64_t k = 1; k < n; ++k) {
    r = repmode_fma(x, q, -(T(k) * p));
    p = q;
    q = r;
  }
  return canon(r);
}
// Laguerre L_n: n < 0 -> 0; x == +-0 or n == 0 -> 1; n == 1 -> 1 - x; else
// r = ((2k + (1 - x)) q - k p) / (k + 1), k = 1 .. n - 1 (stopping when q is NaN).
template <typename T>
REPMODE_HD T laguerre_l_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (x == T(0)) return T(1);
  if (n == 0) return T(1);
  if (n == 1) return canon(T(1) - x);
  T p = T(1), q = T(1) - x, r = q;
  for (int64_t k = 1; k < n && !isnan_of(q); ++k) {
    r = repmode_fma(T(k + k) + (T(1) - x), q, -(T(k) * p)) / T(k + 1);
    p = q;
    q = r;
  }
  return canon(r);
}
// Legendre P_n: n < 0 -> 0; |x| == 1 -> +-1; n == 0 -> 1; n == 1 -> x; else
// r = ((2k + 1) x q - k p) / (k + 1), k = 1 .. n - 1 (stopping when q is NaN).
template <typename T>
REPMODE_HD T legendre_p_of(T x, T nf) {
  using namespace math_detail::poly;
  int64_t n = degree(nf);
  if (n < 0) return T(0);
  if (absval(x) == T(1)) return (x > T(0) || n % 2 == 0) ? T(1) : T(-1);
  if (n == 0) return T(1);
  if (n == 1) return canon(x);
  T p = T(1), q = x, r = x;
  for (int64_t k = 1; k < n && !isnan_of(q); ++k) {
    r = repmode_fma(T(k + k + 1) * x, q, -(T(k) * p)) / T(k + 1);
    p = q;
    q = r;
  }
  return canon(r);
}

}  // namespace repmode

// Elementary functions whose bits are the same on every CPU and every CUDA GPU.
//
//   float  cr_expf(float)       correctly rounded (round to nearest even) for all inputs
//   float  cr_logf(float)       correctly rounded for all inputs
//   double repmode_exp(double)  < 0.53 ulp proven, 0.513 measured (not always correctly
//   double repmode_log(double)  < 0.55 ulp proven, 0.506 measured  rounded)
//
// Reproducibility rests on three rules:
//  * Only IEEE-754 basic operations (+ - * /) and explicit repmode_fma, each correctly
//    rounded in round-to-nearest-even, so every platform computes the same sequence.
//    The including code MUST be compiled with -ffp-contract=off (host) and --fmad=false
//    (nvcc), and never with -ffast-math / -Ofast / --use_fast_math, which would let the
//    compiler contract or reassociate the sequences below.
//  * No libm and no CUDA math library (their accuracy and bits differ by platform).
//  * Subnormal inputs are decoded and subnormal outputs encoded with integer operations,
//    and no intermediate double is ever subnormal, so flush-to-zero/denormals-are-zero
//    modes (x86 MXCSR FTZ/DAZ, torch.set_flush_denormal) do not change any result.
//
// Tables are function-local `static constexpr` arrays: nvcc places them in global memory
// (loaded with ld.global.nc), the host compiler in read-only data.
//
// The constants were computed with mpmath at 400 bits of precision and rounded to nearest:
//   kExp2[j]   = 2^(j/64) as hi + lo
//   kLogTab[j] = c_j, L_hi, L_lo with c_j = n/256 chosen to minimise max|M c_j - 1| over
//                M in [1 + j/128, 1 + (j+1)/128) (c_0 = 1, c_127 = 1/2), and L = -log(c_j)
//                for j < 53, L = -log(2 c_j) for j >= 53; L_hi = L rounded to a multiple
//                of 2^-42, L_lo = L - L_hi rounded to double.
#pragma once

#include <cstdint>

#include "defs.h"

// The rarely taken accurate paths stay out of line, so the inlined fast paths need no
// stack frame (host) and fewer registers (device).
#if defined(__CUDACC__)
#define REPMODE_HD_COLD __host__ __device__ __noinline__ inline
#elif defined(__GNUC__)
#define REPMODE_HD_COLD __attribute__((noinline, cold)) inline
#else
#define REPMODE_HD_COLD inline
#endif

namespace repmode {

// Exact fused multiply-add (one rounding) on host and device. The host builtin is an
// instruction with -mfma and otherwise glibc's fma(), which is also exact. Only the rare
// accurate paths of cr_expf/cr_logf use it, so the fast paths never depend on -mfma.
REPMODE_HD double repmode_fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return __builtin_fma(a, b, c);
#endif
}
REPMODE_HD float repmode_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

// IEEE-754 square root (a basic operation: correctly rounded on every device).
REPMODE_HD float sqrt_of(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return __builtin_sqrtf(x);
#endif
}
REPMODE_HD double sqrt_of(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return __builtin_sqrt(x);
#endif
}

namespace math_detail {

// 2^k for -1022 <= k <= 1023, exact.
REPMODE_HD double pow2(int k) { return double_from_bits(uint64_t(k + 1023) << 52); }

// |x| by clearing the sign bit (branch-free: a data-dependent branch here would be
// mispredicted half the time).
REPMODE_HD double abs_of(double x) { return double_from_bits(bits_of(x) & 0x7fffffffffffffffull); }

// Unbiased exponent of a positive normal double: 2^e <= x < 2^(e+1).
REPMODE_HD int exponent_of(double x) { return int((bits_of(x) >> 52) & 0x7ff) - 1023; }

// ---- double-double arithmetic: the value is the unevaluated sum hi + lo ----
struct DD {
  double hi, lo;
};

// Exact: a + b == s.hi + s.lo.
REPMODE_HD DD two_sum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double aa = s - bb;
  return {s, (a - aa) + (b - bb)};
}
// Exact when |a| >= |b| or a == 0.
REPMODE_HD DD fast_two_sum(double a, double b) {
  double s = a + b;
  return {s, b - (s - a)};
}
// Exact: a * b == p.hi + p.lo.
REPMODE_HD DD two_prod(double a, double b) {
  double p = a * b;
  return {p, repmode_fma(a, b, -p)};
}
REPMODE_HD DD dd_add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  DD t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
REPMODE_HD DD dd_mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
REPMODE_HD DD dd_mul_d(DD a, double b) {
  DD p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + a.lo * b);
}

// Round t = th + tl to the nearest integer n (ties to even on th), for 0 <= th <= 2^52 and
// |tl| < 1/2. Returns n; d receives t - n in [-1/2, 1/2], computed with error <= 2^-54
// (th - n is exact, so only the final addition of tl rounds).
REPMODE_HD double round_to_integer(double th, double tl, double& d) {
  // th + 2^52 lands in [2^52, 2^53], where doubles are exactly the integers: the addition
  // itself rounds th to an integer, ties to even.
  const double kShift = 0x1p52;
  double n = (th + kShift) - kShift;
  d = (th - n) + tl;
  if (d > 0.5) {
    n += 1.0;
    d -= 1.0;
  } else if (d < -0.5) {
    n -= 1.0;
    d += 1.0;
  }
  return n;
}

// Rounds v = hi + lo to float32 (nearest even, gradual underflow, overflow to +inf) and
// returns its bits. Requires hi > 0 normal and |lo| <= ulp(hi)/2 (as fast_two_sum leaves
// them). Sets *hard when some w with |w - v| <= eps*v might round differently, i.e. when v
// lies within eps*v of a rounding boundary (a midpoint between adjacent float32s).
//
// Let e = exponent_of(hi) and 2^q the float32 spacing there: q = max(e, -126) - 23, the
// subnormal spacing 2^-149 below 2^-126. In units of 2^q, t = v/2^q lies in [2^23, 2^24]
// (normal) or [0, 2^23) (subnormal); the boundaries around t are n +- 1/2 with n = RNE(t),
// and |w/2^q - t| <= eps*t <= eps*2^24. The boundary 2^23 - 1/4 just below a binade is
// never near: v >= 2^e - ulp(hi)/2 keeps t > 2^23 - 2^-29. Above the top the next
// boundary (2^24 + 1) is farther than the tested 2^24 + 1/2, so the test stays safe.
// The result bits are (q + 149) << 23 plus n, which also carries n == 2^24 into the next
// exponent (and into +inf at the top) and encodes subnormals directly.
REPMODE_HD uint32_t round_to_f32(double hi, double lo, double eps, bool* hard) {
  int e = exponent_of(hi);
  if (e >= 128) {  // v >= 2^128
    *hard = false;
    return 0x7f800000u;
  }
  int q = (e < -126 ? -126 : e) - 23;
  double scale = pow2(-q);  // -q in [-104, 149]; hi*scale, lo*scale are exact
  double d;
  double n = round_to_integer(hi * scale, lo * scale, d);
  double gap = 0.5 - abs_of(d);           // distance of t to the nearest boundary
  *hard = gap <= eps * 0x1p24 + 0x1p-52;  // 2^-52 covers the rounding of d
  uint32_t bits = uint32_t(q + 149) * 0x800000u + uint32_t(n);
  return bits > 0x7f800000u ? 0x7f800000u : bits;
}

// round_to_f32 for v = (hi + lo) * 2^m with hi in [1, 2), where the exponent is already
// known (saves extracting it from the bits on the exp critical path).
REPMODE_HD uint32_t round_scaled_to_f32(double hi, double lo, int m, double eps, bool* hard) {
  if (m >= 128) {
    *hard = false;
    return 0x7f800000u;
  }
  int q = (m < -126 ? -126 : m) - 23;
  double scale = pow2(m - q);  // m - q in [-4, 23] for m >= -153
  double d;
  double n = round_to_integer(hi * scale, lo * scale, d);
  *hard = 0.5 - abs_of(d) <= eps * 0x1p24 + 0x1p-52;
  uint32_t bits = uint32_t(q + 149) * 0x800000u + uint32_t(n);
  return bits > 0x7f800000u ? 0x7f800000u : bits;
}

// The fast rounding test for a float32 result in the normal range. Let v = hi + lo with
// hi = RN(v) and the exact value within 2^-54 |v| of v. Then the exact value is within
// ulp(hi)/2 + ulp(hi)/4 of hi. The float32 rounding boundaries in hi's binade are the
// doubles whose low 29 bits are 0x10000000 (float32 keeps 24 of the 53 significant bits),
// and those of the neighbouring binades are much farther away. So unless hi is itself a
// boundary, the nearest boundary is at least one ulp(hi) from hi and the exact value
// rounds like hi: to (float)hi, one IEEE conversion.
REPMODE_HD bool is_f32_boundary(double hi) { return (bits_of(hi) & 0x1fffffffull) == 0x10000000ull; }

// Relative error bounds the rounding tests assume for the two evaluation paths: the proven
// bounds (exp_fast < 2^-58.3, log_fast < 2^-57.4, exp_accurate < 2^-100, log_accurate
// < 2^-88) with a factor of at least 4 to spare. is_f32_boundary assumes 2^-54.
constexpr double kFastEps = 0x1p-55;
constexpr double kAccurateEps = 0x1p-85;

// ============================== exp ==============================
//
// exp(x) = 2^m * 2^(j/64) * e^r with k = m*64 + j = round(x * 64/ln2), r = x - k*ln2/64,
// |r| <= ln2/128 * (1 + 2^-50) < 0.00542.

// 2^(j/64) = row[0] + row[1], |error| < 2^-106 relative.
REPMODE_HD const double* exp2_row(int j) {
  // clang-format off
  static constexpr double kExp2[128] = {
      0x1.0000000000000p+0, 0.0,
      0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56,
      0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55,
      0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57,
      0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54,
      0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59,
      0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54,
      0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54,
      0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55,
      0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55,
      0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54,
      0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55,
      0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54,
      0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55,
      0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55,
      0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54,
      0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55,
      0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54,
      0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54,
      0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56,
      0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55,
      0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58,
      0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59,
      0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56,
      0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56,
      0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54,
      0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55,
      0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54,
      0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54,
      0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54,
      0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54,
      0x1.6623882552225p+0, -0x1.bb60987591c34p-54,
      0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54,
      0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57,
      0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55,
      0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54,
      0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55,
      0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56,
      0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54,
      0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54,
      0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54,
      0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55,
      0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57,
      0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54,
      0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56,
      0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54,
      0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54,
      0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54,
      0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54,
      0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57,
      0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56,
      0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55,
      0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55,
      0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54,
      0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56,
      0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54,
      0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55,
      0x1.da9e603db3285p+0, 0x1.c2300696db532p-54,
      0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54,
      0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55,
      0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54,
      0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54,
      0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54,
      0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55,
  };
  // clang-format on
  return kExp2 + 2 * j;
}

// 1/n! as hi + lo, n = 0..11.
REPMODE_HD const double* inv_factorial(int n) {
  // clang-format off
  static constexpr double kInvFact[24] = {
      0x1.0000000000000p+0, 0.0,  // 1/0!
      0x1.0000000000000p+0, 0.0,  // 1/1!
      0x1.0000000000000p-1, 0.0,  // 1/2!
      0x1.5555555555555p-3, 0x1.5555555555555p-57,  // 1/3!
      0x1.5555555555555p-5, 0x1.5555555555555p-59,  // 1/4!
      0x1.1111111111111p-7, 0x1.1111111111111p-63,  // 1/5!
      0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65,  // 1/6!
      0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73,  // 1/7!
      0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76,  // 1/8!
      0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73,  // 1/9!
      0x1.27e4fb7789f5cp-22, 0x1.cbbc05b4fa99ap-76,  // 1/10!
      0x1.ae64567f544e4p-26, -0x1.c062e06d1f209p-80,  // 1/11!
  };
  // clang-format on
  return kInvFact + 2 * n;
}

struct ExpArg {
  double r, rl;  // r + rl = x - k*ln2/64, with |error| < 2^-105
  int j, m;      // k = 64*m + j, 0 <= j < 64
};

// The constants of the exp and log fast paths, defined once: the scalar code below and the
// SIMD code in csrc/cpu/vec_math_avx2.h read these very values, so they cannot drift apart.
namespace consts {
// exp reduction: 64/ln2, and ln2/64 = C_hi + C_mid + C_lo (Cody-Waite, 36-bit C_hi and C_mid).
constexpr double kInvC = 0x1.71547652b82fep+6;
constexpr double kCHi = 0x1.62e42fefa0000p-7;
constexpr double kCMid = 0x1.cf79abca00000p-46;
constexpr double kCLo = -0x1.c4c67fc0d0951p-82;
// Adding 1.5*2^52 rounds |x*64/ln2| < 2^51 to an integer (ties to even).
constexpr double kShift = 0x1.8p52;
// exp polynomial: 1/3!, 1/4!, 1/5!, 1/6!
constexpr double kC3 = 0x1.5555555555555p-3;
constexpr double kC4 = 0x1.5555555555555p-5;
constexpr double kC5 = 0x1.1111111111111p-7;
constexpr double kC6 = 0x1.6c16c16c16c17p-10;
// log polynomial: (-1)^(n+1)/n for n = 3..9
constexpr double kP3 = 0x1.5555555555555p-2;
constexpr double kP4 = -0x1.0000000000000p-2;
constexpr double kP5 = 0x1.999999999999ap-3;
constexpr double kP6 = -0x1.5555555555555p-3;
constexpr double kP7 = 0x1.2492492492492p-3;
constexpr double kP8 = -0x1.0000000000000p-3;
constexpr double kP9 = 0x1.c71c71c71c71cp-4;
}  // namespace consts

// Requires |x| <= 746. ln2/64 = C_hi + C_mid + C_lo (Cody-Waite): C_hi and C_mid carry 36
// significant bits each, so k*C_hi and k*C_mid are exact for |k| < 2^17 (|k| <= 68900
// here); x - k*C_hi is exact by Sterbenz's lemma (k*C_hi is within a factor 2 of x when
// k != 0). The remaining error is the rounding of k*C_lo (< 2^-117) plus the truncation
// of ln2/64 (|k| * 2^-135).
REPMODE_HD ExpArg exp_reduce(double x) {
  using namespace consts;
  double kd = (x * kInvC + kShift) - kShift;
  int k = int(kd);
  double r1 = x - kd * kCHi;
  DD r = two_sum(r1, -(kd * kCMid));
  int j = k & 63;
  return {r.hi, r.lo - kd * kCLo, j, (k - j) / 64};
}

// Brings (hi + lo) * 2^m, hi in [0.99, 2.03), to hi in [1, 2) by exact scaling.
REPMODE_HD DD normalize_1_2(DD y, int& m) {
  if (y.hi < 1.0) {
    y.hi *= 2.0;
    y.lo *= 2.0;
    m -= 1;
  } else if (y.hi >= 2.0) {
    y.hi *= 0.5;
    y.lo *= 0.5;
    m += 1;
  }
  return y;
}

// exp(x) = (hi + lo) * 2^m with hi = RN(hi + lo) in [1, 2), for |x| <= 746.
//
// Error: |(hi + lo) 2^m - exp(x)| < 2^-58.3 exp(x). With T = 2^(j/64), all absolute
// errors below are in units of 2^m, against exp(x)/2^m = T e^(r+rl) >= 0.9945:
//  * the three roundings that matter: em1 = r + (...) with |em1| < 2^-7.5 (half an ulp
//    <= 2^-61, times T_hi < 2: 2^-60), T_hi*em1 (< 2^-6, so <= 2^-60) and T_lo + T_hi*em1
//    (<= 2^-60);
//  * the polynomial: degree-6 Taylor truncation < r^7/7! e^|r| < 2^-65; r2*q (|q| < 0.502)
//    is < 2^-16 and evaluated with relative error < 2^-51 (r2 and the product round once
//    each, q's two leading additions <= 2^-54 each): < 2^-67; the dropped cross term
//    rl*(e^r - 1) < 2^-68; rl + r2*q rounds by < 2^-69;
//  * the table (2^-106 relative) and the reduction (< 2^-105 absolute).
// Total < 3.05 * 2^-60 / 0.9945 < 2^-58.3 (the exhaustive check measures 2^-58.9).
// fast_two_sum is exact because |T_hi| >= 1 > |lo|.
REPMODE_HD DD exp_fast(double x, int& m) {
  using namespace consts;
  ExpArg a = exp_reduce(x);
  const double* t = exp2_row(a.j);
  double r = a.r;
  // Estrin's scheme (shorter dependency chain than Horner; same error bound here).
  double r2 = r * r;
  double q = (0.5 + kC3 * r) + r2 * ((kC4 + kC5 * r) + r2 * kC6);
  double em1 = r + (a.rl + r2 * q);  // ~ e^(r + rl) - 1
  m = a.m;
  return normalize_1_2(fast_two_sum(t[0], t[1] + t[0] * em1), m);
}

// Same as exp_fast with relative error < 2^-100: the reduced argument r + rl is within
// 2^-113 of x - k ln2/64 (|k| < 2^14 for float32 inputs), and the Taylor polynomial to
// degree 11 (truncation < 2^-118) is evaluated by Horner's rule in double-double
// arithmetic (each step < 2^-104 relative; the terms are dominated by the positive
// constant ones, so nothing cancels), then multiplied by the double-double 2^(j/64).
REPMODE_HD DD exp_accurate(double x, int& m) {
  ExpArg a = exp_reduce(x);
  DD r = {a.r, a.rl};
  const double* c = inv_factorial(11);
  DD p = {c[0], c[1]};
  for (int n = 10; n >= 0; --n) {
    c = inv_factorial(n);
    p = dd_add(dd_mul(p, r), DD{c[0], c[1]});
  }
  const double* t = exp2_row(a.j);
  m = a.m;
  return normalize_1_2(dd_mul(DD{t[0], t[1]}, p), m);
}

// ============================== log ==============================
//
// With x = M * 2^e, M in [1, 2), j = the top 7 fraction bits of M and c_j ~ 1/M:
//   log(x) = e*ln2 - log(c_j) + log1p(r),  r = M*c_j - 1,  |r| < 2^-7.
// For j >= 53 (M >= 1.414) the table holds -log(2 c_j) and e is raised by one, so inputs
// near 1 have e = 0 and a table term of exactly 0 (c_0 = 1, c_127 = 1/2): there log(x) is
// log1p(r) with r exact and no cancellation.

// Row j: c_j, L_hi, L_lo.
REPMODE_HD const double* log_row(int j) {
  // clang-format off
  static constexpr double kLogTab[384] = {
      0x1.0000000000000p+0, 0.0, 0.0,
      0x1.fa00000000000p-1, 0x1.82448a3880000p-7, 0x1.4554412c584e0p-44,
      0x1.f600000000000p-1, 0x1.432a925980000p-6, 0x1.98139928637fep-47,
      0x1.f200000000000p-1, 0x1.c63d2ec150000p-6, -0x1.5439ce030a687p-44,
      0x1.ee00000000000p-1, 0x1.252f32f8d0000p-5, 0x1.83e9ae021b67bp-45,
      0x1.ea00000000000p-1, 0x1.67c94f2d48000p-5, 0x1.dac20827cca0cp-44,
      0x1.e800000000000p-1, 0x1.894aa149f8000p-5, 0x1.9a19a8be97661p-44,
      0x1.e400000000000p-1, 0x1.ccb73cddd8000p-5, 0x1.965c36e09f5fep-44,
      0x1.e000000000000p-1, 0x1.08598b59e4000p-4, -0x1.7e5dd7009902cp-46,
      0x1.dc00000000000p-1, 0x1.2aa04a4470000p-4, 0x1.7a48ba8b1cb41p-44,
      0x1.da00000000000p-1, 0x1.3bdf5a7d20000p-4, -0x1.19bd0ad125895p-44,
      0x1.d600000000000p-1, 0x1.5e95a4d978000p-4, 0x1.1cb7ce1d17171p-44,
      0x1.d200000000000p-1, 0x1.8197e2f410000p-4, -0x1.c0fe460d20041p-44,
      0x1.d000000000000p-1, 0x1.9335e5d594000p-4, 0x1.3115c3abd47dap-45,
      0x1.cc00000000000p-1, 0x1.b6ac88dad4000p-4, 0x1.b1bdff50225c7p-44,
      0x1.c800000000000p-1, 0x1.da72763844000p-4, 0x1.a89401fa71733p-46,
      0x1.c600000000000p-1, 0x1.ec739830a0000p-4, 0x1.11fcba80cdd10p-44,
      0x1.c200000000000p-1, 0x1.08598b59e4000p-3, -0x1.7e5dd7009902cp-45,
      0x1.c000000000000p-1, 0x1.1178e8227e000p-3, 0x1.1ef78ce2d07f2p-45,
      0x1.bc00000000000p-1, 0x1.23d712a49c000p-3, 0x1.00d238fd3df5cp-46,
      0x1.ba00000000000p-1, 0x1.2d1610c868000p-3, 0x1.39d6ccb81b4a1p-47,
      0x1.b600000000000p-1, 0x1.3fb45a5992000p-3, 0x1.19713c0cae559p-44,
      0x1.b400000000000p-1, 0x1.4913d8333c000p-3, -0x1.53e43558124c4p-44,
      0x1.b000000000000p-1, 0x1.5bf406b544000p-3, -0x1.27023eb68981cp-46,
      0x1.ae00000000000p-1, 0x1.6574ebe8c2000p-3, -0x1.98c1d34f0f462p-44,
      0x1.aa00000000000p-1, 0x1.7898d85444000p-3, 0x1.8e67be3dbaf3fp-44,
      0x1.a800000000000p-1, 0x1.823c16551a000p-3, 0x1.e0ddb9a631e83p-46,
      0x1.a600000000000p-1, 0x1.8beafeb390000p-3, -0x1.73d54aae92cd1p-47,
      0x1.a200000000000p-1, 0x1.9f6c40708a000p-3, -0x1.337d94bcd3f43p-44,
      0x1.a000000000000p-1, 0x1.a93ed3c8ae000p-3, -0x1.8724350562169p-45,
      0x1.9e00000000000p-1, 0x1.b31d8575bc000p-3, 0x1.c794e562a63cbp-44,
      0x1.9a00000000000p-1, 0x1.c6ffbc6f00000p-3, 0x1.ee138d3a69d43p-44,
      0x1.9800000000000p-1, 0x1.d1037f2656000p-3, -0x1.84a7e75b6f6e4p-47,
      0x1.9600000000000p-1, 0x1.db13db0d48000p-3, 0x1.2806a847527e6p-44,
      0x1.9400000000000p-1, 0x1.e530effe72000p-3, -0x1.fdbdbb13f7c18p-44,
      0x1.9000000000000p-1, 0x1.f991c6cb3c000p-3, -0x1.90d04cd7cc834p-44,
      0x1.8e00000000000p-1, 0x1.01eae5626c000p-2, 0x1.a43dcfade85aep-44,
      0x1.8c00000000000p-1, 0x1.07138604d6000p-2, -0x1.e76324e912b17p-44,
      0x1.8a00000000000p-1, 0x1.0c42d67616000p-2, 0x1.7188b163ceae9p-45,
      0x1.8800000000000p-1, 0x1.1178e8227e000p-2, 0x1.1ef78ce2d07f2p-44,
      0x1.8400000000000p-1, 0x1.1bf99635a7000p-2, -0x1.1ac89575c2125p-44,
      0x1.8200000000000p-1, 0x1.214456d0ec000p-2, -0x1.caf0428b728a3p-44,
      0x1.8000000000000p-1, 0x1.269621134e000p-2, -0x1.1b61f10522625p-44,
      0x1.7e00000000000p-1, 0x1.2bef07cdc9000p-2, 0x1.a9cfa4a5004f4p-45,
      0x1.7c00000000000p-1, 0x1.314f1e1d36000p-2, -0x1.8e27ad3213cb8p-45,
      0x1.7a00000000000p-1, 0x1.36b6776be1000p-2, 0x1.16ecdb0f177c8p-46,
      0x1.7800000000000p-1, 0x1.3c25277333000p-2, 0x1.83b54b606bd5cp-46,
      0x1.7600000000000p-1, 0x1.419b423d5f000p-2, -0x1.ce379226de3ecp-44,
      0x1.7400000000000p-1, 0x1.4718dc271c000p-2, 0x1.06c18fb4c14c5p-44,
      0x1.7200000000000p-1, 0x1.4c9e09e173000p-2, -0x1.e20891b0ad8a4p-45,
      0x1.7000000000000p-1, 0x1.522ae0738a000p-2, 0x1.ebe708164c759p-45,
      0x1.6e00000000000p-1, 0x1.57bf753c8d000p-2, 0x1.fadedee5d40efp-46,
      0x1.6c00000000000p-1, 0x1.5d5bddf596000p-2, -0x1.a0b2a08a465dcp-47,
      0x1.6a00000000000p-1, -0x1.62c82f2b9c000p-2, -0x1.e54bdbd7c8a98p-44,
      0x1.6800000000000p-1, -0x1.5d1bdbf581000p-2, 0x1.8d6bdc9c7c238p-44,
      0x1.6600000000000p-1, -0x1.5767717456000p-2, 0x1.64ead9524d7cap-44,
      0x1.6400000000000p-1, -0x1.51aad872e0000p-2, 0x1.f4bd8db0a7cc1p-44,
      0x1.6200000000000p-1, -0x1.4be5f95778000p-2, 0x1.d7c92cd9ad824p-44,
      0x1.6000000000000p-1, -0x1.4618bc21c6000p-2, 0x1.3d82f484c84ccp-46,
      0x1.5e00000000000p-1, -0x1.404308686a000p-2, -0x1.f8ef43049f7d3p-44,
      0x1.5c00000000000p-1, -0x1.3a64c55694000p-2, -0x1.7a71cbcd735d0p-44,
      0x1.5a00000000000p-1, -0x1.347dd9a988000p-2, 0x1.5594dd4c58092p-45,
      0x1.5800000000000p-1, -0x1.2e8e2bae12000p-2, 0x1.67b1e99b72bd8p-45,
      0x1.5600000000000p-1, -0x1.2895a13de8000p-2, -0x1.a8d7ad24c13f0p-44,
      0x1.5400000000000p-1, -0x1.22941fbcf8000p-2, 0x1.a6976f5eb0963p-44,
      0x1.5200000000000p-1, -0x1.1c898c169a000p-2, 0x1.81410e5c62affp-44,
      0x1.5000000000000p-1, -0x1.1675cababa000p-2, -0x1.8380e731f55c4p-44,
      0x1.5000000000000p-1, -0x1.1675cababa000p-2, -0x1.8380e731f55c4p-44,
      0x1.4e00000000000p-1, -0x1.1058bf9ae5000p-2, 0x1.4ab9d817d52cdp-44,
      0x1.4c00000000000p-1, -0x1.0a324e2739000p-2, -0x1.c6bee7ef4030ep-47,
      0x1.4a00000000000p-1, -0x1.0402594b4d000p-2, -0x1.036b89ef42d7fp-48,
      0x1.4800000000000p-1, -0x1.fb9186d5e4000p-3, 0x1.d572aab993c87p-47,
      0x1.4600000000000p-1, -0x1.ef0adcbdc6000p-3, 0x1.b26b79c86af24p-45,
      0x1.4600000000000p-1, -0x1.ef0adcbdc6000p-3, 0x1.b26b79c86af24p-45,
      0x1.4400000000000p-1, -0x1.e27076e2b0000p-3, 0x1.a342c2af0003cp-44,
      0x1.4200000000000p-1, -0x1.d5c216b4fc000p-3, 0x1.1ba91bbca681bp-45,
      0x1.4000000000000p-1, -0x1.c8ff7c79aa000p-3, 0x1.7794f689f8434p-45,
      0x1.3e00000000000p-1, -0x1.bc286742d8000p-3, -0x1.9ac53f39d121cp-44,
      0x1.3e00000000000p-1, -0x1.bc286742d8000p-3, -0x1.9ac53f39d121cp-44,
      0x1.3c00000000000p-1, -0x1.af3c94e80c000p-3, 0x1.a4e633fcd9066p-52,
      0x1.3a00000000000p-1, -0x1.a23bc1fe2c000p-3, 0x1.539cd91dc9f0bp-44,
      0x1.3800000000000p-1, -0x1.9525a9cf46000p-3, 0x1.297137d9f158fp-44,
      0x1.3800000000000p-1, -0x1.9525a9cf46000p-3, 0x1.297137d9f158fp-44,
      0x1.3600000000000p-1, -0x1.87fa06520c000p-3, -0x1.22120401202fcp-44,
      0x1.3400000000000p-1, -0x1.7ab890210e000p-3, 0x1.bdb9072534a58p-45,
      0x1.3200000000000p-1, -0x1.6d60fe719e000p-3, 0x1.bc6e557134767p-44,
      0x1.3200000000000p-1, -0x1.6d60fe719e000p-3, 0x1.bc6e557134767p-44,
      0x1.3000000000000p-1, -0x1.5ff3070a7a000p-3, 0x1.8586f183bebf2p-44,
      0x1.2e00000000000p-1, -0x1.526e5e3a1c000p-3, 0x1.790ba37fc5238p-44,
      0x1.2e00000000000p-1, -0x1.526e5e3a1c000p-3, 0x1.790ba37fc5238p-44,
      0x1.2c00000000000p-1, -0x1.44d2b6ccb8000p-3, 0x1.70cc16135783cp-46,
      0x1.2a00000000000p-1, -0x1.371fc201e8000p-3, -0x1.ee8779b2d8abcp-44,
      0x1.2a00000000000p-1, -0x1.371fc201e8000p-3, -0x1.ee8779b2d8abcp-44,
      0x1.2800000000000p-1, -0x1.29552f8200000p-3, 0x1.5b967f4471dfcp-44,
      0x1.2600000000000p-1, -0x1.1b72ad52f6000p-3, -0x1.e80a41811a396p-45,
      0x1.2600000000000p-1, -0x1.1b72ad52f6000p-3, -0x1.e80a41811a396p-45,
      0x1.2400000000000p-1, -0x1.0d77e7cd08000p-3, -0x1.cb2cd2ee2f482p-44,
      0x1.2200000000000p-1, -0x1.fec9131dc0000p-4, 0x1.54555d1ae6607p-44,
      0x1.2200000000000p-1, -0x1.fec9131dc0000p-4, 0x1.54555d1ae6607p-44,
      0x1.2000000000000p-1, -0x1.e27076e2b0000p-4, 0x1.a342c2af0003cp-45,
      0x1.1e00000000000p-1, -0x1.c5e548f5bc000p-4, -0x1.d0c57585fbe06p-46,
      0x1.1e00000000000p-1, -0x1.c5e548f5bc000p-4, -0x1.d0c57585fbe06p-46,
      0x1.1c00000000000p-1, -0x1.a926d3a4ac000p-4, -0x1.563650bd22a9cp-44,
      0x1.1c00000000000p-1, -0x1.a926d3a4ac000p-4, -0x1.563650bd22a9cp-44,
      0x1.1a00000000000p-1, -0x1.8c345d6318000p-4, -0x1.b20f5acb42a66p-44,
      0x1.1800000000000p-1, -0x1.6f0d28ae58000p-4, 0x1.4b4641b664613p-44,
      0x1.1800000000000p-1, -0x1.6f0d28ae58000p-4, 0x1.4b4641b664613p-44,
      0x1.1600000000000p-1, -0x1.51b073f060000p-4, -0x1.83f69278e686ap-44,
      0x1.1600000000000p-1, -0x1.51b073f060000p-4, -0x1.83f69278e686ap-44,
      0x1.1400000000000p-1, -0x1.341d7961bc000p-4, -0x1.1d09299837610p-44,
      0x1.1200000000000p-1, -0x1.16536eea38000p-4, 0x1.47c5e768fa309p-46,
      0x1.1200000000000p-1, -0x1.16536eea38000p-4, 0x1.47c5e768fa309p-46,
      0x1.1000000000000p-1, -0x1.f0a30c0118000p-5, 0x1.d599e83368e91p-45,
      0x1.1000000000000p-1, -0x1.f0a30c0118000p-5, 0x1.d599e83368e91p-45,
      0x1.0e00000000000p-1, -0x1.b42dd71198000p-5, 0x1.c827ae5d6704cp-46,
      0x1.0e00000000000p-1, -0x1.b42dd71198000p-5, 0x1.c827ae5d6704cp-46,
      0x1.0c00000000000p-1, -0x1.77458f6330000p-5, 0x1.181dce586af09p-44,
      0x1.0a00000000000p-1, -0x1.39e87b9fe8000p-5, -0x1.eafd480ad9015p-44,
      0x1.0a00000000000p-1, -0x1.39e87b9fe8000p-5, -0x1.eafd480ad9015p-44,
      0x1.0800000000000p-1, -0x1.f829b0e780000p-6, -0x1.980267c7e09e4p-45,
      0x1.0800000000000p-1, -0x1.f829b0e780000p-6, -0x1.980267c7e09e4p-45,
      0x1.0600000000000p-1, -0x1.7b91b07d60000p-6, 0x1.3b955b602ace4p-44,
      0x1.0600000000000p-1, -0x1.7b91b07d60000p-6, 0x1.3b955b602ace4p-44,
      0x1.0400000000000p-1, -0x1.fc0a8b0fc0000p-7, -0x1.f1e7cf6d3a69cp-50,
      0x1.0400000000000p-1, -0x1.fc0a8b0fc0000p-7, -0x1.f1e7cf6d3a69cp-50,
      0x1.0200000000000p-1, -0x1.fe02a6b100000p-8, -0x1.9e23f0dda40e4p-46,
      0x1.0200000000000p-1, -0x1.fe02a6b100000p-8, -0x1.9e23f0dda40e4p-46,
      0x1.0000000000000p-1, 0.0, 0.0,
  };
  // clang-format on
  return kLogTab + 3 * j;
}

// (-1)^(n+1)/n as hi + lo, n = 1..15.
REPMODE_HD const double* log1p_coef(int n) {
  // clang-format off
  static constexpr double kCoef[30] = {
      0x1.0000000000000p+0, 0.0,  // +1/1
      -0x1.0000000000000p-1, 0.0,  // -1/2
      0x1.5555555555555p-2, 0x1.5555555555555p-56,  // +1/3
      -0x1.0000000000000p-2, 0.0,  // -1/4
      0x1.999999999999ap-3, -0x1.999999999999ap-57,  // +1/5
      -0x1.5555555555555p-3, -0x1.5555555555555p-57,  // -1/6
      0x1.2492492492492p-3, 0x1.2492492492492p-57,  // +1/7
      -0x1.0000000000000p-3, 0.0,  // -1/8
      0x1.c71c71c71c71cp-4, 0x1.c71c71c71c71cp-58,  // +1/9
      -0x1.999999999999ap-4, 0x1.999999999999ap-58,  // -1/10
      0x1.745d1745d1746p-4, -0x1.745d1745d1746p-59,  // +1/11
      -0x1.5555555555555p-4, -0x1.5555555555555p-58,  // -1/12
      0x1.3b13b13b13b14p-4, -0x1.3b13b13b13b14p-58,  // +1/13
      -0x1.2492492492492p-4, -0x1.2492492492492p-58,  // -1/14
      0x1.1111111111111p-4, 0x1.1111111111111p-60,  // +1/15
  };
  // clang-format on
  return kCoef + 2 * (n - 1);
}

// ln2 = kLn2Hi + kLn2Mid + kLn2Lo; kLn2Hi is a multiple of 2^-42 (so e*kLn2Hi is exact for
// |e| < 2^11 and adds exactly to L_hi), kLn2Mid has 45 bits (e*kLn2Mid exact for |e| < 2^8).
constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;
constexpr double kLn2Mid = 0x1.ef35793c76800p-45;
constexpr double kLn2Lo = -0x1.9ff0342542fc3p-90;

struct LogArg {
  double r;           // M*c_j - 1, exact, |r| < 2^-7
  double e;           // exponent, adjusted for j >= 53
  const double* row;  // c_j, L_hi, L_lo
};

// M in [1, 2) with e in [-1074, 1024]. r is exact: Mhi (M with the low 9 bits cleared)
// times c_j = n/256 has <= 53 bits and lies in [1 - 2^-7, 1 + 2^-7] (Sterbenz for the
// subtraction); (M - Mhi)*c_j has <= 18 bits; and the sum is a multiple of 2^-60 below
// 2^-7 in magnitude, hence representable. No fma is needed.
REPMODE_HD LogArg log_reduce(double M, int e) {
  uint64_t mb = bits_of(M);
  int j = int(mb >> 45) & 127;
  const double* row = log_row(j);
  double c = row[0];
  double mhi = double_from_bits(mb & ~uint64_t(0x1ff));
  double r = (mhi * c - 1.0) + (M - mhi) * c;
  return {r, double(e + (j >= 53 ? 1 : 0)), row};
}

// log(x) = hi + lo with hi = RN(hi + lo), for x = M*2^e.
//
// Error: |hi + lo - log(x)| < 2^-57.4 |log(x)|. H = e*ln2_hi + L_hi is exact (multiples
// of 2^-42 below 2^10), and q (|q| < 0.503) is evaluated with relative error < 2^-52, so
// r2*q carries relative error < 2^-51.
//  * H == 0 (e == 0 and j in {0, 127}): the result is log1p(r) with r exact, every
//    addition is exact (lo == 0, fast_two_sum), and the error is that of r2*q,
//    < 2^-51 * 1.01 r^2/2 < 2^-59 |log(x)|, plus the degree-9 truncation, < r^10/10 <
//    2^-66 |log(x)|.
//  * H != 0: then |log(x)| > 2^-8 and |H| >= |r| (checked for every row), so
//    fast_two_sum(H, r) is exact. Absolute errors: r2*q < 2^-66 (|r2 q| < 2^-15), the two
//    additions into the tail < 2^-68 each, truncation < 2^-73, ln2 and the table < 2^-85;
//    in all < 2^-65.5 < 2^-57.5 |log(x)|.
// The exhaustive check measures 2^-60.5.
REPMODE_HD DD log_fast(double M, int e) {
  using namespace consts;
  LogArg a = log_reduce(M, e);
  double r = a.r;
  double h = a.e * kLn2Hi + a.row[1];
  double lo = a.e * kLn2Mid + a.row[2];
  // Estrin's scheme for q = (log1p(r) - r)/r^2 ~ -1/2 + r/3 - ... + r^7/9.
  double r2 = r * r;
  double r4 = r2 * r2;
  double q = ((-0.5 + kP3 * r) + r2 * (kP4 + kP5 * r)) + r4 * ((kP6 + kP7 * r) + r2 * (kP8 + kP9 * r));
  DD s = fast_two_sum(h, r);
  return fast_two_sum(s.hi, s.lo + (r2 * q + lo));
}

// Same with relative error < 2^-88, for x = M*2^e with |e| < 2^8 (float32 inputs only):
// log1p(r) to degree 15 (truncation < 2^-109 relative) by Horner's rule in double-double,
// plus e*ln2 within 2^-125 and L within 2^-96 absolute (the L_hi + L_lo table limit);
// |log(x)| > 2^-8 whenever L or e is nonzero.
REPMODE_HD DD log_accurate(double M, int e) {
  LogArg a = log_reduce(M, e);
  double r = a.r;
  const double* c = log1p_coef(15);
  DD p = {c[0], c[1]};
  for (int n = 14; n >= 1; --n) {
    c = log1p_coef(n);
    p = dd_add(dd_mul_d(p, r), DD{c[0], c[1]});
  }
  p = dd_mul_d(p, r);
  double h = a.e * kLn2Hi + a.row[1];  // exact, as in log_fast
  DD y = dd_add(p, two_sum(h, a.e * kLn2Mid));
  return dd_add(y, two_sum(a.e * kLn2Lo, a.row[2]));
}

// Decodes a positive finite nonzero double x into M in [1, 2) and e, x = M * 2^e, with
// integer operations only (subnormals: the int64 -> double conversion is exact).
REPMODE_HD double split_double(uint64_t ux, int& e) {
  int biased = int(ux >> 52);
  if (biased == 0) {
    double d = double(int64_t(ux));  // x = ux * 2^-1074 exactly, 1 <= ux < 2^52
    uint64_t db = bits_of(d);
    e = int(db >> 52) - 1023 - 1074;
    return double_from_bits((db & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  }
  e = biased - 1023;
  return double_from_bits((ux & 0xfffffffffffffull) | (uint64_t(1023) << 52));
}

REPMODE_HD_COLD float expf_accurate_path(double x, int* path) {
  int m;
  DD y = exp_accurate(x, m);
  bool hard;
  uint32_t b = round_scaled_to_f32(y.hi, y.lo, m, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

REPMODE_HD float cr_expf_impl(float xf, int* path) {
  // path (diagnostics for csrc/verify/check_math.cpp): 0 special, 1 fast, 2 accurate, 3 accurate
  // but still within its error bound of a boundary (never observed).
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax > 0x7f800000u) return Canonical<float>::nan();
  // |x| < 2^-26: exp(x) lies strictly between the boundaries 1 - 2^-25 and 1 + 2^-24.
  // Also catches subnormal inputs without touching them arithmetically.
  if (ax < 0x32800000u) return 1.0f;
  if (xf > 89.0f) return float_from_bits(0x7f800000u);  // exp(89) > 2^128, includes +inf
  if (xf < -105.0f) return 0.0f;                        // exp(-105) < 2^-151, below half the least subnormal
  // Fast path: its relative error (< 2^-58.3, exp_fast) is within what is_f32_boundary
  // (2^-54) and kFastEps assume, so when the rounding test passes, every value within the
  // error bound -- the exact exp(x) among them -- rounds to the same float. exp(x) is
  // never exactly a boundary (it is transcendental for x != 0), so the accurate path
  // (< 2^-100 vs kAccurateEps) decides the rest; csrc/verify/check_math.cpp confirms on all
  // inputs that it always does.
  double x = double(xf);
  int m;
  DD y = exp_fast(x, m);  // m in [-153, 130]
  if (m >= -126) {
    // Normal result or overflow: y.hi * 2^m is exact and (float) rounds it, to +inf
    // above the largest float32 as IEEE conversion does.
    if (!is_f32_boundary(y.hi)) {
      if (path) *path = 1;
      return float(y.hi * pow2(m));
    }
  } else {
    // Subnormal result: round by integer arithmetic (no FTZ dependence).
    bool hard;
    uint32_t b = round_scaled_to_f32(y.hi, y.lo, m, kFastEps, &hard);
    if (!hard) {
      if (path) *path = 1;
      return float_from_bits(b);
    }
  }
  return expf_accurate_path(x, path);
}

REPMODE_HD_COLD float logf_accurate_path(double M, int e, int* path) {
  DD y = log_accurate(M, e);
  uint64_t sign = bits_of(y.hi) & 0x8000000000000000ull;
  y = DD{abs_of(y.hi), double_from_bits(bits_of(y.lo) ^ sign)};
  bool hard;
  uint32_t b = round_to_f32(y.hi, y.lo, kAccurateEps, &hard) | uint32_t(sign >> 32);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b);
}

REPMODE_HD float cr_logf_impl(float xf, int* path) {
  uint32_t ux = bits_of(xf);
  if (path) *path = 0;
  if ((ux & 0x7fffffffu) > 0x7f800000u) return Canonical<float>::nan();
  if ((ux & 0x7fffffffu) == 0) return float_from_bits(0xff800000u);  // log(+-0) = -inf
  if (ux >> 31) return Canonical<float>::nan();                      // x < 0
  if (ux == 0x7f800000u) return xf;                                  // log(+inf) = +inf
  if (ux == 0x3f800000u) return 0.0f;                                // log(1) = +0, exact
  // x = M * 2^e from the bits; subnormals via the exact int -> double conversion.
  int e;
  double M;
  if (ux < 0x00800000u) {
    double d = double(int32_t(ux));  // x = ux * 2^-149
    uint64_t db = bits_of(d);
    e = int(db >> 52) - 1023 - 149;
    M = double_from_bits((db & 0xfffffffffffffull) | (uint64_t(1023) << 52));
  } else {
    e = int(ux >> 23) - 127;
    M = double_from_bits((uint64_t(ux & 0x7fffffu) << 29) | (uint64_t(1023) << 52));
  }
  // Same argument as cr_expf: log_fast (< 2^-57.4) within the 2^-54 of is_f32_boundary,
  // log_accurate (< 2^-88) within kAccurateEps; log(x) is transcendental for x != 1. The
  // result is never subnormal or infinite (2^-25 < |log x| < 104).
  DD y = log_fast(M, e);
  if (!is_f32_boundary(y.hi)) {
    if (path) *path = 1;
    return float(y.hi);
  }
  return logf_accurate_path(M, e, path);
}

}  // namespace math_detail

// Correctly rounded e^x for float32 (see cr_expf_impl for the error argument).
// NaN -> canonical NaN; exp(-inf) = +0; exp(+inf) = +inf.
REPMODE_HD float cr_expf(float x) { return math_detail::cr_expf_impl(x, nullptr); }

// Correctly rounded natural log for float32. NaN and x < 0 -> canonical NaN;
// log(+-0) = -inf; log(+inf) = +inf; log(1) = +0.
REPMODE_HD float cr_logf(float x) { return math_detail::cr_logf_impl(x, nullptr); }

// e^x for float64, < 0.53 ulp: exp_fast's hi is one rounding of a value within 2^-58.3
// relative of e^x (0.5 + 2^-5.3 ulp), then scaled exactly by 2^m. Subnormal results are
// rounded once, from hi + lo, by integer arithmetic. NaN -> canonical NaN;
// exp(-inf) = +0; exp(+inf) = +inf; overflow to +inf above ~709.78.
REPMODE_HD double repmode_exp(double x) {
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax > 0x7ff0000000000000ull) return Canonical<double>::nan();
  // |x| < 2^-54: exp(x) is strictly between the boundaries 1 - 2^-54 and 1 + 2^-53.
  if (ax < 0x3c90000000000000ull) return 1.0;
  if (x > 710.0) return double_from_bits(0x7ff0000000000000ull);
  if (x < -746.0) return 0.0;  // exp(-746) < 2^-1075
  int m;
  math_detail::DD y = math_detail::exp_fast(x, m);
  if (m >= 1024) return double_from_bits(0x7ff0000000000000ull);
  if (m >= -1022) return y.hi * math_detail::pow2(m);  // exact: the result is normal
  // Subnormal (or zero) result: in units of 2^-1074, t = (hi + lo) * 2^(m+1074) < 2^52;
  // its nearest integer is the bit pattern (2^52 encodes the least normal number).
  double s = math_detail::pow2(m + 1074);  // m >= -1078
  double d;
  double n = math_detail::round_to_integer(y.hi * s, y.lo * s, d);
  return double_from_bits(uint64_t(n));
}

// Natural log for float64, < 0.55 ulp: log_fast's hi is one rounding of a value within
// 2^-57.4 relative of log(x) (0.5 + 2^-4.4 ulp). NaN and x < 0 -> canonical NaN; log(+-0) = -inf;
// log(+inf) = +inf; log(1) = +0.
REPMODE_HD double repmode_log(double x) {
  uint64_t ux = bits_of(x);
  if ((ux & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return Canonical<double>::nan();
  if ((ux & 0x7fffffffffffffffull) == 0) return double_from_bits(0xfff0000000000000ull);
  if (ux >> 63) return Canonical<double>::nan();
  if (ux == 0x7ff0000000000000ull) return x;
  int e;
  double M = math_detail::split_double(ux, e);
  return math_detail::log_fast(M, e).hi;
}

}  // namespace repmode

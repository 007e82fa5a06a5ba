// sin and cos whose bits are the same on every CPU and every CUDA GPU.
//
//   float  cr_sinf(float)       correctly rounded (round to nearest even) for all inputs
//   float  cr_cosf(float)       correctly rounded for all inputs
//   double repmode_sin(double)  reproducible, not always correctly rounded; full range,
//   double repmode_cos(double)  bounds next to sincos_f64 below
//
// The rules of math.h apply (IEEE-754 basic operations, explicit repmode_fma only, integer
// and bit operations; -ffp-contract=off / --fmad=false; no libm, no CUDA math library).
//
// Method. For x != 0 finite, |x| = m * 2^E with m an integer below 2^24 (float) or 2^53
// (double). The reduction computes y = |x| * 32/pi modulo 64 with exact integer arithmetic
// on a bit table of 2/pi (Payne-Hanek): write 2/pi = sum_{i>=1} b_i 2^-i; the bits with
// i <= E - 2 contribute m * 2^(E+4-i), multiples of 64, and drop out; a window of L bits
// starting at i0 = E - 1 gives y = (m * W mod 2^L) * 2^(6-L) exactly, up to the dropped
// tail of 2/pi, which contributes less than m * 2^(E+4) * 2^-(i0+L-1) < 2^(mbits+6-L).
// Then y = n + f, n = round(y) in [0, 64), |f| <= 1/2, and with r = f * pi/32:
//   sin|x| = sin(n pi/32 + r) = S + S (cos r - 1) + C sin r,  S = sin(n pi/32), C = cos(n pi/32)
//   cos|x| = sin((n + 16) pi/32 + r),
// so cos is sin with the table index moved by 16 and shares every error argument.
//
// Lower bounds on |f| (the reduced argument relative to pi/32): for every float with
// |x| >= 2^-12, |f| > 2^-29.86 (2^-29.8575, reached at x = 0x1.f37c8ap+91); for every
// double with |x| >= 2^-27, |f| > 2^-61.54.
// Computed with mpmath (4000 bits) per binary exponent: below 2^-25 * 2^mbits the
// minimum of ||m beta|| (beta = 2^(E+4) * 2/pi mod 1) over m in [2^(mbits-1), 2^mbits) is
// the value at the smallest m; otherwise the best-approximation property of the continued
// fraction of beta bounds ||m beta|| below by ||q beta||, q the largest convergent
// denominator below 2^mbits. Hence no result is subnormal and no intermediate below is
// subnormal (the smallest, in the accurate paths, exceed 2^-700): FTZ/DAZ change nothing;
// subnormal inputs are returned (sin) or give 1 (cos) without arithmetic.
//
// Constants (mpmath, 3000 bits, rounded to nearest): the 2/pi bits; sin(j pi/32) as hi + lo;
// pi/32 as hi + lo; the fast polynomial coefficients a_k = (-1)^((k-1)/2) (pi/32)^k / k!
// (odd k) and b_k = (-1)^(k/2) (pi/32)^k / k! (even k), each rounded to double.
#pragma once

#include <cstdint>

#include "math.h"

namespace repmode {
namespace math_detail {
namespace trig {

// Bits of 2/pi, most significant first, after 128 zero bits: bit position p (bit 63 - p%64
// of word p/64) holds b_(p-127). The zeros let small arguments use the same window code.
// 1280 bits of 2/pi cover every double exponent (see window64).
REPMODE_HD const uint64_t* two_over_pi_words() {
  // clang-format off
  static constexpr uint64_t kBits[22] = {
      0x0000000000000000ull, 0x0000000000000000ull,
      0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull,
      0xdb6295993c439041ull, 0xfe5163abdebbc561ull,
      0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull,
      0xfe1deb1cb129a73eull, 0xe88235f52ebb4484ull,
      0xe99c7026b45f7e41ull, 0x3991d639835339f4ull,
      0x9c845f8bbdf9283bull, 0x1ff897ffde05980full,
      0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull,
      0x4f463f669e5fea2dull, 0x7527bac7ebe5f17bull,
      0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull,
      0x56033046fc7b6babull, 0xf0cfbc209af4361dull,
  };
  // clang-format on
  return kBits;
}

// The 64 table bits starting at bit position p (0 <= p, p/64 + 1 < 22). The second shift
// is split so that no shift count reaches 64.
REPMODE_HD uint64_t window64(const uint64_t* t, int p) {
  int w = p >> 6, sh = p & 63;
  return (t[w] << sh) | ((t[w + 1] >> 1) >> (63 - sh));
}

// sin(j pi/32) = row[0] + row[1], |error| < 2^-106; j = 0..63. cos(j pi/32) is row j + 16.
REPMODE_HD const double* sin_pi32_row(int j) {
  // clang-format off
  static constexpr double kSinTab[128] = {
      0x0.0p+0, 0x0.0p+0,
      0x1.917a6bc29b42cp-4, -0x1.e2718d26ed688p-60,
      0x1.8f8b83c69a60bp-3, -0x1.26d19b9ff8d82p-57,
      0x1.294062ed59f06p-2, -0x1.5d28da2c4612dp-56,
      0x1.87de2a6aea963p-2, -0x1.72cedd3d5a610p-57,
      0x1.e2b5d3806f63bp-2, 0x1.e0d891d3c6841p-58,
      0x1.1c73b39ae68c8p-1, 0x1.b25dd267f6600p-55,
      0x1.44cf325091dd6p-1, 0x1.8076a2cfdc6b3p-57,
      0x1.6a09e667f3bcdp-1, -0x1.bdd3413b26456p-55,
      0x1.8bc806b151741p-1, -0x1.2c5e12ed1336dp-55,
      0x1.a9b66290ea1a3p-1, 0x1.9f630e8b6dac8p-60,
      0x1.c38b2f180bdb1p-1, -0x1.6e0b1757c8d07p-56,
      0x1.d906bcf328d46p-1, 0x1.457e610231ac2p-56,
      0x1.e9f4156c62ddap-1, 0x1.760b1e2e3f81ep-55,
      0x1.f6297cff75cb0p-1, 0x1.562172a361fd3p-56,
      0x1.fd88da3d12526p-1, -0x1.87df6378811c7p-55,
      0x1.0000000000000p+0, 0x0.0p+0,
      0x1.fd88da3d12526p-1, -0x1.87df6378811c7p-55,
      0x1.f6297cff75cb0p-1, 0x1.562172a361fd3p-56,
      0x1.e9f4156c62ddap-1, 0x1.760b1e2e3f81ep-55,
      0x1.d906bcf328d46p-1, 0x1.457e610231ac2p-56,
      0x1.c38b2f180bdb1p-1, -0x1.6e0b1757c8d07p-56,
      0x1.a9b66290ea1a3p-1, 0x1.9f630e8b6dac8p-60,
      0x1.8bc806b151741p-1, -0x1.2c5e12ed1336dp-55,
      0x1.6a09e667f3bcdp-1, -0x1.bdd3413b26456p-55,
      0x1.44cf325091dd6p-1, 0x1.8076a2cfdc6b3p-57,
      0x1.1c73b39ae68c8p-1, 0x1.b25dd267f6600p-55,
      0x1.e2b5d3806f63bp-2, 0x1.e0d891d3c6841p-58,
      0x1.87de2a6aea963p-2, -0x1.72cedd3d5a610p-57,
      0x1.294062ed59f06p-2, -0x1.5d28da2c4612dp-56,
      0x1.8f8b83c69a60bp-3, -0x1.26d19b9ff8d82p-57,
      0x1.917a6bc29b42cp-4, -0x1.e2718d26ed688p-60,
      0x0.0p+0, 0x0.0p+0,
      -0x1.917a6bc29b42cp-4, 0x1.e2718d26ed688p-60,
      -0x1.8f8b83c69a60bp-3, 0x1.26d19b9ff8d82p-57,
      -0x1.294062ed59f06p-2, 0x1.5d28da2c4612dp-56,
      -0x1.87de2a6aea963p-2, 0x1.72cedd3d5a610p-57,
      -0x1.e2b5d3806f63bp-2, -0x1.e0d891d3c6841p-58,
      -0x1.1c73b39ae68c8p-1, -0x1.b25dd267f6600p-55,
      -0x1.44cf325091dd6p-1, -0x1.8076a2cfdc6b3p-57,
      -0x1.6a09e667f3bcdp-1, 0x1.bdd3413b26456p-55,
      -0x1.8bc806b151741p-1, 0x1.2c5e12ed1336dp-55,
      -0x1.a9b66290ea1a3p-1, -0x1.9f630e8b6dac8p-60,
      -0x1.c38b2f180bdb1p-1, 0x1.6e0b1757c8d07p-56,
      -0x1.d906bcf328d46p-1, -0x1.457e610231ac2p-56,
      -0x1.e9f4156c62ddap-1, -0x1.760b1e2e3f81ep-55,
      -0x1.f6297cff75cb0p-1, -0x1.562172a361fd3p-56,
      -0x1.fd88da3d12526p-1, 0x1.87df6378811c7p-55,
      -0x1.0000000000000p+0, 0x0.0p+0,
      -0x1.fd88da3d12526p-1, 0x1.87df6378811c7p-55,
      -0x1.f6297cff75cb0p-1, -0x1.562172a361fd3p-56,
      -0x1.e9f4156c62ddap-1, -0x1.760b1e2e3f81ep-55,
      -0x1.d906bcf328d46p-1, -0x1.457e610231ac2p-56,
      -0x1.c38b2f180bdb1p-1, 0x1.6e0b1757c8d07p-56,
      -0x1.a9b66290ea1a3p-1, -0x1.9f630e8b6dac8p-60,
      -0x1.8bc806b151741p-1, 0x1.2c5e12ed1336dp-55,
      -0x1.6a09e667f3bcdp-1, 0x1.bdd3413b26456p-55,
      -0x1.44cf325091dd6p-1, -0x1.8076a2cfdc6b3p-57,
      -0x1.1c73b39ae68c8p-1, -0x1.b25dd267f6600p-55,
      -0x1.e2b5d3806f63bp-2, -0x1.e0d891d3c6841p-58,
      -0x1.87de2a6aea963p-2, 0x1.72cedd3d5a610p-57,
      -0x1.294062ed59f06p-2, 0x1.5d28da2c4612dp-56,
      -0x1.8f8b83c69a60bp-3, 0x1.26d19b9ff8d82p-57,
      -0x1.917a6bc29b42cp-4, 0x1.e2718d26ed688p-60,
  };
  // clang-format on
  return kSinTab + 2 * j;
}

namespace consts {
// pi/32 = kPi32Hi + kPi32Lo, |error| < 2^-110.
constexpr double kPi32Hi = 0x1.921fb54442d18p-4;
constexpr double kPi32Lo = 0x1.1a62633145c07p-58;
// Fast path: sin(pi f/32) ~ f (A1 + A3 f^2 + ... + A9 f^8), cos(pi f/32) - 1 ~ f^2 (B2 + ...
// + B8 f^6): Taylor coefficients of the scaled series, each rounded to double.
constexpr double kA1 = 0x1.921fb54442d18p-4;
constexpr double kA3 = -0x1.4abbce625be53p-13;
constexpr double kA5 = 0x1.466bc6775aae2p-24;
constexpr double kA7 = -0x1.32d2cce62bd86p-36;
constexpr double kA9 = 0x1.50783487ee782p-49;
constexpr double kB2 = -0x1.3bd3cc9be45dep-8;
constexpr double kB4 = 0x1.03c1f081b5ac4p-18;
constexpr double kB6 = -0x1.55d3c7e3cbffap-30;
constexpr double kB8 = 0x1.e1f506891babbp-43;
// 1/12!, 1/13!, 1/14! rounded to double (1/0! .. 1/11! come from inv_factorial).
constexpr double kInv12 = 0x1.1eed8eff8d898p-29;
constexpr double kInv13 = 0x1.6124613a86d09p-33;
constexpr double kInv14 = 0x1.93974a8c07c9dp-37;
// Fast-path rounding test: a result v within kFastUlps units in the last place of v (as a
// double) of a float32 rounding boundary goes to the accurate path.
constexpr uint64_t kFastUlps = 32;
}  // namespace consts

// Full 64 x 64 -> 128-bit product (integer, so identical everywhere).
REPMODE_HD void mul_64x64(uint64_t a, uint64_t b, uint64_t& hi, uint64_t& lo) {
#if defined(__CUDA_ARCH__)
  hi = __umul64hi(a, b);
  lo = a * b;
#elif defined(__SIZEOF_INT128__)
  unsigned __int128 p = (unsigned __int128)a * b;
  hi = uint64_t(p >> 64);
  lo = uint64_t(p);
#else
  uint64_t a0 = a & 0xffffffffull, a1 = a >> 32, b0 = b & 0xffffffffull, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffull) + (p10 & 0xffffffffull);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  lo = a * b;
#endif
}

// Bit position of the window start for |x| = m * 2^E: i0 = E - 1, position i0 + 127.
// float: E = biased exponent - 150; double: E = biased exponent - 1075.
REPMODE_HD int window_start_f32(uint32_t ax) { return int(ax >> 23) - 24; }
REPMODE_HD int window_start_f64(uint64_t ax) { return int(ax >> 52) - 949; }

// n = round(y) mod 64 and the signed top word of f = y - n, from the top word of y in
// fixed point (6 integer bits, 58 fraction bits). A tie cannot occur: pi is irrational.
REPMODE_HD uint64_t split_quadrant(uint64_t top, int& n) {
  uint64_t nn = (top + (uint64_t(1) << 57)) >> 58;
  n = int(nn);
  return top - (nn << 58);  // two's complement of f's top word, |f| <= 1/2
}

// Fast reduction for a float: |x| = m * 2^E with 2^-12 <= |x| < 2^128, a 128-bit window.
// Returns f as one double, with n.
//
// y = (m * (W0 2^64 + W1) mod 2^128) * 2^-122, computed exactly; the dropped tail of 2/pi
// is below 2^(24+6-128) = 2^-98. The fraction f = F * 2^-122 with F = F0 2^64 + P1
// (F0 signed) is converted exactly into a + b 2^-53 (a = floor(F0/32), b the next 53 bits,
// both exact doubles, the bits after b dropped: < 2^-106), so one rounding remains:
// f_hat = RN(a + b 2^-53) 2^-53, and |f_hat/f - 1| <= 2^-53 + (2^-98 + 2^-106)/2^-29.86
// < 2^-53 + 2^-68.
REPMODE_HD double reduce_fast_f32(uint32_t ax, int& n) {
  const uint64_t* t = two_over_pi_words();
  uint64_t m = (ax & 0x7fffffu) | 0x800000u;
  int p = window_start_f32(ax);
  uint64_t w0 = window64(t, p), w1 = window64(t, p + 64);
  uint64_t hi, lo;
  mul_64x64(m, w1, hi, lo);
  uint64_t f0 = split_quadrant(m * w0 + hi, n);
  double a = double(int64_t(f0) >> 5);                            // |a| <= 2^52, exact
  double b = double(int64_t(((f0 & 31) << 59 | lo >> 5) >> 11));  // < 2^53, exact
  return (a + b * 0x1p-53) * 0x1p-53;
}

// Accurate reduction (192-bit window) for m < 2^53 and window start p: y = n + f with f
// as a double-double. The dropped tail of 2/pi is below 2^(mbits+6-192) (2^-162 for
// floats, 2^-133 for doubles). F = F0 2^128 + P1 2^64 + P2 (F0 signed) is split exactly
// into a + b 2^-53 + c 2^-106 (a = floor(F0/32), b and c the next 53-bit pieces, all exact
// doubles; the bits after c are < 2^-106 in these units). two_sum(a, b 2^-53) is exact;
// adding c 2^-106 < 2^-53 to its low part rounds once, by < 2^-106 (|hi| + 1), and the
// final fast_two_sum is exact because |hi| >= |f| 2^53 - 2^-53 > 2^-9 (|f| > 2^-61.54).
// So |f.hi + f.lo - f| < 2^-105 |f| + 2^-159 + the tail: < 2^-104 |f| for floats and
// < 2^-71 |f| for doubles (tail 2^-133 against |f| > 2^-61.54).
REPMODE_HD DD reduce_accurate(uint64_t m, int p, int& n) {
  const uint64_t* t = two_over_pi_words();
  uint64_t w0 = window64(t, p), w1 = window64(t, p + 64), w2 = window64(t, p + 128);
  uint64_t h2, l2, h1, l1;
  mul_64x64(m, w2, h2, l2);
  mul_64x64(m, w1, h1, l1);
  uint64_t p1 = l1 + h2;
  uint64_t carry = p1 < l1 ? 1 : 0;
  uint64_t p0 = m * w0 + h1 + carry;
  uint64_t f0 = split_quadrant(p0, n);
  double a = double(int64_t(f0) >> 5);
  double b = double(int64_t(((f0 & 31) << 59 | p1 >> 5) >> 11));
  double c = double(int64_t((p1 & 0xffffull) << 37 | l2 >> 27));
  DD s = two_sum(a, b * 0x1p-53);
  s = fast_two_sum(s.hi, s.lo + c * 0x1p-106);
  return {s.hi * 0x1p-53, s.lo * 0x1p-53};
}

// sin(n pi/32 + r) for r = f pi/32 with relative error < 2^-95: f within 2^-104 relative
// (reduce_accurate), r = f * pi/32 (dd_mul and the 2^-110 constant: < 2^-103), then
//   sin r = r + r^3 P(r^2), P to the r^13 term (truncation < r^15/15! < 2^-101 |r|),
//   cos r - 1 = r^2 Q(r^2),  Q to the r^14 term (truncation < r^16/16! < 2^-103 r^2/2),
// by Horner's rule in double-double (|r| <= pi/64: every step adds a term at least 400
// times larger than the running product, so nothing cancels; < 2^-102 relative per step,
// < 2^-99 for each sum), and z = S + (S (cos r - 1) + C sin r) with S, C within 2^-106.
// The absolute error is < 2^-99 * (|S (cos r - 1)| + |C sin r| + |S|) * 4 < 2^-96, and
// |z| >= sin(pi/64) > 2^-4.4 unless S == 0, when z = C sin r exactly (C = +-1) with
// relative error < 2^-98. So < 2^-91.6 relative in every case.
REPMODE_HD DD sin_accurate(int n, DD f) {
  using namespace consts;
  DD r = dd_mul(f, DD{kPi32Hi, kPi32Lo});
  DD r2 = dd_mul(r, r);
  // P = -1/3! + r2/5! - ... + r2^5/13!
  DD p = {kInv13, 0.0};
  for (int k = 5; k >= 1; --k) {
    const double* c = inv_factorial(2 * k + 1);
    double sg = (k & 1) ? -1.0 : 1.0;
    p = dd_add(dd_mul(p, r2), DD{sg * c[0], sg * c[1]});
  }
  // Q = -1/2! + r2/4! - ... - r2^6/14!
  DD q = {-kInv14, 0.0};
  q = dd_add(dd_mul(q, r2), DD{kInv12, 0.0});
  for (int k = 5; k >= 1; --k) {
    const double* c = inv_factorial(2 * k);
    double sg = (k & 1) ? -1.0 : 1.0;
    q = dd_add(dd_mul(q, r2), DD{sg * c[0], sg * c[1]});
  }
  DD sr = dd_add(r, dd_mul(dd_mul(r, r2), p));  // sin r
  DD cm = dd_mul(r2, q);                        // cos r - 1
  const double* s = sin_pi32_row(n & 63);
  const double* c = sin_pi32_row((n + 16) & 63);
  DD S = {s[0], s[1]}, C = {c[0], c[1]};
  return dd_add(S, dd_add(dd_mul(S, cm), dd_mul(C, sr)));
}

REPMODE_HD_COLD float sincosf_accurate_path(uint32_t ax, int shift, uint32_t sign, int* path) {
  int n;
  DD f = reduce_accurate((ax & 0x7fffffu) | 0x800000u, window_start_f32(ax), n);
  DD z = sin_accurate(n + shift, f);
  uint64_t zs = bits_of(z.hi) & 0x8000000000000000ull;
  z = DD{abs_of(z.hi), double_from_bits(bits_of(z.lo) ^ zs)};
  bool hard;
  uint32_t b = round_to_f32(z.hi, z.lo, kAccurateEps, &hard);
  if (path) *path = hard ? 3 : 2;
  return float_from_bits(b | (uint32_t(zs >> 32) ^ sign));
}

// v ~ sin(|x|) (shift = 0) or cos(|x|) (shift = 16) for 2^-12 <= |x| < 2^128, as a double
// with relative error < 2^-49.6 (csrc/verify/math_cases/trig.cpp measures the largest).
//
// Error: with the reduction above (|f_hat/f - 1| < 2^-53 + 2^-68) and
// |f| <= 1/2, s = sin(pi f/32) (1 + ds) with |ds| < 5 * 2^-53 + 2^-60 < 2^-50.6 (the
// roundings of A1, of A1 + f2 A3, of the outer sum and product, and f_hat; the f^3..f^9
// terms are < 2^-11 of the total and carry < 2^-60; truncation < 2^-68) and
// c = (cos(pi f/32) - 1)(1 + dc), |dc| < 7 * 2^-53 + 2^-60 < 2^-50.1 (f2 adds two more).
// With |c| <= (pi/64)^2/2 < 2^-9.69, |s| <= sin(pi/64) < 2^-4.34, the absolute error of
// v = S_hi + (S_lo + (S_hi c + C_hi s)) before its last rounding is < 2^-106 (table) +
// |c| (dc + 2^-52) + |s| (ds + 2^-52) + 2^-52 (|s| + |c| + 2^-53) < 2^-54.1. If S != 0,
// |sin(n pi/32 + r)| >= sin(pi/64) > 2^-4.35, so with the last rounding the relative error
// is < 2^-49.6: within 10.3 units of v's last place (2^53 ulp > |v|). If S == 0, then
// S_hi = S_lo = 0, C_hi = +-1 and v = +-s exactly: relative error < 2^-50.6. The test in
// sincosf_impl takes the accurate path when v is within kFastUlps = 32 > 10.3 units of its
// last place of a float32 rounding boundary (the doubles whose low 29 bits are 0x10000000;
// those of other binades are >= 2^27 units away), so a passing v rounds like the exact
// value, by one IEEE conversion. sin(x) and cos(x) are transcendental for float x != 0 and never a
// boundary; the accurate path (< 2^-91.6) decides the rest against kAccurateEps (2^-85),
// and csrc/verify/math_cases/trig.cpp confirms over all 2^32 inputs that it always does.
REPMODE_HD double sincosf_fast(uint32_t ax, int shift) {
  using namespace consts;
  int n;
  double f = reduce_fast_f32(ax, n);
  const double* s = sin_pi32_row((n + shift) & 63);
  double c_hi = sin_pi32_row((n + shift + 16) & 63)[0];
  double f2 = f * f;
  double f4 = f2 * f2;
  double ps = f * ((kA1 + f2 * kA3) + f4 * ((kA5 + f2 * kA7) + f4 * kA9));
  double pc = f2 * ((kB2 + f2 * kB4) + f4 * (kB6 + f2 * kB8));
  return s[0] + (s[1] + (s[0] * pc + c_hi * ps));
}

// shift = 0: sin(x), shift = 16: cos(x). path as in cr_expf_impl (0 special, 1 fast,
// 2 accurate, 3 accurate but within its bound of a boundary: never observed).
REPMODE_HD float sincosf_impl(float xf, int shift, int* path) {
  uint32_t ux = bits_of(xf);
  uint32_t ax = ux & 0x7fffffffu;
  if (path) *path = 0;
  if (ax >= 0x7f800000u) return Canonical<float>::nan();  // +-inf, NaN
  // |x| < 2^-12: x^2/6 < 2^-25.5 and x^2/2 < 2^-25, so sin(x) lies strictly between x
  // and the boundary next to it towards zero, and cos(x) strictly between 1 - 2^-25 and 1.
  // Covers +-0 (sin(-0) = -0) and the subnormals without arithmetic.
  if (ax < 0x39800000u) return shift ? 1.0f : xf;
  uint32_t sign = shift ? 0u : (ux & 0x80000000u);  // sin is odd, cos even
  double v = sincosf_fast(ax, shift);
  uint64_t low = bits_of(v) & 0x1fffffffull;
  if (low - (0x10000000ull - consts::kFastUlps) > 2 * consts::kFastUlps) {
    if (path) *path = 1;
    return float_from_bits(bits_of(float(v)) ^ sign);
  }
  return sincosf_accurate_path(ax, shift, sign, path);
}

// float64: same reduction (192-bit window, every exponent) and table, then in double with
// the two leading terms added exactly (two_prod, two_sum):
//   z = S_hi + C_hi r_hi + [S_lo + (C_hi r_hi - p_hi) + C_hi r_lo + C_lo r_hi
//                           + C_hi (sin r - r) + S_hi (cos r - 1)],
// sin r - r ~ r^3 (-1/3! + ... + r^6/9!) and cos r - 1 ~ r^2 (-1/2! + ... + r^6/8!) on r_hi
// (truncation < 2^-68 |r| and < 2^-65).
// Bound < 0.53 ulp: the value before the last rounding is within 2^-58.2 |z| of z.
//  * S != 0: |S| < 2 |z| (n pi/32 is a >= pi/32 from the nearest multiple of pi, z at
//    least a - pi/64 from it, and sin(a)/sin(a - pi/64) <= 2 cos(pi/64)).
//    S_hi (cos r - 1) has the largest error: six roundings (r_hi^2 for r^2 included) of a
//    term < |S| (pi/64)^2/2 < |S| 2^-9.7, < 2^-50.4 of it: < 2^-59.1 |z|. The four
//    additions in and after the bracket round values < |S| 2^-9.7 + 2^-15.6 < 2^-8.4 |z|:
//    < 2^-59.4 |z| together. The rest (C_hi (sin r - r): < 2^-66.6; r within 2^-71
//    relative; the tables) is < 2^-64 |z|.
//  * S == 0: the bracket is C (sin r - r) + C r_lo, within 2^-62 |z|.
// With the last rounding: < 0.5 + 2^53 * 2^-58.2 < 0.53 ulp.
REPMODE_HD double sincos_f64(double x, int shift) {
  uint64_t ux = bits_of(x);
  uint64_t ax = ux & 0x7fffffffffffffffull;
  if (ax >= 0x7ff0000000000000ull) return Canonical<double>::nan();
  // sin: |x| < 2^-26, x^2/6 < 2^-54.5, rounds to x. cos: |x| < 2^-27, x^2/2 < 2^-55 < the
  // 2^-54 half-gap below 1, rounds to 1.
  if (shift == 0 && ax < 0x3e50000000000000ull) return x;
  if (shift != 0 && ax < 0x3e40000000000000ull) return 1.0;
  int n;
  DD f = reduce_accurate((ax & 0xfffffffffffffull) | 0x10000000000000ull, window_start_f64(ax), n);
  DD r = dd_mul(f, DD{consts::kPi32Hi, consts::kPi32Lo});
  const double* s = sin_pi32_row((n + shift) & 63);
  const double* c = sin_pi32_row((n + shift + 16) & 63);
  double r2 = r.hi * r.hi;
  const double* i3 = inv_factorial(3);
  const double* i5 = inv_factorial(5);
  const double* i7 = inv_factorial(7);
  const double* i9 = inv_factorial(9);
  const double* i2 = inv_factorial(2);
  const double* i4 = inv_factorial(4);
  const double* i6 = inv_factorial(6);
  const double* i8 = inv_factorial(8);
  double ps = (r.hi * r2) * ((-i3[0] + r2 * i5[0]) + (r2 * r2) * (-i7[0] + r2 * i9[0]));
  double pc = r2 * ((-i2[0] + r2 * i4[0]) + (r2 * r2) * (-i6[0] + r2 * i8[0]));
  DD p = two_prod(c[0], r.hi);
  DD t = two_sum(s[0], p.hi);
  double br = s[1] + (p.lo + ((c[0] * r.lo + c[1] * r.hi) + (c[0] * ps + s[0] * pc)));
  double z = t.hi + (t.lo + br);
  return double_from_bits(bits_of(z) ^ (shift ? 0ull : (ux & 0x8000000000000000ull)));
}

}  // namespace trig
}  // namespace math_detail

// Correctly rounded sin for float32. NaN and +-inf -> canonical NaN; sin(+-0) = +-0.
REPMODE_HD float cr_sinf(float x) { return math_detail::trig::sincosf_impl(x, 0, nullptr); }

// Correctly rounded cos for float32. NaN and +-inf -> canonical NaN; cos(+-0) = 1.
REPMODE_HD float cr_cosf(float x) { return math_detail::trig::sincosf_impl(x, 16, nullptr); }

// sin and cos for float64 over the whole range (exact reduction for every exponent); see
// sincos_f64 for the bounds. NaN and +-inf -> canonical NaN; sin(+-0) = +-0.
REPMODE_HD double repmode_sin(double x) { return math_detail::trig::sincos_f64(x, 0); }
REPMODE_HD double repmode_cos(double x) { return math_detail::trig::sincos_f64(x, 16); }

// The Taylor coefficients of sincos_turns: (-1)^k (pi/2)^(2k+1)/(2k+1)! (sine, 9 of them) and
// (-1)^k (pi/2)^(2k)/(2k)! (cosine, 10), rounded to double. Function-local tables, as
// elsewhere, so that device code can index them too.
REPMODE_HD const double* sin_turns_coef() {
  static constexpr double k[9] = {0x1.921fb54442d18p+0,  -0x1.4abbce625be53p-1,  0x1.466bc6775aae2p-4,
                                  -0x1.32d2cce62bd86p-8, 0x1.50783487ee782p-13,  -0x1.e3074fde8871fp-19,
                                  0x1.e8f434d018d63p-25, -0x1.6fadb9f155744p-31, 0x1.aaec32af93359p-38};
  return k;
}
REPMODE_HD const double* cos_turns_coef() {
  static constexpr double k[10] = {0x1.0000000000000p+0,  -0x1.3bd3cc9be45dep+0,  0x1.03c1f081b5ac4p-2,
                                   -0x1.55d3c7e3cbffap-6, 0x1.e1f506891babbp-11,  -0x1.a6d1f2a204a8cp-16,
                                   0x1.f9d38a3763cc3p-22, -0x1.b6e24f44b128fp-28, 0x1.20c62c2f2d7f5p-34,
                                   -0x1.2a0c591af8314p-41};
  return k;
}

// sin(2 pi u) and cos(2 pi u) for 0 <= u < 1 (the angle of the Box-Muller transform, in
// turns): reproducible, within a few ulps, and much cheaper than repmode_sin/repmode_cos because
// the reduction is exact by construction: t = 4u is exact, q = floor(t) is the quarter turn and
// f = t - q in [0, 1) is exact; for f > 1/2 the complementary angle g = 1 - f (exact,
// Sterbenz) swaps sin and cos, so only sin(pi g / 2) and cos(pi g / 2) with g in [0, 1/2] are
// evaluated: Taylor series in g (terms to g^17 and g^18; the first omitted terms are below
// 2^-61 and 2^-58 of the result), coefficients (-1)^k (pi/2)^n / n! rounded to double, Horner
// in g^2 with plain IEEE operations. Then the quarter turn q rotates (sin, cos).
REPMODE_HD void sincos_turns(double u, double* s, double* c) {
  const double* kS = sin_turns_coef();
  const double* kC = cos_turns_coef();
  const double t = 4.0 * u;
  const int q = int(t);  // 0..3
  const double f = t - double(q);
  // The quadrant and the swap are random in Box-Muller, so they select by bit masks instead
  // of branches (which would mispredict half the time); the arithmetic is the same either way.
  const uint64_t swap = uint64_t(0) - uint64_t(f > 0.5);  // all ones when f > 1/2
  const double g = double_from_bits((bits_of(1.0 - f) & swap) | (bits_of(f) & ~swap));
  const double g2 = g * g;
  double ps = kS[8];
  for (int k = 7; k >= 0; --k) ps = ps * g2 + kS[k];
  double pc = kC[9];
  for (int k = 8; k >= 0; --k) pc = pc * g2 + kC[k];
  const uint64_t sg = bits_of(g * ps), cg = bits_of(pc);                            // sin, cos of pi g / 2
  const uint64_t sn = (cg & swap) | (sg & ~swap), cs = (sg & swap) | (cg & ~swap);  // of pi f / 2
  const uint64_t odd = uint64_t(0) - uint64_t(q & 1);
  const uint64_t sign_s = uint64_t((q >> 1) & 1) << 63;        // quarter turns 2, 3: sin < 0
  const uint64_t sign_c = uint64_t((q ^ (q >> 1)) & 1) << 63;  // quarter turns 1, 2: cos < 0
  *s = double_from_bits(((cs & odd) | (sn & ~odd)) ^ sign_s);
  *c = double_from_bits(((sn & odd) | (cs & ~odd)) ^ sign_c);
}

}  // namespace repmode

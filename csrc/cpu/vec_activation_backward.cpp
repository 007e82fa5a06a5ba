// AVX2 and AVX-512 array versions of the float32 activation gradients (a = grad g, b = input x)
//   gelu_backward       narrow<float>(g * H), H = 0.5 erfc(-x/sqrt 2) + x exp(-x^2/2)/sqrt(2 pi)
//   gelu_tanh_backward  narrow<float>(g * H), H = s + 2 x s sn du (sigmoid pair of 2u)
//   silu_backward       narrow<float>(g * H), H = s (1 + x sn), (s, sn) = repmode_sigmoid_pair(x)
// with the bits of the scalar formulas (csrc/common/elementwise.h) on every input: H is the
// scalar code's double value, G = (double)g, and the result is the float32 rounding of the double
// product RN(G H).
//
// Method (Ziv's strategy, as erfinv's lanes in vec_special.cpp): the lane kernels
// (vec_activation_backward_lanes.h, compiled once per ISA) compute a cheap double approximation
// h(x) of H(x), with a bound |h - H| <= E sigma(x) measured on EVERY float32 x where a lane keeps
// h (csrc/verify/check_activation_backward.cpp, docs/evidence.md), sigma = |h| + w, w a constant
// W in a window around H's zero and 0 elsewhere (there H's own rounding error is absolute, so a
// relative bound would be useless). Per lane p = RN(G h) and rad = m (|p| + |G| w), m = kMargin
// >= 4 E + 2^-48; if RN(p - rad) and RN(p + rad) round to the same float32 f, f is the result:
//  * RN(G H) lies in [p - rad, p + rad] with room to spare: |G H - G h| <= E |G| sigma
//    = E (|G h| + |G| w); |G h - p| <= 2^-53 |p| and |RN(G H) - G H| <= 2^-53 |G H|; the two
//    computed ends move inward by at most 2^-53 (|p| + rad) and rad is computed with 3 roundings.
//    Altogether the true offset is below (E + 2^-51)(|p| + |G| w)(1 + 2^-50) < rad (1 - 2^-50).
//  * rounding a double to float32 (RNE, overflow to inf, subnormals) is monotone, so every
//    double in [p - rad, p + rad] rounds to f when both ends do. Zeros: a zero p (g = +-0) has
//    rad = 0 and the sign of G H (H != 0 where lanes keep h: the bound implies it), and f is
//    RN(p - 0), the sign of p. NaN ends (g NaN, g infinite) compare unequal: scalar formula.
// Lanes with x outside the kept range (NaN, infinities, the far tails below) and the n % (W U) tail
// take the scalar formula, which also gives NaN results their canonical pattern.
//
// h per op (t = |x|, all in double):
//  * exp_neg(y), -700 <= y <= 0: k = round(y 8/ln2) (the 1.5 2^52 shift), r = y - k ln2/8 (two
//    fma with ln2/8 = Hi + Lo), exp(r) by Taylor to r^7/7! (|r| < 0.0434: truncation < 2^-51),
//    times 2^(j/8) (j = k & 7, an 8-entry table read by vpermpd / vpermd), 2^((k - j)/8) added to
//    the exponent field (exact: the result is normal).
//  * gelu_backward, -8 < x < inf: e = exp_neg(max(-t^2/2, -700)), P(t) ~ Phi(-t) e^(t^2/2) on
//    piece k = floor(t) (k <= 7) (8 polynomials of degree 13 in s = t - k - 1/2, fitted by
//    benchmarks/gelu_backward_fast_fit.py), P = 0 for t >= 8; v = e (P - t/sqrt(2 pi)) ~ Phi(-t)
//    - t phi(t); h = v for x < 0 (Phi(x) + x phi(x)), 1 - v for x >= 0. Window: |x - x0| < 1/2,
//    x0 = -0.7517915 (H's zero), W = 1/4.
//  * silu_backward, |x| <= 64: e = exp_neg(-|x|), q = 1/(1 + e), (s, sn) = (q, e q) for x >= 0,
//    (e q, q) for x < 0; h = s fma(x, sn, 1). Window: |x - x0| < 1/8, x0 = -1.2784645, W = 1/32.
//  * gelu_tanh_backward, |x| <= 20: u = sqrt(2/pi)(x + 0.044715 x^3) as the scalar code forms it,
//    (s, sn) as above for z = 2u (|z| < 604), du = sqrt(2/pi)(1 + 0.134145 x^2),
//    h = s fma(2 x sn, du, 1). Window: |x - x0| < 1/8, x0 = -0.7524614, W = 1/32.
// The measured E and the resulting m are in kMargin's comment. The kept ranges cover every
// finite x an activation of a trained network meets in practice; randn inputs fall back to the
// scalar formula about once in 2 10^5 elements (erf form) or 2 10^6 (the others; docs/evidence.md).
#include "vec_activation_backward.h"

#include <cstring>

#include "../common/elementwise.h"

namespace repmode::cpu {
namespace ab_common {

constexpr double kRoundShift = 0x1.8p52;
constexpr double kPow52 = 0x1p52;
constexpr double kInf = __builtin_inf();
// exp_neg: 8/ln2, ln2/8 = kExpStepHi + kExpStepLo (+ < 2^-112), 1/j!, 2^(j/8) rounded to double.
constexpr double kExpInvStep = 0x1.71547652b82fep+3;
constexpr double kExpStepHi = 0x1.62e42fefa39efp-4;
constexpr double kExpStepLo = 0x1.abc9e3b39803fp-59;
constexpr double kExpTaylor[8] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040};
alignas(64) constexpr double kExp2Eighths[8] = {0x1.0000000000000p+0, 0x1.172b83c7d517bp+0, 0x1.306fe0a31b715p+0,
                                                0x1.4bfdad5362a27p+0, 0x1.6a09e667f3bcdp+0, 0x1.8ace5422aa0dbp+0,
                                                0x1.ae89f995ad3adp+0, 0x1.d5818dcfba487p+0};

// gelu_backward: kept for -8 < x < inf; P's table (benchmarks/gelu_backward_fast_fit.py; its bits
// never reach a result, only the measured bound matters); H's zero and the window.
constexpr double kGeluLow = 8.0;
constexpr int kGeluBwdTerms = 14;
// clang-format off
alignas(64) constexpr double kGeluBwdPieces[14][8] = {  // [degree - j][piece k]
    {-0x1.19f5cdcedc918p-21, -0x1.63eff294a6b3ep-26, -0x1.4da10d66cf726p-30, -0x1.b560d97b70e4ep-34, -0x1.7c665452efb82p-37, -0x1.a3af417cc190dp-40, -0x1.1adace7e9b09ap-42, -0x1.c39a6f0135821p-45},
    {0x1.1692fc571344ap-19, 0x1.929c02aae95f2p-24, 0x1.ae64cd5591758p-28, 0x1.3ff52cbfacab1p-31, 0x1.398215840d008p-34, 0x1.82ea026da1d25p-37, 0x1.21a093293541ep-39, 0x1.fe13568923678p-42},
    {-0x1.f49c708c4ffecp-18, -0x1.a679e2bc2dc0fp-22, -0x1.058dfb14eb423p-25, -0x1.be597967fd132p-29, -0x1.f14a125ecd9bcp-32, -0x1.59b782c18f130p-34, -0x1.21057582d877ep-36, -0x1.19f34246605bdp-38},
    {0x1.c9a3766c780adp-16, 0x1.bfc68cdf51da5p-20, 0x1.3fabbf0d5e967p-23, 0x1.383faafee1c18p-26, 0x1.8af5608080af0p-29, 0x1.3512f305f27d8p-31, 0x1.206f253ecc35dp-33, 0x1.37a3d65422798p-35},
    {-0x1.91e1c66902ff9p-14, -0x1.cab5ea003e7a2p-18, -0x1.7bc8100d0963ap-21, -0x1.aac3b825c252ep-24, -0x1.33afcd333ae09p-26, -0x1.0fefe67fde3bbp-28, -0x1.1c0c413900e7cp-30, -0x1.54a3734179669p-32},
    {0x1.50aacfba80593p-12, 0x1.c41a13cb8235cp-16, 0x1.b5403267b24eap-19, 0x1.1c506d42d932cp-21, 0x1.d597ccf08e588p-24, 0x1.d6826cfdd6c94p-26, 0x1.13dc20568d7fbp-27, 0x1.700b6a8399f56p-29},
    {-0x1.0c232dd9e49fbp-10, -0x1.ab8f466700680p-14, -0x1.e6e83c96b3b26p-17, -0x1.70cd45fb6444bp-19, -0x1.5eaec40ead30dp-21, -0x1.8ff51a24531d7p-23, -0x1.081490227961cp-24, -0x1.88f1ad60952a1p-26},
    {0x1.93b1d3e2bdb2ep-9, 0x1.82624657f8edap-12, 0x1.057885910f406p-14, 0x1.d0dbc4cf0cb38p-17, 0x1.ffea89f8d28c2p-19, 0x1.4dc8ce28020d7p-20, 0x1.f218716d7ec77p-22, 0x1.9e63ff89c08d2p-23},
    {-0x1.1d15054a77439p-7, -0x1.4bf38a32c8fe4p-10, -0x1.0dee210073f74p-12, -0x1.1c0d0d8208206p-14, -0x1.6caa288a6d7d2p-16, -0x1.1138dc9ab6343p-17, -0x1.ce785bb2c0598p-19, -0x1.af782e889f762p-20},
    {0x1.760aa3f7dde59p-6, 0x1.0d602eb82f432p-8, 0x1.0ac206d1ee58cp-10, 0x1.4fb4a0c0800f1p-12, 0x1.fa3b677d71909p-14, 0x1.b643d5fcfc6bbp-15, 0x1.a6741523baff7p-16, 0x1.bb5a0b9514de7p-17},
    {-0x1.c1dcef9577697p-5, -0x1.99805968b6aacp-7, -0x1.f6275d265f9e5p-9, -0x1.7e8220e103713p-10, -0x1.55bc008c2d6f9p-11, -0x1.57ff859618f9ap-12, -0x1.7b5fb856fe99dp-13, -0x1.c159ce7e6fdfbp-14},
    {0x1.e681dfd69bbafp-4, 0x1.204038e2e6c70p-5, 0x1.bf399da0dabb0p-7, 0x1.a29f04f4ff847p-8, 0x1.bfbaed8d60a1bp-9, 0x1.07e3e93700dcep-9, 0x1.4ea50718ea867p-10, 0x1.c0f9d24fda2d4p-11},
    {-0x1.cb062ba5c47fap-3, -0x1.71c04c317211ep-4, -0x1.75ab63fbbab50p-5, -0x1.b6038a80903c9p-6, -0x1.1be2c5acaa9ddp-6, -0x1.8b195531b3873p-7, -0x1.21ae9268527c7p-7, -0x1.b9fa6ad8c9c8ep-8},
    {0x1.66027ad4c24c0p-2, 0x1.a5705596892b8p-3, 0x1.21725231700b8p-3, 0x1.b396f9cf1e260p-4, 0x1.5b5acd3b15fbbp-4, 0x1.201fa9259b7acp-4, 0x1.eba5fe5b14b2ap-5, 0x1.ac6292bdbbfdcp-5},
};
// clang-format on
constexpr double kGeluRoot = -0x1.80ead197f00b4p-1;
constexpr double kGeluWindowHalf = 0.5;
constexpr double kGeluWindowW = 0.25;
// silu_backward: kept for |x| <= 64.
constexpr double kSiluHigh = 64.0;
constexpr double kSiluRoot = -0x1.474973c84120bp+0;
constexpr double kSiluWindowHalf = 0.125;
constexpr double kSiluWindowW = 0x1p-5;
// gelu_tanh_backward: kept for |x| <= 20.
constexpr double kGeluTanhHigh = 20.0;
constexpr double kGeluTanhRoot = -0x1.81429f9e97e4dp-1;
constexpr double kGeluTanhWindowHalf = 0.125;
constexpr double kGeluTanhWindowW = 0x1p-5;

// The rounding test's m per op (0: gelu_backward, 1: gelu_tanh_backward, 2: silu_backward):
// m >= 4 E + 2^-48, E the largest |h - H| / sigma over every float32 x where the lanes keep h,
// measured by csrc/verify/check_activation_backward.cpp on both ISA paths (docs/evidence.md has
// the values: E < 2^-48 for each op).
constexpr double kMargin[3] = {0x1p-45, 0x1p-45, 0x1p-45};

}  // namespace ab_common
}  // namespace repmode::cpu

#if defined(__x86_64__)

#include <immintrin.h>

#define AB_NS repmode_ab512
#define AB_W 8
#define AB_U 2
#define AB_TARGET "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"
#include "vec_activation_backward_lanes.h"
#undef AB_NS
#undef AB_W
#undef AB_U
#undef AB_TARGET

#define AB_NS repmode_ab256
#define AB_W 4
#define AB_U 4
#define AB_TARGET "avx2,fma"
#include "vec_activation_backward_lanes.h"
#undef AB_NS
#undef AB_W
#undef AB_U
#undef AB_TARGET

#endif

namespace repmode::cpu {

namespace {
int op_index(int op) { return op == int(EwOp::gelu_backward) ? 0 : op == int(EwOp::gelu_tanh_backward) ? 1 : 2; }
}  // namespace

bool act_backward_array_op(int op) {
  return op == int(EwOp::gelu_backward) || op == int(EwOp::gelu_tanh_backward) || op == int(EwOp::silu_backward);
}

double act_backward_margin(int op) { return ab_common::kMargin[op_index(op)]; }

void act_backward_array(int op, const float* g, const float* x, float* out, int64_t n, Isa isa) {
#if defined(__x86_64__)
  const int k = op_index(op);
  if (isa == Isa::avx512) {
    if (k == 0) return repmode_ab512::op_array<0>(g, x, out, n);
    if (k == 1) return repmode_ab512::op_array<1>(g, x, out, n);
    return repmode_ab512::op_array<2>(g, x, out, n);
  }
  if (isa == Isa::avx2) {
    if (k == 0) return repmode_ab256::op_array<0>(g, x, out, n);
    if (k == 1) return repmode_ab256::op_array<1>(g, x, out, n);
    return repmode_ab256::op_array<2>(g, x, out, n);
  }
#endif
  (void)op, (void)g, (void)x, (void)out, (void)n, (void)isa;
}

void act_backward_approx(int op, const float* x, double* h, double* w, uint8_t* kept, int64_t n, Isa isa) {
#if defined(__x86_64__)
  const int k = op_index(op);
  if (isa == Isa::avx512) {
    if (k == 0) return repmode_ab512::op_approx<0>(x, h, w, kept, n);
    if (k == 1) return repmode_ab512::op_approx<1>(x, h, w, kept, n);
    return repmode_ab512::op_approx<2>(x, h, w, kept, n);
  }
  if (isa == Isa::avx2) {
    if (k == 0) return repmode_ab256::op_approx<0>(x, h, w, kept, n);
    if (k == 1) return repmode_ab256::op_approx<1>(x, h, w, kept, n);
    return repmode_ab256::op_approx<2>(x, h, w, kept, n);
  }
#endif
  (void)op, (void)x, (void)h, (void)w, (void)kept, (void)n, (void)isa;
}

}  // namespace repmode::cpu

// The lane kernels of csrc/cpu/vec_activation_backward.cpp: float32 gelu_backward (erf form),
// gelu_tanh_backward and silu_backward on W double lanes. Included twice by that file (no include
// guard), once per ISA, with
//   AB_NS      the namespace (a distinct one per ISA, so no inline function is shared between
//              the AVX2 and AVX-512 copies)
//   AB_W       lanes per hardware vector: 8 (AVX-512) or 4 (AVX2)
//   AB_U       hardware vectors per loop iteration (independent dependency chains)
//   AB_TARGET  the target attribute string
// and after <immintrin.h>, <cstdint>, <cstring> and elementwise.h.
// + - * / are GCC vector-extension operations (one IEEE operation per lane; the package's
// -ffp-contract=off keeps a * b + c two roundings); fma is an explicit vector fma. The two ISA
// copies perform the same operations on the same values, so h is the same on both paths (the
// verifier measures both anyway).
namespace AB_NS {

using namespace repmode;
using namespace repmode::cpu;

#define AB_FN static inline __attribute__((target(AB_TARGET), always_inline))
#define LANES_W AB_W
#define LANES_FN AB_FN
#include "vec_double_lanes.inc"  // hd, hl, hf, hi, vfma, mask64, mask32, splat, blend
#undef LANES_W
#undef LANES_FN

#if AB_W == 8
AB_FN hd vfloor(hd a) { return (hd)_mm512_roundscale_pd((__m512d)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
// An 8-entry table lookup per lane: entry j (0..7, the low 3 bits of the index) of tab[0..7].
struct Idx {
  __m512i j;
};
AB_FN Idx make_idx(hl j) { return Idx{(__m512i)j}; }
AB_FN hd lookup(const Idx& ix, const double* tab) { return (hd)_mm512_permutexvar_pd(ix.j, _mm512_loadu_pd(tab)); }
#else
AB_FN hd vfloor(hd a) { return (hd)_mm256_floor_pd((__m256d)a); }
// The 8-entry lookup on AVX2: the 32-bit halves (2j, 2j + 1) of entry j & 3 picked from each half
// of the table by vpermd (it reads the low 3 bits of each index), then the half chosen by j & 4.
struct Idx {
  __m256i p;
  __m256d upper;  // sign bit set where j & 4
};
AB_FN Idx make_idx(hl j) {
  const __m256i two = _mm256_slli_epi64((__m256i)j, 1);
  // low halves 2j, high halves 2j + 1 (j may be negative: the blend drops 2j's high half)
  const __m256i p = _mm256_blend_epi32(two, _mm256_slli_epi64(_mm256_add_epi64(two, _mm256_set1_epi64x(1)), 32), 0xaa);
  return Idx{p, _mm256_castsi256_pd(_mm256_slli_epi64((__m256i)j, 61))};
}
AB_FN hd lookup(const Idx& ix, const double* tab) {
  const __m256i lo = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i*)tab), ix.p);
  const __m256i up = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i*)(tab + 4)), ix.p);
  return (hd)_mm256_blendv_pd(_mm256_castsi256_pd(lo), _mm256_castsi256_pd(up), ix.upper);
}
#endif

AB_FN hd vabs(hd a) { return (hd)((hl)a & int64_t(0x7fffffffffffffffll)); }

// exp(y) for -700 <= y <= 0 (vec_activation_backward.cpp: relative error < 2^-50): y = k ln2/8 + r,
// |r| <= ln2/16 + 2^-40, exp(r) by its Taylor polynomial to r^7/7!, 2^(j/8) (j = k & 7) from an
// 8-entry table, 2^((k - j)/8) added to the exponent field (the result is normal).
AB_FN hd exp_neg(hd y) {
  using namespace ab_common;
  const hd t = vfma(y, splat(kExpInvStep), splat(kRoundShift));
  const hd kd = t - kRoundShift;  // k = the integer nearest y 8/ln2
  const hd r = vfma(-kd, splat(kExpStepLo), vfma(-kd, splat(kExpStepHi), y));
  const hl k = (hl)t - (hl)splat(kRoundShift);
  hd p = splat(kExpTaylor[7]);
#pragma GCC unroll 8
  for (int j = 6; j >= 0; --j) p = vfma(p, r, splat(kExpTaylor[j]));
  const hd v = lookup(make_idx(k), kExp2Eighths) * p;
  return (hd)((hl)v + ((k & ~int64_t(7)) << 49));
}

// The lanes' approximation of an op's double factor H(x) (vec_activation_backward.cpp):
// h, the window term w (sigma = |h| + w is the scale of the error bound) and the kept lanes.
struct Approx {
  hd h, w;
  unsigned kept;
};

// ---------------------------------------------------------------- gelu_backward (erf)

AB_FN Approx gelu_approx(hd X) {
  using namespace ab_common;
  Approx o;
  o.kept = mask64((X > -kGeluLow) & (X < kInf));  // NaN, x <= -8, +inf: the scalar formula
  const hd t = vabs(blend(X == X, X, splat(0.0)));
  hd y = -0.5 * (t * t);
  y = blend(y < -700.0, splat(-700.0), y);
  const hd e = exp_neg(y);  // ~ exp(-t^2/2)
  // P(t) ~ Phi(-t) e^(t^2/2) on piece k = floor(t) (k <= 7), in s = t - (k + 1/2)
  const hd tc = blend(t < kGeluLow, t, splat(7.5));  // t >= 8: any piece (P is dropped below)
  const hd kd = vfloor(tc);
  const hd s = tc - (kd + 0.5);
  const Idx ix = make_idx((hl)(kd + kPow52) - (hl)splat(kPow52));
  hd P = lookup(ix, kGeluBwdPieces[0]);
#pragma GCC unroll 16
  for (int j = 1; j < kGeluBwdTerms; ++j) P = vfma(P, s, lookup(ix, kGeluBwdPieces[j]));
  P = blend(t < kGeluLow, P, splat(0.0));                        // t >= 8 (x >= 8): Phi(-t) dropped
  const hd ew = e * vfma(splat(-ew_detail::kInvSqrt2Pi), t, P);  // ~ Phi(-t) - t phi(t)
  o.h = blend(X < 0.0, ew, 1.0 - ew);
  o.w = (hd)((hl)splat(kGeluWindowW) & (vabs(X - kGeluRoot) < kGeluWindowHalf));
  return o;
}

// ---------------------------------------------------------------- sigmoid-based (silu, gelu_tanh)

// s = sigmoid(z), sn = sigmoid(-z) for |z| <= 700 (one division).
struct SigPair {
  hd s, sn;
};
AB_FN SigPair sigmoid_pair(hd z) {
  const hd e = exp_neg(-vabs(z));
  const hd q = 1.0 / (1.0 + e);
  const hd eq = e * q;
  const hl pos = z >= 0.0;
  return SigPair{blend(pos, q, eq), blend(pos, eq, q)};
}

AB_FN Approx silu_approx(hd X) {
  using namespace ab_common;
  Approx o;
  o.kept = mask64(vabs(X) <= kSiluHigh);  // NaN, |x| > 64: the scalar formula
  const hd x = blend(vabs(X) <= kSiluHigh, X, splat(0.0));
  const SigPair sp = sigmoid_pair(x);
  o.h = sp.s * vfma(x, sp.sn, splat(1.0));
  o.w = (hd)((hl)splat(kSiluWindowW) & (vabs(X - kSiluRoot) < kSiluWindowHalf));
  return o;
}

AB_FN Approx gelu_tanh_approx(hd X) {
  using namespace ab_common;
  using ew_detail::kGeluKappa;
  using ew_detail::kGeluKappa3;
  using ew_detail::kSqrt2OverPi;
  Approx o;
  o.kept = mask64(vabs(X) <= kGeluTanhHigh);  // NaN, |x| > 20: the scalar formula
  const hd x = blend(vabs(X) <= kGeluTanhHigh, X, splat(0.0));
  const hd x2 = x * x;
  const hd u = kSqrt2OverPi * (x + kGeluKappa * (x2 * x));
  const SigPair sp = sigmoid_pair(u + u);  // |u + u| < 604
  const hd du = kSqrt2OverPi * (1.0 + kGeluKappa3 * x2);
  o.h = sp.s * vfma((x + x) * sp.sn, du, splat(1.0));
  o.w = (hd)((hl)splat(kGeluTanhWindowW) & (vabs(X - kGeluTanhRoot) < kGeluTanhWindowHalf));
  return o;
}

// Op 0: gelu_backward, 1: gelu_tanh_backward, 2: silu_backward.
template <int Op>
AB_FN Approx approx(hd X) {
  if constexpr (Op == 0) return gelu_approx(X);
  if constexpr (Op == 1) return gelu_tanh_approx(X);
  return silu_approx(X);
}

// Ziv's test on W lanes: p = G h; the lanes where p - rad and p + rad round to the same float32
// (rad = m (|p| + |G| w), vec_activation_backward.cpp has why that float is the scalar result)
// get it in *y; returns the lanes to recompute with the scalar formula (the rest).
AB_FN unsigned ziv_lanes(hd G, const Approx& a, double m, hf* y) {
  const hd p = G * a.h;
  const hd rad = m * (vabs(p) + vabs(G) * a.w);
  const hf lo = __builtin_convertvector(p - rad, hf);
  const hf up = __builtin_convertvector(p + rad, hf);
  *y = lo;
  return ~(mask32(lo == up) & a.kept) & ((1u << AB_W) - 1);
}

template <int Op>
float op_scalar(float g, float x) {
  constexpr EwOp op = Op == 0 ? EwOp::gelu_backward : Op == 1 ? EwOp::gelu_tanh_backward : EwOp::silu_backward;
  return EwFormula<float, op>::apply(g, x, 0.0f, EwParams<float>{0.0, 0.0, 0.0});
}

// out[i] = op(g[i], x[i]): AB_U vectors of W lanes per step; the lanes ziv_lanes reports and the
// n % (W U) tail by the scalar formula. out may be g or x (both are read before the store).
template <int Op>
__attribute__((target(AB_TARGET))) void op_array(const float* g, const float* x, float* out, int64_t n) {
  const double m = ab_common::kMargin[Op];
  int64_t i = 0;
  for (; i + AB_W * AB_U <= n; i += AB_W * AB_U) {
    hf xv[AB_U], gv[AB_U], y[AB_U];
    unsigned bad[AB_U];
#pragma GCC unroll 8
    for (int u = 0; u < AB_U; ++u) {
      std::memcpy(&xv[u], x + i + AB_W * u, sizeof(hf));
      std::memcpy(&gv[u], g + i + AB_W * u, sizeof(hf));
    }
#pragma GCC unroll 8
    for (int u = 0; u < AB_U; ++u)
      bad[u] = ziv_lanes(__builtin_convertvector(gv[u], hd), approx<Op>(__builtin_convertvector(xv[u], hd)), m, &y[u]);
#pragma GCC unroll 8
    for (int u = 0; u < AB_U; ++u) {
      std::memcpy(out + i + AB_W * u, &y[u], sizeof(hf));
      if (__builtin_expect(bad[u] != 0, 0))
        for (int l = 0; l < AB_W; ++l)
          if (bad[u] & (1u << l)) out[i + AB_W * u + l] = op_scalar<Op>(gv[u][l], xv[u][l]);
    }
  }
  for (; i < n; ++i) out[i] = op_scalar<Op>(g[i], x[i]);
}

// For the verifier: h, w and kept (0/1) for each x[i] (the tail in a padded block).
template <int Op>
__attribute__((target(AB_TARGET))) void op_approx(const float* x, double* h, double* w, uint8_t* kept, int64_t n) {
  for (int64_t i = 0; i < n; i += AB_W) {
    hf xv = {};
    const int64_t len = n - i < AB_W ? n - i : AB_W;
    std::memcpy(&xv, x + i, sizeof(float) * len);
    const Approx a = approx<Op>(__builtin_convertvector(xv, hd));
    for (int64_t l = 0; l < len; ++l) {
      h[i + l] = a.h[l];
      w[i + l] = a.w[l];
      kept[i + l] = (a.kept >> l) & 1;
    }
  }
}

#undef AB_FN

}  // namespace AB_NS

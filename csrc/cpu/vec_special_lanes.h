// The lane kernels of csrc/cpu/vec_special.cpp: float32 lgamma, digamma and erfinv
// (csrc/common/math_special.h's float32 definitions) on W double lanes. Included twice by
// vec_special.cpp (no include guard), once per ISA, with
//   VS_NS      the namespace (a distinct one per ISA, so no inline function is shared between
//              the AVX2 and AVX-512 copies)
//   VS_W       lanes per vector: 8 (AVX-512) or 4 (AVX2)
//   VS_TARGET  the target attribute string
//
// Every function below performs, per lane, exactly the IEEE double operations of the scalar
// function it names, in the same order: + - * / and sqrt as plain vector operations (GCC vector
// extensions, which compile to one vector instruction each; the package's -ffp-contract=off keeps
// a * b + c two roundings, as in the scalar code), repmode_fma as an explicit vector fma, the same
// coefficient tables (read by the scalar code's own accessor functions), a branch of the scalar
// code as a computation of both sides and a blend, a loop with a lane-dependent trip count as the
// longest trip with the lanes that are done masked out. Integer-valued doubles are converted with
// exact bit tricks (no rounding in them). Lanes whose path the vector code does not follow are
// reported in `bad` and recomputed by the scalar formula by the caller.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace VS_NS {

using namespace repmode;
using namespace repmode::special_detail;

// vd: VS_L = VS_W * VS_U double lanes held as VS_U hardware vectors (hd); every operation below
// applies one hardware instruction to each of them in turn, so a lane kernel runs VS_U independent
// dependency chains at once (the series are long Horner chains, latency-bound on one vector).
// Lane l is element l % VS_W of vector l / VS_W: the struct's bytes are the lanes in order.
#define VS_L (VS_W * VS_U)
typedef double hd __attribute__((vector_size(VS_W * 8)));  // one hardware vector
typedef int64_t hl __attribute__((vector_size(VS_W * 8)));
typedef uint64_t hu __attribute__((vector_size(VS_W * 8)));
struct vd {
  hd h[VS_U];
};
struct vl {
  hl h[VS_U];
};

#define VS_FN static inline __attribute__((target(VS_TARGET), always_inline))
#define VS_OP inline __attribute__((target(VS_TARGET), always_inline))
#define VS_EACH _Pragma("GCC unroll 16") for (int u = 0; u < VS_U; ++u)

VS_FN vd splat(double c) {
  // one broadcast instruction, c's bits in every lane (a lane-by-lane assignment compiles to W
  // dependent masked broadcasts)
#if VS_W == 8
  const hd b = (hd)_mm512_set1_pd(c);
#else
  const hd b = (hd)_mm256_set1_pd(c);
#endif
  vd r;
  VS_EACH r.h[u] = b;
  return r;
}
VS_FN vl splat_l(int64_t c) {
  hl b = {};
  b = b + c;
  vl r;
  VS_EACH r.h[u] = b;
  return r;
}
// + - * / (each one IEEE operation per lane) and negation
#define VS_BINARY(OP)                                            \
  VS_OP vd operator OP(vd a, vd b) {                             \
    vd r;                                                        \
    VS_EACH r.h[u] = a.h[u] OP b.h[u];                           \
    return r;                                                    \
  }                                                              \
  VS_OP vd operator OP(vd a, double b) { return a OP splat(b); } \
  VS_OP vd operator OP(double a, vd b) { return splat(a) OP b; }
VS_BINARY(+)
VS_BINARY(-)
VS_BINARY(*)
VS_BINARY(/)
#undef VS_BINARY
VS_OP vd operator-(vd a) {
  vd r;
  VS_EACH r.h[u] = -a.h[u];
  return r;
}
// integer lanes: & | + - ~ and shifts
#define VS_BINARY_L(OP)                \
  VS_OP vl operator OP(vl a, vl b) {   \
    vl r;                              \
    VS_EACH r.h[u] = a.h[u] OP b.h[u]; \
    return r;                          \
  }
VS_BINARY_L(&)
VS_BINARY_L(|)
VS_BINARY_L(+)
VS_BINARY_L(-)
#undef VS_BINARY_L
VS_OP vl& operator|=(vl& a, vl b) { return a = a | b; }
VS_OP vl operator~(vl a) {
  vl r;
  VS_EACH r.h[u] = ~a.h[u];
  return r;
}
VS_OP vl operator<<(vl a, int k) {
  vl r;
  VS_EACH r.h[u] = a.h[u] << k;
  return r;
}
// logical shift right
VS_FN vl srl(vl a, int k) {
  vl r;
  VS_EACH r.h[u] = (hl)((hu)a.h[u] >> k);
  return r;
}
VS_FN vl bits(vd x) {
  vl r;
  VS_EACH r.h[u] = (hl)x.h[u];
  return r;
}
VS_FN vd from_bits(vl x) {
  vd r;
  VS_EACH r.h[u] = (hd)x.h[u];
  return r;
}
// a where m (all ones), else b (m all zeros)
VS_FN vl blend_l(vl m, vl a, vl b) { return (a & m) | (b & ~m); }
VS_FN vd blend(vl m, vd a, vd b) { return from_bits(blend_l(m, bits(a), bits(b))); }

#if VS_W == 8
VS_FN hd hw_fma(hd a, hd b, hd c) { return (hd)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c); }
VS_FN hd hw_sqrt(hd a) { return (hd)_mm512_sqrt_pd((__m512d)a); }
VS_FN hd hw_round_even(hd a) {
  return (hd)_mm512_roundscale_pd((__m512d)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
VS_FN hd hw_floor(hd a) { return (hd)_mm512_roundscale_pd((__m512d)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
VS_FN hd hw_gather(const double* base, hl idx) { return (hd)_mm512_i64gather_pd((__m512i)idx, base, 8); }
template <int P>
VS_FN hl hw_cmp(hd a, hd b) {
  return (hl)_mm512_movm_epi64(_mm512_cmp_pd_mask((__m512d)a, (__m512d)b, P));
}
VS_FN hl hw_gt_l(hl a, hl b) { return (hl)_mm512_movm_epi64(_mm512_cmpgt_epi64_mask((__m512i)a, (__m512i)b)); }
#else
VS_FN hd hw_fma(hd a, hd b, hd c) { return (hd)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
VS_FN hd hw_sqrt(hd a) { return (hd)_mm256_sqrt_pd((__m256d)a); }
VS_FN hd hw_round_even(hd a) { return (hd)_mm256_round_pd((__m256d)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
VS_FN hd hw_floor(hd a) { return (hd)_mm256_round_pd((__m256d)a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
VS_FN hd hw_gather(const double* base, hl idx) { return (hd)_mm256_i64gather_pd(base, (__m256i)idx, 8); }
template <int P>
VS_FN hl hw_cmp(hd a, hd b) {
  return (hl)_mm256_castpd_si256(_mm256_cmp_pd((__m256d)a, (__m256d)b, P));
}
VS_FN hl hw_gt_l(hl a, hl b) { return (hl)_mm256_cmpgt_epi64((__m256i)a, (__m256i)b); }
#endif

VS_FN vd vfma(vd a, vd b, vd c) {
  vd r;
  VS_EACH r.h[u] = hw_fma(a.h[u], b.h[u], c.h[u]);
  return r;
}
VS_FN vd vsqrt(vd a) {
  vd r;
  VS_EACH r.h[u] = hw_sqrt(a.h[u]);
  return r;
}
VS_FN vd vround_even(vd a) {
  vd r;
  VS_EACH r.h[u] = hw_round_even(a.h[u]);
  return r;
}
VS_FN vd vfloor(vd a) {
  vd r;
  VS_EACH r.h[u] = hw_floor(a.h[u]);
  return r;
}
VS_FN vd gather(const double* base, vl idx) {
  vd r;
  VS_EACH r.h[u] = hw_gather(base, idx.h[u]);
  return r;
}
// Comparisons as all-ones / all-zeros lane masks (ordered, non-signalling, as C's < etc.).
template <int P>
VS_FN vl cmp(vd a, vd b) {
  vl r;
  VS_EACH r.h[u] = hw_cmp<P>(a.h[u], b.h[u]);
  return r;
}
VS_FN vl lt(vd a, vd b) { return cmp<_CMP_LT_OQ>(a, b); }
VS_FN vl le(vd a, vd b) { return cmp<_CMP_LE_OQ>(a, b); }
VS_FN vl ge(vd a, vd b) { return cmp<_CMP_GE_OQ>(a, b); }
VS_FN vl eq(vd a, vd b) { return cmp<_CMP_EQ_OQ>(a, b); }
// a > b for int64 lanes
VS_FN vl gt_l(vl a, vl b) {
  vl r;
  VS_EACH r.h[u] = hw_gt_l(a.h[u], b.h[u]);
  return r;
}

// An integer |k| < 2^51 as a double, exactly (1.5 2^52 + k is exact in the binade [2^52, 2^53)).
VS_FN vd int_to_double(vl k) { return from_bits(k + splat_l(0x4338000000000000ll)) - splat(0x1.8p52); }
// An integer-valued double |d| < 2^51 as an integer, exactly.
VS_FN vl double_to_int(vd d) { return bits(d + splat(0x1.8p52)) - splat_l(0x4338000000000000ll); }
// |x| by clearing the sign bit.
VS_FN vd vabs(vd x) { return from_bits(bits(x) & splat_l(0x7fffffffffffffffll)); }

// ---- double-double arithmetic (csrc/common/math.h) ----
struct VDD {
  vd hi, lo;
};
VS_FN VDD two_sum(vd a, vd b) {
  vd s = a + b;
  vd bb = s - a;
  vd aa = s - bb;
  return {s, (a - aa) + (b - bb)};
}
VS_FN VDD fast_two_sum(vd a, vd b) {
  vd s = a + b;
  return {s, b - (s - a)};
}
VS_FN VDD two_prod(vd a, vd b) {
  vd p = a * b;
  return {p, vfma(a, b, -p)};
}
VS_FN VDD dd_add(VDD a, VDD b) {
  VDD s = two_sum(a.hi, b.hi);
  VDD t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
VS_FN VDD dd_mul_d(VDD a, vd b) {
  VDD p = two_prod(a.hi, b);
  return fast_two_sum(p.hi, p.lo + a.lo * b);
}
VS_FN VDD dd_blend(vl m, VDD a, VDD b) { return {blend(m, a.hi, b.hi), blend(m, a.lo, b.lo)}; }

// math_detail::log_fast(split_double(x)) for a positive normal finite double x (log_dd of
// math_special.h; repmode_log(x) is its hi).
VS_FN VDD log_fast(vd x) {
  using namespace repmode::math_detail::consts;
  const vl ux = bits(x);
  const vl e = srl(ux, 52) - splat_l(1023);
  const vl mb = (ux & splat_l(0xfffffffffffffll)) | splat_l(int64_t(1023) << 52);
  // log_reduce
  const vl j = srl(mb, 45) & splat_l(127);
  const vl j3 = j + j + j;
  const double* tab = repmode::math_detail::log_row(0);
  const vd c = gather(tab, j3);
  const vd Lhi = gather(tab + 1, j3);
  const vd Llo = gather(tab + 2, j3);
  const vd M = from_bits(mb);
  const vd mhi = from_bits(mb & splat_l(~int64_t(0x1ff)));
  const vd r = (mhi * c - 1.0) + (M - mhi) * c;
  const vd ed = int_to_double(e - gt_l(j, splat_l(52)));  // e + (j >= 53 ? 1 : 0); the compare gives -1
  // log_fast
  const vd h = ed * repmode::math_detail::kLn2Hi + Lhi;
  const vd lo = ed * repmode::math_detail::kLn2Mid + Llo;
  const vd r2 = r * r;
  const vd r4 = r2 * r2;
  const vd q = ((-0.5 + kP3 * r) + r2 * (kP4 + kP5 * r)) + r4 * ((kP6 + kP7 * r) + r2 * (kP8 + kP9 * r));
  const VDD s = fast_two_sum(h, r);
  return fast_two_sum(s.hi, s.lo + (r2 * q + lo));
}

// special_detail::series: z (c[0] + c[1] z + ... + c[n-1] z^(n-1)) by Horner's rule.
VS_FN vd series(const double* c, int n, vd z) {
  vd p = splat(c[n - 1]);
  for (int k = n - 2; k >= 0; --k) p = p * z + c[k];
  return p * z;
}
// special_detail::series2: the even and odd coefficients by two Horner chains.
VS_FN vd series2(const double* c, int n, vd z) {
  vd y = z * z;
  vd e = splat(c[n - 2]), o = splat(c[n - 1]);
  for (int k = n - 4; k >= 0; k -= 2) {
    e = e * y + c[k];
    o = o * y + c[k + 1];
  }
  return z * (e + z * o);
}
VS_FN vd lgamma2(vd z) { return series2(lgamma2_coef(), 40, z); }
VS_FN vd lgamma1(vd z) { return series2(lgamma1_coef(), 30, z); }

// ============================== lgamma (lgamma_pos) ==============================

// x < 1/4: lgamma1(x) - repmode_log(x).
VS_FN vd lgamma_small(vd x) { return lgamma1(x) - log_fast(x).hi; }
// 3/4 <= x <= 5/4 (x != 1): lgamma1(x - 1).
VS_FN vd lgamma_near1(vd x) { return lgamma1(x - 1.0); }
// 5/4 < x < 11/4 (x != 2): lgamma2(x - 2).
VS_FN vd lgamma_near2(vd x) { return lgamma2(x - 2.0); }
// 11/4 <= x < 12: log((x - 1)(x - 2)...(x - n)) + lgamma2(x - m), m = round(x), n = m - 2 <= 10.
VS_FN vd lgamma_mid(vd x) {
  const vd m = vround_even(x);
  const vd z = x - m;
  const vl n = double_to_int(m) - splat_l(2);
  VDD p = {x - 1.0, splat(0.0)};
  for (int k = 2; k <= 10; ++k) p = dd_blend(~gt_l(splat_l(k), n), dd_mul_d(p, x - double(k)), p);
  const VDD l = log_fast(p.hi);
  return l.hi + (l.lo + p.lo / p.hi + lgamma2(z));
}
// 12 <= x < inf: Stirling. A lane whose r.hi overflows (never for a float32 x) goes to the scalar code.
VS_FN vd lgamma_large(vd x, vl& bad) {
  const double* sc = stirling_coef();
  const VDD l = log_fast(x);
  const VDD lm1 = dd_add(l, VDD{splat(-1.0), splat(0.0)});
  VDD r = dd_add(dd_mul_d(lm1, x), VDD{-0.5 * lm1.hi, -0.5 * lm1.lo});
  r = dd_add(r, VDD{splat(kHalfLog2PiMinusHalfHi), splat(kHalfLog2PiMinusHalfLo)});
  const vd ix = 1.0 / x;
  const vd s = ix * series(sc + 1, 9, ix * ix) + ix * sc[0];
  bad |= eq(r.hi, splat(special_detail::inf64()));
  return r.hi + (r.lo + s);
}

// ============================== digamma (digamma_pos) ==============================

VS_FN vd digamma_root(vd t) { return series(digamma_root_coef(), 40, t); }
VS_FN VDD recip_dd(vd d) {
  const vd q = 1.0 / d;
  return {q, vfma(-q, d, splat(1.0)) / d};
}
// 2^-60 <= x < 1: S(t) - 1/x.
VS_FN vd digamma_small(vd x) {
  const vd t = (x - kPsiRootM1Hi) - kPsiRootM1Lo;
  const VDD q = recip_dd(x);
  return (digamma_root(t) - q.lo) - q.hi;
}
// 1 <= x <= 2: S(x - x0).
VS_FN vd digamma_root_region(vd x) { return digamma_root((x - kPsiRootHi) - kPsiRootLo); }
// 2 < x < 10: S(y - x0) + sum_(k=1..n) 1/(x - k), n = floor(x) - 1 <= 8, y = x - n.
VS_FN vd digamma_mid(vd x) {
  const vl n = double_to_int(vfloor(x)) - splat_l(1);
  VDD s = recip_dd(x - 1.0);
  for (int k = 2; k <= 8; ++k) s = dd_blend(~gt_l(splat_l(k), n), dd_add(s, recip_dd(x - double(k))), s);
  const vd y = x - int_to_double(n);
  s = dd_add(s, VDD{digamma_root((y - kPsiRootHi) - kPsiRootLo), splat(0.0)});
  return s.hi + s.lo;
}
// 10 <= x < inf: log x - (1/(2x) + x^-2 P(x^-2)).
VS_FN vd digamma_large(vd x) {
  const VDD l = log_fast(x);
  const vd ix2 = 1.0 / (x * x);
  const vd corr = 0.5 / x + series(digamma_asym_coef(), 10, ix2);
  return l.hi + (l.lo - corr);
}

// ============================== erfinv (special_erfinv_def, float32) ==============================

// The lanes do not follow special_erfinv_def's operations (a 48-term series below 3/4, Giles'
// start and two Newton steps on erfc above: ~8 ns per element on AVX-512). They compute a cheap
// double approximation r = f(|x|) of the float32 definition's double D(|x|) (tables and pieces in
// vec_special.cpp) and keep it only where Ziv's test proves that D rounds to the same float32:
// with E >= |f - D| / D (measured on every float32 of the region, csrc/verify/check_erfinv_fast.cpp)
// and the region's margin m >= 4 E, D lies in [r / (1 + E), r / (1 - E)], which contains neither
// RN(r (1 - m)) nor RN(r (1 + m)) (each within 2^-53 of r (1 -+ m)); where both round to the same
// float32, so does D (rounding is monotonic). Other lanes (a fraction ~2^-13 of them) are
// reported in `bad` and get the scalar formula. The result is narrow(D(x)) on every lane either
// way; D is odd (special_erfinv_def works on |x| and restores the sign), so is this.

// Piece 1, 0 < a <= 3/4: a g(a^2), g by two Horner chains (fma) in z^2 = a^4.
VS_FN vd erfinv_fast_small_core(vd a) {
  const double* c = repmode::cpu::vs_common::kErfinvFastSmall;  // c[i]: the coefficient of z^(15-i)
  const vd z = a * a, y = z * z;
  vd o = splat(c[0]), e = splat(c[1]);
  for (int i = 2; i < 16; i += 2) {
    o = vfma(o, y, splat(c[i]));
    e = vfma(e, y, splat(c[i + 1]));
  }
  return a * vfma(z, o, e);
}
// Pieces 2..6 (k = 0..4), 3/4 < a < 1: P(v - centre) by Horner's rule (fma), v = a on pieces
// 2..4, v = s = sqrt(w), w = -log(y (2 - y)) on pieces 5, 6 (y = 1 - a and y (2 - y) exact for a
// float32 a).
VS_FN vd erfinv_fast_large_core(vd a, int k) {
  const repmode::cpu::vs_common::ErfinvFastPiece& pc = repmode::cpu::vs_common::kErfinvFastPieces[k];
  vd v = a;
  if (k >= 3) {
    const vd y = 1.0 - a;
    v = vsqrt(-log_fast(y * (2.0 - y)).hi);
  }
  const vd u = v - pc.centre;
  vd p = splat(pc.c[0]);
  for (int i = 1; i < pc.n; ++i) p = vfma(p, u, splat(pc.c[i]));
  return p;
}
// double -> float32 (round to nearest even) -> double, per lane.
VS_FN vd round_to_float(vd x) {
  vd r;
#if VS_W == 8
  VS_EACH r.h[u] = (hd)_mm512_cvtps_pd(_mm512_cvtpd_ps((__m512d)x.h[u]));
#else
  VS_EACH r.h[u] = (hd)_mm256_cvtps_pd(_mm256_cvtpd_ps((__m256d)x.h[u]));
#endif
  return r;
}
// Ziv's test on r > 0 with margin m (lanes that fail it, NaN included, into bad); r with the sign of x.
VS_FN vd erfinv_accept(vd x, vd r, double m, vl& bad) {
  bad |= ~eq(round_to_float(r * (1.0 - m)), round_to_float(r * (1.0 + m)));
  return blend(lt(x, splat(0.0)), -r, r);
}
VS_FN vd erfinv_fast(int region, vd x, vl& bad) {
  const vd a = vabs(x);
  const vd r = region == 1 ? erfinv_fast_small_core(a) : erfinv_fast_large_core(a, region - 2);
  return erfinv_accept(x, r, repmode::cpu::vs_common::kErfinvFastMargin[region], bad);
}

// ============================== the array driver ==============================

// Region kernels per function (region 0: the scalar formula; see vec_special.cpp).
struct Lgamma {
  static constexpr repmode::EwOp op = repmode::EwOp::lgamma;
  static constexpr int R = 6;
  static constexpr const repmode::cpu::vs_common::RegionTable& regions = repmode::cpu::vs_common::kLgammaRegions;
  VS_FN vd eval(int r, vd x, vl& bad) {
    switch (r) {
      case 1:
        return lgamma_small(x);
      case 2:
        return lgamma_near1(x);
      case 3:
        return lgamma_near2(x);
      case 4:
        return lgamma_mid(x);
      default:
        return lgamma_large(x, bad);
    }
  }
};
struct Digamma {
  static constexpr repmode::EwOp op = repmode::EwOp::digamma;
  static constexpr int R = 5;
  static constexpr const repmode::cpu::vs_common::RegionTable& regions = repmode::cpu::vs_common::kDigammaRegions;
  VS_FN vd eval(int r, vd x, vl&) {
    switch (r) {
      case 1:
        return digamma_small(x);
      case 2:
        return digamma_root_region(x);
      case 3:
        return digamma_mid(x);
      default:
        return digamma_large(x);
    }
  }
};
struct Erfinv {
  static constexpr repmode::EwOp op = repmode::EwOp::erfinv;
  static constexpr int R = 7;
  static constexpr const repmode::cpu::vs_common::RegionTable& regions = repmode::cpu::vs_common::kErfinvRegions;
  VS_FN vd eval(int r, vd x, vl& bad) { return erfinv_fast(r, x, bad); }
};

// The index lists of one block: list[r] holds the positions (in the block) of the elements of
// region r, in increasing order; VS_L entries of slack after kBlock for the padded last group.
template <int R>
struct Lists {
  int32_t idx[R][repmode::cpu::vs_common::kBlock + VS_L];
  int cnt[R];
};

#if VS_W == 8
// Classify m <= kBlock floats 16 at a time: the region table's compares as masks, then each
// region's positions appended by a compress-store.
template <class K>
__attribute__((target(VS_TARGET))) inline void classify(const float* src, int m, Lists<K::R>& L) {
  const repmode::cpu::vs_common::RegionTable& t = K::regions;
  for (int r = 0; r < K::R; ++r) L.cnt[r] = 0;
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int i = 0; i < m; i += 16) {
    const __mmask16 live = m - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (m - i)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(live, src + i);
    if (t.abs) v = _mm512_abs_ps(v);
    __mmask16 ok = _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.lo), t.lo_strict ? _CMP_GT_OQ : _CMP_GE_OQ) &
                   _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.hi), _CMP_LT_OQ) & live;
    for (int e = 0; e < t.nexcl; ++e) ok &= _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.excl[e]), _CMP_NEQ_UQ);
    __m512i id = _mm512_set1_epi32(t.top);
    for (int s = 0; s < t.nsteps; ++s)
      id = _mm512_mask_mov_epi32(
          id, _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.steps[s].t), t.steps[s].le ? _CMP_LE_OQ : _CMP_LT_OQ),
          _mm512_set1_epi32(t.steps[s].id));
    id = _mm512_maskz_mov_epi32(ok, id);
    const __m512i pos = _mm512_add_epi32(iota, _mm512_set1_epi32(i));
    for (int r = 0; r < K::R; ++r) {
      const __mmask16 in_r = _mm512_cmpeq_epi32_mask(id, _mm512_set1_epi32(r)) & live;
      // compress in a register, then one full store (16 entries: within the lists' VS_L slack;
      // the entries past the count are overwritten or never read): compress-to-memory is
      // microcoded and several times slower on Intel cores
      _mm512_storeu_si512(L.idx[r] + L.cnt[r], _mm512_maskz_compress_epi32(in_r, pos));
      L.cnt[r] += __builtin_popcount(unsigned(in_r));
    }
  }
}
// The inputs of list[0 .. VS_L) as doubles (lanes past `valid` repeat list[0]'s input), by gathers.
__attribute__((target(VS_TARGET))) inline vd load_lanes(const float* src, const int32_t* list, int valid) {
  vd x;
  const __m512i first = _mm512_set1_epi32(list[0]);
  for (int q = 0; q < VS_U / 2; ++q) {
    const int left = valid - 16 * q;
    const __mmask16 live = left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
    const __m512i ix = _mm512_mask_blend_epi32(live, first, _mm512_loadu_si512(list + 16 * q));
    const __m512 f = _mm512_i32gather_ps(ix, src, 4);
    x.h[2 * q] = (hd)_mm512_cvtps_pd(_mm512_castps512_ps256(f));
    x.h[2 * q + 1] = (hd)_mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1));
  }
  return x;
}
// dst[list[l]] = narrow<float>(y lane l) for l < valid (one rounding; NaN made canonical), by scatters.
__attribute__((target(VS_TARGET))) inline void store_lanes(float* dst, const int32_t* list, int valid, vd y) {
  for (int q = 0; q < VS_U / 2; ++q) {
    const int left = valid - 16 * q;
    if (left <= 0) break;
    const __mmask16 live = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
    __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)y.h[2 * q])),
                                  _mm512_cvtpd_ps((__m512d)y.h[2 * q + 1]), 1);
    f = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), f,
                             _mm512_set1_ps(repmode::Canonical<float>::nan()));
    _mm512_mask_i32scatter_ps(dst, live, _mm512_loadu_si512(list + 16 * q), f, 4);
  }
}
#else
template <class K>
__attribute__((target(VS_TARGET))) inline void classify(const float* src, int m, Lists<K::R>& L) {
  for (int r = 0; r < K::R; ++r) L.cnt[r] = 0;
  for (int i = 0; i < m; ++i) {
    const int r = repmode::cpu::vs_common::region_of(K::regions, src[i]);
    L.idx[r][L.cnt[r]++] = i;
  }
}
__attribute__((target(VS_TARGET))) inline vd load_lanes(const float* src, const int32_t* list, int valid) {
  vd x;
  const __m256i first = _mm256_set1_epi32(list[0]);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int q = 0; q < VS_U / 2; ++q) {
    const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(valid - 8 * q), lane);
    const __m256i ix = _mm256_blendv_epi8(first, _mm256_loadu_si256((const __m256i*)(list + 8 * q)), live);
    const __m256 f = _mm256_i32gather_ps(src, ix, 4);
    x.h[2 * q] = (hd)_mm256_cvtps_pd(_mm256_castps256_ps128(f));
    x.h[2 * q + 1] = (hd)_mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
  }
  return x;
}
__attribute__((target(VS_TARGET))) inline void store_lanes(float* dst, const int32_t* list, int valid, vd y) {
  alignas(64) double yb[VS_L];
  std::memcpy(yb, &y, sizeof y);
  for (int l = 0; l < valid; ++l) dst[list[l]] = repmode::ew_detail::narrow<float>(yb[l]);
}
#endif

// Blocks of kBlock elements: classify, then each region's list VS_L lanes at a time (the last group
// padded with its first element), every lane rounded as the formula's own narrow<float> does;
// region 0 and the lanes a kernel reports by the scalar formula (recomputed from the lane's input,
// which in place may already be overwritten in memory).
// One block's listed elements: those of regions below `first` (region 0, and for erfinv on
// AVX-512 piece 1's lanes that failed Ziv's test) by the scalar formula; the others VS_L at a
// time by their region's lane kernel, a lane the kernel reports bad again by the scalar formula.
template <class K>
__attribute__((target(VS_TARGET))) inline void evaluate_lists(const float* src, float* dst, const Lists<K::R>& L,
                                                              int first) {
  using repmode::cpu::vs_common::scalar_formula;
  for (int r = 0; r < first; ++r)
    for (int k = 0; k < L.cnt[r]; ++k) dst[L.idx[r][k]] = scalar_formula<K::op>(src[L.idx[r][k]]);
  for (int r = first; r < K::R; ++r) {
    const int32_t* list = L.idx[r];
    for (int k = 0; k < L.cnt[r]; k += VS_L) {
      const int valid = L.cnt[r] - k < VS_L ? L.cnt[r] - k : VS_L;
      const vd x = load_lanes(src, list + k, valid);
      vl bad = splat_l(0);
      const vd y = K::eval(r, x, bad);
      store_lanes(dst, list + k, valid, y);
      vl any = bad;
      for (int u = 1; u < VS_U; ++u) any.h[0] |= any.h[u];
      bool none = true;
      for (int l = 0; l < VS_W; ++l) none = none && any.h[0][l] == 0;
      if (none) continue;
      alignas(64) int64_t bb[VS_L];
      std::memcpy(bb, &bad, sizeof bad);
      alignas(64) double xb[VS_L];
      std::memcpy(xb, &x, sizeof x);
      for (int l = 0; l < valid; ++l)
        if (bb[l]) dst[list[k + l]] = scalar_formula<K::op>(float(xb[l]));
    }
  }
}

template <class K>
__attribute__((target(VS_TARGET))) void run(const float* in, float* out, int64_t n) {
  using repmode::cpu::vs_common::kBlock;
  Lists<K::R> L;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int m = int(n - b0 < kBlock ? n - b0 : kBlock);
    const float* src = in + b0;
    float* dst = out + b0;
    classify<K>(src, m, L);
    evaluate_lists<K>(src, dst, L, 1);
  }
}

#if VS_W == 8
// erfinv on AVX-512: its first piece (0 < |x| <= 3/4: most inputs) without the index lists. Each
// block is walked 32 contiguous elements at a time: every lane of the group runs piece 1's kernel
// (erfinv_fast, the same per-lane operations as in the lists), and the lanes of piece 1 that pass
// Ziv's test are stored by a masked store; the positions of all other elements go to the lists by
// their region as in classify (piece 1's failing lanes to list 1, which here means "the scalar
// formula"). A lane's result depends on its input only, so the bits are those of run<Erfinv>. In
// place, the listed elements are still unwritten when the lists read them.
// The region compares below assume erfinv's table: |x|, lo strict, no excluded values, "<=" steps.
static_assert(repmode::cpu::vs_common::kErfinvRegions.abs && repmode::cpu::vs_common::kErfinvRegions.lo_strict &&
                  repmode::cpu::vs_common::kErfinvRegions.nexcl == 0 &&
                  repmode::cpu::vs_common::kErfinvRegions.steps[0].le &&
                  repmode::cpu::vs_common::kErfinvRegions.steps[1].le &&
                  repmode::cpu::vs_common::kErfinvRegions.steps[2].le &&
                  repmode::cpu::vs_common::kErfinvRegions.steps[3].le &&
                  repmode::cpu::vs_common::kErfinvRegions.steps[4].le &&
                  repmode::cpu::vs_common::kErfinvRegions.nsteps == 5,
              "run_erfinv's classification");
__attribute__((target(VS_TARGET))) void run_erfinv(const float* in, float* out, int64_t n) {
  using repmode::cpu::vs_common::kBlock;
  const repmode::cpu::vs_common::RegionTable& t = Erfinv::regions;
  Lists<Erfinv::R> L;
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int m = int(n - b0 < kBlock ? n - b0 : kBlock);
    const float* src = in + b0;
    float* dst = out + b0;
    for (int r = 0; r < Erfinv::R; ++r) L.cnt[r] = 0;
    for (int i = 0; i < m; i += VS_L) {
      vd x;
      __mmask16 live[VS_U / 2];
      __m512i id[VS_U / 2];
      for (int q = 0; q < VS_U / 2; ++q) {
        const int left = m - i - 16 * q;
        live[q] = left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
        const __m512 f = _mm512_maskz_loadu_ps(live[q], src + i + 16 * q);
        x.h[2 * q] = (hd)_mm512_cvtps_pd(_mm512_castps512_ps256(f));
        x.h[2 * q + 1] = (hd)_mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1));
        // the region table, as in classify
        const __m512 v = _mm512_abs_ps(f);
        const __mmask16 ok = _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.lo), _CMP_GT_OQ) &
                             _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.hi), _CMP_LT_OQ);
        __m512i rid = _mm512_set1_epi32(t.top);
        for (int st = 0; st < t.nsteps; ++st)
          rid = _mm512_mask_mov_epi32(rid, _mm512_cmp_ps_mask(v, _mm512_set1_ps(t.steps[st].t), _CMP_LE_OQ),
                                      _mm512_set1_epi32(t.steps[st].id));
        id[q] = _mm512_maskz_mov_epi32(ok, rid);
      }
      vl bad = splat_l(0);
      const vd y = erfinv_fast(1, x, bad);
      for (int q = 0; q < VS_U / 2; ++q) {
        const __mmask16 in1 = _mm512_cmpeq_epi32_mask(id[q], _mm512_set1_epi32(1)) & live[q];
        const __mmask16 failed =
            __mmask16(unsigned(_mm512_test_epi64_mask((__m512i)bad.h[2 * q], (__m512i)bad.h[2 * q])) |
                      (unsigned(_mm512_test_epi64_mask((__m512i)bad.h[2 * q + 1], (__m512i)bad.h[2 * q + 1])) << 8));
        const __m512 f = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)y.h[2 * q])),
                                            _mm512_cvtpd_ps((__m512d)y.h[2 * q + 1]), 1);
        _mm512_mask_storeu_ps(dst + i + 16 * q, __mmask16(in1 & ~failed), f);
        const __m512i pos = _mm512_add_epi32(iota, _mm512_set1_epi32(i + 16 * q));
        for (int r = 0; r < Erfinv::R; ++r) {
          const __mmask16 in_r = r == 1 ? __mmask16(in1 & failed)
                                        : __mmask16(_mm512_cmpeq_epi32_mask(id[q], _mm512_set1_epi32(r)) & live[q]);
          if (!in_r) continue;
          _mm512_storeu_si512(L.idx[r] + L.cnt[r], _mm512_maskz_compress_epi32(in_r, pos));
          L.cnt[r] += __builtin_popcount(unsigned(in_r));
        }
      }
    }
    evaluate_lists<Erfinv>(src, dst, L, 2);  // lists 0 and 1 (piece 1's failed lanes): the scalar formula
  }
}
#endif

__attribute__((target(VS_TARGET))) inline void special(int op, const float* in, float* out, int64_t n) {
  if (op == int(repmode::EwOp::lgamma)) return run<Lgamma>(in, out, n);
  if (op == int(repmode::EwOp::digamma)) return run<Digamma>(in, out, n);
#if VS_W == 8
  if (op == int(repmode::EwOp::erfinv)) return run_erfinv(in, out, n);
#else
  if (op == int(repmode::EwOp::erfinv)) return run<Erfinv>(in, out, n);
#endif
}

}  // namespace VS_NS

#undef VS_FN
#undef VS_OP
#undef VS_EACH
#undef VS_L

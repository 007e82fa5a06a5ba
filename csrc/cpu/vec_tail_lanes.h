// The lane kernels of csrc/cpu/vec_tail.cpp: float32 tan, sinh and cosh on W double lanes.
// Included twice by vec_tail.cpp (no include guard), once per ISA, with
//   VT_NS      the namespace (a distinct one per ISA, so no inline function is shared between
//              the AVX2 and AVX-512 copies)
//   VT_W       lanes per hardware vector: 8 (AVX-512) or 4 (AVX2)
//   VT_U       hardware vectors per loop iteration (independent dependency chains)
//   VT_TARGET  the target attribute string
// and after <immintrin.h>, <cstdint>, <cstring> and math_tail.h.
// + - * / are GCC vector-extension operations (one IEEE operation per lane; the package's
// -ffp-contract=off keeps a * b + c two roundings); fma is an explicit vector fma.
namespace VT_NS {

using namespace repmode;
using namespace repmode::cpu;

#define VT_FN static inline __attribute__((target(VT_TARGET), always_inline))
#define LANES_W VT_W
#define LANES_FN VT_FN
#include "vec_double_lanes.inc"  // hd, hl, hf, hi, vfma, mask64, mask32, splat, blend
#undef LANES_W
#undef LANES_FN
typedef uint64_t hu __attribute__((vector_size(VT_W * 8)));

#if VT_W == 8
VT_FN hd gather(const double* base, hl idx) {  // (masked form: a defined destination, no warning)
  return (hd)_mm512_mask_i64gather_pd(_mm512_setzero_pd(), __mmask8(0xff), (__m512i)idx, base, 8);
}
#else
VT_FN hd gather(const double* base, hl idx) {
  return (hd)_mm256_mask_i64gather_pd(_mm256_setzero_pd(), base, (__m256i)idx,
                                      _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), 8);
}
#endif

VT_FN hd vfma(hd a, double b, hd c) { return vfma(a, splat(b), c); }
VT_FN hi blend32(hi m, hi a, hi b) { return (a & m) | (b & ~m); }

// tail_fast_round per lane: the lanes whose value v is within tol units of its last place of a
// float32 rounding boundary (f32_boundary_within(|v|, tol)), and float(|v|) with the sign bits
// of v XOR `sign` (float32 bits) into *y.
VT_FN unsigned round_lanes(hd v, hi sign, hi* y) {
  const hl vb = (hl)v;
  const hl w = (vb + int64_t(vt_common::kTol - 0x10000000ull)) & int64_t(0x1fffffff);
  const unsigned near = mask64(w <= int64_t(2 * vt_common::kTol));
  const hd av = (hd)(vb & int64_t(0x7fffffffffffffffll));
  const hi vs = __builtin_convertvector(vb >> 32, hi) & int32_t(0x80000000u);  // the sign bit of v
  *y = (hi) __builtin_convertvector(av, hf) | (sign ^ vs);
  return near;
}

// ---------------------------------------------------------------- tan

// tan|x| for float32 |x| in [2^-12, 2^18) as a double (vec_tail.cpp has the error bound).
VT_FN hd tan_fast(hd a) {
  using namespace vt_common;
  const hd t = vfma(a, kTwoOverPi, splat(kRoundShift));
  const hd kd = t - kRoundShift;  // k = the integer nearest a 2/pi (or a neighbour near a tie)
  const hl odd = -((hl)t & 1);    // all ones where k is odd (bits(t) = bits(1.5 2^52) + k)
  // r = a - k pi/2: a - k P1 exact (one fma), then - k P2 rounded once (one fma).
  const hd r = vfma(-kd, kPio2_2, vfma(-kd, kPio2_1, a));
  const hd z = r * r;
  // sin r = r + r z S(z), cos r = 1 + z C(z): Taylor to r^15/15! and r^16/16!, Horner with fma
  hd ps = vfma(z, splat(kSin[6]), splat(kSin[5]));
  hd pc = vfma(z, splat(kCos[7]), splat(kCos[6]));
#pragma GCC unroll 8
  for (int j = 4; j >= 0; --j) ps = vfma(ps, z, splat(kSin[j]));
#pragma GCC unroll 8
  for (int j = 5; j >= 0; --j) pc = vfma(pc, z, splat(kCos[j]));
  const hd s = vfma(r, z * ps, r);
  const hd c = vfma(z, pc, splat(1.0));
  // tan(k pi/2 + r) = sin r / cos r (k even), -cos r / sin r (k odd)
  return blend(odd, -c, s) / blend(odd, s, c);
}

// W lanes of cr_tanf: results to *y, returns the lanes to recompute with cr_tanf (outside the
// fast range: |x| >= 2^18, inf, NaN; or a failed rounding test).
VT_FN unsigned tan_lanes(hf x, hf* y) {
  using namespace vt_common;
  const hi ux = (hi)x;
  const hi ax = ux & int32_t(0x7fffffff);
  const hi sign = ux ^ ax;
  const hi tiny = ax < int32_t(kTinyBits);  // |x| < 2^-12: tan x rounds to x (as cr_tanf)
  const unsigned fast = mask32(ax < int32_t(kTanFastEndBits)) & ~mask32(tiny);
  hi r;
  const unsigned near = round_lanes(tan_fast(__builtin_convertvector((hf)ax, hd)), sign, &r);
  *y = (hf)blend32(tiny, ux, r);
  return (near & fast) | (~(fast | mask32(tiny)) & ((1u << VT_W) - 1));
}

// ---------------------------------------------------------------- sinh, cosh

// cr_sinhf (cosh = false) / cr_coshf's fast path per lane, a = |x| in [2^-12, 89.5]: the scalar
// code's IEEE operations in its order (math_tail.h sinhcoshf_impl, math_hyperbolic.h exp_parts,
// math.h exp_reduce), both of sinh's branches computed and one kept by a blend.
template <bool Cosh>
VT_FN hd sinhcosh_fast(hd a, const vt_common::SinhCoefs& k) {
  using namespace math_detail::consts;
  // exp_parts(a): kd = (a * kInvC + kShift) - kShift; r = (a - kd * kCHi) + (-(kd * kCMid))
  const hd t = a * kInvC + kShift;
  const hd kd = t - kShift;
  const hd r = (a - kd * kCHi) + -(kd * kCMid);
  // s = exp2_row(j)[0] * pow2(m), j = k & 63, m = k >> 6: exact (s is normal), so bits(T_j)
  // + (m << 52), with j and m << 52 read off bits(t) = bits(1.5 2^52) + k (vec_math_hyperbolic_avx2.h)
  const hl tb = (hl)t;
  const hl th = (hl)gather(math_detail::exp2_row(0), (tb & 63) << 1);
  const hd s = (hd)(th + (hl)(((hu)tb >> 6) << 52));
  const hd r2 = r * r;
  const hd q = (0.5 + kC3 * r) + r2 * (kC4 + kC5 * r);
  const hd p = r + r2 * q;
  const hd E = s + s * p;
  const hd Ei = 1.0 / E;
  if constexpr (Cosh) {
    return 0.5 * (E + Ei);
  }
  const hd big = 0.5 * (E - Ei);
  const hd z = a * a;
  const hd poly = k.i3 + z * (k.i5 + z * (k.i7 + z * (k.i9 + z * k.i11)));
  const hd small = a + a * (z * poly);
  return blend(a < 0.25, small, big);
}

// W lanes of cr_sinhf / cr_coshf: results to *y, returns the lanes to recompute with the scalar
// function (NaN, or a failed rounding test).
template <bool Cosh>
VT_FN unsigned sinhcosh_lanes(hf x, hf* y, const vt_common::SinhCoefs& k) {
  using namespace vt_common;
  const hi ux = (hi)x;
  const hi ax = ux & int32_t(0x7fffffff);
  const hi sign = Cosh ? hi{} : (ux ^ ax);
  const hi nan = ax > int32_t(0x7f800000);
  const hi tiny = ax < int32_t(kTinyBits);               // |x| < 2^-12: sinh -> x, cosh -> 1
  const hi huge = (ax > int32_t(kSinhHugeBits)) & ~nan;  // |x| > 89.5 (inf too): +-inf
  hi r;
  const unsigned near = round_lanes(sinhcosh_fast<Cosh>(__builtin_convertvector((hf)ax, hd), k), sign, &r);
  r = blend32(tiny, Cosh ? (hi{} + int32_t(0x3f800000)) : ux, r);
  r = blend32(huge, sign | int32_t(0x7f800000), r);
  *y = (hf)r;
  return (near & ~mask32(tiny | huge)) | mask32(nan);
}

// ---------------------------------------------------------------- arrays

// Op 0: tan, 1: sinh, 2: cosh.
template <int Op>
VT_FN unsigned op_lanes(hf x, hf* y, const vt_common::SinhCoefs& k) {
  if constexpr (Op == 0) {
    (void)k;
    return tan_lanes(x, y);
  } else {
    return sinhcosh_lanes<Op == 2>(x, y, k);
  }
}
template <int Op>
float op_scalar(float v) {
  return Op == 0 ? cr_tanf(v) : Op == 1 ? cr_sinhf(v) : cr_coshf(v);
}

// out[i] = op(in[i]): VT_U vectors of W lanes per step; the lanes a kernel reports and the
// n % (W U) tail by the scalar function.
template <int Op>
__attribute__((target(VT_TARGET))) void op_array(const float* in, float* out, int64_t n) {
  const vt_common::SinhCoefs k = vt_common::sinh_coefs();
  int64_t i = 0;
  for (; i + VT_W * VT_U <= n; i += VT_W * VT_U) {
    hf x[VT_U], y[VT_U];
    unsigned bad[VT_U];
#pragma GCC unroll 8
    for (int u = 0; u < VT_U; ++u) std::memcpy(&x[u], in + i + VT_W * u, sizeof(hf));
#pragma GCC unroll 8
    for (int u = 0; u < VT_U; ++u) bad[u] = op_lanes<Op>(x[u], &y[u], k);
#pragma GCC unroll 8
    for (int u = 0; u < VT_U; ++u) {
      std::memcpy(out + i + VT_W * u, &y[u], sizeof(hf));
      if (__builtin_expect(bad[u] != 0, 0))  // x[u] was loaded before the store: in == out is fine
        for (int l = 0; l < VT_W; ++l)
          if (bad[u] & (1u << l)) out[i + VT_W * u + l] = op_scalar<Op>(x[u][l]);
    }
  }
  for (; i < n; ++i) out[i] = op_scalar<Op>(in[i]);
}

#undef VT_FN

}  // namespace VT_NS

// AVX2 and AVX-512 array versions of the float32 lgamma, digamma and erfinv: the scalar
// definitions of csrc/common/math_special.h (a double formula per element, rounded once to
// float32), with the same bits on every input.
//
// Method. The scalar formulas branch per element into regions (a series around a zero, a
// product and a series, Stirling, Newton steps on erfc, ...). An array is walked in blocks of
// kBlock elements; each element is classified by its region (a pure function of its value), and
// its index appended to that region's list. Each list is then evaluated W lanes at a time (8 on
// AVX-512, 4 on AVX2) by the region's lane kernel (vec_special_lanes.h), which performs per lane
// exactly the scalar region's IEEE double operations in the same order, and each lane's double
// result is rounded to float32 by the scalar formula's own final step (ew_detail::narrow). The
// last, partial group of a list is padded with copies of its first element (whose results are
// dropped), so a lane's arithmetic never depends on its neighbours, on the block boundaries, on
// n or on the thread split. Elements of the regions without a lane kernel (NaN, infinities,
// zeros, poles, negative arguments, lgamma's log1p regions 1/4 <= x < 3/4, digamma's |x| < 2^-60)
// and lanes a kernel reports (a branch it does not follow) are computed by the scalar formula
// EwFormula<float, op>::apply itself.
//
// erfinv's lanes do not replay its definition: they compute a cheap approximation and keep it
// only where Ziv's test proves it rounds to the definition's float32 (the others are reported),
// with a bound measured on every float32 input (vec_special_lanes.h, erfinv_fast).
//
// Checked against the scalar path bit for bit by tests/families/special/test_special_simd.py
// (every path the CPU has, dense bit-pattern sweeps, region edges, tails and offsets, threads)
// and on all 2^32 inputs by benchmarks/special_simd_exhaustive.py (docs/evidence.md).
#include "vec_special.h"

#include <cstring>

#include "../common/elementwise.h"
#include "../common/math_special.h"

namespace repmode::cpu {
namespace vs_common {

constexpr int kBlock = 2048;

// The scalar definition of one element (the scalar ISA path computes exactly this).
template <EwOp op>
float scalar_formula(float v) {
  return EwFormula<float, op>::apply(v, 0.0f, 0.0f, EwParams<float>{0.0, 0.0, 0.0});
}

// Which lane kernel an element goes to: region 0 is "the scalar formula", regions 1.. have lane
// kernels (vec_special_lanes.h). A region table reads: v = x (|x| when abs); v outside
// (lo, hi) (lo included when !lo_strict) or equal to an excluded value -> 0; otherwise `top`,
// then, in order, each step (t, le, id) sets the region to id where v < t (v <= t when le). The
// scalar and the AVX-512 classification both interpret these tables (NaN fails every compare: 0).
struct RegionStep {
  float t;
  bool le;
  int id;
};
struct RegionTable {
  bool abs;
  float lo;
  bool lo_strict;
  float hi;
  int nexcl;
  float excl[2];
  int top;
  int nsteps;
  RegionStep steps[5];
};
// lgamma (lgamma_pos): 1: x < 1/4, 2: 3/4 <= x <= 5/4, 3: 5/4 < x < 11/4, 4: 11/4 <= x < 12,
// 5: 12 <= x < inf; 1/4 <= x < 3/4 (log1p), x = 1 and x = 2 (+0 by a test), x <= 0 (the
// reflection), +inf and NaN: the scalar formula.
constexpr RegionTable kLgammaRegions = {
    false,
    0.0f,
    true,
    __builtin_inff(),
    2,
    {1.0f, 2.0f},
    5,
    5,
    {{12.0f, false, 4}, {2.75f, false, 3}, {1.25f, true, 2}, {0.75f, false, 0}, {0.25f, false, 1}}};
// digamma (digamma_pos): 1: 2^-60 <= x < 1, 2: 1 <= x <= 2, 3: 2 < x < 10, 4: 10 <= x < inf.
constexpr RegionTable kDigammaRegions = {false,
                                         0x1p-60f,
                                         false,
                                         __builtin_inff(),
                                         0,
                                         {0.0f, 0.0f},
                                         4,
                                         3,
                                         {{10.0f, false, 3}, {2.0f, true, 2}, {1.0f, false, 1}}};
// erfinv: the float32 definition D(x) = special_erfinv_for_float(x) branches at |x| = 3/4 (the
// series below, erfcinv_core above); the lane kernels compute instead a cheap approximation f of D
// (Ziv's first step, vec_special_lanes.h erfinv_fast_*) on six pieces of |x|:
// 1: 0 < |x| <= 3/4, 2: 3/4 < |x| <= 7/8, 3: 7/8 < |x| <= 15/16, 4: 15/16 < |x| <= X1,
// 5: X1 < |x| <= X2, 6: X2 < |x| < 1 (X1 = 0.96f, X2 = 0.9995f as float32).
constexpr float kErfinvX1 = 0x1.eb851ep-1f;
constexpr float kErfinvX2 = 0x1.ffbe76p-1f;
constexpr RegionTable kErfinvRegions = {
    true, 0.0f, true,
    1.0f, 0,    {0.0f, 0.0f},
    6,    5,    {{kErfinvX2, true, 5}, {kErfinvX1, true, 4}, {0.9375f, true, 3}, {0.875f, true, 2}, {0.75f, true, 1}}};
// The tables of f, printed by benchmarks/erfinv_fast_fit.py (Chebyshev fits, highest degree
// first; their bits never reach a result: a lane's result is narrow(D(x)) either way).
// Piece 1: |x| g(x^2), g(z) ~ erfinv(sqrt z)/sqrt z on [0, 9/16] (degree 15 in z).
// clang-format off
constexpr double kErfinvFastSmall[16] = {
      0x1.faf9d65fb94adp+1, -0x1.b512783c051b4p+3, 0x1.5fdee19dfe0d0p+4, -0x1.54f9971f04f76p+4,
      0x1.bbc877c788432p+3, -0x1.91eeb5bca92eap+2, 0x1.0b687e9240912p+1, -0x1.d25c52f200a7ap-2,
      0x1.e88aff8d5bed6p-4, 0x1.0d5cc8bda913fp-5, 0x1.ae81c6c6f449ap-5, 0x1.09e4ce4841d87p-4,
      0x1.6285fb9580879p-4, 0x1.053c28cd5de42p-3, 0x1.db29fb3572d72p-3, 0x1.c5bf891b4e934p-1,
};
// Pieces 2..4: P(|x| - centre), P ~ erfinv.
constexpr double kErfinvFastPiece2[15] = {
      0x1.59640b67d8773p+28, 0x1.17e314f239bafp+26, 0x1.267a75116fa34p+23, 0x1.e719983207fedp+20,
      0x1.b519ab20a1985p+18, 0x1.7039e71e59461p+16, 0x1.3923b700ca453p+14, 0x1.107029cfe4c54p+12,
      0x1.e5726d08208c7p+9, 0x1.beb77870d2ce8p+7, 0x1.af099808e25d7p+5, 0x1.c1d306a652002p+3,
      0x1.0a23c4ec1474ep+2, 0x1.0e610103f2b3bp+1, 0x1.dd2bc1142b60dp-1,
};
constexpr double kErfinvFastPiece3[15] = {
      0x1.451ac0b32bc5cp+42, 0x1.07468a1f7418fp+39, 0x1.1497613b32adbp+35, 0x1.c91de7bed131bp+31,
      0x1.99e891d318d9dp+28, 0x1.58f144cc535bfp+25, 0x1.24f5e446ca63dp+22, 0x1.fd00e751df1e3p+18,
      0x1.c4ab7e1a60204p+15, 0x1.9f9b613c74b9ep+12, 0x1.8fe5b638454b9p+9, 0x1.9ef9e84488c10p+6,
      0x1.ee1a997cbe75fp+3, 0x1.ce084ae96f187p+1, 0x1.2f60a38ffe1fbp+0,
};
constexpr double kErfinvFastPiece4[12] = {
      0x1.8ae2e92379f34p+41, 0x1.665cc492b5ea5p+37, 0x1.2257a1470bba5p+33, 0x1.0ebcf280d20c3p+29,
      0x1.0253e6328eeb5p+25, 0x1.f594805bd4268p+20, 0x1.f6923c1357603p+16, 0x1.07c04fda08a4bp+13,
      0x1.2a360a6d41777p+9, 0x1.832f02f6c5a20p+5, 0x1.7b3ae0cc60685p+2, 0x1.60e024062d998p+0,
};
// Pieces 5, 6: P(s - centre), s = sqrt(-log(y (2 - y))), y = 1 - |x|, P ~ erfinv(sqrt(1 - e^-s^2)).
constexpr double kErfinvFastPiece5[12] = {
      -0x1.d396099b605c4p-23, -0x1.77844fe195902p-16, 0x1.40852beb2a06ep-16, 0x1.9bd59dc7bd029p-14,
      -0x1.6a793638f5412p-13, -0x1.2eb25653c69dap-12, 0x1.40ac863451395p-10, -0x1.49b3236a81f5fp-12,
      -0x1.c7fdff7d1cceep-8, 0x1.63b0f56c79d04p-6, 0x1.f52cabbd394c2p-1, 0x1.f37347801be02p+0,
};
constexpr double kErfinvFastPiece6[13] = {
      0x1.4afa2403dcfb7p-22, -0x1.07a4ce49f10a3p-21, -0x1.a299f827c0bcfp-21, 0x1.3fe2c699ab8b2p-18,
      -0x1.75b73cd4110c8p-17, 0x1.71df2f1f0cc11p-17, 0x1.f84a630e1bd46p-16, -0x1.bcc9c7eb03107p-13,
      0x1.9e5353f70fac1p-11, -0x1.26777dc7fe2a7p-9, 0x1.150005a2c8cbfp-8, 0x1.018bffdd22364p+0,
      0x1.9286e0f58ea1cp+1,
};
// clang-format on
struct ErfinvFastPiece {
  const double* c;
  int n;
  double centre;
};
// pieces 2..6
constexpr ErfinvFastPiece kErfinvFastPieces[5] = {{kErfinvFastPiece2, 15, 0x1.a000000000000p-1},
                                                  {kErfinvFastPiece3, 15, 0x1.d000000000000p-1},
                                                  {kErfinvFastPiece4, 12, 0x1.e5c28f0000000p-1},
                                                  {kErfinvFastPiece5, 12, 0x1.0e54539dccf4fp+1},
                                                  {kErfinvFastPiece6, 13, 0x1.a7bff55ef2696p+1}};
// Ziv's margin per region (index = region): a lane keeps f only where r (1 - m) and r (1 + m)
// round to the same float32. m >= 4 E, E the largest |f - D| / D over every float32 of the
// region, measured by csrc/verify/check_erfinv_fast.cpp (docs/evidence.md).
constexpr double kErfinvFastMargin[7] = {0.0, 0x1p-39, 0x1p-40, 0x1p-41, 0x1p-41, 0x1p-38, 0x1p-42};

inline int region_of(const RegionTable& t, float x) {
  const float v = t.abs ? (x < 0.0f ? -x : x) : x;
  bool ok = (t.lo_strict ? v > t.lo : v >= t.lo) && v < t.hi;
  for (int e = 0; e < t.nexcl; ++e) ok = ok && v != t.excl[e];
  int id = t.top;
  for (int s = 0; s < t.nsteps; ++s) id = (t.steps[s].le ? v <= t.steps[s].t : v < t.steps[s].t) ? t.steps[s].id : id;
  return ok ? id : 0;
}

}  // namespace vs_common
}  // namespace repmode::cpu

#if defined(__x86_64__)

#define VS_NS repmode_vs512
#define VS_W 8
#define VS_U 4
#define VS_TARGET "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"
#include "vec_special_lanes.h"
#undef VS_NS
#undef VS_W
#undef VS_U
#undef VS_TARGET

#define VS_NS repmode_vs256
#define VS_W 4
#define VS_U 4
#define VS_TARGET "avx2,fma"
#include "vec_special_lanes.h"
#undef VS_NS
#undef VS_W
#undef VS_U
#undef VS_TARGET

#endif

namespace repmode::cpu {

bool special_array_op(int op) { return op == int(EwOp::lgamma) || op == int(EwOp::digamma) || op == int(EwOp::erfinv); }

void special_array(int op, const float* in, float* out, int64_t n, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::avx512) return repmode_vs512::special(op, in, out, n);
  if (isa == Isa::avx2) return repmode_vs256::special(op, in, out, n);
#endif
  (void)op, (void)in, (void)out, (void)n, (void)isa;
}

}  // namespace repmode::cpu

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
// erfinv: 1: 0 < |x| <= 3/4 (the series), 2: 3/4 < |x| < 1 (erfcinv_core).
constexpr RegionTable kErfinvRegions = {true, 0.0f, true, 1.0f, 0, {0.0f, 0.0f}, 2, 1, {{0.75f, true, 1}}};

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

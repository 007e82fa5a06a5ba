// Shared pieces of the math verifiers under csrc/verify/ (standalone programs, not part of the
// package build): the correctly rounded float32 reference, ulp errors for float64, and
// the registries each csrc/verify/math_cases/<group>.cpp adds its functions to.
//
// The reference for a float32 function f at x: the long double value of f(x) (relative
// error < 2^-60 required of ref_ld) decides unless it lies within 2^-58 of a float32
// rounding boundary; then the __float128 value (error < 2^-100 required of ref_q)
// decides. A float128 value that is exactly a midpoint is an exact tie (e.g. exp2(-150) =
// 2^-150, halfway between 0 and the least subnormal): it is rounded to even and counted
// as a tie, so every such input is listed. Any other float128 value within 2^-100 of a
// boundary is counted as "undecided" and fails the run; none is expected, since the
// functions checked this way are transcendental away from exact inputs (the exact cases
// of pow are handled by its own check).
#pragma once

#include <quadmath.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../common/defs.h"

namespace verify {

using repmode::bits_of;
using repmode::double_from_bits;
using repmode::float_from_bits;

// True when |v| is within tol*|v| of the midpoint between two adjacent float32 values
// (subnormal spacing 2^-149 below 2^-126).
inline bool near_f32_boundary(long double v, long double tol) {
  long double a = fabsl(v);
  if (a == 0 || std::isinf(a) || std::isnan(a)) return false;
  int ex = ilogbl(a);
  long double ulp = ldexpl(1.0L, (ex < -126 ? -126 : ex) - 23);
  long double mid = (floorl(a / ulp) + 0.5L) * ulp;
  return fabsl(a - mid) <= tol * a;
}
inline bool near_f32_boundary_q(__float128 v, __float128 tol) {
  __float128 a = fabsq(v);
  if (a == 0 || isinfq(a) || isnanq(a)) return false;
  int ex = ilogbq(a);
  __float128 ulp = ldexpq((__float128)1.0, (ex < -126 ? -126 : ex) - 23);
  __float128 mid = (floorq(a / ulp) + (__float128)0.5) * ulp;
  return fabsq(a - mid) <= tol * a;
}

// Counters of how the reference was decided.
struct RefStats {
  uint64_t quad = 0;       // decided by __float128
  uint64_t undecided = 0;  // even __float128 within 2^-100 of a boundary, not exactly on it
  uint64_t ties = 0;       // __float128 exactly a midpoint (an exact result)
};

// |v| is exactly the midpoint between two adjacent float32 values.
inline bool is_f32_midpoint_q(__float128 v) {
  __float128 a = fabsq(v);
  if (a == 0 || isinfq(a) || isnanq(a)) return false;
  int ex = ilogbq(a);
  __float128 ulp = ldexpq((__float128)1.0, (ex < -126 ? -126 : ex) - 23);
  return a == (floorq(a / ulp) + (__float128)0.5) * ulp;
}

using RefLd = long double (*)(long double);
using RefQ = __float128 (*)(__float128);

// Bits of the correctly rounded float32 f(x); NaN results are the canonical NaN.
inline uint32_t reference_f32(float x, RefLd ref_ld, RefQ ref_q, RefStats& st) {
  if (std::isnan(x)) return repmode::kCanonicalNanBits32;
  long double r = ref_ld((long double)x);
  if (std::isnan(r)) return repmode::kCanonicalNanBits32;
  if (!near_f32_boundary(r, ldexpl(1.0L, -58))) return bits_of((float)r);
  ++st.quad;
  __float128 q = ref_q((__float128)x);
  if (is_f32_midpoint_q(q))
    ++st.ties;
  else if (near_f32_boundary_q(q, ldexpq((__float128)1.0, -100)))
    ++st.undecided;
  return bits_of((float)q);  // the conversion rounds to nearest even
}

// |y - q| in units of the float64 spacing at q (subnormal spacing below 2^-1022).
inline double ulp_error(double y, __float128 q) {
  if (isnanq(q)) return std::isnan(y) ? 0.0 : INFINITY;
  if (isinfq(q) || fabsq(q) >= ldexpq((__float128)1.0, 1024)) return y == (double)q ? 0.0 : INFINITY;
  if (std::isinf(y) || std::isnan(y)) return INFINITY;
  int ex = ilogbq(q);
  if (q == 0) ex = -1022;
  __float128 ulp = ldexpq((__float128)1.0, (ex < -1022 ? -1022 : ex) - 52);
  return (double)(fabsq((__float128)y - q) / ulp);
}

// ---------------- registries ----------------

struct Options {
  int64_t stride = 1;           // check every stride-th float32 bit pattern only
  uint64_t samples = 10000000;  // random inputs for double and custom checks
};

// One row of the printed table.
struct Row {
  const char* name = "";
  uint64_t checked = 0, bad = 0, quad = 0, undecided = 0, simd_bad = 0, ties = 0;
  double seconds = 0;
  bool simd = false;
};

using ArrayFn = void (*)(const float*, float*, int64_t);

// A float32 -> float32 function checked over every bit pattern; `array`, when given, is an
// array (SIMD) path that must equal `impl` bit for bit.
struct UnaryCase {
  const char* name;
  float (*impl)(float);
  RefLd ref_ld;
  RefQ ref_q;
  ArrayFn array = nullptr;
};

// A float64 function, sampled: |x| log-uniform in [lo, hi], both signs, plus special values;
// reports the largest error in ulps against ref_q.
struct DoubleCase {
  const char* name;
  double (*impl)(double);
  RefQ ref_q;
  double lo, hi;
};

// Anything else (two-argument functions): runs its own check and returns its row.
struct CustomCase {
  const char* name;
  Row (*run)(const Options&);
};

inline std::vector<UnaryCase>& unary_cases() {
  static std::vector<UnaryCase> v;
  return v;
}
inline std::vector<DoubleCase>& double_cases() {
  static std::vector<DoubleCase> v;
  return v;
}
inline std::vector<CustomCase>& custom_cases() {
  static std::vector<CustomCase> v;
  return v;
}

struct RegisterUnary {
  explicit RegisterUnary(UnaryCase c) { unary_cases().push_back(c); }
};
struct RegisterDouble {
  explicit RegisterDouble(DoubleCase c) { double_cases().push_back(c); }
};
struct RegisterCustom {
  explicit RegisterCustom(CustomCase c) { custom_cases().push_back(c); }
};

}  // namespace verify

// cr_atanf / cr_asinf / cr_acosf (all 2^32 inputs), cr_atan2f (a structured sample of pairs)
// and the float64 versions (csrc/common/math_atan.h).
//
// References. glibc's x87 atanl / asinl / acosl / atan2l (fpatan-based, within a few ulps of
// 64 bits: < 2^-60 relative) decide unless within 2^-58 of a float32 rounding boundary; then
// libquadmath's atanq / asinq / acosq / atan2q (< 2^-110) decide.
//
// atan2f (two arguments, 2^64 pairs): csrc/common/math_atan.h shows atan2f(y, x) is
// invariant under scaling both operands by a power of two and atan2f(y, 2^j) == atanf(y 2^-j)
// bit for bit, so the exhaustive atanf run covers those pairs; this check (1) verifies both
// invariances on random pairs, (2) all pairs of 70 special values, and (3) `--samples` random
// pairs from five distributions against the reference: uniformly random bit patterns;
// exponents within +-30 of each other (the interesting quotients); |y| within a few ulps of
// |x| (quotients near 1, octant boundaries); x near 1 and y any (near-atan); y or x
// subnormal. It also counts the pairs that reach the accurate path (path 2) and any the
// accurate path could not decide (path 3, must be 0).
#include <omp.h>

#include <random>

#include "../../common/math_atan.h"
#include "../../cpu/vec_math_atan_avx2.h"
#include "../math_verify.h"

namespace {
using namespace verify;

long double atan_ld(long double x) { return atanl(x); }
__float128 atan_q(__float128 x) { return atanq(x); }
long double asin_ld(long double x) { return asinl(x); }
__float128 asin_q(__float128 x) { return asinq(x); }
long double acos_ld(long double x) { return acosl(x); }
__float128 acos_q(__float128 x) { return acosq(x); }

verify::RegisterUnary atanf_case({"atanf", repmode::cr_atanf, atan_ld, atan_q, repmode::cpu::atan_array_avx2});
verify::RegisterUnary asinf_case({"asinf", repmode::cr_asinf, asin_ld, asin_q});
verify::RegisterUnary acosf_case({"acosf", repmode::cr_acosf, acos_ld, acos_q});
verify::RegisterDouble atan_case({"atan", repmode::repmode_atan, atan_q, 1e-30, 1e30});
verify::RegisterDouble atan_mid_case({"atan_mid", repmode::repmode_atan, atan_q, 1e-3, 1e3});
verify::RegisterDouble asin_case({"asin", repmode::repmode_asin, asin_q, 1e-30, 1.0});
verify::RegisterDouble asin_mid_case({"asin_mid", repmode::repmode_asin, asin_q, 0.25, 1.0});
verify::RegisterDouble acos_case({"acos", repmode::repmode_acos, acos_q, 1e-30, 1.0});
verify::RegisterDouble acos_mid_case({"acos_mid", repmode::repmode_acos, acos_q, 0.25, 1.0});

uint32_t atan2_reference(float y, float x, RefStats& st) {
  if (std::isnan(x) || std::isnan(y)) return repmode::kCanonicalNanBits32;
  long double r = atan2l((long double)y, (long double)x);
  if (!near_f32_boundary(r, ldexpl(1.0L, -58))) return bits_of((float)r);
  ++st.quad;
  __float128 q = atan2q((__float128)y, (__float128)x);
  if (is_f32_midpoint_q(q)) {
    // A float128 value exactly on a boundary: only a tiny quotient q = y/x can do that (q^3/3
    // is below float128's precision); atan2's exact value is q - q^3/3 + ..., strictly
    // closer to 0, so the correctly rounded result is q rounded toward zero.
    ++st.ties;
    float f = (float)q;
    if (fabsq((__float128)f) > fabsq(q)) f = float_from_bits(bits_of(f) - 1);
    if (fabsq(q) > ldexpq((__float128)1.0, -100)) ++st.undecided;
    return bits_of(f);
  }
  if (near_f32_boundary_q(q, ldexpq((__float128)1.0, -100))) ++st.undecided;
  return bits_of((float)q);
}

float random_float(std::mt19937_64& rng, int emin, int emax) {  // biased exponent in [emin, emax]
  uint32_t e = uint32_t(emin + int(rng() % uint64_t(emax - emin + 1)));
  return float_from_bits((e << 23) | uint32_t(rng() & 0x7fffffu) | (uint32_t(rng() & 1) << 31));
}

std::pair<float, float> sample_pair(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0: {  // any bit patterns (NaNs included)
      return {float_from_bits(uint32_t(rng())), float_from_bits(uint32_t(rng()))};
    }
    case 1: {  // exponents within 30 of each other
      float x = random_float(rng, 31, 223);
      int ex = int((bits_of(x) >> 23) & 0xff), d = int(rng() % 61) - 30;
      return {random_float(rng, ex + d, ex + d), x};
    }
    case 2: {  // |y| within 16 ulps of |x| (quotients near 1)
      float x = random_float(rng, 1, 253);
      uint32_t ay = (bits_of(x) & 0x7fffffffu) + uint32_t(int(rng() % 33) - 16);
      return {float_from_bits(ay | (uint32_t(rng() & 1) << 31)), x};
    }
    case 3: {  // x in [1/2, 2), y any finite
      return {random_float(rng, 0, 254), random_float(rng, 126, 127)};
    }
    default: {  // a subnormal operand
      float s = float_from_bits(uint32_t(rng() % 0x800000u) | (uint32_t(rng() & 1) << 31));
      float o = random_float(rng, 0, 40);
      return (rng() & 1) ? std::pair<float, float>{s, o} : std::pair<float, float>{o, s};
    }
  }
}

Row run_atan2f(const Options& opt) {
  Row row;
  row.name = "atan2f";
  const float sp[] = {0.0f,
                      -0.0f,
                      INFINITY,
                      -INFINITY,
                      NAN,
                      1.0f,
                      -1.0f,
                      0x1p-149f,
                      -0x1p-149f,
                      0x1p-126f,
                      -0x1p-126f,
                      0x1.fffffep127f,
                      -0x1.fffffep127f,
                      0.5f,
                      -0.5f,
                      2.0f,
                      -2.0f,
                      3.0f,
                      -3.0f,
                      0x1.000002p0f,
                      0x1.fffffep-1f,
                      -0x1.000002p0f,
                      0x1p-24f,
                      0x1p24f,
                      0x1p-64f,
                      0x1p64f,
                      0x1p100f,
                      0x1p-100f,
                      0x1.921fb6p0f,
                      0x1.921fb6p1f,
                      1e-30f,
                      1e30f,
                      0x1.fffffep-127f,
                      0x1p-140f,
                      7.0f,
                      1.0f / 3.0f,
                      0.1f,
                      -0.1f,
                      10.0f,
                      1e-10f,
                      1e10f,
                      0x1.6a09e6p0f,
                      0x1.6a09e6p-1f,
                      -0x1.6a09e6p-1f,
                      0x1.bb67aep0f,
                      0x1.279a74p-1f,
                      0x1.0p-13f,
                      0x1.0p13f,
                      0x1.7ffffep0f,
                      0x1.800002p0f,
                      65504.0f,
                      0x1p-14f,
                      0x1.8p-149f,
                      5e-39f,
                      123456.0f,
                      -7.5f,
                      0x1p-30f,
                      0x1p30f,
                      0x1p-60f,
                      0x1p60f,
                      0x1p-90f,
                      0x1p90f,
                      0x1p-120f,
                      0x1p120f,
                      0x1.5p-127f,
                      0x1.5p120f,
                      1.5f,
                      0.75f,
                      0.25f,
                      4.0f};
  const int nsp = int(sizeof(sp) / sizeof(sp[0]));
  uint64_t bad = 0, quad = 0, undecided = 0, ties = 0, checked = 0, accurate = 0, hard = 0, invariance_bad = 0;
  double t0 = omp_get_wtime();
  auto check = [&](float y, float x, uint64_t& bad_, uint64_t& quad_, uint64_t& und_, uint64_t& ties_, uint64_t& acc_,
                   uint64_t& hard_) {
    int path;
    float got = repmode::math_detail::atan_detail::cr_atan2f_impl(y, x, &path);
    acc_ += path >= 2;
    hard_ += path == 3;
    RefStats st;
    uint32_t want = atan2_reference(y, x, st);
    quad_ += st.quad;
    und_ += st.undecided;
    ties_ += st.ties;
    if (bits_of(got) != want) {
      ++bad_;
#pragma omp critical
      if (bad_ <= 20)
        std::printf("  MISMATCH atan2f(%a, %a) = %a [0x%08x], want %a [0x%08x]\n", y, x, got, bits_of(got),
                    float_from_bits(want), want);
    }
  };
  for (int i = 0; i < nsp; ++i)
    for (int j = 0; j < nsp; ++j) {
      check(sp[i], sp[j], bad, quad, undecided, ties, accurate, hard);
      ++checked;
    }
#pragma omp parallel reduction(+ : bad, quad, undecided, ties, checked, accurate, hard, invariance_bad)
  {
    std::mt19937_64 rng(987654321ull + 104729ull * uint64_t(omp_get_thread_num()));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < int64_t(opt.samples); ++i) {
      auto [y, x] = sample_pair(rng);
      check(y, x, bad, quad, undecided, ties, accurate, hard);
      ++checked;
      if ((i & 15) == 0 && std::isfinite(x) && std::isfinite(y) && x != 0 && y != 0) {
        // scale invariance (both operands stay normal floats) and atan2(y, 2^j) == atan(y 2^-j)
        int ey = int((bits_of(y) >> 23) & 0xff), ex = int((bits_of(x) >> 23) & 0xff);
        int lo = std::max(1 - std::min(ey, ex), -60), hi = std::min(254 - std::max(ey, ex), 60);
        if (ey > 0 && ex > 0 && lo <= hi) {
          int j = lo + int(rng() % uint64_t(hi - lo + 1));
          float s = std::ldexp(1.0f, j);
          invariance_bad += bits_of(repmode::cr_atan2f(y * s, x * s)) != bits_of(repmode::cr_atan2f(y, x));
          float p = std::ldexp(1.0f, j), yq = y / p;
          if (std::isnormal(yq) && (x > 0))
            invariance_bad += bits_of(repmode::cr_atan2f(y, p)) != bits_of(repmode::cr_atanf(yq));
        }
      }
    }
  }
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked;
  row.bad = bad + invariance_bad + hard;
  row.quad = quad;
  row.undecided = undecided;
  row.ties = ties;
  std::printf(
      "  atan2f: %llu pairs reached the accurate path, %llu undecided there, %llu invariance failures, %llu "
      "tiny-quotient midpoints (rounded toward 0)\n",
      (unsigned long long)accurate, (unsigned long long)hard, (unsigned long long)invariance_bad,
      (unsigned long long)ties);
  return row;
}
verify::RegisterCustom atan2f_case({"atan2f", run_atan2f});

// float64 atan2: random pairs (exponents within +-60 of each other, and any), plus specials.
Row run_atan2(const Options& opt) {
  Row row;
  row.name = "atan2";
  double max_ulp = 0, wy = 0, wx = 0;
  uint64_t not_cr = 0, nan_bad = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : not_cr, nan_bad)
  {
    std::mt19937_64 rng(55555ull + 7919ull * uint64_t(omp_get_thread_num()));
    double local = 0, ly = 0, lx = 0;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < int64_t(opt.samples); ++i) {
      double x, y;
      uint64_t m1 = rng() & 0xfffffffffffffull, m2 = rng() & 0xfffffffffffffull;
      uint64_t e1 = 1 + rng() % 2046;
      if (i % 4 == 0) {
        x = double_from_bits(rng());
        y = double_from_bits(rng());
      } else {
        int64_t d = int64_t(rng() % 121) - 60;
        int64_t e2 = int64_t(e1) + d;
        if (e2 < 1) e2 = 1;
        if (e2 > 2046) e2 = 2046;
        x = double_from_bits((e1 << 52) | m1 | ((rng() & 1) << 63));
        y = double_from_bits((uint64_t(e2) << 52) | m2 | ((rng() & 1) << 63));
        if (i % 4 == 1) y = double_from_bits(bits_of(x) + (rng() % 33) - 16);
      }
      double got = repmode::repmode_atan2(y, x);
      __float128 q = atan2q((__float128)y, (__float128)x);
      if (isnanq(q)) {
        nan_bad += bits_of(got) != repmode::kCanonicalNanBits64;
        continue;
      }
      not_cr += bits_of(got) != bits_of((double)q);
      double e = ulp_error(got, q);
      if (e > local) local = e, ly = y, lx = x;
    }
#pragma omp critical
    if (local > max_ulp) max_ulp = local, wy = ly, wx = lx;
  }
  std::printf(
      "atan2 (float64) %llu random pairs: max error %.4f ulp (y = %a, x = %a), %llu not correctly rounded, "
      "%llu non-canonical NaN, %.1f s\n",
      (unsigned long long)opt.samples, max_ulp, wy, wx, (unsigned long long)not_cr, (unsigned long long)nan_bad,
      omp_get_wtime() - t0);
  row.seconds = omp_get_wtime() - t0;
  row.checked = opt.samples;
  row.bad = (max_ulp > 0.5001) + nan_bad;
  return row;
}
verify::RegisterCustom atan2_case({"atan2", run_atan2});
}  // namespace

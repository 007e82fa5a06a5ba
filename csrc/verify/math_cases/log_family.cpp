// cr_log2f, cr_log1pf, cr_rsqrtf, cr_sqrtf, cr_reciprocalf and their float64 versions
// (csrc/common/math_log_family.h).
//
// References (relative error, as math_verify.h requires < 2^-60 / < 2^-100):
//   log2l, log1pl (x87, ~2^-63); log2q, log1pq (~2^-112);
//   rsqrt: 1/sqrtl(x), two correct roundings in 64 bits (< 2^-63); 1/sqrtq (< 2^-111);
//   sqrtl / sqrtq and 1/x in long double / __float128: correctly rounded (< 2^-64 / 2^-113).
//
// Extra checks (custom cases):
//   log2f-accurate, log1pf-accurate: the accurate path alone on every input that reaches
//     the fast path, and how many inputs each path decides (the exhaustive run reaches the
//     accurate path only a handful of times);
//   rsqrtf-exact: the exact decision of rsqrtf_exact_path alone on every positive finite
//     input (it is correct for any input, not only near midpoints);
//   log-family-speed: single-thread ns per call.
#include <omp.h>

#include <chrono>
#include <vector>

#include "../../common/math_log_family.h"
#include "../math_verify.h"

namespace {

long double log2_ld(long double x) { return log2l(x); }
__float128 log2_q(__float128 x) { return log2q(x); }
long double log1p_ld(long double x) { return log1pl(x); }
__float128 log1p_q(__float128 x) { return log1pq(x); }
long double rsqrt_ld(long double x) { return 1.0L / sqrtl(x); }
__float128 rsqrt_q(__float128 x) { return (__float128)1 / sqrtq(x); }
long double sqrt_ld(long double x) { return sqrtl(x); }
__float128 sqrt_q(__float128 x) { return sqrtq(x); }
long double recip_ld(long double x) { return 1.0L / x; }
__float128 recip_q(__float128 x) { return (__float128)1 / x; }

verify::RegisterUnary log2f_case({"log2f", repmode::cr_log2f, log2_ld, log2_q});
verify::RegisterUnary log1pf_case({"log1pf", repmode::cr_log1pf, log1p_ld, log1p_q});
verify::RegisterUnary rsqrtf_case({"rsqrtf", repmode::cr_rsqrtf, rsqrt_ld, rsqrt_q});
verify::RegisterUnary sqrtf_case({"sqrtf", repmode::cr_sqrtf, sqrt_ld, sqrt_q});
verify::RegisterUnary recipf_case({"reciprocalf", repmode::cr_reciprocalf, recip_ld, recip_q});

verify::RegisterDouble log2_case({"log2", repmode::repmode_log2, log2_q, 1e-300, 1e300});
verify::RegisterDouble log2_near1_case({"log2_near1", repmode::repmode_log2, log2_q, 0.5, 2.0});
verify::RegisterDouble log1p_case({"log1p", repmode::repmode_log1p, log1p_q, 1e-300, 1e300});
verify::RegisterDouble log1p_small_case({"log1p_small", repmode::repmode_log1p, log1p_q, 1e-20, 1.0});
verify::RegisterDouble log1p_m1_case({"log1p_near-1", repmode::repmode_log1p, log1p_q, 0.5, 1.0});
verify::RegisterDouble rsqrt_case({"rsqrt", repmode::repmode_rsqrt, rsqrt_q, 0x1p-1074, 0x1p1023});
verify::RegisterDouble sqrt_case({"sqrt", repmode::repmode_sqrt, sqrt_q, 0x1p-1074, 0x1p1023});
verify::RegisterDouble recip_case({"reciprocal", repmode::repmode_reciprocal, recip_q, 0x1p-1074, 0x1p1023});

// The accurate path of log2f / log1pf alone, on every (stride-th) input that reaches the
// fast path; also counts the inputs each path of the ordinary function decides.
template <bool kLog2>
verify::Row run_accurate_only(const verify::Options& opt) {
  using namespace repmode::math_detail;
  verify::Row row;
  row.name = kLog2 ? "log2f-accurate" : "log1pf-accurate";
  const int64_t n = ((int64_t(1) << 32) + opt.stride - 1) / opt.stride;
  uint64_t bad = 0, quad = 0, undecided = 0, checked = 0;
  uint64_t paths[4] = {0, 0, 0, 0};
  uint64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0, acc_hard = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel for schedule(dynamic, 65536) reduction(+ : bad, quad, undecided, checked, p0, p1, p2, p3, acc_hard)
  for (int64_t i = 0; i < n; ++i) {
    float x = verify::float_from_bits(uint32_t(i * opt.stride));
    int path;
    if (kLog2)
      cr_log2f_impl(x, &path);
    else
      cr_log1pf_impl(x, &path);
    p0 += path == 0, p1 += path == 1, p2 += path == 2, p3 += path == 3;
    if (path == 0) continue;
    float got;
    int apath;
    if (kLog2) {
      int e;
      double M = split_float(verify::bits_of(x), e);
      got = log2f_accurate_path(M, e, &apath);
    } else {
      got = log1pf_accurate_path(double(x), &apath);
    }
    acc_hard += apath == 3;
    ++checked;
    verify::RefStats st;
    uint32_t want =
        kLog2 ? verify::reference_f32(x, log2_ld, log2_q, st) : verify::reference_f32(x, log1p_ld, log1p_q, st);
    quad += st.quad;
    undecided += st.undecided;
    if (verify::bits_of(got) != want) {
      ++bad;
#pragma omp critical
      if (bad <= 20) std::printf("  MISMATCH %s(%a) = %a, want %a\n", row.name, x, got, verify::float_from_bits(want));
    }
  }
  paths[0] = p0, paths[1] = p1, paths[2] = p2, paths[3] = p3;
  std::printf(
      "  %s: ordinary paths: special %llu, fast %llu, accurate %llu, accurate-hard %llu;"
      " accurate path alone within its bound of a boundary: %llu\n",
      kLog2 ? "log2f" : "log1pf", (unsigned long long)paths[0], (unsigned long long)paths[1],
      (unsigned long long)paths[2], (unsigned long long)paths[3], (unsigned long long)acc_hard);
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked;
  row.bad = bad + acc_hard;  // a hard accurate result would be a failure of the argument
  row.quad = quad;
  row.undecided = undecided;
  return row;
}

// rsqrtf_exact_path alone on every positive finite input, and the path counts of cr_rsqrtf.
verify::Row run_rsqrt_exact(const verify::Options& opt) {
  using namespace repmode::math_detail;
  verify::Row row;
  row.name = "rsqrtf-exact";
  const int64_t n = ((int64_t(0x7f800000)) + opt.stride - 1) / opt.stride;
  uint64_t bad = 0, quad = 0, undecided = 0, checked = 0, p1 = 0, p2 = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel for schedule(dynamic, 65536) reduction(+ : bad, quad, undecided, checked, p1, p2)
  for (int64_t i = 1; i < n; ++i) {
    uint32_t ux = uint32_t(i * opt.stride);
    float x = verify::float_from_bits(ux);
    int path;
    cr_rsqrtf_impl(x, &path);
    p1 += path == 1, p2 += path == 2;
    double xd = f32_to_double_exact(ux);
    float got = rsqrtf_exact_path(xd, 1.0 / repmode::sqrt_of(xd), nullptr);
    ++checked;
    verify::RefStats st;
    uint32_t want = verify::reference_f32(x, rsqrt_ld, rsqrt_q, st);
    quad += st.quad;
    undecided += st.undecided;
    if (verify::bits_of(got) != want) {
      ++bad;
#pragma omp critical
      if (bad <= 20) std::printf("  MISMATCH rsqrtf-exact(%a) = %a, want %a\n", x, got, verify::float_from_bits(want));
    }
  }
  std::printf("  rsqrtf: fast %llu, exact path %llu\n", (unsigned long long)p1, (unsigned long long)p2);
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked;
  row.bad = bad;
  row.quad = quad;
  row.undecided = undecided;
  return row;
}

// Single-thread ns per call on 2^24 inputs spread over the positive floats (and, for log1p,
// over (-1, 2^24)); a checksum keeps the calls alive.
verify::Row run_speed(const verify::Options&) {
  verify::Row row;
  row.name = "log-family-speed";
  const int n = 1 << 24;
  std::vector<float> pos(n), l1p(n), out(n);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    pos[i] = verify::float_from_bits(uint32_t(s >> 33) % 0x7f800000u);
    uint32_t b = uint32_t(s >> 20) % 0x4b800000u;  // [0, 2^24), negated below 1 half the time
    if (b < 0x3f800000u && (s >> 63)) b |= 0x80000000u;
    l1p[i] = verify::float_from_bits(b);
  }
  auto time = [&](const char* name, float (*f)(float), const std::vector<float>& in) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) out[i] = f(in[i]);
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (dt < best) best = dt;
    }
    uint32_t h = 0;
    for (int i = 0; i < n; ++i) h = h * 31 + verify::bits_of(out[i]);
    std::printf("  %-14s %6.2f ns/call (checksum %08x)\n", name, best * 1e9 / n, h);
  };
  time("cr_log2f", repmode::cr_log2f, pos);
  time("cr_log1pf", repmode::cr_log1pf, l1p);
  time("cr_rsqrtf", repmode::cr_rsqrtf, pos);
  time("cr_sqrtf", repmode::cr_sqrtf, pos);
  time("cr_reciprocalf", repmode::cr_reciprocalf, pos);
  time("cr_logf", repmode::cr_logf, pos);
  return row;
}

verify::RegisterCustom log2_acc({"log2f-accurate", run_accurate_only<true>});
verify::RegisterCustom log1p_acc({"log1pf-accurate", run_accurate_only<false>});
verify::RegisterCustom rsqrt_exact({"rsqrtf-exact", run_rsqrt_exact});
verify::RegisterCustom speed({"log-family-speed", run_speed});

}  // namespace

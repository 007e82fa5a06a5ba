// cr_sinf / cr_cosf and the float64 versions (csrc/common/math_trig.h).
//
// References. glibc's x86-64 sinl/cosl (ldbl-96) reduce with an exact Payne-Hanek
// reduction and are within 1-2 ulp of 64 bits (< 2^-62 relative) for every argument; a
// stride-257 scan over all float32 inputs 2^-12 <= |x| < 2^128 measured them within
// 2^-63.0 of sinq/cosq. sinq/cosq (libquadmath, also Payne-Hanek) are < 2^-110.
//
// Besides the exhaustive rows, "sinf_paths" / "cosf_paths" run every input that reaches the
// arithmetic (2^-12 <= |x| < 2^128, one sign: the paths only see |x|) through:
//  * the accurate path alone, against the reference (mis-rounded counts in "mis-rounded",
//    results within its bound of a boundary in "undecided": both must be 0), so the
//    accurate path is verified independently of how often the fast test sends inputs to it;
//  * how many take the accurate path in cr_sinf/cr_cosf;
//  * the fast path value v, whose largest relative error against the long double reference
//    is printed next to the proven 2^-49.6 the fast rounding test assumes;
//  * the reduction: the smallest |f| (reduced argument, units of pi/32) met, against the
//    proven lower bound 2^-29.8575, and the largest difference between the fast (128-bit) and
//    accurate (192-bit) reductions.
#include <omp.h>

#include "../../common/math_trig.h"
#include "../math_verify.h"

namespace {
namespace tr = repmode::math_detail::trig;

long double sin_ld(long double x) { return sinl(x); }
__float128 sin_q(__float128 x) { return sinq(x); }
long double cos_ld(long double x) { return cosl(x); }
__float128 cos_q(__float128 x) { return cosq(x); }

verify::Row run_paths(const verify::Options& opt, int shift, const char* name) {
  verify::Row row;
  row.name = name;
  const uint32_t first = 0x39800000u, last = 0x7f800000u;  // [2^-12, 2^128)
  const int64_t n = (int64_t(last - first) + opt.stride - 1) / opt.stride;
  uint64_t bad = 0, quad = 0, undecided = 0, slow = 0;
  long double worst_fast = 0, min_f = 1, worst_red = 0;
  uint32_t worst_fast_x = 0, min_f_x = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : bad, quad, undecided, slow)
  {
    long double l_fast = 0, l_minf = 1, l_red = 0;
    uint32_t l_fast_x = 0, l_minf_x = 0;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t i = 0; i < n; ++i) {
      uint32_t ax = first + uint32_t(i * opt.stride);
      float x = verify::float_from_bits(ax);
      // The reference of verify::reference_f32, with the long double value kept for the
      // fast-path error below.
      long double ref = shift ? cosl((long double)x) : sinl((long double)x);
      uint32_t want = verify::bits_of((float)ref);
      if (verify::near_f32_boundary(ref, ldexpl(1.0L, -58))) {
        ++quad;
        __float128 q = shift ? cosq((__float128)x) : sinq((__float128)x);
        if (verify::near_f32_boundary_q(q, ldexpq((__float128)1.0, -100))) ++undecided;
        want = verify::bits_of((float)q);
      }
      int path = 0;
      float got = tr::sincosf_accurate_path(ax, shift, 0, &path);
      if (verify::bits_of(got) != want) {
        ++bad;
#pragma omp critical
        if (bad <= 20)
          std::printf("  ACCURATE MISMATCH %s(%a) = %a, want %a\n", name, x, got, verify::float_from_bits(want));
      }
      undecided += path == 3;
      tr::sincosf_impl(x, shift, &path);
      slow += path >= 2;
      double v = tr::sincosf_fast(ax, shift);
      long double e = fabsl(((long double)v - ref) / ref);
      if (e > l_fast) l_fast = e, l_fast_x = ax;
      int n1, n2;
      double ff = tr::reduce_fast_f32(ax, n1);
      repmode::math_detail::DD fa = tr::reduce_accurate((ax & 0x7fffffu) | 0x800000u, tr::window_start_f32(ax), n2);
      long double fl = (long double)fa.hi + (long double)fa.lo;
      if (fabsl(fl) < l_minf) l_minf = fabsl(fl), l_minf_x = ax;
      long double d = n1 != n2 ? 1.0L : fabsl(((long double)ff - fl) / fl);
      if (d > l_red) l_red = d;
    }
#pragma omp critical
    {
      if (l_fast > worst_fast) worst_fast = l_fast, worst_fast_x = l_fast_x;
      if (l_minf < min_f) min_f = l_minf, min_f_x = l_minf_x;
      if (l_red > worst_red) worst_red = l_red;
    }
  }
  std::printf("  %s: %llu inputs take the accurate path in cr_%s\n", name, (unsigned long long)slow,
              shift ? "cosf" : "sinf");
  std::printf(
      "  %s: fast path max rel error 2^%.2f (x = %a; proven < 2^-49.6); min |f| 2^%.2f "
      "(x = %a; proven >= 2^-29.8575); fast vs accurate reduction 2^%.2f\n",
      name, (double)log2l(worst_fast), verify::float_from_bits(worst_fast_x), (double)log2l(min_f),
      verify::float_from_bits(min_f_x), (double)log2l(worst_red));
  row.checked = uint64_t(n);
  row.bad = bad;
  row.quad = quad;
  row.undecided = undecided;
  row.seconds = omp_get_wtime() - t0;
  return row;
}

verify::Row sin_paths(const verify::Options& opt) { return run_paths(opt, 0, "sinf_paths"); }
verify::Row cos_paths(const verify::Options& opt) { return run_paths(opt, 16, "cosf_paths"); }

verify::RegisterUnary sinf_case({"sinf", repmode::cr_sinf, sin_ld, sin_q});
verify::RegisterUnary cosf_case({"cosf", repmode::cr_cosf, cos_ld, cos_q});
verify::RegisterCustom sinf_paths_case({"sinf_paths", sin_paths});
verify::RegisterCustom cosf_paths_case({"cosf_paths", cos_paths});
verify::RegisterDouble sin_case({"sin", repmode::repmode_sin, sin_q, 1e-3, 1e3});
verify::RegisterDouble sin_small_case({"sin_small", repmode::repmode_sin, sin_q, 1e-30, 1e-3});
verify::RegisterDouble sin_huge_case({"sin_huge", repmode::repmode_sin, sin_q, 1e3, 1.7e308});
verify::RegisterDouble cos_case({"cos", repmode::repmode_cos, cos_q, 1e-3, 1e3});
verify::RegisterDouble cos_small_case({"cos_small", repmode::repmode_cos, cos_q, 1e-30, 1e-3});
verify::RegisterDouble cos_huge_case({"cos_huge", repmode::repmode_cos, cos_q, 1e3, 1.7e308});
}  // namespace

// cr_erff / cr_erfcf / repmode_erf / repmode_erfc (csrc/common/math_erf.h) and the AVX2
// array path of erf (csrc/cpu/vec_math_erf_avx2.h).
//
// References: glibc's x87 erfl/erfcl and libquadmath's erfq/erfcq. Measured against
// erfq/erfcq on every 61st float32 bit pattern (70M inputs, |x| < 4 for erf, -4 < x < 10.1
// for erfc): erfl within 2^-63.4 and erfcl within 2^-62.1 relative (the verifier needs
// < 2^-58); erfq/erfcq against mpmath at 300 bits on 3000 random float32 inputs: within
// 2^-111.6. Both return normal long double / __float128 values down to erfc(10.06) ~
// 2^-150, so the float32 subnormal range of erfc is covered.
//
// Besides the exhaustive rows, two custom cases check the two paths of each function on
// their own, over every input that is not decided as a special value:
//   erff_paths, erfcf_paths: the accurate path alone (it is taken for a few hundred inputs
//   in the ordinary run) must round correctly and never find its value within its error
//   bound of a rounding boundary (the correctness argument needs that); and the fast
//   path's value must stay within kFastEps = 2^-49 of the exact value (against
//   erfl/erfcl) wherever the fast path is taken. Any violation counts as mis-rounded.
#include <omp.h>

#include "../../common/math_erf.h"
#include "../../cpu/vec_math_erf_avx2.h"
#include "../math_verify.h"

namespace {
long double erf_ld(long double x) { return erfl(x); }
__float128 erf_q(__float128 x) { return erfq(x); }
long double erfc_ld(long double x) { return erfcl(x); }
__float128 erfc_q(__float128 x) { return erfcq(x); }

using repmode::erf_detail::DD;
using repmode::erf_detail::ErfKind;

// The fast-path value (before rounding to float) of cr_erff (|erf|) or cr_erfcf.
double fast_value(bool is_erfc, float xf) {
  namespace d = repmode::erf_detail;
  float axf = std::fabs(xf);
  if (!is_erfc) return d::erf_poly_f(axf);
  double x = xf;
  if (x < 0.5) {
    double p = d::erf_poly_f(axf);
    return x < 0.0 ? 1.0 + p : 1.0 - p;
  }
  int m;
  DD e = repmode::math_detail::exp_fast(-(x * x), m);
  return (e.hi * d::erfcx_poly(x, int(verify::bits_of(xf) >> 20) - 0x3f0)) * d::pow2(m);
}

template <bool kErfc>
verify::Row run_paths(const verify::Options& opt) {
  namespace d = repmode::erf_detail;
  verify::Row row;
  row.name = kErfc ? "erfcf_paths" : "erff_paths";
  const int64_t n = ((int64_t(1) << 32) + opt.stride - 1) / opt.stride;
  uint64_t checked = 0, acc_bad = 0, hard = 0, quad = 0, undecided = 0, fast = 0, accurate = 0;
  double max_err = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel for schedule(dynamic, 65536) \
    reduction(+ : checked, acc_bad, hard, quad, undecided, fast, accurate) reduction(max : max_err)
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = uint32_t(i * opt.stride);
    float x = verify::float_from_bits(u);
    int path;
    if (kErfc)
      d::cr_erfcf_impl(x, &path);
    else
      d::cr_erff_impl(x, &path);
    if (path == 0) continue;
    uint32_t au = u & 0x7fffffffu;
    if (!kErfc && au < 0x01000000u) continue;  // |x| < 2^-125: decided by erff_tiny alone
    ++checked;
    if (path == 1) {
      ++fast;
      long double r = kErfc ? erfcl((long double)x) : erfl(fabsl((long double)x));
      double e = (double)(fabsl((long double)fast_value(kErfc, x) - r) / r);
      if (e > max_err) max_err = e;
    } else {
      ++accurate;
    }
    double xd = x;
    DD y = kErfc ? (xd < 0 ? d::erf_accurate(-xd, ErfKind::erfc_neg) : d::erf_accurate(xd, ErfKind::erfc))
                 : d::erf_accurate(std::fabs(xd), ErfKind::erf);
    int p2;
    uint32_t b = d::round_accurate(y, &p2);
    if (!kErfc) b |= u & 0x80000000u;
    hard += p2 == 3;
    verify::RefStats st;
    uint32_t want = verify::reference_f32(x, kErfc ? erfc_ld : erf_ld, kErfc ? erfc_q : erf_q, st);
    quad += st.quad;
    undecided += st.undecided;
    if (b != want) {
      ++acc_bad;
#pragma omp critical
      if (acc_bad <= 20)
        std::printf("  ACCURATE PATH MISMATCH %s(%a [0x%08x]) = 0x%08x, want 0x%08x\n", row.name, x, u, b, want);
    }
  }
  bool fast_ok = max_err <= d::kFastEps;
  std::printf(
      "  %s: %llu inputs reach the paths (%llu fast, %llu accurate in the ordinary run); "
      "accurate path alone: %llu mis-rounded, %llu within its bound of a boundary; "
      "largest fast-path error 2^%.2f (the rounding test assumes 2^-49)\n",
      row.name, (unsigned long long)checked, (unsigned long long)fast, (unsigned long long)accurate,
      (unsigned long long)acc_bad, (unsigned long long)hard, max_err > 0 ? std::log2(max_err) : -INFINITY);
  row.seconds = omp_get_wtime() - t0;
  row.checked = checked;
  row.bad = acc_bad + hard + (fast_ok ? 0 : 1);
  row.quad = quad;
  row.undecided = undecided;
  return row;
}

verify::RegisterUnary erff_case({"erff", repmode::cr_erff, erf_ld, erf_q, repmode::cpu::erf_array_avx2});
verify::RegisterUnary erfcf_case({"erfcf", repmode::cr_erfcf, erfc_ld, erfc_q});
verify::RegisterCustom erff_paths({"erff_paths", run_paths<false>});
verify::RegisterCustom erfcf_paths({"erfcf_paths", run_paths<true>});
verify::RegisterDouble erf_case({"erf", repmode::repmode_erf, erf_q, 1e-320, 6.5});
verify::RegisterDouble erfc_case({"erfc", repmode::repmode_erfc, erfc_q, 1e-20, 28.0});
}  // namespace

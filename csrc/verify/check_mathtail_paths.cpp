// The affordable complete check of the math long tail's float32 functions (csrc/common/math_atan.h,
// math_tail.h), for machines where a reference evaluation on all 2^32 inputs per function is out
// of budget (csrc/verify/check_math.cpp does that: run it where time allows).
//
// Every one of the 2^32 inputs runs through the function with its path diagnostics:
//   * path 1 (fast path, the rounding test passed): correct by the proven error bound of the
//     fast evaluation (the comment next to each fast path) -- every value within the bound
//     rounds alike, the exact value among them; not compared here except on the sample below;
//   * path 2 (accurate path decided): compared with the correctly rounded reference (glibc long
//     double, __float128 near a boundary: csrc/verify/math_verify.h), every such input;
//   * path 3 (accurate path undecided): counted, must be 0;
//   * path 0 (special inputs: NaN, infinities, the tiny/huge ranges with closed-form results):
//     compared with the reference, every such input (cheap ones dominate: NaN, saturation).
// Plus every `--sample`-th input (default 61) compared with the reference whatever its path,
// which measures the fast path on ~70 million inputs per function.
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_mathtail_paths.cpp -o /tmp/check_mathtail_paths
//   -lquadmath /tmp/check_mathtail_paths [--sample N] [--stride S] atanf asinf ...   (no names: all ten)
//   /tmp/check_mathtail_paths --all atanf ...   the reference on every input (prefiltered, see
//                                               reference_prefiltered): the exhaustive check
//   --progress   report after each sixteenth of the bit patterns
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/math_tail.h"
#include "math_verify.h"

namespace {
using namespace verify;
namespace md = repmode::math_detail;

struct PathCase {
  const char* name;
  float (*impl)(float, int*);
  RefLd ref_ld;
  RefQ ref_q;
  double (*ref_d)(double);  // glibc's double function (a few ulps), the --all prefilter
};

// --all: the correctly rounded reference on every input, cheaply: glibc's double function (<= 4
// ulps on x86-64, libm-test-ulps) decides unless within 2^-46 (128 double ulps) of a float32
// rounding boundary; then reference_f32 (long double, then __float128) decides.
uint32_t reference_prefiltered(const PathCase& c, float x, RefStats& st) {
  if (std::isnan(x)) return repmode::kCanonicalNanBits32;
  double r = c.ref_d(double(x));
  if (std::isnan(r)) return repmode::kCanonicalNanBits32;
  if (!near_f32_boundary((long double)r, ldexpl(1.0L, -46))) return bits_of((float)r);
  return reference_f32(x, c.ref_ld, c.ref_q, st);
}

float atanf_p(float x, int* p) { return md::atan_detail::cr_atan2f_impl(x, 1.0f, p); }
float asinf_p(float x, int* p) { return md::atan_detail::asinacosf_impl(x, false, p); }
float acosf_p(float x, int* p) { return md::atan_detail::asinacosf_impl(x, true, p); }
float sinhf_p(float x, int* p) { return md::tail::sinhcoshf_impl(x, false, p); }
float coshf_p(float x, int* p) { return md::tail::sinhcoshf_impl(x, true, p); }
float tanf_p(float x, int* p) { return md::tail::cr_tanf_impl(x, p); }
float log10f_p(float x, int* p) { return md::tail::cr_log10f_impl(x, p); }
float asinhf_p(float x, int* p) { return md::tail::cr_asinhf_impl(x, p); }
float acoshf_p(float x, int* p) { return md::tail::cr_acoshf_impl(x, p); }
float atanhf_p(float x, int* p) { return md::tail::cr_atanhf_impl(x, p); }

long double atan_ld(long double x) { return atanl(x); }
__float128 atan_q(__float128 x) { return atanq(x); }
long double asin_ld(long double x) { return asinl(x); }
__float128 asin_q(__float128 x) { return asinq(x); }
long double acos_ld(long double x) { return acosl(x); }
__float128 acos_q(__float128 x) { return acosq(x); }
long double sinh_ld(long double x) { return sinhl(x); }
__float128 sinh_q(__float128 x) { return sinhq(x); }
long double cosh_ld(long double x) { return coshl(x); }
__float128 cosh_q(__float128 x) { return coshq(x); }
long double tan_ld(long double x) { return tanl(x); }
__float128 tan_q(__float128 x) { return tanq(x); }
long double log10_ld(long double x) { return log10l(x); }
__float128 log10_q(__float128 x) { return log10q(x); }
long double asinh_ld(long double x) { return asinhl(x); }
__float128 asinh_q(__float128 x) { return asinhq(x); }
long double acosh_ld(long double x) { return acoshl(x); }
__float128 acosh_q(__float128 x) { return acoshq(x); }
long double atanh_ld(long double x) { return atanhl(x); }
__float128 atanh_q(__float128 x) { return atanhq(x); }

double atan_d(double x) { return atan(x); }
double asin_d(double x) { return asin(x); }
double acos_d(double x) { return acos(x); }
double sinh_d(double x) { return sinh(x); }
double cosh_d(double x) { return cosh(x); }
double tan_d(double x) { return tan(x); }
double log10_d(double x) { return log10(x); }
double asinh_d(double x) { return asinh(x); }
double acosh_d(double x) { return acosh(x); }
double atanh_d(double x) { return atanh(x); }

const PathCase kCases[] = {
    {"atanf", atanf_p, atan_ld, atan_q, atan_d},      {"asinf", asinf_p, asin_ld, asin_q, asin_d},
    {"acosf", acosf_p, acos_ld, acos_q, acos_d},      {"sinhf", sinhf_p, sinh_ld, sinh_q, sinh_d},
    {"coshf", coshf_p, cosh_ld, cosh_q, cosh_d},      {"tanf", tanf_p, tan_ld, tan_q, tan_d},
    {"log10f", log10f_p, log10_ld, log10_q, log10_d}, {"asinhf", asinhf_p, asinh_ld, asinh_q, asinh_d},
    {"acoshf", acoshf_p, acosh_ld, acosh_q, acosh_d}, {"atanhf", atanhf_p, atanh_ld, atanh_q, atanh_d},
};

}  // namespace

int main(int argc, char** argv) {
  int64_t sample = 61, stride = 1;
  bool all = false, progress = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sample") && i + 1 < argc)
      sample = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--all"))
      all = true;
    else if (!std::strcmp(argv[i], "--progress"))
      progress = true;
    else if (!std::strcmp(argv[i], "--stride") && i + 1 < argc)
      stride = std::atoll(argv[++i]);
    else
      names.push_back(argv[i]);
  }
  if (all)
    std::printf("threads: %d, stride %lld, reference on every input\n", omp_get_max_threads(), (long long)stride);
  else
    std::printf("threads: %d, stride %lld, reference on every %lld-th input and on every non-fast-path input\n",
                omp_get_max_threads(), (long long)stride, (long long)sample);
  std::printf("%-8s %14s %12s %12s %12s %10s %12s %9s %8s\n", "function", "inputs", "fast", "accurate", "special",
              "undecided", "ref-checked", "wrong", "seconds");
  int failures = 0;
  for (const PathCase& c : kCases) {
    bool want = names.empty();
    for (auto& n : names) want |= n == c.name;
    if (!want) continue;
    uint64_t n_fast = 0, n_acc = 0, n_special = 0, n_hard = 0, checked = 0, wrong = 0;
    double t0 = omp_get_wtime();
    const int64_t total = int64_t(1) << 32;
    // 16 chunks of 2^28 bit patterns in order, each reported as it ends (a run cut short still
    // says which inputs it covered).
    for (int64_t chunk = 0; chunk < 16; ++chunk) {
      const int64_t lo = chunk << 28, hi = (chunk + 1) << 28;
#pragma omp parallel for schedule(dynamic, 65536) reduction(+ : n_fast, n_acc, n_special, n_hard, checked, wrong)
      for (int64_t i = (lo + stride - 1) / stride * stride; i < hi; i += stride) {
        float x = float_from_bits(uint32_t(i));
        int path = -1;
        float got = c.impl(x, &path);
        n_fast += path == 1;
        n_acc += path == 2;
        n_hard += path == 3;
        n_special += path == 0;
        bool check = all || path != 1 || (i / stride) % sample == 0;
        // Special inputs that are NaN (the bulk of path 0) are checked on the sample only: the
        // canonical NaN is a bit test.
        if (!all && path == 0 && std::isnan(x) && (i / stride) % sample != 0) {
          wrong += bits_of(got) != repmode::kCanonicalNanBits32;
          continue;
        }
        if (!check) continue;
        ++checked;
        RefStats st;
        uint32_t ref = all ? reference_prefiltered(c, x, st) : reference_f32(x, c.ref_ld, c.ref_q, st);
        if (bits_of(got) != ref || st.undecided) {
          ++wrong;
#pragma omp critical
          if (wrong <= 10)
            std::printf("  MISMATCH %s(%a [0x%08x]) = %a, want %a (path %d)\n", c.name, x, bits_of(x), got,
                        float_from_bits(ref), path);
        }
      }
      if (progress)
        std::printf("  %s: bit patterns [0x%08llx, 0x%08llx) done: %llu checked, %llu wrong, %llu undecided, %.0f s\n",
                    c.name, (unsigned long long)0, (unsigned long long)hi, (unsigned long long)checked,
                    (unsigned long long)wrong, (unsigned long long)n_hard, omp_get_wtime() - t0);
      std::fflush(stdout);
    }
    double secs = omp_get_wtime() - t0;
    std::printf("%-8s %14llu %12llu %12llu %12llu %10llu %12llu %9llu %8.0f\n", c.name,
                (unsigned long long)((total + stride - 1) / stride), (unsigned long long)n_fast,
                (unsigned long long)n_acc, (unsigned long long)n_special, (unsigned long long)n_hard,
                (unsigned long long)checked, (unsigned long long)wrong, secs);
    std::fflush(stdout);
    failures += wrong != 0 || n_hard != 0;
  }
  std::printf(failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}

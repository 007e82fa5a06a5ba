// Exhaustive verifier for repmode's correctly rounded float32 math (standalone, not part
// of the package build). Each function group registers its cases in
// csrc/verify/math_cases/<group>.cpp (see csrc/verify/math_verify.h); build all of them:
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_math.cpp csrc/verify/math_cases/*.cpp \
//       -o /tmp/check_math -lquadmath
//   /tmp/check_math                  every case (float32: all 2^32 inputs each)
//   /tmp/check_math expf tanh        only the named cases
//   /tmp/check_math --list           the registered case names
//   --stride N   check every N-th float32 bit pattern only (quick runs)
//   --samples N  random inputs for the float64 and custom checks (default 10^7)
//
// float32 rows: inputs checked, results that differ from the correctly rounded reference
// (NaN results must be exactly the canonical NaN), inputs whose reference needed
// __float128 (exact ties among them are listed as they occur), and, for cases with an
// array (SIMD) path, inputs where it differs from the scalar function. float64 rows: the largest error in ulps over the
// samples. Exit status 0 only when every float32 row shows 0 mis-rounded and 0 SIMD mismatches.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "math_verify.h"

namespace {

using namespace verify;

constexpr int64_t kBlock = 4096;

// Every stride-th bit pattern, in blocks: the scalar function against the reference, and
// the array path over the block (out of place at a block-dependent offset, so every
// alignment and tail length is exercised) against the scalar results.
Row run_unary(const UnaryCase& c, const Options& opt) {
  Row row;
  row.name = c.name;
  row.simd = c.array != nullptr && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const int64_t n = ((int64_t(1) << 32) + opt.stride - 1) / opt.stride;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  uint64_t bad = 0, quad = 0, undecided = 0, simd_bad = 0, ties = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : bad, quad, undecided, simd_bad, ties)
  {
    std::vector<float> in(kBlock + 16), got(kBlock + 16), arr(kBlock + 16);
#pragma omp for schedule(dynamic, 16)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t first = b * kBlock, len = n - first < kBlock ? n - first : kBlock;
      for (int64_t k = 0; k < len; ++k) {
        float x = float_from_bits(uint32_t((first + k) * opt.stride));
        in[k] = x;
        got[k] = c.impl(x);
        RefStats st;
        uint32_t want = reference_f32(x, c.ref_ld, c.ref_q, st);
        quad += st.quad;
        undecided += st.undecided;
        if (st.ties) {
          ++ties;
#pragma omp critical
          std::printf("  exact tie: %s(%a [0x%08x]) = midpoint, rounded to even %a\n", c.name, x, bits_of(x),
                      float_from_bits(want));
        }
        if (bits_of(got[k]) != want) {
          ++bad;
#pragma omp critical
          if (bad <= 20)
            std::printf("  MISMATCH %s(%a [0x%08x]) = %a [0x%08x], want %a [0x%08x]\n", c.name, x, bits_of(x), got[k],
                        bits_of(got[k]), float_from_bits(want), want);
        }
      }
      if (row.simd) {
        int64_t off = b % 16, m = len - (b / 16) % 9;  // shifted start, shortened tail
        if (m < 0) m = 0;
        c.array(in.data(), arr.data() + off, m);
        for (int64_t k = 0; k < m; ++k)
          if (bits_of(arr[off + k]) != bits_of(got[k])) {
            ++simd_bad;
#pragma omp critical
            if (simd_bad <= 20)
              std::printf("  SIMD MISMATCH %s(%a) = %a, scalar %a\n", c.name, in[k], arr[off + k], got[k]);
          }
        c.array(in.data(), in.data(), len);  // in place
        for (int64_t k = 0; k < len; ++k) simd_bad += bits_of(in[k]) != bits_of(got[k]);
      }
    }
  }
  row.seconds = omp_get_wtime() - t0;
  row.checked = uint64_t(n);
  row.bad = bad;
  row.quad = quad;
  row.undecided = undecided;
  row.simd_bad = simd_bad;
  row.ties = ties;
  return row;
}

// Random |x| log-uniform in [lo, hi] (both signs), and special values.
void run_double(const DoubleCase& c, const Options& opt) {
  const double specials[] = {0.0,
                             -0.0,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             0x1p-1074,
                             -0x1p-1074,
                             0x1p-1022,
                             -0x1p-1022,
                             1.0,
                             -1.0,
                             0.5,
                             -0.5,
                             2.0,
                             -2.0,
                             0x1.fffffffffffffp+1023,
                             -0x1.fffffffffffffp+1023,
                             c.lo,
                             -c.lo,
                             c.hi,
                             -c.hi};
  double t0 = omp_get_wtime();
  double max_ulp = 0, worst_x = 0;
  uint64_t not_cr = 0, nan_bad = 0;
  for (double x : specials) {
    double y = c.impl(x);
    __float128 q = c.ref_q((__float128)x);
    if (isnanq(q))
      nan_bad += bits_of(y) != repmode::kCanonicalNanBits64;
    else if (ulp_error(y, q) > max_ulp)
      max_ulp = ulp_error(y, q), worst_x = x;
  }
  const double llo = std::log2(c.lo), lhi = std::log2(c.hi);
#pragma omp parallel reduction(+ : not_cr, nan_bad)
  {
    std::mt19937_64 rng(1234567 + 7919 * omp_get_thread_num());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double local_max = 0, local_x = 0;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < int64_t(opt.samples); ++i) {
      double x = std::exp2(llo + (lhi - llo) * unit(rng));
      if (rng() & 1) x = -x;
      double y = c.impl(x);
      __float128 q = c.ref_q((__float128)x);
      if (isnanq(q)) {
        nan_bad += bits_of(y) != repmode::kCanonicalNanBits64;
        continue;
      }
      if (bits_of(y) != bits_of((double)q)) ++not_cr;
      double e = ulp_error(y, q);
      if (e > local_max) local_max = e, local_x = x;
    }
#pragma omp critical
    if (local_max > max_ulp) max_ulp = local_max, worst_x = local_x;
  }
  std::printf(
      "%-12s %llu random |x| in [%g, %g] + %d specials: max error %.4f ulp (x = %a), "
      "%.3f%% not correctly rounded, %llu non-canonical NaN, %.1f s\n",
      c.name, (unsigned long long)opt.samples, c.lo, c.hi, int(sizeof(specials) / sizeof(specials[0])), max_ulp,
      worst_x, 100.0 * double(not_cr) / double(opt.samples), (unsigned long long)nan_bad, omp_get_wtime() - t0);
}

void print_header() {
  std::printf("%-12s %14s %12s %10s %10s %14s %10s\n", "function", "inputs", "mis-rounded", "quad-ref", "undecided",
              "simd-mismatch", "seconds");
}

void print_row(const Row& r) {
  char simd[32];
  std::snprintf(simd, sizeof simd, "%llu", (unsigned long long)r.simd_bad);
  std::printf("%-12s %14llu %12llu %10llu %10llu %14s %10.1f\n", r.name, (unsigned long long)r.checked,
              (unsigned long long)r.bad, (unsigned long long)r.quad, (unsigned long long)r.undecided,
              r.simd ? simd : "-", r.seconds);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--stride") && i + 1 < argc)
      opt.stride = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--samples") && i + 1 < argc)
      opt.samples = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--list")) {
      for (auto& c : unary_cases()) std::printf("%s (float32, exhaustive)\n", c.name);
      for (auto& c : custom_cases()) std::printf("%s (custom)\n", c.name);
      for (auto& c : double_cases()) std::printf("%s (float64, sampled)\n", c.name);
      return 0;
    } else
      names.push_back(argv[i]);
  }
  if (opt.stride < 1) opt.stride = 1;
  auto wanted = [&](const char* name) {
    if (names.empty()) return true;
    for (auto& n : names)
      if (n == name) return true;
    return false;
  };
  std::printf("threads: %d, stride: %lld\n", omp_get_max_threads(), (long long)opt.stride);
  int failures = 0;
  bool header = false;
  auto count = [&](const Row& r) {
    if (!header) print_header(), header = true;
    print_row(r);
    failures += r.bad != 0 || r.simd_bad != 0 || r.undecided != 0;
  };
  for (auto& c : unary_cases())
    if (wanted(c.name)) count(run_unary(c, opt));
  for (auto& c : custom_cases())
    if (wanted(c.name)) count(c.run(opt));
  for (auto& c : double_cases())
    if (wanted(c.name)) run_double(c, opt);
  std::printf(failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}

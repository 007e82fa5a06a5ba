// Path-level checks of cr_expf / cr_logf (csrc/common/math.h): how many inputs take each
// path, the measured error of the fast evaluation against the bound its rounding test
// assumes, the accurate paths alone, the float64 versions' special values, and speed.
// (The plain exhaustive check of every math function is csrc/verify/check_math.cpp.)
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_exp_log_paths.cpp -o /tmp/check_exp_log_paths
//   -lquadmath /tmp/check_exp_log_paths [expf] [logf] [double] [speed] [--stride N]   (no test named: all four)
//   (--stride N checks every N-th float32 bit pattern only, for quick runs)
//   /tmp/check_exp_log_paths expf-accurate logf-accurate [--stride N]
//   (the accurate paths alone, on every input that reaches the fast path)
//
// expf/logf: every one of the 2^32 float32 bit patterns against a reference that is
//   itself correctly rounded: the x87 long double expl/logl (error < 2^-62 relative)
//   decides unless it lies within 2^-58 of a float32 rounding boundary, in which case
//   __float128 expq/logq (error ~2^-112) decides. Results must match bit for bit; a NaN
//   result must be exactly the canonical NaN. Also reports how many inputs took the
//   accurate path and the largest relative error of the fast double evaluation, which
//   must stay below the kFastEps the rounding test assumes.
// double: repmode_exp/repmode_log on 10^7 random inputs (plus special values and
//   subnormals), max error in ulps against __float128.
// speed: single-thread ns per call over 16M inputs.
#include <omp.h>
#include <quadmath.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/math.h"
#include "math_verify.h"

namespace {

using repmode::bits_of;
using repmode::double_from_bits;
using repmode::float_from_bits;

// ---------------- float32 reference (csrc/verify/math_verify.h) ----------------

using verify::RefStats;

long double exp_ld(long double x) { return expl(x); }
__float128 exp_q(__float128 x) { return expq(x); }
long double log_ld(long double x) { return logl(x); }
__float128 log_q(__float128 x) { return logq(x); }

template <bool kExp>
uint32_t reference_f32(float x, RefStats& st) {
  return kExp ? verify::reference_f32(x, exp_ld, exp_q, st) : verify::reference_f32(x, log_ld, log_q, st);
}

// The fast double evaluation inside cr_expf/cr_logf, as a long double value.
long double fast_value(bool is_exp, float x) {
  using namespace repmode::math_detail;
  if (is_exp) {
    int m;
    DD y = exp_fast((double)x, m);
    return ldexpl((long double)y.hi + (long double)y.lo, m);
  }
  int ex;
  double f = frexp((double)x, &ex);  // x = f * 2^ex, f in [0.5, 1)
  DD y = log_fast(2.0 * f, ex - 1);
  return (long double)y.hi + (long double)y.lo;
}

struct ExhaustiveResult {
  uint64_t checked = 0, bad = 0, fast = 0, accurate = 0, impl_undecided = 0;
  RefStats ref;
  double max_fast_err = 0;
  double seconds = 0;
};

// The accurate path alone, for inputs that reach the fast path (it is taken so rarely
// that the ordinary run hardly exercises it).
float accurate_only(bool is_exp, float x, int* path) {
  using namespace repmode::math_detail;
  if (is_exp) return expf_accurate_path((double)x, path);
  int ex;
  double f = frexp((double)x, &ex);
  return logf_accurate_path(2.0 * f, ex - 1, path);
}

template <bool kExp, bool kAccurateOnly>
ExhaustiveResult exhaustive(int64_t stride) {
  ExhaustiveResult res;
  uint64_t bad = 0, fast = 0, accurate = 0, impl_undecided = 0, quad = 0, ref_undecided = 0;
  uint64_t specials = 0;
  double max_err = 0;
  double t0 = omp_get_wtime();
  const int64_t n = ((int64_t(1) << 32) + stride - 1) / stride;
#pragma omp parallel for schedule(dynamic, 65536) \
    reduction(+ : bad, fast, accurate, impl_undecided, quad, ref_undecided, specials) reduction(max : max_err)
  for (int64_t ii = 0; ii < n; ++ii) {
    int64_t i = ii * stride;
    float x = float_from_bits(uint32_t(i));
    int path;
    float got = kExp ? repmode::math_detail::cr_expf_impl(x, &path) : repmode::math_detail::cr_logf_impl(x, &path);
    if (kAccurateOnly) {
      if (path == 0) continue;  // special input, handled before either path
      got = accurate_only(kExp, x, &path);
    }
    RefStats st;
    uint32_t want = reference_f32<kExp>(x, st);
    quad += st.quad;
    ref_undecided += st.undecided;
    if (bits_of(got) != want) {
      ++bad;
#pragma omp critical
      if (bad <= 20)
        std::printf("  MISMATCH %s(%a [0x%08x]) = %a [0x%08x], want %a [0x%08x]\n", kExp ? "cr_expf" : "cr_logf", x,
                    uint32_t(i), got, bits_of(got), float_from_bits(want), want);
    }
    if (path == 0) ++specials;
    if (path == 1) ++fast;
    if (path >= 2) ++accurate;
    if (path == 3) ++impl_undecided;
    if (path >= 1 && !kAccurateOnly) {
      long double r = kExp ? expl((long double)x) : logl((long double)x);
      double err = (double)(fabsl(fast_value(kExp, x) - r) / fabsl(r));
      if (err > max_err) max_err = err;
    }
  }
  res.seconds = omp_get_wtime() - t0;
  res.checked = uint64_t(fast + accurate + (kAccurateOnly ? 0 : specials));
  res.bad = bad;
  res.fast = fast;
  res.accurate = accurate;
  res.impl_undecided = impl_undecided;
  res.ref.quad = quad;
  res.ref.undecided = ref_undecided;
  res.max_fast_err = max_err;
  return res;
}

void print_exhaustive(const char* name, const ExhaustiveResult& r) {
  std::printf("%-8s %14llu %12llu %14llu %9llu %10llu %9llu %10.1f   2^%.2f\n", name, (unsigned long long)r.checked,
              (unsigned long long)r.bad, (unsigned long long)r.fast, (unsigned long long)r.accurate,
              (unsigned long long)r.impl_undecided, (unsigned long long)r.ref.quad, r.seconds,
              r.max_fast_err > 0 ? std::log2(r.max_fast_err) : -INFINITY);
  if (r.ref.undecided)
    std::printf("  WARNING: reference undecided for %llu inputs\n", (unsigned long long)r.ref.undecided);
}

void print_exhaustive_header() {
  std::printf("%-8s %14s %12s %14s %9s %10s %9s %10s   %s\n", "function", "inputs", "mis-rounded", "fast path",
              "accurate", "acc.undec", "quad-ref", "seconds", "max fast rel err");
}

// ---------------- float64 ----------------

using verify::ulp_error;

struct DoubleResult {
  uint64_t n = 0, not_cr = 0, special_bad = 0;
  double max_ulp = 0;
  double worst_x = 0;
};

template <bool kExp>
DoubleResult check_double_random(uint64_t count) {
  DoubleResult res;
  uint64_t not_cr = 0;
  double max_ulp = 0, worst_x = 0;
#pragma omp parallel reduction(+ : not_cr)
  {
    std::mt19937_64 rng(12345 + 977 * omp_get_thread_num());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    double local_max = 0, local_x = 0;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < int64_t(count); ++i) {
      double x;
      uint64_t b = rng();
      int kind = int(i % 5);
      if (kExp) {
        if (kind == 0)
          x = -745.2 + unit(rng) * (709.8 + 745.2);  // whole finite range
        else if (kind == 1)
          x = -1.0 + 2.0 * unit(rng);
        else if (kind == 2)
          x = -745.2 + unit(rng) * (745.2 - 708.3);  // subnormal results
        else if (kind == 3)
          x = 700.0 + unit(rng) * 9.8;  // near overflow
        else {                          // random magnitudes 2^-1074 .. 2^9, both signs
          uint64_t biased = rng() % 1032;
          x = double_from_bits((b & 0x800fffffffffffffull) | (biased << 52));
        }
      } else {
        if (kind == 0 || kind == 1) {  // any positive finite double incl. subnormals
          x = double_from_bits(b & 0x7fffffffffffffffull);
          if (!std::isfinite(x)) x = 1.5;
        } else if (kind == 2)
          x = 1.0 + (unit(rng) - 0.5) * 0x1p-4;  // near 1
        else if (kind == 3)
          x = 1.0 + double(int64_t(b % 2001) - 1000) * 0x1p-52;
        else
          x = double_from_bits(b & 0x000fffffffffffffull);  // subnormal
        if (x == 0) x = 0x1p-1074;
      }
      double y = kExp ? repmode::repmode_exp(x) : repmode::repmode_log(x);
      __float128 q = kExp ? expq((__float128)x) : logq((__float128)x);
      double e = ulp_error(y, q);
      if (bits_of(y) != bits_of((double)q)) ++not_cr;
      if (e > local_max) {
        local_max = e;
        local_x = x;
      }
    }
#pragma omp critical
    if (local_max > max_ulp) {
      max_ulp = local_max;
      worst_x = local_x;
    }
  }
  res.n = count;
  res.not_cr = not_cr;
  res.max_ulp = max_ulp;
  res.worst_x = worst_x;
  return res;
}

int check_double_specials() {
  const double inf = INFINITY, dmin = 0x1p-1074, dnorm = 0x1p-1022;
  const uint64_t cnan = repmode::kCanonicalNanBits64;
  struct Case {
    const char* what;
    double got;
    uint64_t want;
  };
  double qnan_payload = double_from_bits(0xfff8000000001234ull);
  double snan = double_from_bits(0x7ff0000000000001ull);
  Case cases[] = {
      {"exp(nan)", repmode::repmode_exp(qnan_payload), cnan},
      {"exp(snan)", repmode::repmode_exp(snan), cnan},
      {"exp(+inf)", repmode::repmode_exp(inf), bits_of(inf)},
      {"exp(-inf)", repmode::repmode_exp(-inf), 0},
      {"exp(+0)", repmode::repmode_exp(0.0), bits_of(1.0)},
      {"exp(-0)", repmode::repmode_exp(-0.0), bits_of(1.0)},
      {"exp(min subnormal)", repmode::repmode_exp(dmin), bits_of(1.0)},
      {"exp(-min subnormal)", repmode::repmode_exp(-dmin), bits_of(1.0)},
      {"exp(710)", repmode::repmode_exp(710.0), bits_of(inf)},
      {"exp(709.78)", repmode::repmode_exp(709.78), bits_of((double)expq((__float128)709.78))},
      {"exp(-745.2)", repmode::repmode_exp(-745.2), 0},
      {"exp(-745.1)", repmode::repmode_exp(-745.1), 1},
      {"exp(-708.5)", repmode::repmode_exp(-708.5), bits_of((double)expq((__float128)-708.5))},
      {"log(nan)", repmode::repmode_log(qnan_payload), cnan},
      {"log(-1)", repmode::repmode_log(-1.0), cnan},
      {"log(-inf)", repmode::repmode_log(-inf), cnan},
      {"log(-min subnormal)", repmode::repmode_log(-dmin), cnan},
      {"log(+0)", repmode::repmode_log(0.0), bits_of(-inf)},
      {"log(-0)", repmode::repmode_log(-0.0), bits_of(-inf)},
      {"log(+inf)", repmode::repmode_log(inf), bits_of(inf)},
      {"log(1)", repmode::repmode_log(1.0), 0},
      {"log(min subnormal)", repmode::repmode_log(dmin), bits_of((double)logq((__float128)0x1p-1074))},
      {"log(min normal)", repmode::repmode_log(dnorm), bits_of((double)logq((__float128)0x1p-1022))},
      {"log(max)", repmode::repmode_log(0x1.fffffffffffffp+1023),
       bits_of((double)logq((__float128)0x1.fffffffffffffp+1023))},
  };
  int bad = 0;
  for (const Case& c : cases)
    if (bits_of(c.got) != c.want) {
      ++bad;
      std::printf("  SPECIAL FAIL %s = %a [0x%016llx], want 0x%016llx\n", c.what, c.got,
                  (unsigned long long)bits_of(c.got), (unsigned long long)c.want);
    }
  // float32 specials are covered by the exhaustive runs; spot-check the canonical NaN.
  if (bits_of(repmode::cr_expf(float_from_bits(0xffc01234u))) != repmode::kCanonicalNanBits32 ||
      bits_of(repmode::cr_logf(-1.0f)) != repmode::kCanonicalNanBits32) {
    ++bad;
    std::printf("  SPECIAL FAIL float canonical NaN\n");
  }
  std::printf("special values: %d cases, %d failures\n", int(sizeof(cases) / sizeof(cases[0])), bad);
  return bad;
}

// ---------------- speed ----------------

template <typename T, typename F>
double ns_per_call(const std::vector<T>& in, std::vector<T>& out, F f) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < in.size(); ++i) out[i] = f(in[i]);
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / double(in.size());
    if (ns < best) best = ns;
  }
  return best;
}

void speed() {
  const size_t n = size_t(1) << 24;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ue(-87.0f, 88.0f);
  std::vector<float> xe(n), xl(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    xe[i] = ue(rng);
    xl[i] = float_from_bits(0x00800000u + rng() % (0x7f800000u - 0x00800000u));  // positive normal
  }
  std::vector<double> de(n), dl(n), dout(n);
  std::mt19937_64 rng64(9);
  std::uniform_real_distribution<double> ude(-700.0, 700.0);
  for (size_t i = 0; i < n; ++i) {
    de[i] = ude(rng64);
    dl[i] = double_from_bits(0x0010000000000000ull + rng64() % (0x7ff0000000000000ull - 0x0010000000000000ull));
  }
  std::printf("single-thread ns/call over %zu inputs (best of 3):\n", n);
  std::printf("  cr_expf      %6.2f   (glibc expf %5.2f)   inputs uniform in [-87, 88]\n",
              ns_per_call(xe, out, [](float x) { return repmode::cr_expf(x); }),
              ns_per_call(xe, out, [](float x) { return expf(x); }));
  std::printf("  cr_logf      %6.2f   (glibc logf %5.2f)   inputs: random positive normal floats\n",
              ns_per_call(xl, out, [](float x) { return repmode::cr_logf(x); }),
              ns_per_call(xl, out, [](float x) { return logf(x); }));
  std::printf("  repmode_exp  %6.2f   (glibc exp  %5.2f)   inputs uniform in [-700, 700]\n",
              ns_per_call(de, dout, [](double x) { return repmode::repmode_exp(x); }),
              ns_per_call(de, dout, [](double x) { return exp(x); }));
  std::printf("  repmode_log  %6.2f   (glibc log  %5.2f)   inputs: random positive normal doubles\n",
              ns_per_call(dl, dout, [](double x) { return repmode::repmode_log(x); }),
              ns_per_call(dl, dout, [](double x) { return log(x); }));
}

}  // namespace

int main(int argc, char** argv) {
  int64_t stride = 1;
  bool all = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--stride") == 0 && i + 1 < argc)
      stride = std::atoll(argv[++i]);
    else
      all = false;
  }
  auto want = [&](const char* what) {
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], what) == 0) return true;
    return all;
  };
  if (stride < 1) stride = 1;
  int failures = 0;
  std::printf("threads: %d\n", omp_get_max_threads());
  if (want("expf") || want("logf") || want("expf-accurate") || want("logf-accurate")) print_exhaustive_header();
  if (want("expf")) {
    ExhaustiveResult r = exhaustive<true, false>(stride);
    print_exhaustive("cr_expf", r);
    failures += r.bad != 0;
  }
  if (want("logf")) {
    ExhaustiveResult r = exhaustive<false, false>(stride);
    print_exhaustive("cr_logf", r);
    failures += r.bad != 0;
  }
  // Accurate paths on their own (not part of the default run: slow).
  if (!all && want("expf-accurate")) {
    ExhaustiveResult r = exhaustive<true, true>(stride);
    print_exhaustive("expf-acc", r);
    failures += r.bad != 0;
  }
  if (!all && want("logf-accurate")) {
    ExhaustiveResult r = exhaustive<false, true>(stride);
    print_exhaustive("logf-acc", r);
    failures += r.bad != 0;
  }
  if (want("double")) {
    failures += check_double_specials() != 0;
    const uint64_t n = 10000000;
    for (int f = 0; f < 2; ++f) {
      double t0 = omp_get_wtime();
      DoubleResult r = f == 0 ? check_double_random<true>(n) : check_double_random<false>(n);
      std::printf(
          "%-12s %llu random inputs: max error %.4f ulp (at x = %a), %llu (%.3f%%) not "
          "correctly rounded, %.1f s\n",
          f == 0 ? "repmode_exp" : "repmode_log", (unsigned long long)r.n, r.max_ulp, r.worst_x,
          (unsigned long long)r.not_cr, 100.0 * double(r.not_cr) / double(r.n), omp_get_wtime() - t0);
      failures += r.max_ulp >= 1.0;
    }
  }
  if (want("speed")) speed();
  std::printf(failures ? "FAILED\n" : "OK\n");
  return failures ? 1 : 0;
}

// The bound behind the float32 erfinv lanes of csrc/cpu/vec_special.cpp (Ziv's first step):
// for every float32 x in (0, 1) (the lanes' function is odd, as the definition is), the lane
// approximation r = f(x) of both ISAs (erfinv_fast_small_core / erfinv_fast_large_core of
// vec_special_lanes.h, run here through the AVX2 and the AVX-512 copies) against the float32
// definition's double D(x) = special_erfinv_for_float(x). Per region: E = max |r - D| / D (and
// where), that the two ISAs give the same r bits, how many lanes fail Ziv's test with the region's
// margin kErfinvFastMargin (these go to the scalar formula), and that every lane that passes it
// has narrow(r) == narrow(D) (a check of the argument, not part of it). The margin must be
// >= 4 E. Standalone, not part of the build:
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fno-fast-math -fopenmp \
//       csrc/verify/check_erfinv_fast.cpp -o /tmp/cef
//   /tmp/cef [--stride N] [--show K] [--from P]
//     N = 1 (default): all 1,065,353,215 float32 in (0, 1); --show: the first K fallback inputs of
//     each region and thread; --from: only the bit patterns >= P (hexadecimal)
//   /tmp/cef --benchmark-rate         the fraction of lanes that fail Ziv's test on 16M inputs of
//                                     benchmarks/run.py's distribution (float32 rand * 1.9 - 0.95)
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../cpu/vec_special.cpp"

using namespace repmode;

namespace {

constexpr int kL512 = 32, kL256 = 16;  // VS_W * VS_U of each copy

__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) void core512(int region, const double* a,
                                                                                    double* r) {
  repmode_vs512::vd x;
  std::memcpy(&x, a, sizeof x);
  const repmode_vs512::vd y =
      region == 1 ? repmode_vs512::erfinv_fast_small_core(x) : repmode_vs512::erfinv_fast_large_core(x, region - 2);
  std::memcpy(r, &y, sizeof y);
}
__attribute__((target("avx2,fma"))) void core256(int region, const double* a, double* r) {
  repmode_vs256::vd x;
  std::memcpy(&x, a, sizeof x);
  const repmode_vs256::vd y =
      region == 1 ? repmode_vs256::erfinv_fast_small_core(x) : repmode_vs256::erfinv_fast_large_core(x, region - 2);
  std::memcpy(r, &y, sizeof y);
}

uint64_t bits64(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
float f_from(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int g_show = 0;
uint64_t g_from = 1;

struct Stat {
  double emax = 0.0;
  uint32_t at = 0;
  uint64_t n = 0, fallback = 0, wrong = 0, isa_diff = 0;
};

void merge(Stat& a, const Stat& b) {
  if (b.emax > a.emax) a.emax = b.emax, a.at = b.at;
  a.n += b.n, a.fallback += b.fallback, a.wrong += b.wrong, a.isa_diff += b.isa_diff;
}

// One group of up to kL512 lanes of one region (padded with the first value).
void run_group(int region, const uint32_t* u, int cnt, Stat& st) {
  alignas(64) double a[kL512], r512[kL512], r256[kL512];
  for (int l = 0; l < kL512; ++l) a[l] = double(f_from(u[l < cnt ? l : 0]));
  core512(region, a, r512);
  core256(region, a, r256);
  core256(region, a + kL256, r256 + kL256);
  const double m = repmode::cpu::vs_common::kErfinvFastMargin[region];
  for (int l = 0; l < cnt; ++l) {
    const double r = r512[l];
    const double d = special_erfinv_for_float(a[l]);
    if (bits64(r) != bits64(r256[l])) ++st.isa_diff;
    const double e = std::fabs(r - d) / d;
    if (!(e <= st.emax)) st.emax = e, st.at = u[l];  // NaN sticks
    ++st.n;
    if (float(r * (1.0 - m)) != float(r * (1.0 + m))) {
      if (st.fallback < uint64_t(g_show))
        std::printf("region %d fallback: x = %08x (%.9g) r = %a D = %a\n", region, u[l], a[l], r, d);
      ++st.fallback;
    } else if (float(r) != float(d))
      ++st.wrong;
  }
}

// Ziv's test on 16M float32 of the benchmark's distribution, by region (full groups of 32 lanes).
int benchmark_rate() {
  std::mt19937 g(5);
  const int64_t n = 16 << 20;
  int64_t cnt[7] = {}, fb[7] = {};
  alignas(64) double a[7][kL512], r[kL512];
  int k[7] = {};
  for (int64_t i = 0; i < n; ++i) {
    const float u = std::uniform_real_distribution<float>(0.0f, 1.0f)(g) * 1.9f - 0.95f;
    const int reg = repmode::cpu::vs_common::region_of(repmode::cpu::vs_common::kErfinvRegions, u);
    if (reg == 0) continue;
    a[reg][k[reg]++] = double(u < 0.0f ? -u : u);
    if (k[reg] < kL512) continue;
    k[reg] = 0;
    core512(reg, a[reg], r);
    const double m = repmode::cpu::vs_common::kErfinvFastMargin[reg];
    for (int l = 0; l < kL512; ++l) {
      ++cnt[reg];
      if (float(r[l] * (1.0 - m)) != float(r[l] * (1.0 + m))) ++fb[reg];
    }
  }
  int64_t tc = 0, tf = 0;
  for (int reg = 1; reg < 7; ++reg) {
    std::printf("region %d: %lld inputs, %lld fallbacks\n", reg, (long long)cnt[reg], (long long)fb[reg]);
    tc += cnt[reg], tf += fb[reg];
  }
  std::printf("benchmark distribution: %lld inputs, %lld fallbacks (%.2e)\n", (long long)tc, (long long)tf,
              double(tf) / double(tc ? tc : 1));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
    else if (s == "--benchmark-rate")
      return benchmark_rate();
    else if (s == "--from" && i + 1 < argc)
      g_from = std::strtoull(argv[++i], nullptr, 16);
    else if (s == "--show" && i + 1 < argc)
      g_show = std::atoi(argv[++i]);
    else
      return std::fprintf(stderr, "unknown argument %s\n", argv[i]), 2;
  }
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq"))
    return std::fprintf(stderr, "needs AVX-512\n"), 2;
  const uint32_t last = 0x3f7fffffu;  // 1 - 2^-24
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(last) + chunk) / chunk);
  Stat total[7];
#pragma omp parallel
  {
    Stat st[7];
    uint32_t buf[7][kL512];
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int cnt[7] = {0, 0, 0, 0, 0, 0, 0};
      const uint64_t end = std::min<uint64_t>(uint64_t(c + 1) * chunk, uint64_t(last) + 1);
      const uint64_t start = (uint64_t(c) * chunk + stride - 1) / stride * stride;  // every stride-th pattern
      for (uint64_t u = start; u < end; u += stride) {
        if (u < g_from) continue;
        const int r = repmode::cpu::vs_common::region_of(repmode::cpu::vs_common::kErfinvRegions, f_from(uint32_t(u)));
        if (r == 0) std::fprintf(stderr, "unexpected region 0 at %08x\n", unsigned(u)), std::exit(1);
        buf[r][cnt[r]++] = uint32_t(u);
        if (cnt[r] == kL512) run_group(r, buf[r], cnt[r], st[r]), cnt[r] = 0;
      }
      for (int r = 1; r < 7; ++r)
        if (cnt[r]) run_group(r, buf[r], cnt[r], st[r]);
    }
#pragma omp critical
    for (int r = 1; r < 7; ++r) merge(total[r], st[r]);
  }
  bool ok = true;
  for (int r = 1; r < 7; ++r) {
    const Stat& s = total[r];
    const double m = repmode::cpu::vs_common::kErfinvFastMargin[r];
    const bool good = s.isa_diff == 0 && s.wrong == 0 && s.emax * 4.0 <= m;
    ok = ok && good;
    std::printf(
        "region %d: %llu inputs, E = %.3e = 2^%.2f at x = %08x (%.9g); margin 2^%.0f (4E %s); fallback %llu "
        "(%.2e); accepted but wrong %llu; avx2 != avx512 %llu\n",
        r, (unsigned long long)s.n, s.emax, std::log2(s.emax), s.at, double(f_from(s.at)), std::log2(m),
        s.emax * 4.0 <= m ? "<= margin" : "> MARGIN", (unsigned long long)s.fallback,
        double(s.fallback) / double(s.n ? s.n : 1), (unsigned long long)s.wrong, (unsigned long long)s.isa_diff);
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

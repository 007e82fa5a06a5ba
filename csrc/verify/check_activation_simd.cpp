// Bitwise check and speed of the SIMD float32 silu of csrc/cpu/vec_math_silu.h: AVX-512 and AVX2
// lanes replaying the scalar double formula of csrc/common/elementwise.h (standalone, not part of
// the build; needs an AVX-512 CPU). (silu_backward and gelu_backward had replaying lanes here too;
// they now have their own array versions, checked by check_activation_backward.cpp.)
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_activation_simd.cpp -o /tmp/cact
//   /tmp/cact [silu] [speed] [--stride N]    (none named: all)
//
// silu: every one of the 2^32 float32 bit patterns x (or every N-th with --stride) through the
//   AVX-512 and the AVX2 routine, alternately out of place and in place, against the scalar
//   formula, bit for bit. Plus all lengths 0..67 at alignments 0..15 (the n % 8 tails).
// speed: single-thread ns per element, scalar vs AVX2 vs AVX-512, 64K normal inputs (sd 3).
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../cpu/vec_math_silu.h"

using namespace repmode;
using namespace repmode::cpu;

static uint32_t bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float from32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

using Unary = void (*)(const float*, float*, int64_t);

static float silu_ref(float x) { return vec_silu_detail::silu_scalar(x); }

// Returns mismatches.
static uint64_t run_all(const char* name, Unary u512, Unary u2, float (*ref)(float), uint64_t stride) {
  std::atomic<uint64_t> bad{0}, checked{0};
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
#pragma omp parallel
  {
    std::vector<float> x(chunk), o512(chunk), o2(chunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      for (uint64_t i = 0; i < chunk; ++i) {
        const uint64_t pattern = uint64_t(c) * chunk + i;
        if (pattern % stride) continue;
        x[n] = from32(uint32_t(pattern));
        ++n;
      }
      if (n == 0) continue;
      uint64_t local = 0;
      const bool in_place = c & 1;
      if (in_place) {
        std::memcpy(o512.data(), x.data(), n * 4);
        u512(o512.data(), o512.data(), n);
        std::memcpy(o2.data(), x.data(), n * 4);
        u2(o2.data(), o2.data(), n);
      } else {
        u512(x.data(), o512.data(), n);
        u2(x.data(), o2.data(), n);
      }
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t want = bits32(ref(x[i]));
        if (bits32(o512[i]) != want || bits32(o2[i]) != want) {
          if (local < 4)
            std::printf("  %s mismatch: x=%a (0x%08x): scalar 0x%08x avx512 0x%08x avx2 0x%08x\n", name, x[i],
                        bits32(x[i]), want, bits32(o512[i]), bits32(o2[i]));
          ++local;
        }
      }
      bad += local;
      checked += uint64_t(n);
    }
  }
  // Tails: every length 0..67 at alignments 0..15.
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::vector<float> xs(100), oa(100), ob(100);
  uint64_t tail_bad = 0;
  for (int len = 0; len < 68; ++len)
    for (int al = 0; al < 16; ++al) {
      for (auto& v : xs) v = nd(rng);
      u512(xs.data() + al, oa.data() + al, len);
      u2(xs.data() + al, ob.data() + al, len);
      for (int i = 0; i < len; ++i) {
        const uint32_t want = bits32(ref(xs[al + i]));
        tail_bad += bits32(oa[al + i]) != want || bits32(ob[al + i]) != want;
      }
    }
  std::printf("%-14s inputs %llu, mismatches %llu; tails: mismatches %llu\n", name, (unsigned long long)checked.load(),
              (unsigned long long)bad.load(), (unsigned long long)tail_bad);
  return bad.load() + tail_bad;
}

template <typename F>
static double best_ns(F f, int64_t n) {
  double best = 1e30;
  for (int r = 0; r < 50; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n);
    if (ns < best) best = ns;
  }
  return best;
}

static void speed() {
  const int64_t n = 1 << 16;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<float> x(n), o(n);
  for (auto& v : x) v = nd(rng);
  auto row = [&](const char* name, auto scalar, auto a2, auto a512) {
    const double s = best_ns(scalar, n), v2 = best_ns(a2, n), v512 = best_ns(a512, n);
    std::printf("%-14s ns/element: scalar %.2f, AVX2 %.2f (%.1fx), AVX-512 %.2f (%.1fx)\n", name, s, v2, s / v2, v512,
                s / v512);
  };
  row(
      "silu",
      [&] {
        for (int64_t i = 0; i < n; ++i) o[i] = vec_silu_detail::silu_scalar(x[i]);
      },
      [&] { silu_array_avx2(x.data(), o.data(), n); }, [&] { silu_array_avx512(x.data(), o.data(), n); });
}

int main(int argc, char** argv) {
  uint64_t stride = 1;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
    else
      names.push_back(argv[i]);
  }
  auto want = [&](const char* n) {
    if (names.empty()) return true;
    for (auto& s : names)
      if (s == n) return true;
    return false;
  };
  uint64_t bad = 0;
  if (want("silu")) bad += run_all("silu", silu_array_avx512, silu_array_avx2, silu_ref, stride);
  if (want("speed")) speed();
  std::printf(bad ? "FAILED\n" : "all bitwise equal\n");
  return bad ? 1 : 0;
}

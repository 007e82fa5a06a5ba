// Bitwise check and speed of the SIMD float32 silu, silu_backward and gelu_backward
// (approximate='none') of csrc/cpu/vec_math_silu.h: AVX-512 and AVX2 lanes replaying the scalar
// double formulas of csrc/common/elementwise.h (standalone, not part of the build; needs an
// AVX-512 CPU).
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_activation_simd.cpp -o /tmp/cact
//   /tmp/cact [silu] [silu_backward] [gelu_backward] [speed] [--stride N]    (none named: all)
//
// silu: every one of the 2^32 float32 bit patterns x (or every N-th with --stride) through the
//   AVX-512 and the AVX2 routine, alternately out of place and in place, against the scalar
//   formula, bit for bit.
// silu_backward / gelu_backward: every x as above, each paired with a gradient g drawn from a
//   fixed list cycling with x (1, -1, 0.37, -3e-5, 2^-140, 6e37, +-inf, NaN, -0 and random
//   normals), out of place and in place (out = g and out = x alternately), against the scalar
//   formula. Plus, for each op, all lengths 0..67 at alignments 0..15 (the n % 8 tails).
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
using Binary = void (*)(const float*, const float*, float*, int64_t);

static float silu_ref(float, float x) { return vec_silu_detail::silu_scalar(x); }

static const float kGrads[] = {1.0f,      -1.0f, 0.37f, -3e-5f, 0x1p-140f, 6e37f, INFINITY,
                               -INFINITY, NAN,   -0.0f, 1.7f,   -0.61f,    2.5f};
constexpr int kNumGrads = sizeof(kGrads) / sizeof(kGrads[0]);

// mode: 0 unary (silu), 1 binary. Returns mismatches.
static uint64_t run_all(const char* name, Unary u512, Unary u2, Binary b512, Binary b2, float (*ref)(float, float),
                        uint64_t stride) {
  std::atomic<uint64_t> bad{0}, checked{0};
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
#pragma omp parallel
  {
    std::vector<float> x(chunk), g(chunk), o512(chunk), o2(chunk), io(chunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      for (uint64_t i = 0; i < chunk; ++i) {
        const uint64_t pattern = uint64_t(c) * chunk + i;
        if (pattern % stride) continue;
        x[n] = from32(uint32_t(pattern));
        g[n] = kGrads[pattern % kNumGrads];
        ++n;
      }
      if (n == 0) continue;
      uint64_t local = 0;
      const bool in_place = c & 1;
      if (u512) {
        if (in_place) {
          std::memcpy(o512.data(), x.data(), n * 4);
          u512(o512.data(), o512.data(), n);
          std::memcpy(o2.data(), x.data(), n * 4);
          u2(o2.data(), o2.data(), n);
        } else {
          u512(x.data(), o512.data(), n);
          u2(x.data(), o2.data(), n);
        }
      } else {
        if (in_place) {  // out = g on AVX-512, out = x on AVX2
          std::memcpy(o512.data(), g.data(), n * 4);
          b512(o512.data(), x.data(), o512.data(), n);
          std::memcpy(o2.data(), x.data(), n * 4);
          b2(g.data(), o2.data(), o2.data(), n);
        } else {
          b512(g.data(), x.data(), o512.data(), n);
          b2(g.data(), x.data(), o2.data(), n);
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t want = bits32(ref(g[i], x[i]));
        if (bits32(o512[i]) != want || bits32(o2[i]) != want) {
          if (local < 4)
            std::printf("  %s mismatch: g=%a x=%a (0x%08x): scalar 0x%08x avx512 0x%08x avx2 0x%08x\n", name, g[i],
                        x[i], bits32(x[i]), want, bits32(o512[i]), bits32(o2[i]));
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
  std::vector<float> xs(100), gs(100), oa(100), ob(100);
  uint64_t tail_bad = 0;
  for (int len = 0; len < 68; ++len)
    for (int al = 0; al < 16; ++al) {
      for (auto& v : xs) v = nd(rng);
      for (auto& v : gs) v = nd(rng);
      if (u512) {
        u512(xs.data() + al, oa.data() + al, len);
        u2(xs.data() + al, ob.data() + al, len);
      } else {
        b512(gs.data() + al, xs.data() + al, oa.data() + al, len);
        b2(gs.data() + al, xs.data() + al, ob.data() + al, len);
      }
      for (int i = 0; i < len; ++i) {
        const uint32_t want = bits32(ref(gs[al + i], xs[al + i]));
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
  std::vector<float> x(n), g(n), o(n);
  for (auto& v : x) v = nd(rng);
  for (auto& v : g) v = nd(rng);
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
  row(
      "silu_backward",
      [&] {
        for (int64_t i = 0; i < n; ++i) o[i] = vec_silu_detail::silu_backward_scalar(g[i], x[i]);
      },
      [&] { silu_backward_array_avx2(g.data(), x.data(), o.data(), n); },
      [&] { silu_backward_array_avx512(g.data(), x.data(), o.data(), n); });
  row(
      "gelu_backward",
      [&] {
        for (int64_t i = 0; i < n; ++i) o[i] = vec_silu_detail::gelu_backward_scalar(g[i], x[i]);
      },
      [&] { gelu_backward_array_avx2(g.data(), x.data(), o.data(), n); },
      [&] { gelu_backward_array_avx512(g.data(), x.data(), o.data(), n); });
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
  if (want("silu")) bad += run_all("silu", silu_array_avx512, silu_array_avx2, nullptr, nullptr, silu_ref, stride);
  if (want("silu_backward"))
    bad += run_all("silu_backward", nullptr, nullptr, silu_backward_array_avx512, silu_backward_array_avx2,
                   vec_silu_detail::silu_backward_scalar, stride);
  if (want("gelu_backward"))
    bad += run_all("gelu_backward", nullptr, nullptr, gelu_backward_array_avx512, gelu_backward_array_avx2,
                   vec_silu_detail::gelu_backward_scalar, stride);
  if (want("speed")) speed();
  std::printf(bad ? "FAILED\n" : "all bitwise equal\n");
  return bad ? 1 : 0;
}

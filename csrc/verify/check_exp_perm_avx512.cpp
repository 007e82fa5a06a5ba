// Bitwise check and speed of exp16_perm (csrc/cpu/vec_exp_perm_avx512.h, the gather-free
// cr_expf lanes of the softmax rows) against exp16_avx512 (csrc/cpu/vec_math_avx512.h, checked
// against the AVX2 and scalar routines on all inputs by check_vec_math_avx512.cpp) and cr_expf
// (standalone, not part of the build; needs an AVX-512 CPU).
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_exp_perm_avx512.cpp -o /tmp/cep512
//   /tmp/cep512 [all] [speed] [--stride N]    (none named: both)
//
// all: every one of the 2^32 float32 bit patterns (or every N-th with --stride) through both
//   routines, 16 at a time, compared bit for bit; every 257th pattern also with cr_expf. Counts
//   the lanes the fast path leaves to cr_expf.
// speed: single-thread ns per element over 64K inputs of a softmax row's range (x - max of
//   normal samples, all <= 0), best of 200 alternating rounds.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/math.h"
#include "../cpu/vec_exp_perm_avx512.h"
#include "../cpu/vec_math_avx512.h"

using namespace repmode;
using namespace repmode::cpu;

REPMODE_AVX512_FN static void perm_array(const float* in, float* out, int64_t n, uint64_t* settled) {
  const ExpPermTable tab = exp_perm_table();
  uint64_t s = 0;
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(in + i);
    __m512 y;
    const unsigned bad = exp16_perm_fast(x, &y, tab);
    s += __builtin_popcount(bad);
    _mm512_storeu_ps(out + i, exp16_settle(x, y, bad));
  }
  *settled += s;
}

REPMODE_AVX512_FN static void old_array(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, exp16_avx512(_mm512_loadu_ps(in + i)));
}

static bool run_all(uint64_t stride) {
  std::atomic<uint64_t> bad{0}, checked{0}, settled{0};
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
#pragma omp parallel
  {
    std::vector<float> in(chunk), a(chunk), b(chunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      for (uint64_t u = uint64_t(c) * chunk; u < uint64_t(c + 1) * chunk; u += stride)
        in[n++] = float_from_bits(uint32_t(u));
      while (n % 16) in[n++] = 0.0f;  // (only with a stride)
      uint64_t s = 0;
      perm_array(in.data(), a.data(), n, &s);
      old_array(in.data(), b.data(), n);
      uint64_t local = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (bits_of(a[i]) != bits_of(b[i])) {
          if (local < 4) std::printf("  mismatch x=%a (0x%08x): %a vs %a\n", in[i], bits_of(in[i]), a[i], b[i]);
          ++local;
        }
        if (i % 257 == 0 && bits_of(a[i]) != bits_of(cr_expf(in[i]))) ++local;
      }
      bad += local;
      checked += uint64_t(n);
      settled += s;
    }
  }
  std::printf("exp16_perm: %llu inputs, %llu mismatches, %llu lanes settled by the slow path\n",
              (unsigned long long)checked.load(), (unsigned long long)bad.load(), (unsigned long long)settled.load());
  return bad.load() == 0;
}

static void speed() {
  const int64_t n = 1 << 16;
  std::vector<float> in(n), out(n);
  std::mt19937 gen(7);
  std::normal_distribution<float> d;
  float m = -1e30f;
  for (auto& v : in) m = std::max(m, v = d(gen));
  for (auto& v : in) v -= m;
  double best_perm = 1e9, best_old = 1e9;
  uint64_t s = 0;
  for (int round = 0; round < 200; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    perm_array(in.data(), out.data(), n, &s);
    auto t1 = std::chrono::steady_clock::now();
    old_array(in.data(), out.data(), n);
    auto t2 = std::chrono::steady_clock::now();
    best_perm = std::min(best_perm, std::chrono::duration<double>(t1 - t0).count());
    best_old = std::min(best_old, std::chrono::duration<double>(t2 - t1).count());
  }
  std::printf("speed (ns per element, one thread): exp16_perm %.3f, exp16_avx512 %.3f\n", best_perm * 1e9 / n,
              best_old * 1e9 / n);
}

int main(int argc, char** argv) {
  bool want_all = false, want_speed = false;
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "all") want_all = true;
    if (a == "speed") want_speed = true;
    if (a == "--stride" && i + 1 < argc) stride = std::strtoull(argv[++i], nullptr, 10);
  }
  if (!want_all && !want_speed) want_all = want_speed = true;
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("no AVX-512 on this CPU\n");
    return 2;
  }
  bool ok = true;
  if (want_speed) speed();
  if (want_all) ok = run_all(stride);
  return ok ? 0 : 1;
}

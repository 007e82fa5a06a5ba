// Bitwise check and speed of csrc/cpu/vec_math_avx2.h against the scalar cr_expf/cr_logf
// (standalone, not part of the build).
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_vec_math.cpp csrc/cpu/isa.cpp -o
//   /tmp/check_vec_math /tmp/check_vec_math [exp] [log] [speed] [--stride N] [--ftz]   (none named: all three)
//
// exp/log: every one of the 2^32 float32 bit patterns (or every N-th with --stride), in
//   chunks run through exp_array_avx2/log_array_avx2, alternately out of place and in
//   place (in == out), compared bit for bit with the scalar function; a NaN result must
//   also be exactly the canonical NaN. Plus all lengths 0..67 at all alignments 0..7 over
//   a mix of inputs, for the n % 8 tail. --ftz runs everything with MXCSR FTZ and DAZ set.
// speed: single-thread ns per element, vector vs scalar loop, over 16M random inputs in
//   [-10, 10] (exp) and (0, 100] (log); best of 7 alternating rounds.
#include <omp.h>
#include <xmmintrin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/math.h"
#include "../cpu/isa.h"
#include "../cpu/vec_math_avx2.h"

namespace {

using repmode::bits_of;
using repmode::float_from_bits;

bool g_ftz = false;

void set_mode() {
  if (g_ftz) _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ
}

using ArrayFn = void (*)(const float*, float*, int64_t);
using ScalarFn = float (*)(float);

float scalar_exp(float x) { return repmode::cr_expf(x); }
float scalar_log(float x) { return repmode::cr_logf(x); }

bool same(float got, float want) {
  uint32_t g = bits_of(got), w = bits_of(want);
  if (g != w) return false;
  if (want != want && w != repmode::kCanonicalNanBits32) return false;  // scalar non-canonical
  return true;
}

uint64_t exhaustive(const char* name, ArrayFn vec, ScalarFn ref, uint64_t stride) {
  const uint64_t kChunk = 1 << 16;
  const uint64_t total = (uint64_t(1) << 32);
  const int64_t nchunks = int64_t(total / kChunk);
  std::atomic<uint64_t> mismatches{0}, checked{0};
  std::atomic<int> printed{0};
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
  {
    set_mode();
    std::vector<float> in(kChunk), out(kChunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      uint64_t n = 0;
      for (uint64_t b = uint64_t(c) * kChunk; b < uint64_t(c + 1) * kChunk; ++b)
        if (b % stride == 0) in[n++] = float_from_bits(uint32_t(b));
      bool inplace = c & 1;
      std::vector<float> orig;
      if (inplace) {
        orig.assign(in.begin(), in.begin() + n);
        vec(in.data(), in.data(), int64_t(n));
      } else {
        vec(in.data(), out.data(), int64_t(n));
      }
      uint64_t bad = 0;
      for (uint64_t i = 0; i < n; ++i) {
        float x = inplace ? orig[i] : in[i];
        float got = inplace ? in[i] : out[i];
        float want = ref(x);
        if (!same(got, want)) {
          ++bad;
          if (printed.fetch_add(1) < 10)
            std::printf("  %s mismatch: x=0x%08x vec=0x%08x scalar=0x%08x\n", name, bits_of(x), bits_of(got),
                        bits_of(want));
        }
      }
      mismatches += bad;
      checked += n;
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %llu inputs checked, %llu mismatches (%.1f s)\n", name, (unsigned long long)checked.load(),
              (unsigned long long)mismatches.load(), s);
  return mismatches.load();
}

// Every length 0..67 at every start offset 0..7, out of place and in place, over inputs
// that mix fast-path values and specials, so the scalar tail and lane fix-ups both occur.
uint64_t tails(const char* name, ArrayFn vec, ScalarFn ref, bool is_exp) {
  set_mode();
  std::mt19937 rng(7);
  std::vector<float> pool;
  const float specials[] = {0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            float_from_bits(0x7f800000u),
                            float_from_bits(0xff800000u),
                            float_from_bits(0x7fc00000u),
                            float_from_bits(0xffc00001u),
                            float_from_bits(0x00000001u),
                            100.0f,
                            -100.0f,
                            -120.0f,
                            1e-30f,
                            88.7f,
                            -88.0f};
  for (int i = 0; i < 200; ++i) {
    if (rng() % 4 == 0)
      pool.push_back(specials[rng() % (sizeof(specials) / sizeof(float))]);
    else if (is_exp)
      pool.push_back(std::uniform_real_distribution<float>(-20, 20)(rng));
    else
      pool.push_back(std::uniform_real_distribution<float>(0, 50)(rng));
  }
  uint64_t bad = 0;
  std::vector<float> a(80), b(80);
  for (int off = 0; off < 8; ++off)
    for (int n = 0; n <= 67; ++n)
      for (int inplace = 0; inplace < 2; ++inplace) {
        for (int i = 0; i < 80; ++i) a[i] = pool[(i + 3 * n + off) % pool.size()];
        for (int i = 0; i < 80; ++i) b[i] = float_from_bits(0xdeadbeefu);
        std::vector<float> orig = a;
        float* dst = inplace ? a.data() + off : b.data() + off;
        vec(a.data() + off, dst, n);
        for (int i = 0; i < 80; ++i) {
          float got = inplace ? a[i] : b[i];
          float want;
          if (i >= off && i < off + n)
            want = ref(orig[i]);
          else
            want = inplace ? orig[i] : float_from_bits(0xdeadbeefu);  // untouched
          if (bits_of(got) != bits_of(want)) ++bad;
        }
      }
  std::printf("%s tails (n 0..67, offsets 0..7, in/out of place): %llu mismatches\n", name, (unsigned long long)bad);
  return bad;
}

void speed() {
  set_mode();
  const int64_t N = 16 << 20;
  std::mt19937 rng(12345);
  std::vector<float> xe(N), xl(N), out(N);
  std::uniform_real_distribution<float> de(-10.0f, 10.0f), dl(0.0f, 100.0f);
  for (int64_t i = 0; i < N; ++i) xe[i] = de(rng);
  for (int64_t i = 0; i < N; ++i) {
    float v;
    do v = dl(rng);
    while (!(v > 0.0f));
    xl[i] = v;
  }
  // Rounds alternate the four loops, so that load from other processes hits them alike;
  // each keeps its best round.
  auto seconds = [](auto&& body) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  volatile float sink = 0;
  for (int rep = 0; rep < 7; ++rep) {
    double t[4];
    t[0] = seconds([&] { repmode::cpu::exp_array_avx2(xe.data(), out.data(), N); });
    sink = out[N / 2];
    t[1] = seconds([&] {
      for (int64_t i = 0; i < N; ++i) out[i] = repmode::cr_expf(xe[i]);
    });
    sink = out[N / 3];
    t[2] = seconds([&] { repmode::cpu::log_array_avx2(xl.data(), out.data(), N); });
    sink = out[N / 2];
    t[3] = seconds([&] {
      for (int64_t i = 0; i < N; ++i) out[i] = repmode::cr_logf(xl[i]);
    });
    sink = out[N / 3];
    for (int k = 0; k < 4; ++k)
      if (t[k] < best[k]) best[k] = t[k];
  }
  (void)sink;
  double e_vec = best[0] * 1e9 / double(N), e_sc = best[1] * 1e9 / double(N);
  double l_vec = best[2] * 1e9 / double(N), l_sc = best[3] * 1e9 / double(N);
  std::printf("speed (1 thread, 16M inputs, best of 7):\n");
  std::printf("  exp [-10,10]: avx2 %.2f ns/elem, scalar %.2f ns/elem, speedup %.2fx\n", e_vec, e_sc, e_sc / e_vec);
  std::printf("  log (0,100]:  avx2 %.2f ns/elem, scalar %.2f ns/elem, speedup %.2fx\n", l_vec, l_sc, l_sc / l_vec);
}

}  // namespace

int main(int argc, char** argv) {
  bool do_exp = false, do_log = false, do_speed = false;
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "exp")
      do_exp = true;
    else if (a == "log")
      do_log = true;
    else if (a == "speed")
      do_speed = true;
    else if (a == "--ftz")
      g_ftz = true;
    else if (a == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!do_exp && !do_log && !do_speed) do_exp = do_log = do_speed = true;
  if (static_cast<int>(repmode::cpu::best_isa()) < static_cast<int>(repmode::cpu::Isa::avx2)) {
    std::printf("CPU lacks AVX2+FMA: nothing to check\n");
    return 0;
  }
  std::printf("threads: %d%s%s\n", omp_get_max_threads(), g_ftz ? ", FTZ+DAZ" : "",
              stride > 1 ? (", stride " + std::to_string(stride)).c_str() : "");
  uint64_t bad = 0;
  if (do_exp) {
    bad += tails("exp", repmode::cpu::exp_array_avx2, scalar_exp, true);
    bad += exhaustive("exp", repmode::cpu::exp_array_avx2, scalar_exp, stride);
  }
  if (do_log) {
    bad += tails("log", repmode::cpu::log_array_avx2, scalar_log, false);
    bad += exhaustive("log", repmode::cpu::log_array_avx2, scalar_log, stride);
  }
  if (do_speed) speed();
  std::printf(bad ? "FAILED\n" : "OK\n");
  return bad ? 1 : 0;
}

// Bitwise check and speed of the AVX-512 array math (csrc/cpu/vec_math_avx512.h,
// vec_math_more_avx512.h) against the
// AVX2 array routines (csrc/cpu/vec_math_avx2.h, themselves checked against the scalar
// functions on all inputs by check_vec_math.cpp) and the scalar functions (standalone, not part
// of the build; needs an AVX-512 CPU).
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_vec_math_avx512.cpp -o /tmp/cvm512
//   /tmp/cvm512 [exp] [log] [tanh] [sigmoid] [gelu] [erf] [speed] [--stride N]    (none named: all)
//
// exp/log/tanh/sigmoid/gelu/erf: every one of the 2^32 float32 bit patterns (or every N-th with --stride), in chunks
//   through the AVX-512 and the AVX2 routine, alternately out of place and in place, compared
//   bit for bit; every 257th pattern also with the scalar function. Plus all lengths 0..67 at
//   alignments 0..15, for the n % 16 tail, against the scalar function.
// speed: single-thread ns per element, AVX-512 vs AVX2, over 64K random inputs (best of 200 alternating rounds).
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
#include "../cpu/vec_math_avx2.h"
#include "../cpu/vec_math_avx512.h"
#include "../cpu/vec_math_more_avx512.h"

using namespace repmode;
using namespace repmode::cpu;

using ArrayFn = void (*)(const float*, float*, int64_t);

static bool run_all(const char* name, ArrayFn f512, ArrayFn f2, float (*scalar)(float), uint64_t stride) {
  std::atomic<uint64_t> bad{0}, checked{0};
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
      if (c & 1) {  // in place
        std::memcpy(a.data(), in.data(), n * 4);
        f512(a.data(), a.data(), n);
      } else {
        f512(in.data(), a.data(), n);
      }
      f2(in.data(), b.data(), n);
      uint64_t local = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (bits_of(a[i]) != bits_of(b[i])) ++local;
        if (i % 257 == 0 && bits_of(a[i]) != bits_of(scalar(in[i]))) ++local;
      }
      if (local) {
        for (int64_t i = 0; i < n; ++i)
          if (bits_of(a[i]) != bits_of(b[i]))
            std::printf("%s: x=%08x avx512=%08x avx2=%08x\n", name, bits_of(in[i]), bits_of(a[i]), bits_of(b[i]));
      }
      bad += local;
      checked += uint64_t(n);
    }
  }
  // Tails: every length 0..67 at every alignment 0..15.
  std::mt19937 g(7);
  std::vector<float> pool(128);
  const float specials[] = {
      0.0f,  -0.0f,   1.0f,  __builtin_inff(), -__builtin_inff(), __builtin_nanf(""), 1e-45f, -1e-40f,
      88.7f, -103.5f, 89.5f, -110.0f};
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i] = i < sizeof specials / 4 ? specials[i] : std::uniform_real_distribution<float>(-120.0f, 120.0f)(g);
  uint64_t tail_bad = 0;
  for (int len = 0; len <= 67; ++len)
    for (int al = 0; al < 16; ++al) {
      std::vector<float> out(len + 16, 0.0f);
      f512(pool.data() + al, out.data() + al, len);
      for (int i = 0; i < len; ++i) tail_bad += bits_of(out[al + i]) != bits_of(scalar(pool[al + i]));
    }
  std::printf("%s: %llu inputs, %llu mismatches; tails (lengths 0..67, 16 alignments): %llu mismatches\n", name,
              (unsigned long long)checked.load(), (unsigned long long)bad.load(), (unsigned long long)tail_bad);
  return bad == 0 && tail_bad == 0;
}

static void speed(const char* name, ArrayFn f512, ArrayFn f2, float lo, float hi) {
  const int64_t n = 1 << 16;  // in and out stay in L2; many short rounds suit a shared machine
  std::vector<float> in(n), out(n);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(lo, hi);
  for (auto& v : in) v = u(g);
  double best512 = 1e9, best2 = 1e9;
  for (int r = 0; r < 200; ++r) {
    for (int k = 0; k < 2; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      (k ? f2 : f512)(in.data(), out.data(), n);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / n;
      (k ? best2 : best512) = std::min(k ? best2 : best512, t);
    }
  }
  std::printf("%s speed (1 thread): avx512 %.3f ns/elem, avx2 %.3f ns/elem (%.2fx)\n", name, best512, best2,
              best2 / best512);
}

int main(int argc, char** argv) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) {
    std::printf("this CPU has no AVX-512\n");
    return 2;
  }
  bool want_exp = false, want_log = false, want_speed = false, want_tanh = false, want_sigmoid = false,
       want_gelu = false, want_erf = false;
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "exp")
      want_exp = true;
    else if (a == "log")
      want_log = true;
    else if (a == "speed")
      want_speed = true;
    else if (a == "tanh")
      want_tanh = true;
    else if (a == "sigmoid")
      want_sigmoid = true;
    else if (a == "gelu")
      want_gelu = true;
    else if (a == "erf")
      want_erf = true;
    else if (a == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
  }
  if (!want_exp && !want_log && !want_speed && !want_tanh && !want_sigmoid && !want_gelu && !want_erf)
    want_exp = want_log = want_speed = want_tanh = want_sigmoid = want_gelu = want_erf = true;
  bool ok = true;
  if (want_exp) ok &= run_all("exp", exp_array_avx512, exp_array_avx2, cr_expf, stride);
  if (want_log) ok &= run_all("log", log_array_avx512, log_array_avx2, cr_logf, stride);
  if (want_tanh) ok &= run_all("tanh", tanh_array_avx512, tanh_array_avx2, cr_tanhf, stride);
  if (want_sigmoid) ok &= run_all("sigmoid", sigmoid_array_avx512, sigmoid_array_avx2, cr_sigmoidf, stride);
  if (want_gelu) ok &= run_all("gelu", gelu_array_avx512, gelu_array_avx2, vec_math_gelu_detail::gelu_scalar, stride);
  if (want_erf) ok &= run_all("erf", erf_array_avx512, erf_array_avx2, cr_erff, stride);
  if (want_speed) {
    speed("exp", exp_array_avx512, exp_array_avx2, -10.0f, 10.0f);
    speed("log", log_array_avx512, log_array_avx2, 1e-3f, 100.0f);
    speed("tanh", tanh_array_avx512, tanh_array_avx2, -5.0f, 5.0f);
    speed("sigmoid", sigmoid_array_avx512, sigmoid_array_avx2, -10.0f, 10.0f);
    speed("gelu", gelu_array_avx512, gelu_array_avx2, -5.0f, 5.0f);
    speed("erf", erf_array_avx512, erf_array_avx2, -4.0f, 4.0f);
  }
  std::printf(ok ? "OK\n" : "FAIL\n");
  return ok ? 0 : 1;
}

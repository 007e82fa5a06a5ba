// Bitwise check and speed of the AVX2 and AVX-512 array versions of the float32 lgamma, digamma
// and erfinv (csrc/cpu/vec_special.cpp) against the scalar formula EwFormula<float, op> (the
// per-element definition the scalar ISA path runs). Standalone, not part of the build.
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/check_vec_special.cpp \
//       csrc/cpu/vec_special.cpp -o /tmp/cvs
//   /tmp/cvs [lgamma] [digamma] [erfinv] [speed] [--stride N] [--lanes-only]
//                                                      (no function named: all three)
//
// Each function: every N-th of the 2^32 float32 bit patterns (N = 1 by default: all of them), in
// chunks of 2^16 through each vector path the CPU has (alternately out of place and in place) and
// through the scalar formula, compared bit for bit; plus every length 0..40 at offsets 0..15.
// --lanes-only keeps only the patterns the lane kernels can take (lgamma, digamma: positive
// finite; erfinv: |x| < 1): the others are classified into region 0, where both paths call the
// scalar formula itself.
// speed: single-thread ns per element of each path on the benchmark's inputs (benchmarks/run.py:
// uniform in [0.01, 20.01] for lgamma/digamma, in [-0.95, 0.95] for erfinv), best of 20 rounds.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/elementwise.h"
#include "../cpu/isa.h"
#include "../cpu/vec_special.h"

using namespace repmode;
using namespace repmode::cpu;

namespace {

float scalar(int op, float v) {
  const EwParams<float> p{0.0, 0.0, 0.0};
  if (op == int(EwOp::lgamma)) return EwFormula<float, EwOp::lgamma>::apply(v, 0.0f, 0.0f, p);
  if (op == int(EwOp::digamma)) return EwFormula<float, EwOp::digamma>::apply(v, 0.0f, 0.0f, p);
  return EwFormula<float, EwOp::erfinv>::apply(v, 0.0f, 0.0f, p);
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
}

bool lane_domain(int op, float v) {
  if (op == int(EwOp::erfinv)) return v > -1.0f && v < 1.0f;
  return v > 0.0f && v < __builtin_inff();
}

bool check(const char* name, int op, uint64_t stride, bool lanes_only) {
  const bool w512 = has_avx512();
  std::atomic<uint64_t> bad{0}, checked{0};
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
#pragma omp parallel
  {
    std::vector<float> in(chunk), a(chunk), b(chunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      for (uint64_t u = uint64_t(c) * chunk; u < uint64_t(c + 1) * chunk; u += stride) {
        const float v = float_from_bits(uint32_t(u));
        if (!lanes_only || lane_domain(op, v)) in[n++] = v;
      }
      if (n == 0) continue;
      uint64_t local = 0;
      for (int path = 0; path < (w512 ? 2 : 1); ++path) {
        const Isa isa = path ? Isa::avx512 : Isa::avx2;
        if (c & 1) {  // in place
          std::memcpy(a.data(), in.data(), n * 4);
          special_array(op, a.data(), a.data(), n, isa);
        } else {
          special_array(op, in.data(), a.data(), n, isa);
        }
        if (path == 0)
          for (int64_t i = 0; i < n; ++i) b[i] = scalar(op, in[i]);
        for (int64_t i = 0; i < n; ++i)
          if (bits_of(a[i]) != bits_of(b[i])) {
            if (local < 8)
              std::printf("%s %s: x=%08x vector=%08x scalar=%08x\n", name, path ? "avx512" : "avx2", bits_of(in[i]),
                          bits_of(a[i]), bits_of(b[i]));
            ++local;
          }
      }
      bad += local;
      checked += uint64_t(n);
    }
  }
  // Tails: every length 0..40 at offsets 0..15 of a pool of the function's typical inputs.
  std::mt19937 g(7);
  std::vector<float> pool(64);
  for (auto& v : pool)
    v = op == int(EwOp::erfinv) ? std::uniform_real_distribution<float>(-1.0f, 1.0f)(g)
                                : std::uniform_real_distribution<float>(-3.0f, 20.0f)(g);
  uint64_t tail_bad = 0;
  for (int len = 0; len <= 40; ++len)
    for (int off = 0; off < 16 && off + len <= 64; ++off)
      for (int path = 0; path < (w512 ? 2 : 1); ++path) {
        std::vector<float> out(len + 1, 0.0f);
        special_array(op, pool.data() + off, out.data(), len, path ? Isa::avx512 : Isa::avx2);
        for (int i = 0; i < len; ++i)
          if (bits_of(out[i]) != bits_of(scalar(op, pool[off + i]))) ++tail_bad;
      }
  std::printf("%s: %llu inputs (stride %llu%s), %llu mismatches; tails: %llu mismatches; paths: avx2%s\n", name,
              (unsigned long long)checked.load(), (unsigned long long)stride, lanes_only ? ", lanes only" : "",
              (unsigned long long)bad.load(), (unsigned long long)tail_bad, w512 ? ", avx512" : "");
  std::fflush(stdout);
  return bad == 0 && tail_bad == 0;
}

void speed(const char* name, int op) {
  const int64_t n = 1 << 16;
  std::mt19937 g(1);
  std::vector<float> in(n), out(n);
  for (auto& v : in)
    v = op == int(EwOp::erfinv) ? std::uniform_real_distribution<float>(-0.95f, 0.95f)(g)
                                : std::uniform_real_distribution<float>(0.01f, 20.01f)(g);
  double best[3] = {1e30, 1e30, 1e30};
  for (int round = 0; round < 20; ++round)
    for (int path = 0; path < 3; ++path) {
      if (path == 2 && !has_avx512()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      if (path == 0)
        for (int64_t i = 0; i < n; ++i) out[i] = scalar(op, in[i]);
      else
        special_array(op, in.data(), out.data(), n, path == 1 ? Isa::avx2 : Isa::avx512);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (dt < best[path]) best[path] = dt;
    }
  std::printf("%s ns/element (1 thread): scalar %.1f, avx2 %.1f, avx512 %.1f\n", name, best[0] * 1e9 / n,
              best[1] * 1e9 / n, best[2] * 1e9 / n);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 1;
  bool want[3] = {false, false, false}, any = false, do_speed = false, lanes_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--stride" && i + 1 < argc) {
      stride = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "lgamma" || a == "digamma" || a == "erfinv") {
      want[a == "lgamma" ? 0 : a == "digamma" ? 1 : 2] = any = true;
    } else if (a == "--lanes-only") {
      lanes_only = true;
    } else if (a == "speed") {
      do_speed = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (!any && !do_speed) want[0] = want[1] = want[2] = true;
  const char* names[3] = {"lgamma", "digamma", "erfinv"};
  const int ops[3] = {int(EwOp::lgamma), int(EwOp::digamma), int(EwOp::erfinv)};
  bool ok = true;
  for (int f = 2; f >= 0; --f)  // erfinv first
    if (want[f]) ok = check(names[f], ops[f], stride, lanes_only) && ok;
  if (do_speed)
    for (int f = 0; f < 3; ++f)
      if (want[f] || !any) speed(names[f], ops[f]);
  return ok ? 0 : 1;
}

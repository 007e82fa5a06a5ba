// Bitwise check and speed of the AVX2 and AVX-512 float32 tan, sinh and cosh of
// csrc/cpu/vec_tail.cpp against the scalar cr_tanf, cr_sinhf, cr_coshf (csrc/common/math_tail.h)
// (standalone, not part of the build; needs an AVX-512 CPU for the AVX-512 half).
//
//   g++ -O2 -std=c++17 -ffp-contract=off -fno-fast-math -fopenmp csrc/verify/check_tail_simd.cpp \
//       -o /tmp/ctail
//   /tmp/ctail [tan] [sinh] [cosh] [speed] [fallbacks] [--stride N]  (none named: all but fallbacks)
//
// tan/sinh/cosh: every one of the 2^32 float32 bit patterns (or every N-th with --stride), in
//   chunks through the AVX-512 and the AVX2 routine (alternately out of place and in place) and
//   the scalar function, compared bit for bit. The tan lanes use another algorithm than cr_tanf,
//   so this comparison on every input is what shows they return its bits. Also counts the lanes
//   each path hands to the scalar function, and checks all lengths 0..67 at alignments 0..15
//   (the tails) against the scalar function.
// fallbacks: how many inputs the lanes hand to the scalar function, and examples of the inputs
//   whose rounding test fails (for tests/families/mathtail/test_tail_simd.py).
// speed: single-thread ns per element, scalar vs AVX2 vs AVX-512, 64K normal inputs.
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "../cpu/vec_tail.cpp"

using namespace repmode;
using namespace repmode::cpu;

static int op_code(const std::string& name) {
  return name == "tan" ? int(EwOp::tan) : name == "sinh" ? int(EwOp::sinh) : int(EwOp::cosh);
}
static float scalar_of(int op, float x) {
  return op == int(EwOp::tan) ? cr_tanf(x) : op == int(EwOp::sinh) ? cr_sinhf(x) : cr_coshf(x);
}

static bool run_all(const std::string& name, bool has512, uint64_t stride) {
  const int op = op_code(name);
  std::atomic<uint64_t> bad2{0}, bad512{0}, checked{0};
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
  auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
  {
    std::vector<float> in(chunk), a(chunk), b(chunk), s(chunk);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      for (uint64_t u = uint64_t(c) * chunk; u < uint64_t(c + 1) * chunk; u += stride)
        in[n++] = float_from_bits(uint32_t(u));
      for (int64_t i = 0; i < n; ++i) s[i] = scalar_of(op, in[i]);
      uint64_t l2 = 0, l512 = 0;
      if (c & 1) {  // in place
        std::memcpy(b.data(), in.data(), n * 4);
        tail_array(op, b.data(), b.data(), n, Isa::avx2);
      } else {
        tail_array(op, in.data(), b.data(), n, Isa::avx2);
      }
      for (int64_t i = 0; i < n; ++i)
        if (bits_of(b[i]) != bits_of(s[i])) {
          if (++l2 <= 4)
            std::printf("%s avx2: x=%08x simd=%08x scalar=%08x\n", name.c_str(), bits_of(in[i]), bits_of(b[i]),
                        bits_of(s[i]));
        }
      if (has512) {
        if (c & 1) {
          tail_array(op, in.data(), a.data(), n, Isa::avx512);
        } else {
          std::memcpy(a.data(), in.data(), n * 4);
          tail_array(op, a.data(), a.data(), n, Isa::avx512);
        }
        for (int64_t i = 0; i < n; ++i)
          if (bits_of(a[i]) != bits_of(s[i])) {
            if (++l512 <= 4)
              std::printf("%s avx512: x=%08x simd=%08x scalar=%08x\n", name.c_str(), bits_of(in[i]), bits_of(a[i]),
                          bits_of(s[i]));
          }
      }
      bad2 += l2;
      bad512 += l512;
      checked += uint64_t(n);
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Tails: every length 0..67 at every alignment 0..15, with special values among the inputs.
  std::mt19937 g(7);
  std::vector<float> pool(128);
  const float specials[] = {
      0.0f,  -0.0f,  1.0f,      __builtin_inff(), -__builtin_inff(), __builtin_nanf(""), 1e-45f,        -1e-40f,
      89.5f, -89.6f, 262144.0f, -262143.97f,      1.5707964f,        -3.1415927f,        2.4414062e-4f, 2.4414059e-4f};
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i] = i < sizeof specials / 4 ? specials[i] : std::uniform_real_distribution<float>(-100.0f, 100.0f)(g);
  uint64_t tail_bad = 0;
  for (int isa = 0; isa < (has512 ? 2 : 1); ++isa)
    for (int len = 0; len <= 67; ++len)
      for (int al = 0; al < 16; ++al) {
        std::vector<float> out(len + 16, 0.0f);
        tail_array(op, pool.data() + al, out.data() + al, len, isa ? Isa::avx512 : Isa::avx2);
        for (int i = 0; i < len; ++i) tail_bad += bits_of(out[al + i]) != bits_of(scalar_of(op, pool[al + i]));
      }
  std::printf("%s: %llu inputs in %.0f s; mismatches: avx2 %llu, avx512 %llu%s; tails: %llu mismatches\n", name.c_str(),
              (unsigned long long)checked.load(), secs, (unsigned long long)bad2.load(),
              (unsigned long long)bad512.load(), has512 ? "" : " (not run: no AVX-512)", (unsigned long long)tail_bad);
  return bad2 == 0 && bad512 == 0 && tail_bad == 0;
}

// The lanes the AVX2 kernel hands to the scalar function (the AVX-512 lanes run the same
// operations, so they flag the same inputs): the count over all inputs (or every N-th), the
// count of finite inputs in the fast range whose rounding test failed, and the first few of those.
template <int Op>
__attribute__((target("avx2,fma"))) static void scan_chunk(uint64_t begin, uint64_t end, uint64_t stride,
                                                           const vt_common::SinhCoefs& k, uint64_t& t, uint64_t& r,
                                                           std::vector<uint32_t>& mine) {
  for (uint64_t u = begin; u < end; u += 4 * stride) {
    repmode_vt256::hf x, y;
    for (int l = 0; l < 4; ++l) x[l] = float_from_bits(uint32_t(u + l * stride));
    const unsigned bad = repmode_vt256::op_lanes<Op>(x, &y, k);
    for (int l = 0; l < 4; ++l) {
      if (!(bad & (1u << l))) continue;
      ++t;
      const uint32_t ax = bits_of(x[l]) & 0x7fffffffu;
      const bool in_range =
          ax >= vt_common::kTinyBits && (Op == 0 ? ax < vt_common::kTanFastEndBits : ax <= vt_common::kSinhHugeBits);
      if (in_range) {
        ++r;
        if (mine.size() < 6) mine.push_back(bits_of(x[l]));
      }
    }
  }
}

template <int Op>
static void fallbacks(const std::string& name, uint64_t stride) {
  std::atomic<uint64_t> total{0}, rounding{0};
  std::vector<uint32_t> examples;
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
  const vt_common::SinhCoefs k = vt_common::sinh_coefs();
#pragma omp parallel
  {
    std::vector<uint32_t> mine;
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      uint64_t t = 0, r = 0;
      scan_chunk<Op>(uint64_t(c) * chunk, uint64_t(c + 1) * chunk, stride, k, t, r, mine);
      total += t;
      rounding += r;
    }
#pragma omp critical
    examples.insert(examples.end(), mine.begin(), mine.end());
  }
  std::printf(
      "%s fallbacks (every %llu-th input): %llu lanes to the scalar function, %llu of them in the fast range "
      "(rounding test); e.g.",
      name.c_str(), (unsigned long long)stride, (unsigned long long)total.load(), (unsigned long long)rounding.load());
  std::sort(examples.begin(), examples.end());
  for (size_t i = 0; i < examples.size() && i < 12; ++i) std::printf(" 0x%08x", examples[i]);
  std::printf("\n");
}

static void speed(const std::string& name, bool has512) {
  const int op = op_code(name);
  const int64_t n = 1 << 16;
  std::vector<float> in(n), out(n);
  std::mt19937 g(3);
  std::normal_distribution<float> u(0.0f, name == "tan" ? 1.0f : 3.0f);
  for (auto& v : in) v = u(g);
  double best[3] = {1e9, 1e9, 1e9};
  for (int r = 0; r < 100; ++r)
    for (int k = 0; k < 3; ++k) {
      if (k == 2 && !has512) continue;
      auto t0 = std::chrono::steady_clock::now();
      if (k == 0)
        for (int64_t i = 0; i < n; ++i) out[i] = scalar_of(op, in[i]);
      else
        tail_array(op, in.data(), out.data(), n, k == 1 ? Isa::avx2 : Isa::avx512);
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e9 / n;
      best[k] = std::min(best[k], t);
    }
  std::printf("%s speed (1 thread, ns/elem): scalar %.3f, avx2 %.3f, avx512 %.3f\n", name.c_str(), best[0], best[1],
              has512 ? best[2] : 0.0);
}

int main(int argc, char** argv) {
  const bool has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  std::vector<std::string> names;
  bool want_speed = false, want_fallbacks = false;
  uint64_t stride = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "tan" || a == "sinh" || a == "cosh")
      names.push_back(a);
    else if (a == "speed")
      want_speed = true;
    else if (a == "fallbacks")
      want_fallbacks = true;
    else if (a == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
  }
  if (names.empty() && !want_speed && !want_fallbacks) {
    names = {"tan", "sinh", "cosh"};
    want_speed = true;
  }
  bool ok = true;
  for (const auto& name : names) ok &= run_all(name, has512, stride);
  if (want_fallbacks) {
    fallbacks<0>("tan", stride);
    fallbacks<1>("sinh", stride);
    fallbacks<2>("cosh", stride);
  }
  if (want_speed)
    for (const char* name : {"tan", "sinh", "cosh"}) speed(name, has512);
  std::printf(ok ? "OK\n" : "FAIL\n");
  return ok ? 0 : 1;
}

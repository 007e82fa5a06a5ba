// The proof and the check of the AVX2 and AVX-512 float32 gelu_backward (erf form),
// gelu_tanh_backward and silu_backward of csrc/cpu/vec_activation_backward.cpp against their
// scalar formulas (csrc/common/elementwise.h) (standalone, not part of the build; needs an
// AVX-512 CPU).
//
//   g++ -O3 -std=c++17 -ffp-contract=off -fno-fast-math -fno-finite-math-only -fopenmp \
//       csrc/verify/check_activation_backward.cpp -o /tmp/cab
//   /tmp/cab [gelu] [gelu_tanh] [silu] [random] [speed] [--stride N]   (none named: all)
//
// gelu / gelu_tanh / silu, over every one of the 2^32 float32 bit patterns x (or every N-th):
//  (a) the bound: H(x), the scalar formula's double factor (EwFormula<double, op>(1, x): the same
//      double operations as the float32 formula, whose result is narrow<float>(g H); checked
//      against EwFormula<float, op>(1, x) on every 16th x), against the lanes' h(x), on both ISA
//      paths: E = max |h - H| / (|h| + w) over the x where the lanes keep h (an infinite or NaN H
//      there counts as a violation), and whether m (the lanes' margin) >= 4 E + 2^-48;
//  (b) the outputs: act_backward_array through AVX-512 and AVX2 for every x the lanes keep (and
//      every 64th of the others, which go to the scalar formula whatever g is), with g each of
//      1, -1, 0.7, 2^-149, -3e38, 3e38, NaN, +inf, -inf, +0, -0 (alternately in place and out of
//      place), against canon(float(G H)) bit for bit, and how many lanes fell back to the scalar
//      formula (the lanes' decision replayed in scalar double: the same IEEE operations).
// random: 10^8 (g, x) pairs (x: randn, 4 randn, random bit patterns; g: randn, random bit patterns,
//   the special values) through both paths against EwFormula<float, op> itself; every length 0..67
//   at offsets 0..15; the fallback rate for x, g ~ randn.
// speed: single-thread ns per element, scalar vs AVX2 vs AVX-512, 1M randn (g, x).
#include <omp.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../cpu/vec_activation_backward.cpp"

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

static int op_code(const std::string& name) {
  return name == "gelu"        ? int(EwOp::gelu_backward)
         : name == "gelu_tanh" ? int(EwOp::gelu_tanh_backward)
                               : int(EwOp::silu_backward);
}
static float scalar_f(int op, float g, float x) {
  const EwParams<float> p{0.0, 0.0, 0.0};
  if (op == int(EwOp::gelu_backward)) return EwFormula<float, EwOp::gelu_backward>::apply(g, x, 0.0f, p);
  if (op == int(EwOp::gelu_tanh_backward)) return EwFormula<float, EwOp::gelu_tanh_backward>::apply(g, x, 0.0f, p);
  return EwFormula<float, EwOp::silu_backward>::apply(g, x, 0.0f, p);
}
// H(x): the float formulas compute narrow<float>(G * H) with H this very double sequence.
static double scalar_H(int op, float x) {
  const EwParams<double> p{0.0, 0.0, 0.0};
  const double X = x;
  if (op == int(EwOp::gelu_backward)) return EwFormula<double, EwOp::gelu_backward>::apply(1.0, X, 0.0, p);
  if (op == int(EwOp::gelu_tanh_backward)) return EwFormula<double, EwOp::gelu_tanh_backward>::apply(1.0, X, 0.0, p);
  return EwFormula<double, EwOp::silu_backward>::apply(1.0, X, 0.0, p);
}
static float ref_from_H(float g, double H) { return canon(static_cast<float>(double(g) * H)); }
// The lanes' decision (vec_activation_backward_lanes.h ziv_lanes) replayed: whether a lane falls back.
static bool falls_back(double m, float g, double h, double w, bool kept) {
  if (!kept) return true;
  const double G = g, p = G * h;
  const double rad = m * (std::fabs(p) + std::fabs(G) * w);
  const float lo = static_cast<float>(p - rad), up = static_cast<float>(p + rad);
  return !(lo == up);
}

static const float kGrads[] = {1.0f, -1.0f, 0.7f, 0x1p-149f, -3e38f, 3e38f, NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
constexpr int kNumGrads = sizeof(kGrads) / sizeof(kGrads[0]);
static const Isa kIsas[2] = {Isa::avx512, Isa::avx2};

static uint64_t exhaustive(const std::string& name, uint64_t stride) {
  const int op = op_code(name);
  const double m = act_backward_margin(op);
  const uint64_t chunk = 1 << 16;
  const int64_t nchunks = int64_t((uint64_t(1) << 32) / chunk);
  std::atomic<uint64_t> bad_out{0}, bad_derive{0}, bad_isa_h{0}, bad_H{0}, kept_total{0}, xs_total{0}, xs_b{0};
  std::atomic<uint64_t> fallbacks[kNumGrads] = {};
  double worst = 0.0;
  float worst_x = 0.0f;
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
  {
    std::vector<float> x(chunk), g(chunk), o(chunk), xb(chunk);
    std::vector<double> H(chunk), h[2], w[2], Hb(chunk), hb(chunk), wb(chunk);
    std::vector<uint8_t> kb(chunk);
    std::vector<uint8_t> kept[2];
    for (int k = 0; k < 2; ++k) h[k].resize(chunk), w[k].resize(chunk), kept[k].resize(chunk);
    double my_worst = 0.0;
    float my_worst_x = 0.0f;
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < nchunks; ++c) {
      int64_t n = 0;
      const uint64_t begin = uint64_t(c) * chunk, end = begin + chunk;
      for (uint64_t pattern = (begin + stride - 1) / stride * stride; pattern < end; pattern += stride)
        x[n++] = from32(uint32_t(pattern));
      if (n == 0) continue;
      uint64_t derive = 0, isa_h = 0, badH = 0, nkept = 0, out_bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        H[i] = scalar_H(op, x[i]);
        if (((uint64_t(c) * chunk + i) & 15) == 0 && bits32(scalar_f(op, 1.0f, x[i])) != bits32(ref_from_H(1.0f, H[i])))
          ++derive;
      }
      for (int k = 0; k < 2; ++k)
        act_backward_approx(op, x.data(), h[k].data(), w[k].data(), kept[k].data(), n, kIsas[k]);
      for (int64_t i = 0; i < n; ++i) {
        if (std::memcmp(&h[0][i], &h[1][i], 8) || w[0][i] != w[1][i] || kept[0][i] != kept[1][i]) ++isa_h;
        if (!kept[0][i]) continue;
        ++nkept;
        if (!std::isfinite(H[i])) {
          ++badH;
          continue;
        }
        const double r = std::fabs(h[0][i] - H[i]) / (std::fabs(h[0][i]) + w[0][i]);
        if (!(r <= my_worst)) my_worst = r, my_worst_x = x[i];
      }
      // (b) on every x the lanes keep and every 64th of the others (NaN, the far tails: the lanes
      // hand those to the scalar formula unconditionally, and the scalar formula is slow there)
      int64_t nb = 0;
      for (int64_t i = 0; i < n; ++i)
        if (kept[0][i] || ((uint64_t(c) * chunk + i) & 63) == 0) {
          xb[nb] = x[i], Hb[nb] = H[i], hb[nb] = h[0][i], wb[nb] = w[0][i], kb[nb] = kept[0][i];
          ++nb;
        }
      for (int64_t i = 0; i < n; ++i)
        if (!kept[0][i] && ((uint64_t(c) * chunk + i) & 63) != 0)
          for (int j = 0; j < kNumGrads; ++j) fallbacks[j] += 1;  // not kept: falls back whatever g
      xs_b += nb;
      for (int j = 0; j < kNumGrads; ++j) {
        uint64_t fb = 0;
        for (int64_t i = 0; i < nb; ++i) {
          g[i] = kGrads[j];
          fb += falls_back(m, kGrads[j], hb[i], wb[i], kb[i]);
        }
        fallbacks[j] += fb;
        for (int k = 0; k < 2; ++k) {
          const bool in_place = (c + j + k) & 1;
          float* dst = o.data();
          if (in_place) {
            std::memcpy(o.data(), ((c + j) & 2) ? xb.data() : g.data(), nb * 4);
            act_backward_array(op, ((c + j) & 2) ? g.data() : o.data(), ((c + j) & 2) ? o.data() : xb.data(), dst, nb,
                               kIsas[k]);
          } else {
            act_backward_array(op, g.data(), xb.data(), dst, nb, kIsas[k]);
          }
          for (int64_t i = 0; i < nb; ++i)
            if (bits32(dst[i]) != bits32(ref_from_H(kGrads[j], Hb[i]))) {
              if (out_bad < 3)
                std::printf("  MISMATCH %s %s g=%a x=%a (0x%08x): got 0x%08x want 0x%08x\n", name.c_str(),
                            (k ? "AVX2" : "AVX-512"), kGrads[j], xb[i], bits32(xb[i]), bits32(dst[i]),
                            bits32(ref_from_H(kGrads[j], Hb[i])));
              ++out_bad;
            }
        }
      }
      bad_out += out_bad, bad_derive += derive, bad_isa_h += isa_h, bad_H += badH, kept_total += nkept, xs_total += n;
    }
#pragma omp critical
    if (my_worst > worst || (my_worst == worst && worst_x == 0.0f)) worst = my_worst, worst_x = my_worst_x;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool margin_ok = m >= 4.0 * worst + 0x1p-48 && bad_H == 0;
  std::printf("%s: %llu x (stride %llu), %llu kept by the lanes (%.4f%%), %.0f s\n", name.c_str(),
              (unsigned long long)xs_total.load(), (unsigned long long)stride, (unsigned long long)kept_total.load(),
              100.0 * double(kept_total) / double(xs_total), secs);
  std::printf("  (a) bound: E = max |h - H| / (|h| + w) = %.3e = 2^%.2f at x = %a; m = 2^%.0f; m >= 4E + 2^-48: %s\n",
              worst, std::log2(worst), worst_x, std::log2(m), margin_ok ? "yes" : "NO");
  std::printf(
      "      kept lanes with a non-finite H: %llu; h/w/kept differing between AVX-512 and AVX2: %llu;\n"
      "      float formula != canon(float(1 * H)) (every 16th x): %llu\n",
      (unsigned long long)bad_H.load(), (unsigned long long)bad_isa_h.load(), (unsigned long long)bad_derive.load());
  std::printf("  (b) outputs on %llu x, %d gradients x 2 ISAs: %llu mismatches; fallback share per g over all x:",
              (unsigned long long)xs_b.load(), kNumGrads, (unsigned long long)bad_out.load());
  for (int j = 0; j < kNumGrads; ++j)
    std::printf(" %s%g:%.4f", j % 4 == 0 ? "\n      " : "", kGrads[j], double(fallbacks[j]) / double(xs_total));
  std::printf("\n");
  return bad_out + bad_derive + bad_isa_h + (margin_ok ? 0 : 1);
}

static float special_grad(std::mt19937_64& rng) {
  static const float s[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 0x1p-149f, -0x1p-130f, 3e38f, -1e30f, 1.0f};
  return s[rng() % 10];
}

static uint64_t random_pairs(const std::string& name, uint64_t total) {
  const int op = op_code(name);
  const double m = act_backward_margin(op);
  std::atomic<uint64_t> bad{0}, fb_randn{0}, n_randn{0};
  const int64_t block = 1 << 16, nblocks = int64_t(total / block);
#pragma omp parallel
  {
    std::vector<float> g(block), x(block), o(block);
    std::vector<double> h(block), w(block);
    std::vector<uint8_t> kept(block);
#pragma omp for schedule(dynamic, 4)
    for (int64_t b = 0; b < nblocks; ++b) {
      std::mt19937_64 rng(0x5eed0000ull + uint64_t(b) * 7919 + uint64_t(op));
      std::normal_distribution<float> nd(0.0f, 1.0f);
      const int kind = int(b % 4);  // 0: randn pairs (the fallback rate), 1: 4 randn, 2: bit patterns, 3: mixed g
      for (int64_t i = 0; i < block; ++i) {
        x[i] = kind == 2 ? from32(uint32_t(rng())) : (kind == 1 ? 4.0f : 1.0f) * nd(rng);
        g[i] = kind == 3 ? (rng() % 4 == 0 ? special_grad(rng) : from32(uint32_t(rng()))) : nd(rng);
      }
      uint64_t local = 0;
      for (int k = 0; k < 2; ++k) {
        act_backward_array(op, g.data(), x.data(), o.data(), block, kIsas[k]);
        for (int64_t i = 0; i < block; ++i) local += bits32(o[i]) != bits32(scalar_f(op, g[i], x[i]));
      }
      bad += local;
      if (kind == 0) {
        act_backward_approx(op, x.data(), h.data(), w.data(), kept.data(), block, Isa::avx512);
        uint64_t fb = 0;
        for (int64_t i = 0; i < block; ++i) fb += falls_back(m, g[i], h[i], w[i], kept[i]);
        fb_randn += fb, n_randn += block;
      }
    }
  }
  // the tails: every length 0..67 at offsets 0..15
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> g(100), x(100), o(100);
  for (int i = 0; i < 100; ++i) g[i] = nd(rng), x[i] = nd(rng);
  x[3] = NAN, x[17] = -INFINITY, g[40] = NAN, x[50] = 1e-40f, x[61] = -30.0f;
  uint64_t tail_bad = 0;
  for (int k = 0; k < 2; ++k)
    for (int len = 0; len <= 67; ++len)
      for (int off = 0; off < 16; ++off) {
        act_backward_array(op, g.data() + off, x.data() + off, o.data(), len, kIsas[k]);
        for (int i = 0; i < len; ++i) tail_bad += bits32(o[i]) != bits32(scalar_f(op, g[off + i], x[off + i]));
      }
  std::printf(
      "%s random: %llu (g, x) pairs x 2 ISAs: %llu mismatches; tails (lengths 0..67, offsets 0..15): %llu "
      "mismatches; fallback rate for x, g ~ randn: %.2e (%llu of %llu)\n",
      name.c_str(), (unsigned long long)(nblocks * block), (unsigned long long)bad.load(), (unsigned long long)tail_bad,
      double(fb_randn) / double(n_randn), (unsigned long long)fb_randn.load(), (unsigned long long)n_randn.load());
  return bad + tail_bad;
}

static void speed(const std::string& name) {
  const int op = op_code(name);
  const int64_t n = 1 << 20;
  std::vector<float> g(n), x(n), o(n);
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) g[i] = nd(rng), x[i] = nd(rng);
  auto time_ns = [&](auto&& f) {
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best * 1e9 / double(n);
  };
  const double ts = time_ns([&] {
    for (int64_t i = 0; i < n; ++i) o[i] = scalar_f(op, g[i], x[i]);
  });
  const double t2 = time_ns([&] { act_backward_array(op, g.data(), x.data(), o.data(), n, Isa::avx2); });
  const double t5 = time_ns([&] { act_backward_array(op, g.data(), x.data(), o.data(), n, Isa::avx512); });
  std::printf("%s speed (1 thread, ns/element): scalar %.2f  AVX2 %.2f  AVX-512 %.2f\n", name.c_str(), ts, t2, t5);
}

int main(int argc, char** argv) {
  uint64_t stride = 1;
  std::vector<std::string> what;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stride" && i + 1 < argc)
      stride = std::strtoull(argv[++i], nullptr, 10);
    else
      what.push_back(argv[i]);
  }
  if (what.empty()) what = {"gelu", "gelu_tanh", "silu", "random", "speed"};
  uint64_t bad = 0;
  for (const std::string& w : what) {
    if (w == "gelu" || w == "gelu_tanh" || w == "silu") bad += exhaustive(w, stride);
    if (w == "random")
      for (const char* n : {"gelu", "gelu_tanh", "silu"}) bad += random_pairs(n, uint64_t(100000000) / 3 + 65536);
    if (w == "speed")
      for (const char* n : {"gelu", "gelu_tanh", "silu"}) speed(n);
    std::fflush(stdout);
  }
  std::printf("%s\n", bad ? "FAILED" : "all checks passed");
  return bad ? 1 : 0;
}

// Standalone check and benchmark of repmode::cpu::gemm.
//
// Build (from the repository root):
//   g++ -O3 -std=c++17 -ffp-contract=off -fopenmp csrc/verify/gemm_check.cpp
//       csrc/cpu/matmul.cpp csrc/cpu/isa.cpp -o build/gemm_check
// Run:  build/gemm_check [check|bench|all]   (default all; exit status 1 on a mismatch)
//
// check: the fast path against gemm_reference, bit for bit over the whole C buffer (so
//        elements between strided outputs must stay untouched), for random shapes and
//        layouts, float and double, every ISA path this CPU has, and 1, 2, 3 threads.
// bench: float32 GFLOP/s at 2 threads on the best ISA path.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../common/defs.h"
#include "../common/matmul.h"
#include "../cpu/matmul.h"
#include "../cpu/isa.h"

using repmode::cpu::Isa;

namespace {

std::mt19937_64 rng(20240611);

int64_t uniform(int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Values whose exponents spread over 2^-8..2^8, so sums round differently in any other
// order and a wrong order shows up as different bits.
template <typename T>
T random_value(bool specials) {
  if (specials && uniform(0, 15) == 0) {
    switch (uniform(0, 5)) {
      case 0:
        return std::numeric_limits<T>::infinity();
      case 1:
        return -std::numeric_limits<T>::infinity();
      case 2:
        return T(-0.0);
      case 3:
        return std::numeric_limits<T>::denorm_min() * T(uniform(1, 1000));
      case 4:  // a NaN with a random payload and sign, to check canonicalization
        if constexpr (sizeof(T) == 4)
          return repmode::float_from_bits(0x7f800001u | uint32_t(uniform(0, 0x7fffff)) |
                                          (uint32_t(uniform(0, 1)) << 31));
        else
          return repmode::double_from_bits(0x7ff0000000000001ull | uint64_t(uniform(0, (int64_t(1) << 51) - 1)) |
                                           (uint64_t(uniform(0, 1)) << 63));
      default:
        return T(0);
    }
  }
  const T mant = std::uniform_real_distribution<T>(-1, 1)(rng);
  return std::ldexp(mant, int(uniform(-8, 8)));
}

// A batch of rows×cols matrices in one buffer, with strides in elements.
template <typename T>
struct Strided {
  std::vector<T> buf;
  int64_t sb = 0, rs = 0, cs = 0;
  std::string layout;
};

// Picks a layout: row-major, column-major (a transposed view), or sliced with gaps in
// both directions; `allow_broadcast` lets the batch stride be 0. Never overlapping.
template <typename T>
Strided<T> make_layout(int64_t batch, int64_t rows, int64_t cols, bool allow_broadcast) {
  Strided<T> s;
  const int kind = int(uniform(0, 3));
  const int64_t pad = uniform(0, 3), gap = uniform(1, 3);
  switch (kind) {
    case 0:
      s.rs = cols + pad;
      s.cs = 1;
      s.layout = "row";
      break;
    case 1:
      s.rs = 1;
      s.cs = rows + pad;
      s.layout = "col";
      break;
    case 2:
      s.cs = gap;
      s.rs = cols * gap + pad;
      s.layout = "slice-r";
      break;
    default:
      s.rs = gap;
      s.cs = rows * gap + pad;
      s.layout = "slice-c";
      break;
  }
  const int64_t one = rows && cols ? (rows - 1) * s.rs + (cols - 1) * s.cs + 1 : 0;
  const bool broadcast = allow_broadcast && batch > 1 && uniform(0, 2) == 0;
  s.sb = broadcast ? 0 : one + uniform(0, 5);
  if (broadcast) s.layout += "/b0";
  s.buf.resize(size_t(std::max<int64_t>(1, (batch - 1) * s.sb + one)));
  return s;
}

struct Stats {
  int64_t cases = 0, runs = 0, failures = 0;
};

const char* type_name(float) { return "f32"; }
const char* type_name(double) { return "f64"; }

std::vector<Isa> available_isas() {
  std::vector<Isa> isas{Isa::scalar};
  if (int(repmode::cpu::best_isa()) >= int(Isa::avx2)) isas.push_back(Isa::avx2);
  if (repmode::cpu::best_isa() == Isa::avx512) isas.push_back(Isa::avx512);
  return isas;
}

// One case: reference once, then the fast path for every ISA and thread count.
template <typename T>
void check_case(int64_t batch, int64_t M, int64_t N, int64_t K, bool specials, Stats& st) {
  Strided<T> a = make_layout<T>(batch, M, K, true);
  Strided<T> b = make_layout<T>(batch, K, N, true);
  Strided<T> c = make_layout<T>(batch, M, N, false);
  for (T& v : a.buf) v = random_value<T>(specials);
  for (T& v : b.buf) v = random_value<T>(specials);
  // Untouched elements must keep this sentinel, a NaN no kernel writes.
  const T sentinel =
      sizeof(T) == 4 ? T(repmode::float_from_bits(0x7fa5a5a5u)) : T(repmode::double_from_bits(0x7ffa5a5a5a5a5a5aull));
  std::fill(c.buf.begin(), c.buf.end(), sentinel);
  std::vector<T> expect = c.buf;
  repmode::cpu::gemm_reference<T>(batch, M, N, K, a.buf.data(), a.sb, a.rs, a.cs, b.buf.data(), b.sb, b.rs, b.cs,
                                  expect.data(), c.sb, c.rs, c.cs);
  ++st.cases;
  for (Isa isa : available_isas()) {
    repmode::cpu::set_active_isa(isa);
    for (int threads : {1, 2, 3}) {
      std::vector<T> got = c.buf;
      repmode::cpu::gemm<T>(batch, M, N, K, a.buf.data(), a.sb, a.rs, a.cs, b.buf.data(), b.sb, b.rs, b.cs, got.data(),
                            c.sb, c.rs, c.cs, threads);
      ++st.runs;
      if (std::memcmp(got.data(), expect.data(), got.size() * sizeof(T)) != 0) {
        ++st.failures;
        size_t bad = 0;
        for (size_t i = 0; i < got.size(); ++i) bad += std::memcmp(&got[i], &expect[i], sizeof(T)) != 0;
        std::printf(
            "MISMATCH %s batch=%ld M=%ld N=%ld K=%ld A=%s B=%s C=%s isa=%s threads=%d: "
            "%zu of %zu elements differ\n",
            type_name(T()), long(batch), long(M), long(N), long(K), a.layout.c_str(), b.layout.c_str(),
            c.layout.c_str(), repmode::cpu::isa_name(isa), threads, bad, got.size());
      }
    }
  }
  repmode::cpu::set_active_isa(repmode::cpu::best_isa());
}

template <typename T>
void check_type(Stats& st) {
  // Every size 0..70 is reached by random draws; specials on a quarter of the cases.
  for (int i = 0; i < 1500; ++i)
    check_case<T>(uniform(1, 3), uniform(0, 70), uniform(0, 70), uniform(0, 70), i % 4 == 0, st);
  // Edges around the micro-tile and k-block sizes.
  for (int64_t m : {1, 5, 6, 7, 12, 13})
    for (int64_t n : {1, 4, 8, 15, 16, 17, 33})
      for (int64_t k : {0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 513}) check_case<T>(1, m, n, k, false, st);
  // Large shapes: several row and column tiles, k tails, more tiles than threads.
  check_case<T>(1, 257, 513, 1031, false, st);
  check_case<T>(1, 1000, 600, 300, false, st);
  check_case<T>(2, 150, 530, 700, true, st);
  check_case<T>(1, 7, 2000, 600, false, st);
  check_case<T>(1, 2000, 9, 600, false, st);
  check_case<T>(5, 100, 100, 100, false, st);
  // Sums of more than one group (16,384 k): the running total kept beside C, group ends.
  for (int64_t k : {16383, 16384, 16385, 2 * 16384 + 300}) check_case<T>(1, 7, 17, k, false, st);
  check_case<T>(2, 13, 9, 3 * 16384 + 1, true, st);
}

// How many of the 64 x 64 outputs of a K = 1031 product another order over k (`other(a_row,
// b_col_at, K)`, one float per output) gives with bits different from the canonical GEMM's: the
// check means something only if other orders disagree.
template <typename Other>
int64_t disagreements_with(Other other) {
  const int64_t M = 64, N = 64, K = 1031;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (float& v : a) v = random_value<float>(false);
  for (float& v : b) v = random_value<float>(false);
  repmode::cpu::gemm<float>(1, M, N, K, a.data(), 0, K, 1, b.data(), 0, N, 1, c.data(), 0, N, 1, 2);
  int64_t differ = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      auto term = [&](int64_t k, float acc) { return repmode::gemm_chain_step(a[i * K + k], b[k * N + j], acc); };
      differ += repmode::bits_of(other(term, K)) != repmode::bits_of(c[i * N + j]);
    }
  return differ;
}

// A chain split in two halves (split-K), the halves added.
int64_t split_k_disagreements() {
  return disagreements_with([](auto term, int64_t K) {
    float lo = 0, hi = 0;
    for (int64_t k = 0; k < K / 2; ++k) lo = term(k, lo);
    for (int64_t k = K / 2; k < K; ++k) hi = term(k, hi);
    return lo + hi;
  });
}

// Chunks of one 256-term fma chain, summed in order (the order of NUMERICS_VERSION 3-6 for K < 16,384).
int64_t chunk_chain_disagreements() {
  return disagreements_with([](auto term, int64_t K) {
    float total = 0;
    for (int64_t q = 0; q < K; q += 256) {
      float chunk = 0;
      for (int64_t k = q; k < std::min<int64_t>(q + 256, K); ++k) chunk = term(k, chunk);
      total = q == 0 ? chunk : total + chunk;
    }
    return total;
  });
}

// One unbroken fma chain over all of k (the order of NUMERICS_VERSION <= 2).
int64_t single_chain_disagreements() {
  return disagreements_with([](auto term, int64_t K) {
    float acc = 0;
    for (int64_t k = 0; k < K; ++k) acc = term(k, acc);
    return acc;
  });
}

bool run_checks() {
  Stats f32, f64;
  check_type<float>(f32);
  check_type<double>(f64);
  std::printf("check f32: %ld cases, %ld runs, %ld mismatches\n", long(f32.cases), long(f32.runs), long(f32.failures));
  std::printf("check f64: %ld cases, %ld runs, %ld mismatches\n", long(f64.cases), long(f64.runs), long(f64.failures));
  std::printf("isa paths:");
  for (Isa isa : available_isas()) std::printf(" %s", repmode::cpu::isa_name(isa));
  std::printf("\n");
  std::printf("sensitivity: split-K differs from the canonical order in %ld of 4096 outputs\n",
              long(split_k_disagreements()));
  std::printf("sensitivity: one chain over all k differs from the canonical order in %ld of 4096 outputs\n",
              long(single_chain_disagreements()));
  std::printf(
      "sensitivity: chunks of one 256-term chain (version 6) differ from the canonical order in %ld of 4096 "
      "outputs\n",
      long(chunk_chain_disagreements()));
  return f32.failures == 0 && f64.failures == 0;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best-of-`reps` GFLOP/s for row-major float C = A·B.
double bench(int64_t M, int64_t N, int64_t K, int threads, int reps) {
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (float& v : a) v = random_value<float>(false);
  for (float& v : b) v = random_value<float>(false);
  auto once = [&] {
    repmode::cpu::gemm<float>(1, M, N, K, a.data(), 0, K, 1, b.data(), 0, N, 1, c.data(), 0, N, 1, threads);
  };
  once();  // warm caches, pages and the thread team
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = seconds_now();
    once();
    best = std::min(best, seconds_now() - t0);
  }
  return 2.0 * double(M) * double(N) * double(K) / best / 1e9;
}

void run_bench() {
  repmode::cpu::set_active_isa(repmode::cpu::best_isa());
  std::printf("bench f32, isa=%s\n", repmode::cpu::isa_name(repmode::cpu::active_isa()));
  struct Shape {
    int64_t M, N, K;
    int reps;
  };
  for (Shape s :
       {Shape{256, 256, 256, 200}, Shape{1024, 1024, 1024, 10}, Shape{2048, 2048, 2048, 4}, Shape{512, 512, 65536, 3}})
    for (int threads : {1, 2})
      std::printf("  %5ldx%5ld . %5ldx%5ld  threads=%d  %7.1f GFLOP/s\n", long(s.M), long(s.K), long(s.K), long(s.N),
                  threads, bench(s.M, s.N, s.K, threads, s.reps));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  bool ok = true;
  if (mode == "check" || mode == "all") ok = run_checks();
  if (mode == "bench" || mode == "all") run_bench();
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

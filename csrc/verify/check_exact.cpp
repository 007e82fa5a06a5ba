// The exact operations of csrc/common/math_exact.h against glibc, whose fmod, ldexp, nextafter
// and frexp are exact (their results are the unique IEEE values), bit for bit on random bit
// patterns of float32 and float64 — every exponent, subnormals, zeros, infinities, NaN — and on
// pairs with close exponents (the long-division cases). NaN results must be NaN (repmode's is the
// canonical pattern, glibc's any). Also hypot_of(float) against the correctly rounded float32
// value of the __float128 hypot, and hypot_of(double) within 0.51 ulp of it.
//
//   g++ -O2 -std=c++17 -ffp-contract=off csrc/verify/check_exact.cpp -o /tmp/check_exact -lquadmath
//   /tmp/check_exact [pairs]        (default 30,000,000 float32 and 10,000,000 float64 pairs)
#include <quadmath.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "../common/math_exact.h"

using namespace repmode;

namespace {

long g_bad = 0;

template <typename T>
void expect(const char* what, T x, T y, T want, T got) {
  if (want != want ? got != got : bits_of(want) == bits_of(got)) return;
  if (g_bad++ < 10) printf("%s(%a, %a): glibc %a, repmode %a\n", what, double(x), double(y), double(want), double(got));
}

template <typename T, typename U>
void run(long pairs, std::mt19937_64& g, int exp_bits, int mant_bits) {
  const U exp_mask = (U(1) << exp_bits) - 1;
  for (long i = 0; i < pairs; ++i) {
    U a = U(g()), b = U(g());
    if (i % 3 == 1) {  // exponents within 0..63 of each other: the long-division cases
      const U ea = (a >> mant_bits) & exp_mask, d = U(g() % 64);
      b = (b & ~(exp_mask << mant_bits)) | (((ea - d) & exp_mask) << mant_bits);
    }
    T x, y;
    memcpy(&x, &a, sizeof(T));
    memcpy(&y, &b, sizeof(T));
    expect("fmod", x, y, T(std::fmod(x, y)), fmod_of(x, y));
    expect("nextafter", x, y, T(std::nextafter(x, y)), nextafter_of(x, y));
    const int e = int(g() % 700) - 350;
    expect("ldexp", x, T(e), T(std::ldexp(x, e)), ldexp_of(x, T(e)));
    int ew = 0, eg = 0;
    const T mw = std::frexp(x, &ew), mg = frexp_mantissa_of(x, &eg);
    expect("frexp", x, T(0), mw, mg);
    if (x == x && x - x == T(0) && ew != eg) expect("frexp exponent", x, T(0), T(ew), T(eg));
  }
}

double ulp_error(double got, __float128 exact) {
  if (exact == 0) return got == 0 ? 0 : 1e300;
  int e;
  frexpq(exact, &e);
  const __float128 ulp = ldexpq(1, e - 53 < -1074 ? -1074 : e - 53);
  return double(fabsq(__float128(got) - exact) / ulp);
}

}  // namespace

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? atol(argv[1]) : 30000000;
  std::mt19937_64 g(2026);
  run<float, uint32_t>(pairs, g, 8, 23);
  run<double, uint64_t>(pairs / 3, g, 11, 52);
  long hypot_bad = 0;
  double worst64 = 0;
  for (long i = 0; i < pairs / 3; ++i) {
    const uint32_t a = g(), b = (i % 2) ? uint32_t(g()) : (a & 0xff800000u) ^ (uint32_t(g()) & 0x0fffffffu);
    float x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    if (x != x || y != y || std::isinf(x) || std::isinf(y)) continue;
    const float want = float(hypotq(__float128(x), __float128(y)));  // correctly rounded (2^-112 away)
    const float got = hypot_of(x, y);
    if (bits_of(want) != bits_of(got)) ++hypot_bad;
    const double dx = double(x) * (1 + double(g() % 1000) * 1e-4), dy = double(y) * 1.0001;
    worst64 = std::fmax(worst64, ulp_error(hypot_of(dx, dy), hypotq(__float128(dx), __float128(dy))));
  }
  printf("exact ops: %ld mismatches; hypot float32: %ld not correctly rounded of %ld; hypot float64: worst %.4f ulp\n",
         g_bad, hypot_bad, pairs / 3, worst64);
  return g_bad == 0 && worst64 < 0.51 ? 0 : 1;
}

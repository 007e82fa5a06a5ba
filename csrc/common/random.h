// Distributions over repmode's Philox stream (csrc/common/philox.h): which stream words an
// element reads and the exact formula that turns them into a value (docs/semantics.md,
// "Random numbers"). One source for every device; IEEE basic operations and repmode's own
// math routines only, so every device computes the same value for the same element.
//
// An op drawing n elements at stream offset o reads blocks o, o + 1, ..., o + blocks - 1 and
// then advances the offset by `blocks`. Element i lives in block i / per at slot i % per,
// with per = 4 (uniform float32), 2 (uniform float64, normal): one word, two words, or a
// Box-Muller pair per slot.
#pragma once

#include "defs.h"
#include "math.h"
#include "math_log_family.h"
#include "math_trig.h"
#include "philox.h"

namespace repmode {

// The distribution codes, defined here once (X(name, code)); exported to Python as
// _C.codes()["RandomDist"] with the names upper-cased (repmode/kernels/random.py).
// clang-format off
#define REPMODE_RANDOM_DISTS(X) \
  X(uniform, 0)          /* from + u (to - from) */                                      \
  X(normal, 1)           /* Box-Muller pair */                                           \
  X(exponential, 3)      /* -log(v) / lambda */                                          \
  X(geometric, 4)        /* ceil(log(v) / log1p(-p)) */                                  \
  X(log_normal, 5)       /* exp(normal) */                                               \
  X(cauchy, 6)           /* median + sigma tan(pi (u - 1/2)) */
// clang-format on

enum class RandomDist : int {
#define REPMODE_X(name, code) name = code,
  REPMODE_RANDOM_DISTS(REPMODE_X)
#undef REPMODE_X
};

// Elements per block: float32 uniform takes one word per element, everything else two.
REPMODE_HD int elements_per_block(RandomDist dist, int elem_bytes) {
  return (dist == RandomDist::uniform && elem_bytes == 4) ? 4 : 2;
}

// [0, 1): the top 24 bits of a word as a float32 (exact), the top 53 of two words as a double.
REPMODE_HD float unit_float(uint32_t w) { return float(w >> 8) * 0x1p-24f; }
REPMODE_HD uint64_t top53(uint32_t a, uint32_t b) { return ((uint64_t(a) << 32) | b) >> 11; }
REPMODE_HD double unit_double(uint32_t a, uint32_t b) { return double(top53(a, b)) * 0x1p-53; }

// from + u (to - from), evaluated in float64 (two roundings), then rounded once to T. Every
// formula here gives a NaN (from NaN or infinite parameters) as the canonical NaN.
template <typename T>
REPMODE_HD T affine_uniform(double u, double from, double to) {
  return canon(T(from + u * (to - from)));
}

// The uniform(from, to) elements of block b (4 for float32, 2 for float64).
template <typename T>
REPMODE_HD void uniform_from_block(const PhiloxBlock& b, double from, double to, T* out) {
  if (sizeof(T) == 4) {
    for (int k = 0; k < 4; ++k) out[k] = affine_uniform<T>(double(unit_float(b.w[k])), from, to);
  } else {
    for (int k = 0; k < 2; ++k) out[k] = affine_uniform<T>(unit_double(b.w[2 * k], b.w[2 * k + 1]), from, to);
  }
}

// The normal(mean, std) pair of block b, Box-Muller in float64 with repmode's log and
// sincos_turns and the IEEE sqrt: u1 = (top53(w0, w1) + 1) 2^-53 in (0, 1], u2 = top53(w2, w3)
// 2^-53 in [0, 1), r = sqrt(-2 log u1), z = (r cos(2 pi u2), r sin(2 pi u2)); each output is
// RN_T(mean + stddev z) (the product and the sum rounded in float64 first).

// Its three stages (the CPU interleaves them over several blocks; the bits are the same).
REPMODE_HD double box_muller_u1(const PhiloxBlock& b) { return double(top53(b.w[0], b.w[1]) + 1) * 0x1p-53; }
REPMODE_HD double box_muller_u2(const PhiloxBlock& b) { return double(top53(b.w[2], b.w[3])) * 0x1p-53; }
REPMODE_HD double box_muller_radius_of(double log_u1) { return sqrt_of(-2.0 * log_u1); }
REPMODE_HD double box_muller_radius(const PhiloxBlock& b) {
  return box_muller_radius_of(repmode_log(box_muller_u1(b)));
}
REPMODE_HD void box_muller_angle(const PhiloxBlock& b, double* s, double* c) { sincos_turns(box_muller_u2(b), s, c); }
template <typename T>
REPMODE_HD void normal_pair(double r, double s, double c, double mean, double stddev, T* out) {
  out[0] = canon(T(mean + stddev * (r * c)));
  out[1] = canon(T(mean + stddev * (r * s)));
}

template <typename T>
REPMODE_HD void normal_from_block(const PhiloxBlock& b, double mean, double stddev, T* out) {
  double s, c;
  box_muller_angle(b, &s, &c);
  normal_pair<T>(box_muller_radius(b), s, c, mean, stddev, out);
}

// One-element-per-two-words distributions: u = top53(w_a, w_b) 2^-53 in [0, 1) and
// v = 1 - u in (0, 1] (exact), each formula in float64, rounded once to T at the end.
constexpr double kPi = 0x1.921fb54442d18p+1;

template <typename T>
REPMODE_HD T one_from_words(RandomDist dist, uint32_t a, uint32_t b, double p0, double p1) {
  const double u = unit_double(a, b);
  const double v = 1.0 - u;
  switch (dist) {
    case RandomDist::exponential:  // p0 = lambda
      return T(-repmode_log(v) / p0);
    case RandomDist::geometric: {  // p0 = p in (0, 1]: trials up to and including the first success
      const double k = repmode_log(v) / repmode_log1p(-p0);  // >= 0, or NaN for p0 == 1 and v == 1
      if (!(k > 1.0)) return T(1.0);
      if (k >= 0x1p52) return T(k);  // already an integer
      const double c = double(int64_t(k));
      return T(c < k ? c + 1.0 : c);
    }
    case RandomDist::cauchy: {  // p0 = median, p1 = sigma
      const double t = kPi * (u - 0.5);
      return T(p0 + p1 * (repmode_sin(t) / repmode_cos(t)));
    }
    default:
      return T(u);
  }
}

// The elements of block b for any distribution (elements_per_block of them).
template <typename T>
REPMODE_HD void dist_from_block(RandomDist dist, const PhiloxBlock& b, double p0, double p1, T* out) {
  if (dist == RandomDist::uniform) {
    uniform_from_block<T>(b, p0, p1, out);
  } else if (dist == RandomDist::normal) {
    normal_from_block<T>(b, p0, p1, out);
  } else if (dist == RandomDist::log_normal) {  // exp of the float64 normal pair
    double z[2];
    normal_from_block<double>(b, p0, p1, z);
    out[0] = canon(T(repmode_exp(z[0])));
    out[1] = canon(T(repmode_exp(z[1])));
  } else {
    for (int k = 0; k < 2; ++k) out[k] = canon(one_from_words<T>(dist, b.w[2 * k], b.w[2 * k + 1], p0, p1));
  }
}

// Integers in [lo, lo + range): lo + floor(range x / 2^64) for the 64-bit word pair
// x = (w_a << 32) | w_b, two per block (multiply-shift instead of a modulo: each value is hit
// by floor(2^64/range) or ceil(2^64/range) of the 2^64 pairs, so probabilities differ by at
// most 2^-64). range == 0 stands for 2^64: x itself.
REPMODE_HD uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t a0 = uint32_t(a), a1 = a >> 32, b0 = uint32_t(b), b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + uint32_t(p01) + uint32_t(p10);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

REPMODE_HD void ints_from_block(const PhiloxBlock& b, int64_t lo, uint64_t range, int64_t* out) {
  for (int k = 0; k < 2; ++k) {
    const uint64_t x = (uint64_t(b.w[2 * k]) << 32) | b.w[2 * k + 1];
    out[k] = int64_t(uint64_t(lo) + (range == 0 ? x : mulhi64(x, range)));
  }
}

}  // namespace repmode

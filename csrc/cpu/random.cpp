// CPU random fills: blocks in parallel, each block by the shared formulas of
// csrc/common/random.h (a block's elements never depend on which thread draws it).
#include "random.h"
#include "dispatch.h"
#include "entry_points.h"

#include <stdexcept>
#include <string>

#include "../common/random.h"
#include "isa.h"
#include "parallel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "box_muller_avx2.h"
#endif

namespace repmode::cpu {
namespace {

#if defined(__x86_64__)
// Blocks first .. first + 3 of the stream, four Philox4x32-10 evaluations side by side: each
// 64-bit lane holds one block's 32-bit word (zero-extended), and _mm256_mul_epu32 gives the
// four 32x32->64 products of a round. The same integer operations as philox4x32_10.
__attribute__((target("avx2"))) void stream_blocks4_avx2(uint64_t seed, uint64_t first, PhiloxBlock* out) {
  const __m256i lo32 = _mm256_set1_epi64x(0xffffffffll);
  const __m256i b = _mm256_add_epi64(_mm256_set1_epi64x(int64_t(first)), _mm256_setr_epi64x(0, 1, 2, 3));
  __m256i c0 = _mm256_and_si256(b, lo32), c1 = _mm256_srli_epi64(b, 32);
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  const __m256i m0 = _mm256_set1_epi64x(philox_detail::kM0), m1 = _mm256_set1_epi64x(philox_detail::kM1);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += philox_detail::kW0;
      k1 += philox_detail::kW1;
    }
    const __m256i p0 = _mm256_mul_epu32(m0, c0), p1 = _mm256_mul_epu32(m1, c2);
    const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), _mm256_set1_epi64x(k0));
    const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), _mm256_set1_epi64x(k1));
    c1 = _mm256_and_si256(p1, lo32);
    c3 = _mm256_and_si256(p0, lo32);
    c0 = n0;
    c2 = n2;
  }
  alignas(32) uint64_t w[4][4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(w[0]), c0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(w[1]), c1);
  _mm256_store_si256(reinterpret_cast<__m256i*>(w[2]), c2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(w[3]), c3);
  for (int k = 0; k < 4; ++k)
    out[k] = PhiloxBlock{{uint32_t(w[0][k]), uint32_t(w[1][k]), uint32_t(w[2][k]), uint32_t(w[3][k])}};
}
#endif

// Blocks first .. first + count - 1 (count <= 4).
inline void stream_blocks(uint64_t seed, uint64_t first, int count, bool simd, PhiloxBlock* out) {
#if defined(__x86_64__)
  if (simd && count == 4) return stream_blocks4_avx2(seed, first, out);
#endif
  (void)simd;
  for (int k = 0; k < count; ++k) out[k] = stream_block(seed, first + uint64_t(k));
}

// The block walk shared by every fill: blocks 0 .. blocks - 1 of the op (stream blocks
// offset + j) in parallel pieces, four at a time; body(j, group, bs) gets blocks j .. j + group - 1.
template <typename Body>
void for_each_block_group(int64_t blocks, int64_t work_per_block, uint64_t seed, uint64_t offset, int nthreads,
                          const Body& body) {
  const bool simd = active_isa() >= Isa::avx2;
  parallel_for(blocks, nthreads, work_per_block, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; j += 4) {
      const int group = j1 - j < 4 ? int(j1 - j) : 4;
      PhiloxBlock bs[4];
      stream_blocks(seed, offset + uint64_t(j), group, simd, bs);
      body(j, group, bs);
    }
  });
}

// Element slots of blocks j .. j + group - 1 (per slots each, the last block possibly partial).
template <typename T, int kPer>
REPMODE_INLINE void store_slots(T* out, int64_t n, int64_t per, int64_t j, int group, const T (*vals)[kPer]) {
  for (int g = 0; g < group; ++g) {
    const int64_t first = (j + g) * per;
    const int64_t count = n - first < per ? n - first : per;
    for (int64_t k = 0; k < count; ++k) out[first + k] = vals[g][k];
  }
}

// normal_from_block for a group of blocks, stage by stage: independent long-latency chains (log,
// sqrt, the polynomials) side by side, and four lanes at a time with AVX2 (the same functions).
template <typename T>
REPMODE_INLINE void normal_group(const PhiloxBlock* bs, int group, double mean, double stddev, T (*vals)[4]) {
  double r[4], sn[4], cs[4];
#if defined(__x86_64__)
  if (group == 4 && active_isa() >= Isa::avx2) {
    double u1[4], u2[4], lg[4];
    for (int g = 0; g < 4; ++g) {
      u1[g] = box_muller_u1(bs[g]);
      u2[g] = box_muller_u2(bs[g]);
    }
    log4_avx2(u1, lg);
    for (int g = 0; g < 4; ++g) r[g] = box_muller_radius_of(lg[g]);
    sincos_turns4_avx2(u2, sn, cs);
  } else
#endif
  {
    for (int g = 0; g < group; ++g) r[g] = box_muller_radius(bs[g]);
    for (int g = 0; g < group; ++g) box_muller_angle(bs[g], &sn[g], &cs[g]);
  }
  for (int g = 0; g < group; ++g) normal_pair<T>(r[g], sn[g], cs[g], mean, stddev, vals[g]);
}

}  // namespace

template <typename T>
uint64_t random_fill(int dist, T* out, int64_t n, uint64_t seed, uint64_t offset, double p0, double p1, int nthreads) {
  if (dist < 0 || dist > 6 || dist == 2)
    throw std::invalid_argument("random_fill: unknown distribution code " + std::to_string(dist));
  const RandomDist d = static_cast<RandomDist>(dist);
  const int64_t per = elements_per_block(d, int(sizeof(T)));
  const int64_t blocks = n > 0 ? (n + per - 1) / per : 0;
  for_each_block_group(blocks, 16 * per, seed, offset, nthreads, [&](int64_t j, int group, const PhiloxBlock* bs) {
    T vals[4][4];
    if (d == RandomDist::normal) {
      normal_group<T>(bs, group, p0, p1, vals);
    } else {
      for (int g = 0; g < group; ++g) dist_from_block<T>(d, bs[g], p0, p1, vals[g]);
    }
    store_slots<T, 4>(out, n, per, j, group, vals);
  });
  return uint64_t(blocks);
}

uint64_t random_ints(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     int nthreads) {
  const int64_t blocks = n > 0 ? (n + 1) / 2 : 0;
  for_each_block_group(blocks, 32, seed, offset, nthreads, [&](int64_t j, int group, const PhiloxBlock* bs) {
    int64_t vals[4][2];
    for (int g = 0; g < group; ++g) ints_from_block(bs[g], lo, range, vals[g]);
    store_slots<int64_t, 2>(out, n, 2, j, group, vals);
  });
  return uint64_t(blocks);
}

template uint64_t random_fill<float>(int, float*, int64_t, uint64_t, uint64_t, double, double, int);
template uint64_t random_fill<double>(int, double*, int64_t, uint64_t, uint64_t, double, double, int);

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

uint64_t random_fill(int dist, int dtype, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, double p0,
                     double p1, int nthreads) {
  return by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    return random_fill<T>(dist, ptr<T>(out), n, seed, offset, p0, p1, nthreads);
  });
}

uint64_t random_ints(uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                     int nthreads) {
  return random_ints(ptr<int64_t>(out), n, seed, offset, lo, range, nthreads);
}

std::vector<uint32_t> philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  const PhiloxBlock b = repmode::philox4x32_10(PhiloxBlock{{c0, c1, c2, c3}}, k0, k1);
  return std::vector<uint32_t>{b.w[0], b.w[1], b.w[2], b.w[3]};
}

std::vector<double> sincos_turns(double u) {
  double s, c;
  repmode::sincos_turns(u, &s, &c);
  return std::vector<double>{s, c};
}

}  // namespace repmode::cpu

// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw ("Parallel
// random numbers: as easy as 1, 2, 3", SC11): 10 rounds of two 32x32->64 multiplications
// and xors over a 128-bit counter, keyed by 64 bits. A pure function of (counter, key):
// every device and thread computes the same four words for the same block, so a random
// tensor depends only on which blocks its elements read (docs/semantics.md, "Random numbers").
// Integer arithmetic only. Checked against the published known-answer vectors
// (tests/test_random.py).
#pragma once

#include "defs.h"

namespace repmode {

struct PhiloxBlock {
  uint32_t w[4];
};

namespace philox_detail {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule increments

REPMODE_HD void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}
}  // namespace philox_detail

// The four words of block `counter` under `key` (k0 the low key word).
REPMODE_HD PhiloxBlock philox4x32_10(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, c.w[0], hi0, lo0);
    mulhilo(kM1, c.w[2], hi1, lo1);
    c = PhiloxBlock{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
  }
  return c;
}

// repmode's stream: block number b (64 bits) of the stream seeded by `seed` is the counter
// (b low word, b high word, 0, 0) under the key (seed low word, seed high word).
REPMODE_HD PhiloxBlock stream_block(uint64_t seed, uint64_t b) {
  return philox4x32_10(PhiloxBlock{{uint32_t(b), uint32_t(b >> 32), 0u, 0u}}, uint32_t(seed), uint32_t(seed >> 32));
}

}  // namespace repmode

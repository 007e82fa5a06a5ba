// Thread partitioning for CPU kernels. Threads only decide which outputs (or which
// independent chunks) a thread computes; they never change the arithmetic of one output.
#pragma once

#include <cstdint>

#include <omp.h>

#include "isa.h"

namespace repmode::cpu {

// Below this much work a kernel stays on the calling thread (thread start-up costs more).
constexpr int64_t kMinParallelWork = 32768;

// Pieces per thread in parallel_for: threads take pieces as they become free, so a thread
// slowed by other load on its core does not hold the others up.
constexpr int64_t kPiecesPerThread = 8;

// Run fn(begin, end) over [0, n), split into contiguous pieces that up to nthreads threads
// take in turn (fn is called once per piece; pieces never overlap and cover [0, n)).
template <typename Fn>
void parallel_for(int64_t n, int nthreads, int64_t work_per_item, const Fn& fn) {
  if (n <= 0) return;
  int64_t threads = nthreads < 1 ? 1 : nthreads;
  if (threads > n) threads = n;
  if (threads == 1 || n * work_per_item < kMinParallelWork) {
    fn(int64_t(0), n);
    return;
  }
  int64_t pieces = threads * kPiecesPerThread;
  if (pieces > n) pieces = n;
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(threads))
  for (int64_t p = 0; p < pieces; ++p) fn(n * p / pieces, n * (p + 1) / pieces);
}

// The ISA-specific copy of a kernel body: same source, compiled for AVX2. The body is
// inlined into a target("avx2") function so the vectorizer uses 256-bit registers; its
// per-output arithmetic is unchanged (no contraction: -ffp-contract=off, no reassociation).
// `flatten` inlines every call beneath it (the math routines too), so their explicit fmas
// become FMA instructions instead of calls to the portable fma.
// REPMODE_TARGET_AVX512 is the same for AVX-512 (512-bit vectors preferred): wider vectors
// over the same independent per-lane sequences.
#if defined(__x86_64__)
#define REPMODE_TARGET_AVX2 __attribute__((target("avx2,fma"), flatten))
#define REPMODE_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma,prefer-vector-width=512"), flatten))
#else
#define REPMODE_TARGET_AVX2
#define REPMODE_TARGET_AVX512
#endif
#define REPMODE_INLINE inline __attribute__((always_inline))

// Ask for the cache lines of [p, p + bytes) ahead of use (at most the first 16 KiB: a row
// loop calls this for the next row while it computes on the current one, so that memory
// traffic overlaps the arithmetic). A hint only: no effect on any result.
REPMODE_INLINE void prefetch_bytes(const void* p, int64_t bytes, bool for_write) {
  const char* c = static_cast<const char*>(p);
  const int64_t n = bytes < 16384 ? bytes : 16384;
  for (int64_t i = 0; i < n; i += 64) {
    if (for_write)
      __builtin_prefetch(c + i, 1, 3);
    else
      __builtin_prefetch(c + i, 0, 3);
  }
}

template <typename Body>
REPMODE_TARGET_AVX2 void run_avx2(const Body& body, int64_t begin, int64_t end) {
  body(begin, end);
}

template <typename Body>
REPMODE_TARGET_AVX512 void run_avx512(const Body& body, int64_t begin, int64_t end) {
  body(begin, end);
}

template <typename Body>
void run_portable(const Body& body, int64_t begin, int64_t end) {
  body(begin, end);
}

// parallel_for over rows whose body(begin, end) is compiled for the active ISA path.
template <typename Body>
void rows_parallel(int64_t rows, int nthreads, int64_t work_per_row, const Body& body) {
  const Isa isa = active_isa();
  parallel_for(rows, nthreads, work_per_row, [&](int64_t begin, int64_t end) {
    if (isa == Isa::avx512)
      run_avx512(body, begin, end);
    else if (isa == Isa::avx2)
      run_avx2(body, begin, end);
    else
      run_portable(body, begin, end);
  });
}

}  // namespace repmode::cpu

// Reproducible GEMM: a packed, cache-blocked multiply (GotoBLAS-style) whose every
// output is the canonical four-level sum over k of csrc/common/matmul.h (chains of 16 k, each an
// fma chain from +0.0; the 16 chains of a 256-k chunk summed in order; chunk partials summed per
// group of 64 chunks; group sums summed), or, for a float32 sum of at most 32 terms, that order in
// float64 on the widened operands rounded once (run_output_tile_wide).
//
// How the blocking keeps the order:
//  * Threads own whole output tiles (a task: one batch item, a range of rows and a
//    range of columns); nothing is ever split over k between threads.
//  * Inside a task, k is cut into blocks of KC == kGemmChunk in increasing order, so a k-block is
//    exactly one chunk. A micro-kernel runs the chunk's chains of 16 k in order, each in its
//    accumulators from +0.0, and sums them in a small tile buffer (gemm_chain_combine); it then
//    stores the chunk's sum into C (the first chunk of a group) or adds it to the group's running
//    sum held in C (one IEEE addition per output): C holds the group's sum exactly.
//  * With more than one group (K > 16,384), the task keeps the output's running total in a
//    buffer of its tile: at each group's end the group's sum in C is added to it (or starts it),
//    and after the last group the total, made canonical, is written to C.
//  * A micro-kernel runs k in order and does one fma per (output, k). Padding rows and
//    columns of a packed panel only feed outputs that are thrown away.
//  * Every path (AVX-512, AVX2 or scalar) computes the same fma and additions per output, each exactly
//    rounded, so paths differ in speed only.

#include "matmul.h"
#include "dispatch.h"
#include "entry_points.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#define REPMODE_GEMM_X86 1
#include <immintrin.h>
#endif

#include "../common/defs.h"
#include "../common/matmul.h"
#include "isa.h"

namespace repmode::cpu {
namespace {

// Explicit fma: the library is built with -ffp-contract=off, so nothing is fused unless
// written so. Every scalar step and finish is the shared chain of csrc/common/matmul.h.

template <typename T>
struct Problem {
  int64_t batch, M, N, K;
  const T* A;
  int64_t sAb, sAm, sAk;
  const T* B;
  int64_t sBb, sBk, sBn;
  T* C;
  int64_t sCb, sCm, sCn;
  // gemm_segments only (seg > 0): k is cut into segments of `seg` terms, each an fma chain from
  // +0.0 added to C in order; `accumulate`: the first segment is added to C too (else stored);
  // `finish`: NaNs of the result are written canonical.
  int64_t seg = 0;
  bool accumulate = false, finish = true;
};

// Copies MR full rows of a row-major A (row stride rs) into a micro-panel, element
// (i, k) to dst[k*MR + i]. Kernels may replace this with a faster version of theirs.
template <int MR, typename T>
void gather_rows(const T* a, int64_t rs, int64_t kc, T* dst) {
  for (int64_t k = 0; k < kc; ++k)
    for (int i = 0; i < MR; ++i) dst[k * MR + i] = a[i * rs + k];
}

// ---------------------------------------------------------------------------------
// Micro-kernels. Each computes one MR×NR tile of C for one k-block of length kc:
//   a: packed A micro-panel, element (i, k) at a[k*MR + i]
//   b: packed B micro-panel, element (k, j) at b[k*NR + j]
//   c: the tile, row stride ldc, unit column stride
// The accumulators start from +0.0 and run the chunk's fma chain (kc <= kGemmChunk: one chunk).
// add:    the chain is added to the partial in c (gemm_chunk_combine: a later chunk of a group);
//         else it is stored (the group's first chunk).
// last:   c is then final (the last chunk of a one-group sum), so NaNs are written as the
//         canonical NaN.
// ---------------------------------------------------------------------------------

// Portable kernel: the fallback path, and the model the SIMD kernels must match.
template <typename T, int MR_, int NR_, int MC_, int KC_, int NC_>
struct ScalarKernel {
  using Elem = T;
  static constexpr int MR = MR_, NR = NR_, MC = MC_, KC = KC_, NC = NC_;

  static void pack_a_rows(const T* a, int64_t rs, int64_t kc, T* dst) { gather_rows<MR>(a, rs, kc, dst); }

  static void tile(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool add, bool last) {
    T acc[MR][NR], part[MR][NR] = {};
    for (int64_t s = 0; s < kc; s += kGemmChain) {  // the chunk's chains, in order
      const int64_t n = std::min<int64_t>(kGemmChain, kc - s);
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) acc[i][j] = gemm_chain_start<T>();
      for (int64_t k = s; k < s + n; ++k)
        for (int i = 0; i < MR; ++i)
          for (int j = 0; j < NR; ++j) acc[i][j] = gemm_chain_step(a[k * MR + i], b[k * NR + j], acc[i][j]);
      for (int i = 0; i < MR; ++i)
        for (int j = 0; j < NR; ++j) part[i][j] = gemm_chain_combine(part[i][j], acc[i][j], s / kGemmChain);
    }
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) {
        const T v = add ? T(c[i * ldc + j] + part[i][j]) : part[i][j];
        c[i * ldc + j] = last ? gemm_chain_finish(v) : v;
      }
  }
};

#if REPMODE_GEMM_X86

// The AVX2 paths below compute gemm_chain_step / gemm_chain_finish (csrc/common/matmul.h) per lane:
// _mm256_fmadd_* is the same exact fma, canon8/canon4 the same canonical NaN.
__attribute__((target("avx2,fma"))) inline __m256 canon8(__m256 x) {
  const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(int(kCanonicalNanBits32)));
  return _mm256_blendv_ps(x, nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

__attribute__((target("avx2,fma"))) inline __m256d canon4(__m256d x) {
  const __m256d nan = _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(kCanonicalNanBits64)));
  return _mm256_blendv_pd(x, nan, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

// gather_rows for 6 rows into micro-panels of DMR rows (element (i, k) to dst[k*DMR + i],
// i < 6), transposing 6×8 blocks in registers: moving one element at a time made packing A
// about 5% of a large multiply. A copy: no arithmetic.
template <int DMR>
__attribute__((target("avx2,fma"))) void pack6_rows(const float* a, int64_t rs, int64_t kc, float* dst) {
  constexpr int MR = DMR;
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8, dst += 8 * MR) {
    const float* r = a + k;
    // Interleave row pairs: t0 holds rows 0,1 of columns 0,1 (low lane) and 4,5
    // (high lane); t1 the same for columns 2,3 and 6,7.
    const __m256 t0 = _mm256_unpacklo_ps(_mm256_loadu_ps(r), _mm256_loadu_ps(r + rs));
    const __m256 t1 = _mm256_unpackhi_ps(_mm256_loadu_ps(r), _mm256_loadu_ps(r + rs));
    const __m256 t2 = _mm256_unpacklo_ps(_mm256_loadu_ps(r + 2 * rs), _mm256_loadu_ps(r + 3 * rs));
    const __m256 t3 = _mm256_unpackhi_ps(_mm256_loadu_ps(r + 2 * rs), _mm256_loadu_ps(r + 3 * rs));
    const __m256 t4 = _mm256_unpacklo_ps(_mm256_loadu_ps(r + 4 * rs), _mm256_loadu_ps(r + 5 * rs));
    const __m256 t5 = _mm256_unpackhi_ps(_mm256_loadu_ps(r + 4 * rs), _mm256_loadu_ps(r + 5 * rs));
    // Rows 0..3 of column c in the low lane of top[c], of column c+4 in the high lane.
    const __m256 top[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                           _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
    // Rows 4,5 of columns (0,1), (2,3), (4,5), (6,7), two columns per register.
    const __m128 bottom[4] = {_mm256_castps256_ps128(t4), _mm256_castps256_ps128(t5), _mm256_extractf128_ps(t4, 1),
                              _mm256_extractf128_ps(t5, 1)};
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      _mm_storeu_ps(dst + c * MR, _mm256_castps256_ps128(top[c]));
      _mm_storeu_ps(dst + (c + 4) * MR, _mm256_extractf128_ps(top[c], 1));
      _mm_storel_pi(reinterpret_cast<__m64*>(dst + 2 * c * MR + 4), bottom[c]);
      _mm_storeh_pi(reinterpret_cast<__m64*>(dst + (2 * c + 1) * MR + 4), bottom[c]);
    }
  }
  for (; k < kc; ++k, dst += MR)
    for (int i = 0; i < 6; ++i) dst[i] = a[i * rs + k];
}

// The SIMD micro-kernel, written once for AVX2 (REG = Ymm) and AVX-512 (REG = Zmm) — a macro
// because each copy needs its own target attribute:
//  * NAME_chains: the fma chains from +0.0 of `Rows` rows × 2 vectors over kc steps of packed
//    panels (A element (i, k) at a[k*MR + i], B's two vectors at b[k*2L]): the per-lane sequence
//    of gemm_chain_step.
//  * NAME_tile: one chunk (kc <= 256 k) of an MR-row tile: its chains of kGemmChain k in order,
//    each run in the accumulators and summed into `part` (a tile buffer in L1: the register file
//    holds the accumulators, the B vectors and the broadcast, not a second tile), the last chain's
//    sum taken straight from the registers; then the chunk's sum is stored into c or added to the
//    group's partial there (`add`), canonical NaN if `last`. The same operations, per output, as
//    GemmTree (csrc/common/matmul.h); the extra addition per output and chain is 1/16 of the fmas.
#define REPMODE_GEMM_SIMD_KERNELS(NAME, ATTR, REG)                                                        \
  template <typename T, int Rows, int MR>                                                                 \
  ATTR inline void NAME##_chains(int64_t kc, const T* a, const T* b, typename REG<T>::V(&acc)[Rows][2]) { \
    using R = REG<T>;                                                                                     \
    _Pragma("GCC unroll 16") for (int i = 0; i < Rows; ++i) acc[i][0] = acc[i][1] = R::zero();            \
    _Pragma("GCC unroll 2") for (int64_t k = 0; k < kc; ++k, a += MR, b += 2 * R::L) {                    \
      const typename R::V b0 = R::load(b), b1 = R::load(b + R::L);                                        \
      _Pragma("GCC unroll 16") for (int i = 0; i < Rows; ++i) {                                           \
        const typename R::V ai = R::bcast(a + i);                                                         \
        acc[i][0] = R::fmadd(ai, b0, acc[i][0]);                                                          \
        acc[i][1] = R::fmadd(ai, b1, acc[i][1]);                                                          \
      }                                                                                                   \
    }                                                                                                     \
  }                                                                                                       \
  template <typename T, int MR>                                                                           \
  ATTR void NAME##_tile(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool add, bool last) {     \
    using R = REG<T>;                                                                                     \
    using V = typename R::V;                                                                              \
    constexpr int L = R::L, NR = 2 * L;                                                                   \
    alignas(64) T part[MR * NR];                                                                          \
    V acc[MR][2];                                                                                         \
    _Pragma("GCC unroll 1") for (int64_t s = 0; s < kc; s += kGemmChain) {                                \
      const int64_t n = kc - s < kGemmChain ? kc - s : kGemmChain;                                        \
      NAME##_chains<T, MR, MR>(n, a + s * MR, b + s * NR, acc);                                           \
      const bool first = s == 0, final = s + n == kc;                                                     \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; ++i) {                                             \
        _Pragma("GCC unroll 2") for (int h = 0; h < 2; ++h) {                                             \
          /* gemm_chain_combine: the first chain starts the chunk's sum, later ones are added */          \
          V v = first ? acc[i][h] : R::add(R::load(part + i * NR + h * L), acc[i][h]);                    \
          if (!final) {                                                                                   \
            R::store(part + i * NR + h * L, v);                                                           \
            continue;                                                                                     \
          }                                                                                               \
          if (add) v = R::add(R::load(c + i * ldc + h * L), v); /* gemm_chunk_combine */                  \
          R::store(c + i * ldc + h * L, last ? R::canon(v) : v);                                          \
        }                                                                                                 \
      }                                                                                                   \
    }                                                                                                     \
  }

// The AVX2 register traits of REPMODE_GEMM_SIMD_KERNELS: a 6-row tile is 12 chains (with the two
// B vectors and the broadcast: 15 of 16 ymm registers).
template <typename T>
struct Ymm;
template <>
struct Ymm<float> {
  using V = __m256;
  static constexpr int L = 8;
  __attribute__((target("avx2,fma"))) static inline V zero() { return _mm256_setzero_ps(); }
  __attribute__((target("avx2,fma"))) static inline V load(const float* p) { return _mm256_loadu_ps(p); }
  __attribute__((target("avx2,fma"))) static inline void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  __attribute__((target("avx2,fma"))) static inline V bcast(const float* p) { return _mm256_broadcast_ss(p); }
  __attribute__((target("avx2,fma"))) static inline V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  __attribute__((target("avx2,fma"))) static inline V add(V a, V b) { return _mm256_add_ps(a, b); }
  __attribute__((target("avx2,fma"))) static inline V canon(V x) { return canon8(x); }
};
template <>
struct Ymm<double> {
  using V = __m256d;
  static constexpr int L = 4;
  __attribute__((target("avx2,fma"))) static inline V zero() { return _mm256_setzero_pd(); }
  __attribute__((target("avx2,fma"))) static inline V load(const double* p) { return _mm256_loadu_pd(p); }
  __attribute__((target("avx2,fma"))) static inline void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  __attribute__((target("avx2,fma"))) static inline V bcast(const double* p) { return _mm256_broadcast_sd(p); }
  __attribute__((target("avx2,fma"))) static inline V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  __attribute__((target("avx2,fma"))) static inline V add(V a, V b) { return _mm256_add_pd(a, b); }
  __attribute__((target("avx2,fma"))) static inline V canon(V x) { return canon4(x); }
};

REPMODE_GEMM_SIMD_KERNELS(avx2, __attribute__((target("avx2,fma"))), Ymm)

// 6×16 floats: 12 ymm accumulators hide the fma latency on two fma pipes, and the other
// 4 registers hold the two B vectors and a broadcast A element.
struct Avx2F32Kernel {
  using Elem = float;
  static constexpr int MR = 6, NR = 16, MC = 144, KC = 256, NC = 512;

  static void pack_a_rows(const float* a, int64_t rs, int64_t kc, float* dst) { pack6_rows<MR>(a, rs, kc, dst); }

  static void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool add, bool last) {
    avx2_tile<float, MR>(kc, a, b, c, ldc, add, last);
  }
};

// 6×8 doubles: the same register budget as the float kernel.
struct Avx2F64Kernel {
  using Elem = double;
  static constexpr int MR = 6, NR = 8, MC = 96, KC = 256, NC = 256;

  static void pack_a_rows(const double* a, int64_t rs, int64_t kc, double* dst) { gather_rows<MR>(a, rs, kc, dst); }

  static void tile(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, bool add, bool last) {
    avx2_tile<double, MR>(kc, a, b, c, ldc, add, last);
  }
};

// ---- AVX-512 ----
// The same per-lane sequence as the AVX2 kernels (and gemm_chain_step / gemm_chain_finish): one
// _mm512_fmadd per (output, k) in k order from +0.0, one _mm512_add of the group's partial in c,
// and a masked blend to the canonical NaN. Only the tile is wider: MR rows × 2 zmm of columns
// (32 floats or 16 doubles), 2·MR accumulators; the A element is broadcast from the packed panel.
#define REPMODE_AVX512_GEMM __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))

template <typename T>
struct Zmm;
template <>
struct Zmm<float> {
  using V = __m512;
  static constexpr int L = 16;
  REPMODE_AVX512_GEMM static inline V zero() { return _mm512_setzero_ps(); }
  REPMODE_AVX512_GEMM static inline V load(const float* p) { return _mm512_loadu_ps(p); }
  REPMODE_AVX512_GEMM static inline void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  REPMODE_AVX512_GEMM static inline V bcast(const float* p) { return _mm512_set1_ps(*p); }
  REPMODE_AVX512_GEMM static inline V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  REPMODE_AVX512_GEMM static inline V add(V a, V b) { return _mm512_add_ps(a, b); }
  REPMODE_AVX512_GEMM static inline V canon(V x) {
    const __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32(int(kCanonicalNanBits32)));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, nan);
  }
};
template <>
struct Zmm<double> {
  using V = __m512d;
  static constexpr int L = 8;
  REPMODE_AVX512_GEMM static inline V zero() { return _mm512_setzero_pd(); }
  REPMODE_AVX512_GEMM static inline V load(const double* p) { return _mm512_loadu_pd(p); }
  REPMODE_AVX512_GEMM static inline void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  REPMODE_AVX512_GEMM static inline V bcast(const double* p) { return _mm512_set1_pd(*p); }
  REPMODE_AVX512_GEMM static inline V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  REPMODE_AVX512_GEMM static inline V add(V a, V b) { return _mm512_add_pd(a, b); }
  REPMODE_AVX512_GEMM static inline V canon(V x) {
    const __m512d nan = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(kCanonicalNanBits64)));
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q), x, nan);
  }
};

REPMODE_GEMM_SIMD_KERNELS(avx512, REPMODE_AVX512_GEMM, Zmm)

// MR×(2 zmm) tiles. float: 12×32 (24 accumulators; the 32 zmm registers hold them, the two B
// vectors and the broadcast); double: 12×16. MC, NC keep the packed panels within scratch.
template <typename T, int MR_, int MC_, int NC_>
struct Avx512Kernel {
  using Elem = T;
  using Z = Zmm<T>;
  using V = typename Z::V;
  static constexpr int MR = MR_, NR = 2 * Z::L, MC = MC_, KC = 256, NC = NC_;

  static void pack_a_rows(const T* a, int64_t rs, int64_t kc, T* dst) {
    if constexpr (sizeof(T) == 4 && MR == 12) {  // two 6-row halves of the AVX2 packer
      pack6_rows<12>(a, rs, kc, dst);
      pack6_rows<12>(a + 6 * rs, rs, kc, dst + 6);
    } else {
      gather_rows<MR>(a, rs, kc, dst);
    }
  }

  static void tile(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool add, bool last) {
    avx512_tile<T, MR>(kc, a, b, c, ldc, add, last);
  }
};

using Avx512F32Kernel = Avx512Kernel<float, 12, 144, 512>;
using Avx512F64Kernel = Avx512Kernel<double, 12, 96, 256>;

#endif  // REPMODE_GEMM_X86

// ---------------------------------------------------------------------------------
// Packing. Panels are zero-padded to whole micro-panels so the kernels never branch on
// tails; the padded rows/columns only produce outputs that are discarded.
// ---------------------------------------------------------------------------------

// Packs the m×kc block of A (row stride rs, column stride cs) as micro-panels of MR
// rows: row i0+i, column k goes to dst[i0*kc + k*MR + i].
template <class Kr, typename S, typename T = typename Kr::Elem>
void pack_a(const S* A, int64_t rs, int64_t cs, int64_t m, int64_t kc, T* dst) {
  constexpr int MR = Kr::MR;
  for (int64_t i0 = 0; i0 < m; i0 += MR, dst += MR * kc) {
    const S* a = A + i0 * rs;
    const int64_t mr = std::min<int64_t>(MR, m - i0);
    if (mr == MR && cs == 1) {  // row-major A: gather MR rows (a widening copy reads each row in turn)
      if constexpr (std::is_same_v<S, T>)
        Kr::pack_a_rows(a, rs, kc, dst);
      else
        for (int i = 0; i < MR; ++i)
          for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = a[i * rs + k];
    } else if (mr == MR && rs == 1) {  // column-major A: MR contiguous elements per k
      for (int64_t k = 0; k < kc; ++k)
        for (int i = 0; i < MR; ++i) dst[k * MR + i] = a[k * cs + i];
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int i = 0; i < MR; ++i) dst[k * MR + i] = i < mr ? a[i * rs + k * cs] : T(0);
    }
  }
}

// Packs the kc×n block of B (row stride rs, column stride cs) as micro-panels of NR
// columns: row k, column j0+j goes to dst[j0*kc + k*NR + j].
template <int NR, typename S, typename T>
void pack_b(const S* B, int64_t rs, int64_t cs, int64_t kc, int64_t n, T* dst) {
  int64_t j0 = 0;
  if (cs == 1) {
    // Row-major B: read each row once, left to right, across all full micro-panels;
    // going down one panel at a time touches a new page every row or two.
    const int64_t full = n / NR * NR;
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t j = 0; j < full; j += NR)
        for (int jj = 0; jj < NR; ++jj) dst[j * kc + k * NR + jj] = B[k * rs + j + jj];
    j0 = full;
  }
  for (; j0 < n; j0 += NR) {  // other layouts, and the last partial panel
    const int64_t nr = std::min<int64_t>(NR, n - j0);
    T* d = dst + j0 * kc;
    for (int64_t k = 0; k < kc; ++k)
      for (int j = 0; j < NR; ++j) d[k * NR + j] = j < nr ? B[k * rs + (j0 + j) * cs] : T(0);
  }
}

// ---------------------------------------------------------------------------------
// Scratch: per-thread packing buffers of one fixed size, allocated on a thread's first
// call and kept, so memory is bounded and small calls do not page-fault every time.
// ---------------------------------------------------------------------------------

template <class Kr>
constexpr size_t scratch_bytes() {
  return size_t(Kr::MC * Kr::KC + Kr::KC * Kr::NC) * sizeof(typename Kr::Elem);
}

constexpr size_t kScratchBytes = 768 * 1024;

void* thread_scratch() {
  struct Buffer {
    void* p = nullptr;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buf;
  if (!buf.p) buf.p = std::aligned_alloc(64, kScratchBytes);
  return buf.p;
}

// ---------------------------------------------------------------------------------
// Driver.
// ---------------------------------------------------------------------------------

// One MR×NR output tile for one k-block (one chunk). Full tiles of a unit-column-stride C go
// straight to the kernel; tails and strided C go through a small contiguous tile whose
// partial is copied in and out (exact).
template <class Kr, typename T = typename Kr::Elem>
void run_micro_tile(int64_t kc, const T* a, const T* b, T* c, int64_t mr, int64_t nr, int64_t sCm, int64_t sCn,
                    bool add, bool last) {
  if (mr == Kr::MR && nr == Kr::NR && sCn == 1) {
    Kr::tile(kc, a, b, c, sCm, add, last);
    return;
  }
  alignas(64) T tmp[Kr::MR * Kr::NR] = {};  // padding lanes compute discarded outputs
  if (add)
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t j = 0; j < nr; ++j) tmp[i * Kr::NR + j] = c[i * sCm + j * sCn];
  Kr::tile(kc, a, b, tmp, Kr::NR, add, last);
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) c[i * sCm + j * sCn] = tmp[i * Kr::NR + j];
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Cuts `extent` into the fewest chunks of at most `most`, evenly and in whole multiples
// of `unit` (1024 rows with most 144 become 8 chunks of 132 or less, not 7×144 + 16).
inline int64_t even_chunk(int64_t extent, int64_t most, int64_t unit) {
  return round_up(ceil_div(extent, ceil_div(extent, most)), unit);
}

// The whole k range of one task's output tile (rows [i0, i0+m), columns [j0, j0+n),
// n <= NC) of batch item `bi`. Loop order, for each k-block: the KC×n panel of B is
// packed once and reused by every MC-row block of A; inside, a B micro-panel (KC×NR)
// stays in L1 while the packed A block (MC×KC) streams from L2.
// A task's corner of A, B and C: batch item bi, rows from i0, columns from j0.
template <typename T>
struct TaskOrigin {
  const T* A;
  const T* B;
  T* C;
  TaskOrigin(const Problem<T>& p, int64_t bi, int64_t i0, int64_t j0)
      : A(p.A + bi * p.sAb + i0 * p.sAm),
        B(p.B + bi * p.sBb + j0 * p.sBn),
        C(p.C + bi * p.sCb + i0 * p.sCm + j0 * p.sCn) {}
};

template <class Kr, typename T = typename Kr::Elem>
void run_output_tile(const Problem<T>& p, int64_t bi, int64_t i0, int64_t m, int64_t j0, int64_t n, T* apack,
                     T* bpack) {
  const auto [A, B, C] = TaskOrigin<T>(p, bi, i0, j0);
  const int64_t mc = even_chunk(m, Kr::MC, Kr::MR);
  // More than one group: the output's running total (gemm_group_combine) lives here, m×n.
  const bool grouped = p.K > kGemmGroupK;
  std::vector<T> total(grouped ? size_t(m * n) : 0);
  for (int64_t k0 = 0; k0 < p.K; k0 += Kr::KC) {
    const int64_t kc = std::min<int64_t>(Kr::KC, p.K - k0);
    const int64_t q = k0 / kGemmChunk;  // the chunk this k-block is
    const bool add = q % kGemmGroup != 0, end = k0 + kc == p.K;
    const bool group_end = end || (q + 1) % kGemmGroup == 0;
    pack_b<Kr::NR>(B + k0 * p.sBk, p.sBk, p.sBn, kc, n, bpack);
    for (int64_t ic = 0; ic < m; ic += mc) {
      const int64_t rows = std::min(mc, m - ic);
      pack_a<Kr>(A + ic * p.sAm + k0 * p.sAk, p.sAm, p.sAk, rows, kc, apack);
      T* Cb = C + ic * p.sCm;
      for (int64_t jr = 0; jr < n; jr += Kr::NR)
        for (int64_t ir = 0; ir < rows; ir += Kr::MR)
          run_micro_tile<Kr>(kc, apack + ir * kc, bpack + jr * kc, Cb + ir * p.sCm + jr * p.sCn,
                             std::min<int64_t>(Kr::MR, rows - ir), std::min<int64_t>(Kr::NR, n - jr), p.sCm, p.sCn, add,
                             end && !grouped);
    }
    if (grouped && group_end) {  // the group's sum (in C) joins the total; the last one is written
      const int64_t g = q / kGemmGroup;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          T& c = C[i * p.sCm + j * p.sCn];
          T& t = total[size_t(i * n + j)];
          t = gemm_group_combine(t, c, g);
          if (end) c = gemm_chain_finish(t);
        }
    }
  }
}

// One micro-tile over a k-block of whole segments (gemm_segments): each segment's sum (the
// chunk order of tile(): its chains of 16 summed, seg <= 256) added to the tile in order, the
// first one stored when `first`; canonical NaNs after the last when `last`.
template <class Kr, typename T = typename Kr::Elem>
void tile_segments(int64_t kc, int64_t seg, const T* a, const T* b, T* c, int64_t ldc, bool first, bool last) {
  for (int64_t s = 0; s < kc; s += seg)
    Kr::tile(seg, a + s * Kr::MR, b + s * Kr::NR, c, ldc, !(first && s == 0), last && s + seg == kc);
}

// The segmented sum of gemm_segments for one task's output tile: C = ((C or +0.0-free start)
// + s_0) + s_1 + ..., s_j segment j's sum over its `seg` terms in the chunk order (seg <= KC). A
// k-block holds whole segments; each micro-tile runs its segments back to back, so the tile
// stays in L1 (or in the small contiguous copy of a tail tile) between them.
template <class Kr, typename T = typename Kr::Elem>
void run_output_tile_segments(const Problem<T>& p, int64_t bi, int64_t i0, int64_t m, int64_t j0, int64_t n, T* apack,
                              T* bpack) {
  const auto [A, B, C] = TaskOrigin<T>(p, bi, i0, j0);
  const int64_t mc = even_chunk(m, Kr::MC, Kr::MR);
  const int64_t block = (Kr::KC / p.seg) * p.seg;
  for (int64_t k0 = 0; k0 < p.K; k0 += block) {
    const int64_t kc = std::min<int64_t>(block, p.K - k0);
    const bool first = k0 == 0 && !p.accumulate, last = p.finish && k0 + kc == p.K;
    pack_b<Kr::NR>(B + k0 * p.sBk, p.sBk, p.sBn, kc, n, bpack);
    for (int64_t ic = 0; ic < m; ic += mc) {
      const int64_t rows = std::min(mc, m - ic);
      pack_a<Kr>(A + ic * p.sAm + k0 * p.sAk, p.sAm, p.sAk, rows, kc, apack);
      T* Cb = C + ic * p.sCm;
      for (int64_t jr = 0; jr < n; jr += Kr::NR)
        for (int64_t ir = 0; ir < rows; ir += Kr::MR) {
          const int64_t mr = std::min<int64_t>(Kr::MR, rows - ir), nr = std::min<int64_t>(Kr::NR, n - jr);
          const T* a = apack + ir * kc;
          const T* b = bpack + jr * kc;
          T* c = Cb + ir * p.sCm + jr * p.sCn;
          const bool direct = mr == Kr::MR && nr == Kr::NR && p.sCn == 1;
          alignas(64) T tmp[Kr::MR * Kr::NR] = {};  // padding lanes compute discarded outputs
          if (!direct && !first)
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < nr; ++j) tmp[i * Kr::NR + j] = c[i * p.sCm + j * p.sCn];
          tile_segments<Kr>(kc, p.seg, a, b, direct ? c : tmp, direct ? p.sCm : Kr::NR, first, last);
          if (!direct)
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < nr; ++j) c[i * p.sCm + j * p.sCn] = tmp[i * Kr::NR + j];
        }
    }
  }
}

// One row of a float64 micro-tile into C (column stride cs): each value rounded once to float32
// and made canonical, then stored (`store`) or added to C; canonical NaNs after it when `end`.
// The contiguous case is written as plain loops the compiler vectorizes (this runs once per
// output and segment).
inline void add_rounded_row(const double* t, float* c, int64_t cs, int64_t n, bool store, bool end) {
  if (cs == 1) {
    if (store)
      for (int64_t j = 0; j < n; ++j) c[j] = canon(static_cast<float>(t[j]));
    else
      for (int64_t j = 0; j < n; ++j) c[j] = c[j] + canon(static_cast<float>(t[j]));
    if (end && !store)  // (a stored value is canonical already)
      for (int64_t j = 0; j < n; ++j) c[j] = canon(c[j]);
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    const float part = canon(static_cast<float>(t[j]));
    const float v = store ? part : c[j * cs] + part;
    c[j * cs] = end ? canon(v) : v;
  }
}

// Short float32 sums through a float64 kernel Kr (GemmSum's short rule): a short product
// (gemm_runs_wide(K), seg = 0: one segment of K terms) or gemm_segments with short segments
// (gemm_runs_wide(seg)). Each segment's sum is the float64 chunk order on panels widened exactly
// while packed, rounded once and made canonical, then stored into C (the first, unless
// `accumulate`) or added to it in segment order; canonical NaNs after the last one when `finish`.
// No float64 copy of A, B or C beyond the panels and one micro-tile.
template <class Kr>
void run_output_tile_wide(const Problem<float>& p, int64_t bi, int64_t i0, int64_t m, int64_t j0, int64_t n,
                          double* apack, double* bpack) {
  static_assert(std::is_same_v<typename Kr::Elem, double> && kGemmShortK <= Kr::KC, "a float64 k-block");
  const auto [A, B, C] = TaskOrigin<float>(p, bi, i0, j0);
  const int64_t mc = even_chunk(m, Kr::MC, Kr::MR), seg = p.seg > 0 ? p.seg : p.K;
  const int64_t block = (Kr::KC / seg) * seg;
  for (int64_t k0 = 0; k0 < p.K; k0 += block) {
    const int64_t kc = std::min<int64_t>(block, p.K - k0);
    pack_b<Kr::NR>(B + k0 * p.sBk, p.sBk, p.sBn, kc, n, bpack);
    for (int64_t ic = 0; ic < m; ic += mc) {
      const int64_t rows = std::min(mc, m - ic);
      pack_a<Kr>(A + ic * p.sAm + k0 * p.sAk, p.sAm, p.sAk, rows, kc, apack);
      for (int64_t jr = 0; jr < n; jr += Kr::NR)
        for (int64_t ir = 0; ir < rows; ir += Kr::MR) {
          const int64_t mr = std::min<int64_t>(Kr::MR, rows - ir), nr = std::min<int64_t>(Kr::NR, n - jr);
          float* c = C + (ic + ir) * p.sCm + jr * p.sCn;
          for (int64_t s = 0; s < kc; s += seg) {
            alignas(64) double tile[Kr::MR * Kr::NR];
            Kr::tile(seg, apack + ir * kc + s * Kr::MR, bpack + jr * kc + s * Kr::NR, tile, Kr::NR, false, true);
            const bool store = k0 + s == 0 && !p.accumulate, end = p.finish && k0 + s + seg == p.K;
            for (int64_t i = 0; i < mr; ++i) add_rounded_row(tile + i * Kr::NR, c + i * p.sCm, p.sCn, nr, store, end);
          }
        }
    }
  }
}

// How the output is cut into tasks (one task = one thread's tile for the whole k
// range). Task sizes never change results, only speed.
struct TilePlan {
  int64_t mt, nt, mb, nb;  // task height/width and task counts along M and N
  int64_t tasks(int64_t batch) const { return batch * mb * nb; }
};

// Tasks start as full-height strips at most NC wide: a tall task packs each B panel
// once for all its rows. If there are few tasks, rows and then columns are split into
// more of them until the count is a multiple of the thread count, so no thread idles.
template <class Kr>
TilePlan plan_tasks(int64_t batch, int64_t M, int64_t N, int nthreads) {
  TilePlan t;
  t.nt = even_chunk(N, Kr::NC, Kr::NR);
  t.nb = ceil_div(N, t.nt);
  t.mb = 1;
  const auto unbalanced = [&] { return t.tasks(batch) < 4 * nthreads && t.tasks(batch) % nthreads != 0; };
  while (unbalanced() && t.mb * Kr::MR < M) ++t.mb;
  t.mt = round_up(ceil_div(M, t.mb), Kr::MR);
  t.mb = ceil_div(M, t.mt);
  while (unbalanced() && t.nb * Kr::NR < N) ++t.nb;
  t.nt = round_up(ceil_div(N, t.nb), Kr::NR);
  t.nb = ceil_div(N, t.nt);
  return t;
}

// Work below this many fmas runs on the calling thread: waking a team costs more.
constexpr double kMinFmasForThreads = 1 << 18;

// Runs problem p (elements S) on kernel Kr; S = float with a float64 Kr is a short float32 product
// (run_output_tile_wide).
template <class Kr, typename S>
void run_gemm(const Problem<S>& p, int nthreads) {
  using T = typename Kr::Elem;
  static_assert(Kr::KC == kGemmChunk, "a k-block is one chunk of the canonical order");
  static_assert(kGemmChunk % kGemmChain == 0, "a chunk is whole chains");
  static_assert(scratch_bytes<Kr>() <= kScratchBytes, "packing panels exceed scratch");
  static_assert(Kr::MC % Kr::MR == 0 && Kr::NC % Kr::NR == 0, "blocks must hold whole micro-tiles");
  if (double(p.batch) * double(p.M) * double(p.N) * double(p.K) < kMinFmasForThreads) nthreads = 1;
  const TilePlan plan = plan_tasks<Kr>(p.batch, p.M, p.N, nthreads);
  const int64_t ntasks = plan.tasks(p.batch);
  nthreads = int(std::min<int64_t>(nthreads, ntasks));
  std::atomic<bool> out_of_memory{false};

  auto run_task = [&](int64_t t) {
    T* apack = static_cast<T*>(thread_scratch());
    if (!apack) {
      out_of_memory.store(true, std::memory_order_relaxed);
      return;
    }
    T* bpack = apack + Kr::MC * Kr::KC;
    const int64_t jb = t % plan.nb, ib = (t / plan.nb) % plan.mb, bi = t / (plan.nb * plan.mb);
    const int64_t i0 = ib * plan.mt, j0 = jb * plan.nt;
    const int64_t m = std::min(plan.mt, p.M - i0), n = std::min(plan.nt, p.N - j0);
    if constexpr (!std::is_same_v<S, T>)
      run_output_tile_wide<Kr>(p, bi, i0, m, j0, n, apack, bpack);
    else if (p.seg > 0)
      run_output_tile_segments<Kr>(p, bi, i0, m, j0, n, apack, bpack);
    else
      run_output_tile<Kr>(p, bi, i0, m, j0, n, apack, bpack);
  };

  if (nthreads <= 1) {
    for (int64_t t = 0; t < ntasks; ++t) run_task(t);
  } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t t = 0; t < ntasks; ++t) run_task(t);
  }
  if (out_of_memory.load()) throw std::bad_alloc();
}

// C^T = B^T · A^T has the same per-output fma chains (fma(a, b, c) == fma(b, a, c)), so a
// column-major C is computed as a row-major one, keeping the kernels' direct stores.
template <typename T>
Problem<T> transposed(const Problem<T>& p) {
  return Problem<T>{p.batch, p.N,   p.M, p.K,   p.B,   p.sBb, p.sBn, p.sBk,        p.A,     p.sAb,
                    p.sAk,   p.sAm, p.C, p.sCb, p.sCn, p.sCm, p.seg, p.accumulate, p.finish};
}

template <typename T>
void fill_zero(const Problem<T>& p) {
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) p.C[b * p.sCb + i * p.sCm + j * p.sCn] = T(0);
}

template <typename T>
struct Kernels;
template <>
struct Kernels<float> {
  using Scalar = ScalarKernel<float, 4, 4, 64, 256, 256>;
#if REPMODE_GEMM_X86
  using Avx2 = Avx2F32Kernel;
  using Avx512 = Avx512F32Kernel;
#endif
};
template <>
struct Kernels<double> {
  using Scalar = ScalarKernel<double, 4, 4, 64, 256, 256>;
#if REPMODE_GEMM_X86
  using Avx2 = Avx2F64Kernel;
  using Avx512 = Avx512F64Kernel;
#endif
};

// A column-major C goes through its transpose; then the active ISA's kernels for elements E run
// the problem (E = double for a short float32 product: run_output_tile_wide).
template <typename E, typename T>
void run_on_active_isa(Problem<T> p, int nthreads) {
  if (p.sCn != 1 && p.sCm == 1) p = transposed(p);
  nthreads = std::max(nthreads, 1);
#if REPMODE_GEMM_X86
  if (active_isa() == Isa::avx512) return run_gemm<typename Kernels<E>::Avx512>(p, nthreads);
  if (active_isa() == Isa::avx2) return run_gemm<typename Kernels<E>::Avx2>(p, nthreads);
#endif
  run_gemm<typename Kernels<E>::Scalar>(p, nthreads);
}

}  // namespace

template <typename T>
void gemm(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk, const T* B,
          int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn, int nthreads) {
  Problem<T> p{batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn, C, sCb, sCm, sCn};
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (K <= 0) return fill_zero(p);
  if constexpr (std::is_same_v<T, float>) {
    if (gemm_runs_wide<float>(K)) return run_on_active_isa<double>(p, nthreads);  // run_output_tile_wide
  }
  run_on_active_isa<T>(p, nthreads);
}

template <typename T>
void gemm_segments(int64_t M, int64_t N, int64_t K, int64_t seg, const T* A, int64_t sAm, int64_t sAk, const T* B,
                   int64_t sBk, int64_t sBn, T* C, int64_t sCm, int64_t sCn, bool accumulate, bool finish,
                   int nthreads) {
  if (seg <= 0 || seg > kGemmChunk || K % seg != 0) throw std::invalid_argument("gemm_segments: bad segment length");
  if (M <= 0 || N <= 0 || K <= 0) return;  // no segment: C keeps its values
  const Problem<T> p{1, M, N, K, A, 0, sAm, sAk, B, 0, sBk, sBn, C, 0, sCm, sCn, seg, accumulate, finish};
  if constexpr (std::is_same_v<T, float>) {
    if (gemm_runs_wide<float>(seg)) return run_on_active_isa<double>(p, nthreads);  // run_output_tile_wide
  }
  run_on_active_isa<T>(p, nthreads);
}

// The plain reference: each output fed term by term through GemmSum (csrc/common/matmul.h).
template <typename T>
void gemm_reference(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk,
                    const T* B, int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        GemmSum<T> acc(K);
        for (int64_t k = 0; k < K; ++k) acc.step(A[b * sAb + i * sAm + k * sAk], B[b * sBb + k * sBk + j * sBn]);
        C[b * sCb + i * sCm + j * sCn] = acc.finish();
      }
}

#define REPMODE_INSTANTIATE_GEMM(T)                                                                                  \
  template void gemm<T>(int64_t, int64_t, int64_t, int64_t, const T*, int64_t, int64_t, int64_t, const T*, int64_t,  \
                        int64_t, int64_t, T*, int64_t, int64_t, int64_t, int);                                       \
  template void gemm_reference<T>(int64_t, int64_t, int64_t, int64_t, const T*, int64_t, int64_t, int64_t, const T*, \
                                  int64_t, int64_t, int64_t, T*, int64_t, int64_t, int64_t);                         \
  template void gemm_segments<T>(int64_t, int64_t, int64_t, int64_t, const T*, int64_t, int64_t, const T*, int64_t,  \
                                 int64_t, T*, int64_t, int64_t, bool, bool, int);

REPMODE_INSTANTIATE_GEMM(float)
REPMODE_INSTANTIATE_GEMM(double)

#undef REPMODE_INSTANTIATE_GEMM

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void gemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,
          uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn,
          int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    gemm<T>(batch, M, N, K, ptr<const T>(A), sAb, sAm, sAk, ptr<const T>(B), sBb, sBk, sBn, ptr<T>(C), sCb, sCm, sCn,
            nthreads);
  });
}

void gemm_reference(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm,
                    int64_t sAk, uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb,
                    int64_t sCm, int64_t sCn) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    gemm_reference<T>(batch, M, N, K, ptr<const T>(A), sAb, sAm, sAk, ptr<const T>(B), sBb, sBk, sBn, ptr<T>(C), sCb,
                      sCm, sCn);
  });
}

}  // namespace repmode::cpu

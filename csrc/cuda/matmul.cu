// Reproducible GEMM on the GPU. Every output is the canonical order of csrc/common/matmul.h
// (numerics version 7): fma chains of 16 k from +0.0; a chunk (256 k) the sum of its 16 chains in
// order; a group (64 chunks) the sum of its chunks in order; the output the sum of its groups in
// order, then canon(). A float32 sum of at most 32 terms runs that order in float64 and is
// rounded once to float32 (the short rule).
// Short float32 sums: one thread per output runs GemmSum itself (gemm_short_kernel).
// Other sums: a tiled SIMT kernel. A block owns a BM x BN output tile for the whole k range;
// each thread owns a TM x TN tile of it. k is walked in increasing order, BK columns of A and
// rows of B at a time through shared memory (double-buffered); k-tiles start at multiples of 256
// and BK divides 16, so every chain and chunk ends at a k-tile's end. A thread keeps two register
// tiles: its outputs' running chains, which every 16 k join the chunk sums (gemm_chain_combine)
// and restart, and the chunk sums, which at each chunk's end it folds into the group's running
// sums kept in its own outputs of C (read and written only by that thread, stored exactly) and,
// past 16,384 k, at each group's end into the output's running totals in a scratch buffer. So
// each output sees exactly the CPU's sequence of repmode_fma and additions (exactly rounded,
// hence the CPU's bits).
// Split k: when the output has too few tiles to fill the GPU (a weight gradient: small M x N, long
// k), k is cut at chunk boundaries into slices, one block per tile and slice. Each block stores
// its chunks' sums apart, and a second kernel combines every output's chunk sums in chunk order
// (gemm_sum_of_chunks). A chunk's sum is the same sequence either way, so the split changes speed
// only, never bits. Rows and columns past M and N are loaded as zeros and only feed outputs that
// are never stored; k is never padded: the last, partial k-tile runs only its real columns, and
// the last chain ends at K (a padded fma(0, 0, -0.0) would turn -0.0 into +0.0). No tensor cores,
// no TF32.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>

#include "../common/defs.h"
#include "../common/math.h"
#include "../common/matmul.h"  // the order: chains, chunks, groups; GemmSum for short sums
#include "matmul.cuh"
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

template <typename T>
struct GemmArgs {
  int64_t batch, M, N, K;
  const T* A;
  int64_t sAb, sAm, sAk;
  const T* B;
  int64_t sBb, sBk, sBn;
  T* C;
  int64_t sCb, sCm, sCn;
  T* W;  // K > kGemmGroupK, unsplit: the running totals, batch x M x N contiguous (else null)
  T* P;  // split k: every chunk's sum, chunks x batch x M x N contiguous (else null)
  int64_t tiles_m, tiles_n;
  int64_t slices, slice_chunks;  // k is cut into `slices` runs of `slice_chunks` whole chunks
  bool a_k_fast, b_n_fast;       // which index is contiguous (decides the coalesced load order)
};

// Tile shapes. Thread (ty, tx) owns rows h*(TY*4) + ty*4 + v (h < TM/4, v < 4) and the columns
// likewise, so its shared-memory reads are 4-element vectors without bank conflicts.
template <typename T, int BM_, int BN_, int BK_, int TM_, int TN_>
struct Shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int TY = BM / TM, TX = BN / TN, THREADS = TY * TX;
  static constexpr int A_PER = BM * BK / THREADS, B_PER = BK * BN / THREADS;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "register tiles are whole 4-vectors");
  static_assert(BM * BK % THREADS == 0 && BK * BN % THREADS == 0, "tiles split evenly over threads");
  // k-tiles start at multiples of the chunk, so chains (and chunks) end on k-tile ends.
  static_assert(kGemmChain % BK == 0, "a chain is whole k-tiles");
};

using ShapeF32 = Shape<float, 128, 128, 8, 8, 8>;  // 256 threads, 8x8 outputs each
using ShapeF64 = Shape<double, 64, 64, 8, 4, 4>;   // 256 threads, 4x4 outputs each
// Narrow float products (M or N at most 64: a convolution's 64 output channels, an attention
// head's 64 columns) would leave half of a 128 x 128 tile idle: 64 x 128 (or 128 x 64) tiles of
// 4 x 8 (8 x 4) outputs per thread, 16 k per tile so that each thread still loads whole 4-vectors.
using ShapeF32Rows64 = Shape<float, 64, 128, 16, 4, 8>;
using ShapeF32Cols64 = Shape<float, 128, 64, 16, 8, 4>;

// Split k (speed only): below kSplitBelowTiles output tiles, k is cut into slices of whole chunks
// so that about kSplitTargetBlocks blocks run (two per SM of an H100, one resident at a time under
// the launch bounds below; not retuned for version 7), as long as every chunk's sums fit in
// kSplitScratchMax elements of scratch.
constexpr int64_t kSplitBelowTiles = 132;
constexpr int64_t kSplitTargetBlocks = 264;
constexpr int64_t kSplitScratchMax = int64_t(1) << 26;

// REPMODE_CUDA_SPLIT_K=0 turns the split off, so that a benchmark can time the same product both
// ways in one process (benchmarks/bench_cuda.py); read at each launch, as the bits do not depend on it.
static bool split_k_allowed() {
  const char* v = std::getenv("REPMODE_CUDA_SPLIT_K");
  return v == nullptr || std::strcmp(v, "0") != 0;
}
// REPMODE_CUDA_NARROW_TILES=0 likewise keeps narrow products on the 128 x 128 tile.
static bool narrow_tiles_allowed() {
  const char* v = std::getenv("REPMODE_CUDA_NARROW_TILES");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Four consecutive shared-memory elements (16-byte aligned) into registers.
__device__ __forceinline__ void load4(const float* p, float* r) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}
__device__ __forceinline__ void load4(const double* p, double* r) {
  const double2 u = reinterpret_cast<const double2*>(p)[0], v = reinterpret_cast<const double2*>(p)[1];
  r[0] = u.x;
  r[1] = u.y;
  r[2] = v.x;
  r[3] = v.y;
}

// The block's tile order: groups of 8 tile rows, column by column inside a group, so blocks
// that run at the same time share panels of A and B in L2. Affects speed only.
__device__ __forceinline__ void tile_of(int64_t r, int64_t tiles_m, int64_t tiles_n, int64_t& tm, int64_t& tn) {
  constexpr int64_t kGroup = 8;
  const int64_t per_group = kGroup * tiles_n, first = (r / per_group) * kGroup;
  const int64_t rows = tiles_m - first < kGroup ? tiles_m - first : kGroup;
  const int64_t q = r % per_group;
  tm = first + q % rows;
  tn = q / rows;
}

// Registers: a thread holds two TM x TN tiles (the chains and the chunk sums), 128 values for the
// float32 8 x 8 tile. Under __launch_bounds__(256, 2) (at most 128 registers, as in version 6,
// whose single tile already spilled 24-104 bytes in the scalar-load variants under nvcc 13) ptxas
// spilled up to 576 bytes per thread; under (256, 1) it uses 141-247 registers and spills nothing
// (nvcc 13, sm_80 and sm_90), with one resident block (8 warps) per SM instead of two. The
// alternative, the chunk sums in shared memory (64 KiB per float32 block: dynamic shared memory),
// keeps two blocks resident but adds a shared-memory round trip per output every 16 k. Neither
// form was timed (no GPU in the session that wrote this): the simpler one, registers, stands
// until a GPU run measures both.
// VA: A is row-major with 16-byte aligned rows and K % 4 == 0, so A is read as float4 along k
// (a 4-column group lies wholly inside or wholly past K). VB: the same for B along n.
// SPLIT: this block runs one slice of k and stores its chunks' sums in p.P (a separate
// instantiation, so the unsplit kernel keeps its registers).
template <typename T, class S, bool VA, bool VB, bool SPLIT>
__global__ void __launch_bounds__(S::THREADS, 1) gemm_kernel(GemmArgs<T> p) {
  constexpr int BM = S::BM, BN = S::BN, BK = S::BK, TM = S::TM, TN = S::TN, TY = S::TY, TX = S::TX;
  constexpr int THREADS = S::THREADS, A_PER = S::A_PER, B_PER = S::B_PER;
  __shared__ __align__(16) T As[2][BK][BM];  // As[k][m]
  __shared__ __align__(16) T Bs[2][BK][BN];  // Bs[k][n]
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int64_t per_batch = p.tiles_m * p.tiles_n, tiles = per_batch * p.batch;
  const int64_t total = SPLIT ? tiles * p.slices : tiles;

  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t b = (t % tiles) / per_batch;
    int64_t tm, tn;
    tile_of(t % per_batch, p.tiles_m, p.tiles_n, tm, tn);
    // This block's k range: whole chunks (all of k unless split), so every k-tile lies in one chunk.
    const int64_t kbeg = SPLIT ? (t / tiles) * p.slice_chunks * kGemmChunk : 0;
    const int64_t kend = SPLIT && kbeg + p.slice_chunks * kGemmChunk < p.K ? kbeg + p.slice_chunks * kGemmChunk : p.K;
    if (SPLIT && kbeg >= kend) continue;  // the same for every thread of the block
    const int64_t m0 = tm * BM, n0 = tn * BN;
    const T* A = p.A + b * p.sAb;
    const T* B = p.B + b * p.sBb;

    T ra[A_PER], rb[B_PER];  // the next k-tile, in flight through registers
    // Global -> registers for the k-tile at k0 (zeros outside M, N and K).
    auto load_a = [&](int64_t k0) {
      if constexpr (VA) {
#pragma unroll
        for (int r = 0; r < A_PER / 4; ++r) {
          const int e = tid + THREADS * r, m = e / (BK / 4), k = (e % (BK / 4)) * 4;
          float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
          if (m0 + m < p.M && k0 + k < p.K) v = *reinterpret_cast<const float4*>(A + (m0 + m) * p.sAm + (k0 + k));
          ra[4 * r] = v.x;
          ra[4 * r + 1] = v.y;
          ra[4 * r + 2] = v.z;
          ra[4 * r + 3] = v.w;
        }
      } else {
        const T* Ab = A;  // opaque: keeps the element addresses from being hoisted (register pressure)
        opaque(Ab);
#pragma unroll
        for (int r = 0; r < A_PER; ++r) {
          const int e = tid + THREADS * r;
          const int m = p.a_k_fast ? e / BK : e % BM, k = p.a_k_fast ? e % BK : e / BM;
          ra[r] = (m0 + m < p.M && k0 + k < p.K) ? Ab[(m0 + m) * p.sAm + (k0 + k) * p.sAk] : T(0);
        }
      }
    };
    auto load_b = [&](int64_t k0) {
      if constexpr (VB) {
#pragma unroll
        for (int r = 0; r < B_PER / 4; ++r) {
          const int e = tid + THREADS * r, k = e / (BN / 4), n = (e % (BN / 4)) * 4;
          float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
          if (k0 + k < p.K && n0 + n < p.N) v = *reinterpret_cast<const float4*>(B + (k0 + k) * p.sBk + (n0 + n));
          rb[4 * r] = v.x;
          rb[4 * r + 1] = v.y;
          rb[4 * r + 2] = v.z;
          rb[4 * r + 3] = v.w;
        }
      } else {
        const T* Bb = B;
        opaque(Bb);
#pragma unroll
        for (int r = 0; r < B_PER; ++r) {
          const int e = tid + THREADS * r;
          const int k = p.b_n_fast ? e / BN : e % BK, n = p.b_n_fast ? e % BN : e / BK;
          rb[r] = (k0 + k < p.K && n0 + n < p.N) ? Bb[(k0 + k) * p.sBk + (n0 + n) * p.sBn] : T(0);
        }
      }
    };
    // Registers -> shared buffer `buf` (the same element mapping as the loads).
    auto store_tiles = [&](int buf) {
#pragma unroll
      for (int r = 0; r < A_PER; ++r) {
        int m, k;
        if constexpr (VA) {
          const int e = tid + THREADS * (r / 4);
          m = e / (BK / 4);
          k = (e % (BK / 4)) * 4 + r % 4;
        } else {
          const int e = tid + THREADS * r;
          m = p.a_k_fast ? e / BK : e % BM;
          k = p.a_k_fast ? e % BK : e / BM;
        }
        As[buf][k][m] = ra[r];
      }
#pragma unroll
      for (int r = 0; r < B_PER; ++r) {
        int k, n;
        if constexpr (VB) {
          const int e = tid + THREADS * (r / 4);
          k = e / (BN / 4);
          n = (e % (BN / 4)) * 4 + r % 4;
        } else {
          const int e = tid + THREADS * r;
          k = p.b_n_fast ? e / BN : e % BK;
          n = p.b_n_fast ? e % BN : e / BK;
        }
        Bs[buf][k][n] = rb[r];
      }
    };

    // chain: the running fma chains (at most 16 k); chunk: the finished chains of the current chunk.
    T chain[TM][TN], chunk[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) chain[i][j] = chunk[i][j] = gemm_chain_start<T>();

    // One k step: every chain takes its next fma, in increasing k.
    auto step = [&](int buf, int kk) {
      T a[TM], bv[TN];
#pragma unroll
      for (int h = 0; h < TM / 4; ++h) load4(&As[buf][kk][h * TY * 4 + ty * 4], a + 4 * h);
#pragma unroll
      for (int h = 0; h < TN / 4; ++h) load4(&Bs[buf][kk][h * TX * 4 + tx * 4], bv + 4 * h);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) chain[i][j] = gemm_chain_step(a[i], bv[j], chain[i][j]);
    };
    // The chains ending at k = kdone (chain r of its chunk) join the chunk sums and restart.
    auto end_chains = [&](int64_t kdone) {
      const int64_t r = ((kdone - 1) / kGemmChain) % (kGemmChunk / kGemmChain);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          chunk[i][j] = gemm_chain_combine(chunk[i][j], chain[i][j], r);
          chain[i][j] = gemm_chain_start<T>();
        }
    };

    T* C = p.C + b * p.sCb;
    // f(chunk sum, m, n) for each of this thread's outputs inside M x N. The addresses come from
    // opaque copies, so the compiler cannot hoist the 64 of them out of the k loop (they would
    // stay live in registers across it and spill).
    auto each_output = [&](auto&& f) {
      int64_t mb = m0 + ty * 4, nb = n0 + tx * 4;
      opaque(mb);
      opaque(nb);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int64_t m = mb + (i / 4) * TY * 4 + i % 4;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int64_t n = nb + (j / 4) * TX * 4 + j % 4;
          if (m < p.M && n < p.N) f(chunk[i][j], m, n);
        }
      }
    };
    // Chunk q has ended (end: it is the last): its sums join the group sums kept in this
    // thread's outputs of C (gemm_chunk_combine), the group sums join the totals in W at a
    // group's end (gemm_group_combine), and the last fold writes canon() of the result.
    auto fold = [&](int64_t q, bool end) {
      if constexpr (SPLIT) {  // chunk q's sums, stored apart for gemm_finish_kernel
        T* Pq = p.P + (q * p.batch + b) * p.M * p.N;
        each_output([&](T c, int64_t m, int64_t n) { Pq[m * p.N + n] = c; });
        return;
      }
      const bool first = q % kGemmGroup == 0;
      const bool group_end = p.W != nullptr && (end || (q + 1) % kGemmGroup == 0);
      const int64_t g = q / kGemmGroup;
      T* Cb = C;
      opaque(Cb);
      each_output([&](T cq, int64_t m, int64_t n) {
        T* c = Cb + m * p.sCm + n * p.sCn;
        const T v = gemm_chunk_combine(first ? T(0) : *c, cq, q);
        if (group_end) {
          T* w = p.W + (b * p.M + m) * p.N + n;
          const T t = gemm_group_combine(g == 0 ? T(0) : *w, v, g);
          if (end)
            *c = gemm_chain_finish(t);
          else
            *w = t;
        } else {
          *c = end ? gemm_chain_finish(v) : v;
        }
      });
    };

    load_a(kbeg);
    load_b(kbeg);
    store_tiles(0);
    __syncthreads();
    int buf = 0;
    for (int64_t k0 = kbeg; k0 < kend; k0 += BK) {
      const bool more = k0 + BK < kend;
      if (more) {  // the next tile's global loads overlap this tile's arithmetic
        load_a(k0 + BK);
        load_b(k0 + BK);
      }
      if (more) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) step(buf, kk);
      } else {
        const int kc = static_cast<int>(kend - k0);  // the last tile: its real columns only
        for (int kk = 0; kk < kc; ++kk) step(buf, kk);
      }
      // Writing the other buffer is safe: every thread passed the barrier after its last read.
      if (more) store_tiles(buf ^ 1);
      // After the stores, so the next tile's registers are free while combining. A chain, and a
      // chunk, ends on a k-tile's end (k-tiles start at multiples of 256 and BK divides 16) or at
      // the slice's end (a chunk's end, or K: the last chain, then chunk, is shorter).
      const int64_t kdone = more ? k0 + BK : kend;
      if (!more || kdone % kGemmChain == 0) end_chains(kdone);
      if (!more || kdone % kGemmChunk == 0) fold(k0 / kGemmChunk, !more);
      __syncthreads();
      buf ^= 1;
    }
  }
}

// K == 0: every output is the empty chain, +0.0.
template <typename T>
__global__ void gemm_zero_kernel(int64_t batch, int64_t M, int64_t N, T* C, int64_t sCb, int64_t sCm, int64_t sCn) {
  const int64_t total = batch * M * N;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t j = i % N, m = (i / N) % M, b = i / (M * N);
    C[b * sCb + m * sCm + j * sCn] = T(0);
  }
}

// Short float32 sums (gemm_runs_wide: 1 .. 32 terms): one thread per output runs the canonical
// order itself (GemmSum: the four levels in float64 on the exactly widened terms, rounded once to
// float32, then canon). Each thread reads at most 32 elements of A and of B, which L1 serves to
// its warp (the same row of A, neighbouring columns of B), so a tile kernel's reuse would gain
// little, and no float64 copies of A, B or C are needed. Consecutive threads, consecutive n.
__global__ void gemm_short_kernel(int64_t batch, int64_t M, int64_t N, int64_t K, const float* A, int64_t sAb,
                                  int64_t sAm, int64_t sAk, const float* B, int64_t sBb, int64_t sBk, int64_t sBn,
                                  float* C, int64_t sCb, int64_t sCm, int64_t sCn) {
  const int64_t total = batch * M * N;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t j = i % N, m = (i / N) % M, b = i / (M * N);
    const float* a = A + b * sAb + m * sAm;
    const float* bj = B + b * sBb + j * sBn;
    GemmSum<float> sum(K);
    for (int64_t k = 0; k < K; ++k) sum.step(a[k * sAk], bj[k * sBk]);
    C[b * sCb + m * sCm + j * sCn] = sum.finish();
  }
}

// Split k, second pass: each output from its chunks' sums (P: chunks x batch x M x N), in the
// canonical order of csrc/common/matmul.h. Reads are coalesced: consecutive threads, consecutive n.
template <typename T>
__global__ void gemm_finish_kernel(const T* P, int64_t chunks, int64_t batch, int64_t M, int64_t N, T* C, int64_t sCb,
                                   int64_t sCm, int64_t sCn) {
  const int64_t total = batch * M * N;
  for (int64_t i = global_thread(); i < total; i += grid_stride()) {
    const int64_t j = i % N, m = (i / N) % M, b = i / (M * N);
    C[b * sCb + m * sCm + j * sCn] = gemm_sum_of_chunks<T>(chunks, [&](int64_t q) { return P[q * total + i]; });
  }
}

template <typename T, class S, bool VA, bool VB>
void launch(const GemmArgs<T>& p, cudaStream_t stream) {
  const int64_t total = p.tiles_m * p.tiles_n * p.batch * p.slices;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(total, int64_t(1) << 30));
  if (p.slices > 1)
    gemm_kernel<T, S, VA, VB, true><<<blocks, S::THREADS, 0, stream>>>(p);
  else
    gemm_kernel<T, S, VA, VB, false><<<blocks, S::THREADS, 0, stream>>>(p);
  check_launch("gemm_kernel");
}

inline bool aligned16(const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; }

// The product on tiles of shape S (K > 0).
template <typename T, class S>
void gemm_on_tiles(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk,
                   const T* B, int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn,
                   cudaStream_t stream) {
  const int64_t tiles_m = (M + S::BM - 1) / S::BM, tiles_n = (N + S::BN - 1) / S::BN;
  const int64_t tiles = tiles_m * tiles_n * batch, chunks = gemm_chunks(K);
  // Split k where the tiles alone leave the GPU idle (speed only: the bits are the same).
  int64_t slice_chunks = chunks;
  if (chunks > 1 && tiles < kSplitBelowTiles && batch * M * N * chunks <= kSplitScratchMax && split_k_allowed()) {
    const int64_t want = std::min<int64_t>(chunks, (kSplitTargetBlocks + tiles - 1) / tiles);
    slice_chunks = (chunks + want - 1) / want;
  }
  const int64_t slices = (chunks + slice_chunks - 1) / slice_chunks;
  const bool split = slices > 1;
  std::optional<StreamScratch<T>> partials;  // split: every chunk's sums (freed in stream order)
  if (split) partials.emplace(chunks * batch * M * N, stream);
  // Unsplit, more than one group: the running totals need a place of their own.
  const bool grouped = !split && K > kGemmGroupK;
  std::optional<StreamScratch<T>> totals;
  if (grouped) totals.emplace(batch * M * N, stream);
  GemmArgs<T> p{batch,
                M,
                N,
                K,
                A,
                sAb,
                sAm,
                sAk,
                B,
                sBb,
                sBk,
                sBn,
                C,
                sCb,
                sCm,
                sCn,
                grouped ? totals->get() : nullptr,
                split ? partials->get() : nullptr,
                tiles_m,
                tiles_n,
                slices,
                slice_chunks,
                sAk == 1 && sAm != 1,
                sBn == 1};
  if constexpr (std::is_same_v<T, float>) {
    // Vector loads only where every 4-group is aligned and wholly inside or outside the matrix.
    const bool va = sAk == 1 && sAm % 4 == 0 && (batch == 1 || sAb % 4 == 0) && K % 4 == 0 && aligned16(A);
    const bool vb = sBn == 1 && sBk % 4 == 0 && (batch == 1 || sBb % 4 == 0) && N % 4 == 0 && aligned16(B);
    // (One-sided variants would spill registers: the scalar kernel serves those cases.)
    if (va && vb)
      launch<T, S, true, true>(p, stream);
    else
      launch<T, S, false, false>(p, stream);
  } else {
    launch<T, S, false, false>(p, stream);
  }
  if (split) {
    gemm_finish_kernel<T>
        <<<blocks_for(batch * M * N), kBlock, 0, stream>>>(partials->get(), chunks, batch, M, N, C, sCb, sCm, sCn);
    check_launch("gemm_finish_kernel");
  }
}

}  // namespace

// The tile shape is chosen by M and N only; every shape computes each output's same sequence of
// operations, so the choice changes speed, never bits.
template <typename T>
void gemm_async(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t sAb, int64_t sAm, int64_t sAk,
                const T* B, int64_t sBb, int64_t sBk, int64_t sBn, T* C, int64_t sCb, int64_t sCm, int64_t sCn,
                cudaStream_t stream) {
  if (batch <= 0 || M <= 0 || N <= 0) return;
  if (K <= 0) {
    gemm_zero_kernel<T><<<blocks_for(batch * M * N), kBlock, 0, stream>>>(batch, M, N, C, sCb, sCm, sCn);
    check_launch("gemm_zero_kernel");
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (gemm_runs_wide<float>(K)) {
      gemm_short_kernel<<<blocks_for(batch * M * N), kBlock, 0, stream>>>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk,
                                                                          sBn, C, sCb, sCm, sCn);
      check_launch("gemm_short_kernel");
      return;
    }
    const bool narrow = (M <= 64) != (N <= 64) && narrow_tiles_allowed();
    if (narrow && M <= 64)
      gemm_on_tiles<T, ShapeF32Rows64>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn, C, sCb, sCm, sCn, stream);
    else if (narrow)
      gemm_on_tiles<T, ShapeF32Cols64>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn, C, sCb, sCm, sCn, stream);
    else
      gemm_on_tiles<T, ShapeF32>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn, C, sCb, sCm, sCn, stream);
  } else {
    gemm_on_tiles<T, ShapeF64>(batch, M, N, K, A, sAb, sAm, sAk, B, sBb, sBk, sBn, C, sCb, sCm, sCn, stream);
  }
}

template void gemm_async<float>(int64_t, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, int64_t,
                                const float*, int64_t, int64_t, int64_t, float*, int64_t, int64_t, int64_t,
                                cudaStream_t);
template void gemm_async<double>(int64_t, int64_t, int64_t, int64_t, const double*, int64_t, int64_t, int64_t,
                                 const double*, int64_t, int64_t, int64_t, double*, int64_t, int64_t, int64_t,
                                 cudaStream_t);

// Partition: one block per BM x BN output tile (per batch item and, below 132 tiles, per slice of
// k; a grid-stride loop over them), one thread per TM x TN tile; short float32 sums one thread per
// output. Bits: each output is the CPU's four-level order over k (csrc/common/matmul.h, with the
// short float32 rule), then canon() (see the top of this file).
void gemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb, int64_t sAm, int64_t sAk,
          uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn, uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn,
          uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    gemm_async<T>(batch, M, N, K, ptr<const T>(A), sAb, sAm, sAk, ptr<const T>(B), sBb, sBk, sBn, ptr<T>(C), sCb, sCm,
                  sCn, scope.get());
  });
}

}  // namespace repmode::cuda

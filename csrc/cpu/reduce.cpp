// CPU sum in the canonical order. Three walks over memory, one order:
//   contiguous rows (sN == 1)  : 32 lanes in SIMD registers over each chunk;
//   contiguous columns (sM == 1): the 32 lanes of a block of outputs, vectorized across outputs;
//   anything else              : the plain strided reference.
#include "reduce.h"

#include <vector>

#include "../common/defs.h"
#include "../common/reduce_order.h"
#include "../common/row_reductions.h"
#include "isa.h"
#include "parallel.h"
#include "sum_chunk.h"

namespace repmode::cpu {
namespace {

template <typename T>
REPMODE_INLINE void contiguous_chunks_body(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  for (int64_t c = c0; c < c1; ++c) {
    const int64_t begin = c * kSumChunk;
    const int64_t len = n - begin < kSumChunk ? n - begin : kSumChunk;
    vals[c] = contiguous_chunk(p + begin, len);
  }
}

template <typename T>
REPMODE_TARGET_AVX2 void contiguous_chunks_avx2(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  contiguous_chunks_body(p, n, c0, c1, vals);
}

template <typename T>
void contiguous_chunks_scalar(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  contiguous_chunks_body(p, n, c0, c1, vals);
}

template <typename T>
void contiguous_chunks(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  if (active_isa() >= Isa::avx2)
    contiguous_chunks_avx2(p, n, c0, c1, vals);
  else
    contiguous_chunks_scalar(p, n, c0, c1, vals);
}

template <typename T>
T finish(T* vals, int64_t chunks, int64_t n, bool divide_by_n) {
  return sum_or_mean(n == 0 ? T(0.0) : finish_from_chunks(vals, chunks), n, divide_by_n);
}

template <typename T>
void rows_contiguous(const T* x, int64_t M, int64_t N, int64_t sM, T* out, int64_t s_out,
                     bool divide_by_n, int nthreads) {
  const int64_t chunks = chunk_count(N);
  if (M >= nthreads || chunks < 2) {
    parallel_for(M, nthreads, N, [&](int64_t m0, int64_t m1) {
      std::vector<T> vals(chunks > 0 ? chunks : 1);
      for (int64_t m = m0; m < m1; ++m) {
        contiguous_chunks(x + m * sM, N, 0, chunks, vals.data());
        out[m * s_out] = finish(vals.data(), chunks, N, divide_by_n);
      }
    });
    return;
  }
  // Few long rows: threads share the chunks of one row.
  std::vector<T> vals(chunks);
  for (int64_t m = 0; m < M; ++m) {
    const T* p = x + m * sM;
    parallel_for(chunks, nthreads, kSumChunk, [&](int64_t c0, int64_t c1) {
      contiguous_chunks(p, N, c0, c1, vals.data());
    });
    out[m * s_out] = finish(vals.data(), chunks, N, divide_by_n);
  }
}

// A block of W adjacent outputs whose terms sit sN apart: lanes[l][w] for output m0 + w.
constexpr int64_t kColumnBlock = 64;

template <typename T>
REPMODE_INLINE void columns_body(const T* x, int64_t m0, int64_t width, int64_t N, int64_t sN,
                                 T* chunk_vals /* [chunks][kColumnBlock] */) {
  const int64_t chunks = chunk_count(N);
  T lanes[kSumLanes][kColumnBlock];
  for (int64_t c = 0; c < chunks; ++c) {
    for (int l = 0; l < kSumLanes; ++l)
      for (int64_t w = 0; w < kColumnBlock; ++w) lanes[l][w] = T(-0.0);
    const int64_t begin = c * kSumChunk;
    const int64_t len = N - begin < kSumChunk ? N - begin : kSumChunk;
    for (int64_t i = 0; i < len; ++i) {
      const T* row = x + (begin + i) * sN + m0;
      T* lane = lanes[i % kSumLanes];
      for (int64_t w = 0; w < width; ++w) lane[w] = lane[w] + row[w];
    }
    for (int h = kSumLanes / 2; h >= 1; h /= 2)
      for (int l = 0; l < h; ++l)
        for (int64_t w = 0; w < width; ++w) lanes[l][w] = lanes[l][w] + lanes[l + h][w];
    for (int64_t w = 0; w < width; ++w) chunk_vals[c * kColumnBlock + w] = lanes[0][w];
  }
}

template <typename T>
REPMODE_TARGET_AVX2 void columns_avx2(const T* x, int64_t m0, int64_t width, int64_t N, int64_t sN, T* cv) {
  columns_body(x, m0, width, N, sN, cv);
}

template <typename T>
void columns_scalar(const T* x, int64_t m0, int64_t width, int64_t N, int64_t sN, T* cv) {
  columns_body(x, m0, width, N, sN, cv);
}

template <typename T>
void columns_contiguous(const T* x, int64_t M, int64_t N, int64_t sN, T* out, int64_t s_out,
                        bool divide_by_n, int nthreads) {
  const int64_t chunks = chunk_count(N);
  const int64_t blocks = (M + kColumnBlock - 1) / kColumnBlock;
  parallel_for(blocks, nthreads, kColumnBlock * N, [&](int64_t b0, int64_t b1) {
    std::vector<T> cv(chunks * kColumnBlock);
    std::vector<T> one(chunks);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = b * kColumnBlock;
      const int64_t width = M - m0 < kColumnBlock ? M - m0 : kColumnBlock;
      if (active_isa() >= Isa::avx2)
        columns_avx2(x, m0, width, N, sN, cv.data());
      else
        columns_scalar(x, m0, width, N, sN, cv.data());
      for (int64_t w = 0; w < width; ++w) {
        for (int64_t c = 0; c < chunks; ++c) one[c] = cv[c * kColumnBlock + w];
        out[(m0 + w) * s_out] = finish(one.data(), chunks, N, divide_by_n);
      }
    }
  });
}

}  // namespace

template <typename T>
T contiguous_sum(const T* p, int64_t n) {
  if (n == 0) return T(0.0);
  const int64_t chunks = chunk_count(n);
  T small[16];
  std::vector<T> large(chunks > 16 ? chunks : 0);
  T* vals = chunks > 16 ? large.data() : small;
  contiguous_chunks(p, n, 0, chunks, vals);
  return finish_from_chunks(vals, chunks);
}

template float contiguous_sum<float>(const float*, int64_t);
template double contiguous_sum<double>(const double*, int64_t);

template <typename T>
void sum_rows_reference(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out,
                        int64_t s_out, bool divide_by_n) {
  for (int64_t m = 0; m < M; ++m) {
    const T* p = x + m * sM;
    out[m * s_out] = sum_or_mean(canonical_sum<T>(N, [&](int64_t j) { return p[j * sN]; }), N, divide_by_n);
  }
}

template <typename T>
void sum_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out,
              bool divide_by_n, int nthreads) {
  if (M <= 0) return;
  if (N == 0 || (sN == 1 && N > 1)) {
    rows_contiguous(x, M, N, sM, out, s_out, divide_by_n, nthreads);
  } else if (sM == 1 && M > 1) {
    columns_contiguous(x, M, N, sN, out, s_out, divide_by_n, nthreads);
  } else {
    parallel_for(M, nthreads, N, [&](int64_t m0, int64_t m1) {
      sum_rows_reference(x + m0 * sM, m1 - m0, N, sM, sN, out + m0 * s_out, s_out, divide_by_n);
    });
  }
}

template void sum_rows<float>(const float*, int64_t, int64_t, int64_t, int64_t, float*, int64_t, bool, int);
template void sum_rows<double>(const double*, int64_t, int64_t, int64_t, int64_t, double*, int64_t, bool, int);
template void sum_rows_reference<float>(const float*, int64_t, int64_t, int64_t, int64_t, float*, int64_t, bool);
template void sum_rows_reference<double>(const double*, int64_t, int64_t, int64_t, int64_t, double*, int64_t, bool);

}  // namespace repmode::cpu

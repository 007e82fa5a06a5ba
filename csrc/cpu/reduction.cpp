// CPU reductions (the reduction family): the canonical sum (sum_rows), then the other row
// reductions and cumulative (rows in parallel, each row by the shared formulas of
// csrc/common/reduction.h: plain strided loads; the order is the formula's).
//
// The sum in the canonical order. Three walks over memory, one order:
//   contiguous rows (sN == 1)  : 32 lanes in SIMD registers over each chunk;
//   contiguous columns (sM == 1): the 32 lanes of a block of outputs, vectorized across outputs;
//   anything else              : the plain strided reference.
#include "reduction.h"
#include "dispatch.h"
#include "entry_points.h"

#include <vector>

#include "../common/defs.h"
#include "../common/reduction_order.h"
#include "../common/reduction.h"
#include "isa.h"
#include "parallel.h"
#include "sum_chunk.h"
#include "array_math.h"
#include "exp_sum.h"

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
REPMODE_TARGET_AVX512 void contiguous_chunks_avx512(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  contiguous_chunks_body(p, n, c0, c1, vals);
}

template <typename T>
void contiguous_chunks_scalar(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  contiguous_chunks_body(p, n, c0, c1, vals);
}

template <typename T>
void contiguous_chunks(const T* p, int64_t n, int64_t c0, int64_t c1, T* vals) {
  if (active_isa() == Isa::avx512)
    contiguous_chunks_avx512(p, n, c0, c1, vals);
  else if (active_isa() == Isa::avx2)
    contiguous_chunks_avx2(p, n, c0, c1, vals);
  else
    contiguous_chunks_scalar(p, n, c0, c1, vals);
}

template <typename T>
T finish(T* vals, int64_t chunks, int64_t n, bool divide_by_n) {
  return sum_or_mean(n == 0 ? T(0.0) : finish_from_chunks(vals, chunks), n, divide_by_n);
}

template <typename T>
void rows_contiguous(const T* x, int64_t M, int64_t N, int64_t sM, T* out, int64_t s_out, bool divide_by_n,
                     int nthreads) {
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
    parallel_for(chunks, nthreads, kSumChunk,
                 [&](int64_t c0, int64_t c1) { contiguous_chunks(p, N, c0, c1, vals.data()); });
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
REPMODE_TARGET_AVX512 void columns_avx512(const T* x, int64_t m0, int64_t width, int64_t N, int64_t sN, T* cv) {
  columns_body(x, m0, width, N, sN, cv);
}

template <typename T>
void columns_scalar(const T* x, int64_t m0, int64_t width, int64_t N, int64_t sN, T* cv) {
  columns_body(x, m0, width, N, sN, cv);
}

template <typename T>
void columns_contiguous(const T* x, int64_t M, int64_t N, int64_t sN, T* out, int64_t s_out, bool divide_by_n,
                        int nthreads) {
  const int64_t chunks = chunk_count(N);
  const int64_t blocks = (M + kColumnBlock - 1) / kColumnBlock;
  parallel_for(blocks, nthreads, kColumnBlock * N, [&](int64_t b0, int64_t b1) {
    std::vector<T> cv(chunks * kColumnBlock);
    std::vector<T> one(chunks);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = b * kColumnBlock;
      const int64_t width = M - m0 < kColumnBlock ? M - m0 : kColumnBlock;
      if (active_isa() == Isa::avx512)
        columns_avx512(x, m0, width, N, sN, cv.data());
      else if (active_isa() == Isa::avx2)
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
void sum_rows_reference(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out,
                        bool divide_by_n) {
  for (int64_t m = 0; m < M; ++m) {
    const T* p = x + m * sM;
    out[m * s_out] = sum_or_mean(canonical_sum<T>(N, [&](int64_t j) { return p[j * sN]; }), N, divide_by_n);
  }
}

template <typename T>
void sum_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int64_t s_out, bool divide_by_n,
              int nthreads) {
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

// ---- the other row reductions and cumulative ----

namespace {

inline int64_t row_base(int64_t r, int64_t n, int64_t inner) { return (r / inner) * n * inner + r % inner; }

}  // namespace

template <typename T>
void var_mean_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction, T* var, T* mean,
                   bool take_sqrt, int nthreads) {
  rows_parallel(M, nthreads, 2 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      T v, mu;
      row_var_mean<T>(N, [&](int64_t j) { return p[j * sN]; }, correction, take_sqrt, &v, &mu);
      var[m] = v;
      if (mean) mean[m] = mu;
    }
  });
}

template <typename T>
void prod_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads) {
  rows_parallel(M, nthreads, N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = canon(canonical_prod<T>(N, [&](int64_t j) { return p[j * sN]; }));
    }
  });
}

template <typename T>
void extreme_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, T* values, int64_t* indices,
                  int nthreads) {
  if (N == 0) return;  // no extreme of nothing: nothing written (Python refuses it first, as torch)
  rows_parallel(M, nthreads, N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      const int64_t j = row_arg_extreme<T>(N, [&](int64_t k) { return p[k * sN]; }, is_max);
      if (values) values[m] = canon(p[j * sN]);
      if (indices) indices[m] = j;
    }
  });
}

// logsumexp of one contiguous row: row_logsumexp's formula with the staged row maximum and
// the one-pass exp sum. The maximum may be -0 where row_logsumexp's is +0 or the reverse
// (contiguous_row_max); no bit depends on it: x_j - (+-0) and exp of it differ only in the
// sign of a zero difference, and log(S) + m with S >= 1 is +0 or positive either way.
template <typename T>
REPMODE_INLINE T logsumexp_contiguous_row(const T* x, int64_t n) {
  if (n == 0) return T(-1.0) / T(0.0);
  const T m = contiguous_row_max(x, n);
  return logsumexp_result(exp_shifted_sum(x, logsumexp_shift(m), static_cast<T*>(nullptr), n), m);
}

template <typename T>
void logsumexp_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, T* out, int nthreads) {
  rows_parallel(M, nthreads, 8 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = sN == 1 ? logsumexp_contiguous_row(p, N) : row_logsumexp<T>(N, [&](int64_t j) { return p[j * sN]; });
    }
  });
}

template <typename T>
void norm_rows(const T* x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, T* out, int nthreads) {
  rows_parallel(M, nthreads, 8 * N, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const T* p = x + m * sM;
      out[m] = row_norm<T>(N, [&](int64_t j) { return p[j * sN]; }, ord);
    }
  });
}

template <typename T>
void cumulative(const T* x, T* out, int64_t outer, int64_t n, int64_t inner, bool product, int nthreads) {
  rows_parallel(outer * inner, nthreads, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + row_base(r, n, inner);
      T* o = out + row_base(r, n, inner);
      cumulative_row<T>(
          n, [&](int64_t j) { return xr[j * inner]; }, [&](int64_t j, T v) { o[j * inner] = v; }, product);
    }
  });
}

#define REPMODE_INSTANTIATE(T)                                                                             \
  template void var_mean_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, double, T*, T*, bool, int); \
  template void prod_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*, int);                       \
  template void extreme_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, bool, T*, int64_t*, int);    \
  template void logsumexp_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*, int);                  \
  template void norm_rows<T>(const T*, int64_t, int64_t, int64_t, int64_t, double, T*, int);               \
  template void cumulative<T>(const T*, T*, int64_t, int64_t, int64_t, bool, int);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void sum_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int64_t s_out,
              bool mean, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    sum_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), s_out, mean, nthreads);
  });
}

void sum_rows_reference(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out,
                        int64_t s_out, bool mean) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    sum_rows_reference<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), s_out, mean);
  });
}

void var_mean_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double correction,
                   uintptr_t var, uintptr_t mean, bool take_sqrt, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    var_mean_rows<T>(ptr<const T>(x), M, N, sM, sN, correction, ptr<T>(var), ptr<T>(mean), take_sqrt, nthreads);
  });
}

void prod_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    prod_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), nthreads);
  });
}

void extreme_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max, uintptr_t values,
                  uintptr_t indices, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    extreme_rows<T>(ptr<const T>(x), M, N, sM, sN, is_max, ptr<T>(values), ptr<int64_t>(indices), nthreads);
  });
}

void logsumexp_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    logsumexp_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), nthreads);
  });
}

void norm_rows(int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord, uintptr_t out,
               int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    norm_rows<T>(ptr<const T>(x), M, N, sM, sN, ord, ptr<T>(out), nthreads);
  });
}

void cumulative(int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool product,
                int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    cumulative<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, product, nthreads);
  });
}

}  // namespace repmode::cpu

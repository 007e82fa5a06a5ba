// Layer norm on the CPU: rows in parallel; each row's canonical sums go through
// contiguous_sum (the active ISA's chunk code, same bits as canonical_sum), the per-element
// steps are the formulas of csrc/common/layer_norm.h evaluated element by element.
#include "layer_norm.h"
#include "dispatch.h"
#include "entry_points.h"

#include <vector>

#include "../common/layer_norm.h"
#include "parallel.h"
#include "reduction.h"

namespace repmode::cpu {

template <typename T>
void layer_norm_forward_reference(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y, T* mean,
                                  T* rstd) {
  const T e = T(eps);
  for (int64_t i = 0; i < M; ++i) {
    const T* xr = x + i * N;
    T* yr = y + i * N;
    T m, r;
    layer_norm_row<T>(N, [&](int64_t j) { return xr[j]; }, w, b, e, [&](int64_t j, T v) { yr[j] = v; }, &m, &r);
    mean[i] = canon(m);
    rstd[i] = canon(r);
  }
}

// Rows [i0, i1) of the forward (buf: N scratch values). Compiled twice (scalar, AVX2): the
// per-element steps are the same IEEE operations in both; the sums go through contiguous_sum.
template <typename T>
REPMODE_INLINE void forward_rows_body(const T* x, int64_t i0, int64_t i1, int64_t N, const T* w, const T* b, T e, T* y,
                                      T* mean, T* rstd, T* buf) {
  for (int64_t i = i0; i < i1; ++i) {
    const T* xr = x + i * N;
    T* yr = y + i * N;
    const T m = ln_mean(contiguous_sum(xr, N), N);
    for (int64_t j = 0; j < N; ++j) buf[j] = ln_sq_dev(xr[j], m);
    const T r = ln_rstd(contiguous_sum(buf, N), N, e);
    for (int64_t j = 0; j < N; ++j) yr[j] = ln_output(ln_xhat(xr[j], m, r), w, b, j);
    mean[i] = canon(m);
    rstd[i] = canon(r);
  }
}

template <typename T>
REPMODE_TARGET_AVX2 void forward_rows_avx2(const T* x, int64_t i0, int64_t i1, int64_t N, const T* w, const T* b, T e,
                                           T* y, T* mean, T* rstd, T* buf) {
  forward_rows_body(x, i0, i1, N, w, b, e, y, mean, rstd, buf);
}

template <typename T>
REPMODE_TARGET_AVX512 void forward_rows_avx512(const T* x, int64_t i0, int64_t i1, int64_t N, const T* w, const T* b,
                                               T e, T* y, T* mean, T* rstd, T* buf) {
  forward_rows_body(x, i0, i1, N, w, b, e, y, mean, rstd, buf);
}

template <typename T>
void forward_rows_scalar(const T* x, int64_t i0, int64_t i1, int64_t N, const T* w, const T* b, T e, T* y, T* mean,
                         T* rstd, T* buf) {
  forward_rows_body(x, i0, i1, N, w, b, e, y, mean, rstd, buf);
}

template <typename T>
void layer_norm_forward(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y, T* mean, T* rstd,
                        int nthreads) {
  const T e = T(eps);
  parallel_for(M, nthreads, 4 * N, [&](int64_t i0, int64_t i1) {
    std::vector<T> buf(N);
    if (active_isa() == Isa::avx512)
      forward_rows_avx512(x, i0, i1, N, w, b, e, y, mean, rstd, buf.data());
    else if (active_isa() == Isa::avx2)
      forward_rows_avx2(x, i0, i1, N, w, b, e, y, mean, rstd, buf.data());
    else
      forward_rows_scalar(x, i0, i1, N, w, b, e, y, mean, rstd, buf.data());
  });
}

template <typename T>
void layer_norm_backward_reference(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M,
                                   int64_t N, T* dx, T* dw, T* db) {
  if (dx)
    for (int64_t i = 0; i < M; ++i) {
      const T* gr = g + i * N;
      const T* xr = x + i * N;
      T* out = dx + i * N;
      layer_norm_backward_row<T>(
          N, [&](int64_t j) { return gr[j]; }, [&](int64_t j) { return xr[j]; }, mean[i], rstd[i], w,
          [&](int64_t j, T v) { out[j] = v; });
    }
  auto G = [&](int64_t i, int64_t j) { return g[i * N + j]; };
  auto X = [&](int64_t i, int64_t j) { return x[i * N + j]; };
  auto Mn = [&](int64_t i) { return mean[i]; };
  auto Rs = [&](int64_t i) { return rstd[i]; };
  for (int64_t j = 0; j < N; ++j) {
    if (dw) dw[j] = layer_norm_grad_weight<T>(M, j, G, X, Mn, Rs);
    if (db) db[j] = canon(canonical_sum<T>(M, [&](int64_t i) { return g[i * N + j]; }));
  }
}

// Canonical sums down the columns j in [j0, j1) of the terms term(i, j), i < M, written to
// out[j]. Rows are walked in order; lane (i mod 32) of column j is a slot of a 32 x width
// block, so each lane adds its terms in increasing i exactly as chunk_sum does, and the inner
// loop over j is plain elementwise work. Chunks of 4096 rows are closed by the lane tree and
// the chunk values combined by finish_from_chunks: the bits of canonical_sum per column.
template <typename T, typename Term>
REPMODE_INLINE void column_sums(int64_t M, int64_t j0, int64_t j1, const Term& term, T* out) {
  const int64_t width = j1 - j0;
  const int64_t chunks = chunk_count(M);
  std::vector<T> lanes(kSumLanes * width), vals(chunks * width);
  for (int64_t c = 0; c < chunks; ++c) {
    for (auto& v : lanes) v = T(-0.0);
    const int64_t end = M < (c + 1) * kSumChunk ? M : (c + 1) * kSumChunk;
    for (int64_t i = c * kSumChunk; i < end; ++i) {
      T* lane = lanes.data() + (i % kSumLanes) * width;
      for (int64_t j = 0; j < width; ++j) lane[j] = lane[j] + term(i, j0 + j);
    }
    for (int64_t j = 0; j < width; ++j) {
      T v[kSumLanes];
      for (int64_t l = 0; l < kSumLanes; ++l) v[l] = lanes[l * width + j];
      vals[j * chunks + c] = lane_tree(v);
    }
  }
  for (int64_t j = 0; j < width; ++j)  // no rows: the empty sum, +0.0
    out[j0 + j] = chunks ? canon(finish_from_chunks(vals.data() + j * chunks, chunks)) : T(0.0);
}

template <typename T>
REPMODE_INLINE void param_grads_body(const T* g, const T* x, const T* mean, const T* rstd, int64_t M, int64_t N,
                                     int64_t j0, int64_t j1, T* dw, T* db) {
  if (dw)
    column_sums(
        M, j0, j1, [&](int64_t i, int64_t j) { return ln_g_xhat(g[i * N + j], x[i * N + j], mean[i], rstd[i]); }, dw);
  if (db) column_sums(M, j0, j1, [&](int64_t i, int64_t j) { return g[i * N + j]; }, db);
}

template <typename T>
REPMODE_TARGET_AVX2 void param_grads_avx2(const T* g, const T* x, const T* mean, const T* rstd, int64_t M, int64_t N,
                                          int64_t j0, int64_t j1, T* dw, T* db) {
  param_grads_body(g, x, mean, rstd, M, N, j0, j1, dw, db);
}

template <typename T>
REPMODE_TARGET_AVX512 void param_grads_avx512(const T* g, const T* x, const T* mean, const T* rstd, int64_t M,
                                              int64_t N, int64_t j0, int64_t j1, T* dw, T* db) {
  param_grads_body(g, x, mean, rstd, M, N, j0, j1, dw, db);
}

template <typename T>
void param_grads_scalar(const T* g, const T* x, const T* mean, const T* rstd, int64_t M, int64_t N, int64_t j0,
                        int64_t j1, T* dw, T* db) {
  param_grads_body(g, x, mean, rstd, M, N, j0, j1, dw, db);
}

template <typename T>
REPMODE_INLINE void dx_rows_body(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                                 int64_t i0, int64_t i1, T* dx, T* gw, T* gx) {
  for (int64_t i = i0; i < i1; ++i) {
    const T* gr = g + i * N;
    const T* xr = x + i * N;
    const T m = mean[i];
    const T r = rstd[i];
    for (int64_t j = 0; j < N; ++j) gw[j] = ln_gw(gr[j], w, j);
    for (int64_t j = 0; j < N; ++j) gx[j] = ln_g_xhat(gw[j], xr[j], m, r);
    const T a = ln_mean(contiguous_sum(gw, N), N);
    const T b = ln_mean(contiguous_sum(gx, N), N);
    T* out = dx + i * N;
    for (int64_t j = 0; j < N; ++j) out[j] = ln_dx(gw[j], ln_xhat(xr[j], m, r), a, b, r);
  }
}

template <typename T>
REPMODE_TARGET_AVX2 void dx_rows_avx2(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                                      int64_t i0, int64_t i1, T* dx, T* gw, T* gx) {
  dx_rows_body(g, x, mean, rstd, w, N, i0, i1, dx, gw, gx);
}

template <typename T>
REPMODE_TARGET_AVX512 void dx_rows_avx512(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                                          int64_t i0, int64_t i1, T* dx, T* gw, T* gx) {
  dx_rows_body(g, x, mean, rstd, w, N, i0, i1, dx, gw, gx);
}

template <typename T>
void dx_rows_scalar(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t N, int64_t i0, int64_t i1,
                    T* dx, T* gw, T* gx) {
  dx_rows_body(g, x, mean, rstd, w, N, i0, i1, dx, gw, gx);
}

template <typename T>
void layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M, int64_t N, T* dx,
                         T* dw, T* db, int nthreads) {
  const bool avx512 = active_isa() == Isa::avx512, avx2 = active_isa() == Isa::avx2;
  if (dx)
    parallel_for(M, nthreads, 6 * N, [&](int64_t i0, int64_t i1) {
      std::vector<T> gw(N), gx(N);
      if (avx512)
        dx_rows_avx512(g, x, mean, rstd, w, N, i0, i1, dx, gw.data(), gx.data());
      else if (avx2)
        dx_rows_avx2(g, x, mean, rstd, w, N, i0, i1, dx, gw.data(), gx.data());
      else
        dx_rows_scalar(g, x, mean, rstd, w, N, i0, i1, dx, gw.data(), gx.data());
    });
  if (!dw && !db) return;
  // weight and bias gradients: columns in blocks, each block walking all rows in order.
  constexpr int64_t kBlock = 32;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  parallel_for(blocks, nthreads, 3 * kBlock * M, [&](int64_t b0, int64_t b1) {
    const int64_t j0 = b0 * kBlock;
    const int64_t j1 = b1 * kBlock < N ? b1 * kBlock : N;
    if (avx512)
      param_grads_avx512(g, x, mean, rstd, M, N, j0, j1, dw, db);
    else if (avx2)
      param_grads_avx2(g, x, mean, rstd, M, N, j0, j1, dw, db);
    else
      param_grads_scalar(g, x, mean, rstd, M, N, j0, j1, dw, db);
  });
}

#define REPMODE_INSTANTIATE(T)                                                                                         \
  template void layer_norm_forward<T>(const T*, int64_t, int64_t, const T*, const T*, double, T*, T*, T*, int);        \
  template void layer_norm_forward_reference<T>(const T*, int64_t, int64_t, const T*, const T*, double, T*, T*, T*);   \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, T*, T*, T*, \
                                       int);                                                                           \
  template void layer_norm_backward_reference<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t,   \
                                                 T*, T*, T*);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void layer_norm_forward(int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps, uintptr_t y,
                        uintptr_t mean, uintptr_t rstd, int nthreads, bool reference) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (reference)
      layer_norm_forward_reference<T>(ptr<const T>(x), M, N, ptr<const T>(w), ptr<const T>(b), eps, ptr<T>(y),
                                      ptr<T>(mean), ptr<T>(rstd));
    else
      layer_norm_forward<T>(ptr<const T>(x), M, N, ptr<const T>(w), ptr<const T>(b), eps, ptr<T>(y), ptr<T>(mean),
                            ptr<T>(rstd), nthreads);
  });
}

void layer_norm_backward(int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t M,
                         int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads, bool reference) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (reference)
      layer_norm_backward_reference<T>(ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                                       ptr<const T>(w), M, N, ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
    else
      layer_norm_backward<T>(ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd), ptr<const T>(w),
                             M, N, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
  });
}

}  // namespace repmode::cpu

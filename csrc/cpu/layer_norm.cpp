// Layer norm on the CPU: rows in parallel; each row's canonical sums go through
// contiguous_sum (the active ISA's chunk code, same bits as canonical_sum), the per-element
// steps are the formulas of csrc/common/layer_norm.h evaluated element by element.
#include "layer_norm.h"

#include <vector>

#include "../common/layer_norm.h"
#include "parallel.h"
#include "reduce.h"

namespace repmode::cpu {

template <typename T>
void layer_norm_forward_reference(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y,
                                  T* mean, T* rstd) {
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

template <typename T>
void layer_norm_forward(const T* x, int64_t M, int64_t N, const T* w, const T* b, double eps, T* y, T* mean,
                        T* rstd, int nthreads) {
  const T e = T(eps);
  parallel_for(M, nthreads, 4 * N, [&](int64_t i0, int64_t i1) {
    std::vector<T> buf(N);
    for (int64_t i = i0; i < i1; ++i) {
      const T* xr = x + i * N;
      T* yr = y + i * N;
      const T m = contiguous_sum(xr, N) / T(N);
      for (int64_t j = 0; j < N; ++j) buf[j] = ln_sq_dev(xr[j], m);
      const T r = ln_rstd(contiguous_sum(buf.data(), N), N, e);
      for (int64_t j = 0; j < N; ++j) yr[j] = ln_output(ln_xhat(xr[j], m, r), w, b, j);
      mean[i] = canon(m);
      rstd[i] = canon(r);
    }
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
      layer_norm_backward_row<T>(N, [&](int64_t j) { return gr[j]; }, [&](int64_t j) { return xr[j]; }, mean[i],
                                 rstd[i], w, [&](int64_t j, T v) { out[j] = v; });
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

template <typename T>
void layer_norm_backward(const T* g, const T* x, const T* mean, const T* rstd, const T* w, int64_t M, int64_t N,
                         T* dx, T* dw, T* db, int nthreads) {
  // dw needs the products g_ij * xhat_ij of every row; they are formed row by row (in the
  // same pass as dx) and then summed down the columns in the canonical order.
  std::vector<T> prod(dw ? M * N : 0);
  if (dx || dw)
    parallel_for(M, nthreads, 6 * N, [&](int64_t i0, int64_t i1) {
      std::vector<T> gw(N), gx(N);
      for (int64_t i = i0; i < i1; ++i) {
        const T* gr = g + i * N;
        const T* xr = x + i * N;
        const T m = mean[i];
        const T r = rstd[i];
        if (dw) {
          T* p = prod.data() + i * N;
          for (int64_t j = 0; j < N; ++j) p[j] = gr[j] * ln_xhat(xr[j], m, r);
        }
        if (!dx) continue;
        for (int64_t j = 0; j < N; ++j) gw[j] = ln_gw(gr[j], w, j);
        for (int64_t j = 0; j < N; ++j) gx[j] = gw[j] * ln_xhat(xr[j], m, r);
        const T a = contiguous_sum(gw.data(), N) / T(N);
        const T b = contiguous_sum(gx.data(), N) / T(N);
        T* out = dx + i * N;
        for (int64_t j = 0; j < N; ++j) out[j] = ln_dx(gw[j], ln_xhat(xr[j], m, r), a, b, r);
      }
    });
  // Column sums: N outputs, each over M terms with stride N (sum_rows canonicalizes NaN).
  if (dw) sum_rows(prod.data(), N, M, int64_t(1), N, dw, int64_t(1), false, nthreads);
  if (db) sum_rows(g, N, M, int64_t(1), N, db, int64_t(1), false, nthreads);
}

#define REPMODE_INSTANTIATE(T)                                                                                  \
  template void layer_norm_forward<T>(const T*, int64_t, int64_t, const T*, const T*, double, T*, T*, T*, int); \
  template void layer_norm_forward_reference<T>(const T*, int64_t, int64_t, const T*, const T*, double, T*, T*, \
                                                T*);                                                            \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, T*,  \
                                       T*, T*, int);                                                            \
  template void layer_norm_backward_reference<T>(const T*, const T*, const T*, const T*, const T*, int64_t,     \
                                                 int64_t, T*, T*, T*);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

}  // namespace repmode::cpu

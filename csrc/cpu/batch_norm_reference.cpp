// The plain references of the batch norm and group norm orders (contiguous (N, C, S) tensors
// only): each group's terms in their canonical logical order, straight from csrc/common/batch_norm.h.
// Tests compare the kernels of batch_norm.cpp against them bit for bit.
#include "batch_norm.h"
#include "dispatch.h"
#include "entry_points.h"

#include "../common/batch_norm.h"

namespace repmode::cpu {

template <typename T>
void batch_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t S, const T* w, const T* b,
                                  T* running_mean, T* running_var, bool training, double momentum, double eps,
                                  T* save_mean, T* save_invstd) {
  const int64_t M = N * S;
  for (int64_t c = 0; c < C; ++c) {
    auto load = [&](int64_t j) { return x[((j / S) * C + c) * S + j % S]; };
    T mean, invstd;
    if (training) {
      double m64, q64;
      bn_train_sums<T>(M, load, &m64, &q64);
      bn_train_stats<T>(m64, q64, M, eps, momentum, &mean, &invstd, save_mean ? &save_mean[c] : nullptr,
                        save_invstd ? &save_invstd[c] : nullptr, running_mean ? &running_mean[c] : nullptr,
                        running_var ? &running_var[c] : nullptr);
    } else {
      mean = running_mean[c];
      invstd = norm_invstd<T>(running_var[c], T(eps));
    }
    const T wc = w ? w[c] : T(1.0), bc = b ? b[c] : T(-0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t o = (n * C + c) * S + s;
        y[o] = norm_affine<T>(norm_xhat<T>(x[o], mean, invstd), wc, bc);
      }
  }
}

template <typename T>
void batch_norm_backward_reference(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, const T* w, const T* mean,
                                   const T* invstd, const T* running_mean, const T* running_var, bool train, double eps,
                                   T* dx, T* dw, T* db) {
  const int64_t M = N * S;
  for (int64_t c = 0; c < C; ++c) {
    const T m = train ? mean[c] : running_mean[c];
    const T is = train ? invstd[c] : norm_invstd<T>(running_var[c], T(eps));
    auto at = [&](int64_t j) { return ((j / S) * C + c) * S + j % S; };
    T sg, sgx;
    norm_grad_sums<T>(
        M, [&](int64_t j) { return dy[at(j)]; }, [&](int64_t j) { return norm_xhat<T>(x[at(j)], m, is); }, &sg, &sgx);
    if (dw) dw[c] = canon(sgx);
    if (db) db[c] = canon(sg);
    const T scale = norm_times_weight<T>(is, w ? w[c] : T(1.0));
    if (!dx) continue;
    const T k1 = norm_mean<T>(sg, M), k2 = norm_mean<T>(sgx, M);
    for (int64_t j = 0; j < M; ++j) {
      const int64_t o = at(j);
      dx[o] = train ? norm_dx_batch_stats<T>(dy[o], norm_xhat<T>(x[o], m, is), k1, k2, scale)
                    : norm_dx_fixed_stats<T>(dy[o], scale);
    }
  }
}

template <typename T>
void group_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G, const T* w,
                                  const T* b, double eps, T* mean, T* rstd) {
  const int64_t Cg = C / G, D = Cg * HxW;
  for (int64_t r = 0; r < N * G; ++r) {
    const T* xr = x + r * D;
    T m, q, is;
    norm_group_stats<T>(D, [&](int64_t j) { return xr[j]; }, T(eps), &m, &q, &is);
    mean[r] = canon(m);
    rstd[r] = canon(is);
    for (int64_t j = 0; j < D; ++j) {
      const int64_t c = (r % G) * Cg + j / HxW;
      y[r * D + j] = norm_affine<T>(norm_xhat<T>(xr[j], m, is), w ? w[c] : T(1.0), b ? b[c] : T(-0.0));
    }
  }
}

template <typename T>
void group_norm_backward_reference(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                                   int64_t C, int64_t HxW, int64_t G, T* dx, T* dw, T* db) {
  const int64_t Cg = C / G, D = Cg * HxW;
  auto wc = [&](int64_t c) { return w ? w[c] : T(1.0); };
  if (dx) {
    for (int64_t r = 0; r < N * G; ++r) {
      const int64_t o0 = r * D;
      auto chan = [&](int64_t j) { return (r % G) * Cg + j / HxW; };
      auto g = [&](int64_t j) { return norm_times_weight<T>(dy[o0 + j], wc(chan(j))); };
      auto xhat = [&](int64_t j) { return norm_xhat<T>(x[o0 + j], mean[r], rstd[r]); };
      T sg, sgx;
      norm_grad_sums<T>(D, g, xhat, &sg, &sgx);
      const T k1 = norm_mean<T>(sg, D), k2 = norm_mean<T>(sgx, D);
      for (int64_t j = 0; j < D; ++j) dx[o0 + j] = norm_dx_batch_stats<T>(g(j), xhat(j), k1, k2, rstd[r]);
    }
  }
  if (dw || db) {
    for (int64_t c = 0; c < C; ++c) {
      auto at = [&](int64_t j) { return ((j / HxW) * C + c) * HxW + j % HxW; };
      auto grp = [&](int64_t j) { return (j / HxW) * G + c / Cg; };
      T sg, sgx;
      norm_grad_sums<T>(
          N * HxW, [&](int64_t j) { return dy[at(j)]; },
          [&](int64_t j) { return norm_xhat<T>(x[at(j)], mean[grp(j)], rstd[grp(j)]); }, &sg, &sgx);
      if (dw) dw[c] = canon(sgx);
      if (db) db[c] = canon(sg);
    }
  }
}

#define REPMODE_INSTANTIATE(T)                                                                                        \
  template void batch_norm_forward_reference<T>(const T*, T*, int64_t, int64_t, int64_t, const T*, const T*, T*, T*,  \
                                                bool, double, double, T*, T*);                                        \
  template void batch_norm_backward_reference<T>(const T*, const T*, int64_t, int64_t, int64_t, const T*, const T*,   \
                                                 const T*, const T*, const T*, bool, double, T*, T*, T*);             \
  template void group_norm_forward_reference<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, const T*, const T*, \
                                                double, T*, T*);                                                      \
  template void group_norm_backward_reference<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t,  \
                                                 int64_t, int64_t, T*, T*, T*);

REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void batch_norm_forward_reference(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, uintptr_t w,
                                  uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                                  double eps, uintptr_t save_mean, uintptr_t save_invstd) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_forward_reference<T>(ptr<const T>(x), ptr<T>(y), N, C, S, ptr<const T>(w), ptr<const T>(b),
                                    ptr<T>(rmean), ptr<T>(rvar), training, momentum, eps, ptr<T>(save_mean),
                                    ptr<T>(save_invstd));
  });
}

void batch_norm_backward_reference(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, uintptr_t w,
                                   uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                                   double eps, uintptr_t dx, uintptr_t dw, uintptr_t db) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_backward_reference<T>(ptr<const T>(dy), ptr<const T>(x), N, C, S, ptr<const T>(w), ptr<const T>(mean),
                                     ptr<const T>(invstd), ptr<const T>(rmean), ptr<const T>(rvar), train, eps,
                                     ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
  });
}

void group_norm_forward_reference(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G,
                                  uintptr_t w, uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    group_norm_forward_reference<T>(ptr<const T>(x), ptr<T>(y), N, C, HxW, G, ptr<const T>(w), ptr<const T>(b), eps,
                                    ptr<T>(mean), ptr<T>(rstd));
  });
}

void group_norm_backward_reference(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                                   int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw,
                                   uintptr_t db) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    group_norm_backward_reference<T>(ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                                     ptr<const T>(w), N, C, HxW, G, ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
  });
}

}  // namespace repmode::cpu

// CPU batch norm and group norm kernels. The bits come from csrc/common/batch_norm.h and the canonical
// Sum order; this file only walks memory, through the segmented-sum engine of segmented_sum.h
// (the plain references: batch_norm_reference.cpp).
#include "batch_norm.h"
#include "dispatch.h"
#include "entry_points.h"

#include <vector>

#include "../common/batch_norm.h"
#include "../common/reduction_order.h"
#include "parallel.h"
#include "segmented_sum.h"

namespace repmode::cpu {

using namespace segsum;

template <typename T>
void batch_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t S, bool channels_last, const T* w, const T* b,
                        T* running_mean, T* running_var, bool training, double momentum, double eps, T* save_mean,
                        T* save_invstd, int nthreads) {
  const int64_t M = N * S;
  const int64_t chunks = M > 0 ? chunk_count(M) : 1;
  const T epsT = T(eps);
  std::vector<T> ws, bs, mean(C), invstd(C);
  std::vector<double> mean64(C), q64(C);  // the training sums, in float64 (bn_train_sums)
  const T* wp = or_fill(w, C, T(1.0), ws);
  const T* bp = or_fill(b, C, T(-0.0), bs);
  T* mp = mean.data();
  T* ip = invstd.data();
  double* m64 = mean64.data();
  double* qp = q64.data();
  auto none = [](int64_t, int64_t) { return 0.0; };
  auto load_x = [&](int64_t o, int64_t) { return double(x[o]); };
  auto sq_term = [&](int64_t o, int64_t c) { return norm_sq_term<double>(double(x[o]), m64[c]); };
  // channel c's statistics from its float64 sums (training) or its running statistics
  auto channel_stats = [&](int64_t c) {
    if (!training) {
      mp[c] = running_mean[c];
      ip[c] = norm_invstd<T>(running_var[c], epsT);
      return;
    }
    bn_train_stats<T>(m64[c], qp[c], M, eps, momentum, &mp[c], &ip[c], save_mean ? &save_mean[c] : nullptr,
                      save_invstd ? &save_invstd[c] : nullptr, running_mean ? &running_mean[c] : nullptr,
                      running_var ? &running_var[c] : nullptr);
  };
  auto out = [&](int64_t o, int64_t c) { y[o] = norm_affine<T>(norm_xhat<T>(x[o], mp[c], ip[c]), wp[c], bp[c]); };
  if (!channels_last && whole_groups(C, M, nthreads)) {
    auto base = [&](int64_t c, int64_t n) { return (n * C + c) * S; };
    auto seg_x = [&](int64_t o, int64_t, int64_t) { return double(x[o]); };
    auto seg_sq = [&](int64_t o, int64_t c, int64_t) { return norm_sq_term<double>(double(x[o]), m64[c]); };
    auto seg_none = [](int64_t, int64_t, int64_t) { return 0.0; };
    rows_parallel(C, nthreads, 4 * M, [&](int64_t c0, int64_t c1) {
      Scratch<double> sc(chunks, 1);
      for (int64_t c = c0; c < c1; ++c) {
        if (training) {
          segmented_group<double, 1>(c, M, S, base, seg_x, seg_none, sc, &m64[c], static_cast<double*>(nullptr));
          m64[c] = norm_mean<double>(m64[c], M);
          segmented_group<double, 1>(c, M, S, base, seg_sq, seg_none, sc, &qp[c], static_cast<double*>(nullptr));
        }
        channel_stats(c);
        const T m = mp[c], is = ip[c], wc = wp[c], bc = bp[c];
        for (int64_t n = 0; n < N; ++n) {
          const T* xr = x + (n * C + c) * S;
          T* yr = y + (n * C + c) * S;
          for (int64_t s = 0; s < S; ++s) yr[s] = norm_affine<T>(norm_xhat<T>(xr[s], m, is), wc, bc);
        }
      }
    });
    return;
  }
  const int64_t width = column_width(C, nthreads);
  const int64_t blocks = (C + width - 1) / width;
  if (channels_last && whole_groups(blocks, M, nthreads)) {
    rows_parallel(blocks, nthreads, 4 * M * width, [&](int64_t b0, int64_t b1) {
      Scratch<double> sc(chunks, width);
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t c0 = blk * width, wd = C - c0 < width ? C - c0 : width;
        if (training) {
          column_group<double, 1>(c0, wd, M, C, load_x, none, sc, m64, static_cast<double*>(nullptr));
          for (int64_t c = c0; c < c0 + wd; ++c) m64[c] = norm_mean<double>(m64[c], M);
          column_group<double, 1>(c0, wd, M, C, sq_term, none, sc, qp, static_cast<double*>(nullptr));
        }
        for (int64_t c = c0; c < c0 + wd; ++c) channel_stats(c);
        // the block's constants in local arrays, so the row loop vectorizes (no aliasing)
        T lm[kColumnBlock], li[kColumnBlock], lw[kColumnBlock], lb[kColumnBlock];
        for (int64_t i = 0; i < wd; ++i) {
          lm[i] = mp[c0 + i];
          li[i] = ip[c0 + i];
          lw[i] = wp[c0 + i];
          lb[i] = bp[c0 + i];
        }
        for (int64_t j = 0; j < M; ++j) {
          const T* __restrict xr = x + j * C + c0;
          T* __restrict yr = y + j * C + c0;
          for (int64_t i = 0; i < wd; ++i) yr[i] = norm_affine<T>(norm_xhat<T>(xr[i], lm[i], li[i]), lw[i], lb[i]);
        }
      }
    });
    return;
  }
  // few long channels: (channel, chunk) pairs over threads, one pass at a time
  if (training) {
    channel_sums<double, 1>(N, C, S, channels_last, load_x, none, m64, static_cast<double*>(nullptr), nthreads);
    for (int64_t c = 0; c < C; ++c) m64[c] = norm_mean<double>(m64[c], M);
    channel_sums<double, 1>(N, C, S, channels_last, sq_term, none, qp, static_cast<double*>(nullptr), nthreads);
  }
  for (int64_t c = 0; c < C; ++c) channel_stats(c);
  for_each_element(N, C, S, channels_last, nthreads, out);
}

template <typename T>
void batch_norm_backward(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, bool channels_last, const T* w,
                         const T* mean, const T* invstd, const T* running_mean, const T* running_var, bool train,
                         double eps, T* dx, T* dw, T* db, int nthreads) {
  const int64_t M = N * S;
  const int64_t chunks = M > 0 ? chunk_count(M) : 1;
  std::vector<T> ws, mv(C), iv(C), sdy(C), sdx(C), k1(C), k2(C), scale(C);
  const T* wp = or_fill(w, C, T(1.0), ws);
  for (int64_t c = 0; c < C; ++c) {
    mv[c] = train ? mean[c] : running_mean[c];
    iv[c] = train ? invstd[c] : norm_invstd<T>(running_var[c], T(eps));
  }
  const T* mp = mv.data();
  const T* ip = iv.data();
  T* a = k1.data();
  T* bb = k2.data();
  T* sp = scale.data();
  T* gy = sdy.data();
  T* gx = sdx.data();
  const bool sums = dw || db || (dx && train);
  auto load_dy = [&](int64_t o, int64_t) { return dy[o]; };
  auto dy_xhat = [&](int64_t o, int64_t c) { return norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mp[c], ip[c])); };
  auto channel_consts = [&](int64_t c) {
    if (dw) dw[c] = canon(gx[c]);
    if (db) db[c] = canon(gy[c]);
    sp[c] = norm_times_weight<T>(ip[c], wp[c]);
    a[c] = norm_mean<T>(gy[c], M);
    bb[c] = norm_mean<T>(gx[c], M);
  };
  auto grad = [&](int64_t o, int64_t c) {
    dx[o] = train ? norm_dx_batch_stats<T>(dy[o], norm_xhat<T>(x[o], mp[c], ip[c]), a[c], bb[c], sp[c])
                  : norm_dx_fixed_stats<T>(dy[o], sp[c]);
  };
  if (!channels_last && whole_groups(C, M, nthreads)) {
    auto base = [&](int64_t c, int64_t n) { return (n * C + c) * S; };
    auto seg_dy = [&](int64_t o, int64_t, int64_t) { return dy[o]; };
    auto seg_dyx = [&](int64_t o, int64_t c, int64_t) {
      return norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mp[c], ip[c]));
    };
    rows_parallel(C, nthreads, 4 * M, [&](int64_t c0, int64_t c1) {
      Scratch<T> sc(chunks, 1);
      for (int64_t c = c0; c < c1; ++c) {
        if (sums) segmented_group<T, 2>(c, M, S, base, seg_dy, seg_dyx, sc, &gy[c], &gx[c]);
        channel_consts(c);
        if (!dx) continue;
        const T m = mp[c], is = ip[c], s = sp[c], ka = a[c], kb = bb[c];
        for (int64_t n = 0; n < N; ++n) {
          const int64_t o = (n * C + c) * S;
          const T* xr = x + o;
          const T* gr = dy + o;
          T* dr = dx + o;
          if (train)
            for (int64_t i = 0; i < S; ++i)
              dr[i] = norm_dx_batch_stats<T>(gr[i], norm_xhat<T>(xr[i], m, is), ka, kb, s);
          else
            for (int64_t i = 0; i < S; ++i) dr[i] = norm_dx_fixed_stats<T>(gr[i], s);
        }
      }
    });
    return;
  }
  const int64_t width = column_width(C, nthreads);
  const int64_t blocks = (C + width - 1) / width;
  if (channels_last && whole_groups(blocks, M, nthreads)) {
    rows_parallel(blocks, nthreads, 4 * M * width, [&](int64_t b0, int64_t b1) {
      Scratch<T> sc(chunks, width);
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t c0 = blk * width, wd = C - c0 < width ? C - c0 : width;
        if (sums) column_group<T, 2>(c0, wd, M, C, load_dy, dy_xhat, sc, gy, gx);
        for (int64_t c = c0; c < c0 + wd; ++c) channel_consts(c);
        if (!dx) continue;
        T lm[kColumnBlock], li[kColumnBlock], ls[kColumnBlock], la[kColumnBlock], lb[kColumnBlock];
        for (int64_t i = 0; i < wd; ++i) {
          lm[i] = mp[c0 + i];
          li[i] = ip[c0 + i];
          ls[i] = sp[c0 + i];
          la[i] = a[c0 + i];
          lb[i] = bb[c0 + i];
        }
        for (int64_t j = 0; j < M; ++j) {
          const T* __restrict xr = x + j * C + c0;
          const T* __restrict gr = dy + j * C + c0;
          T* __restrict dr = dx + j * C + c0;
          if (train)
            for (int64_t i = 0; i < wd; ++i)
              dr[i] = norm_dx_batch_stats<T>(gr[i], norm_xhat<T>(xr[i], lm[i], li[i]), la[i], lb[i], ls[i]);
          else
            for (int64_t i = 0; i < wd; ++i) dr[i] = norm_dx_fixed_stats<T>(gr[i], ls[i]);
        }
      }
    });
    return;
  }
  if (sums) channel_sums<T, 2>(N, C, S, channels_last, load_dy, dy_xhat, gy, gx, nthreads);
  for (int64_t c = 0; c < C; ++c) channel_consts(c);
  if (dx) for_each_element(N, C, S, channels_last, nthreads, grad);
}

template <typename T>
void group_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G, const T* w, const T* b,
                        double eps, T* mean, T* rstd, int nthreads) {
  const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
  const int64_t chunks = D > 0 ? chunk_count(D) : 1;
  const T epsT = T(eps);
  std::vector<T> ws, bs, q(R);
  const T* wp = or_fill(w, C, T(1.0), ws);
  const T* bp = or_fill(b, C, T(-0.0), bs);
  T* qp = q.data();
  const int64_t Dp = D > 0 ? D : 1;
  auto none = [](int64_t, int64_t, int64_t) { return T(0.0); };
  auto base = [&](int64_t r, int64_t) { return r * D; };
  auto load_x = [&](int64_t o, int64_t, int64_t) { return x[o]; };
  auto sq_term = [&](int64_t o, int64_t r, int64_t) { return norm_sq_term<T>(x[o], mean[r]); };
  auto write_group = [&](int64_t r) {
    const T m = mean[r], is = rstd[r];
    for (int64_t i = 0; i < Cg; ++i) {
      const int64_t c = (r % G) * Cg + i;
      const T wc = wp[c], bc = bp[c];
      const T* xr = x + r * D + i * HxW;
      T* yr = y + r * D + i * HxW;
      for (int64_t s = 0; s < HxW; ++s) yr[s] = norm_affine<T>(norm_xhat<T>(xr[s], m, is), wc, bc);
    }
  };
  auto stats = [&](int64_t r) {
    rstd[r] = canon(norm_invstd<T>(norm_var<T>(qp[r], D), epsT));
    mean[r] = canon(mean[r]);
  };
  if (whole_groups(R, D, nthreads)) {
    rows_parallel(R, nthreads, 4 * D, [&](int64_t r0, int64_t r1) {
      Scratch<T> sc(chunks, 1);
      for (int64_t r = r0; r < r1; ++r) {
        segmented_group<T, 1>(r, D, Dp, base, load_x, none, sc, &mean[r], static_cast<T*>(nullptr));
        mean[r] = norm_mean<T>(mean[r], D);
        segmented_group<T, 1>(r, D, Dp, base, sq_term, none, sc, &qp[r], static_cast<T*>(nullptr));
        stats(r);
        write_group(r);
      }
    });
    return;
  }
  segmented_sums<T, 1>(R, D, Dp, base, load_x, none, mean, static_cast<T*>(nullptr), nthreads);
  for (int64_t r = 0; r < R; ++r) mean[r] = norm_mean<T>(mean[r], D);
  segmented_sums<T, 1>(R, D, Dp, base, sq_term, none, qp, static_cast<T*>(nullptr), nthreads);
  for (int64_t r = 0; r < R; ++r) stats(r);
  rows_parallel(R, nthreads, 4 * D, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) write_group(r);
  });
}

template <typename T>
void group_norm_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, int64_t N, int64_t C,
                         int64_t HxW, int64_t G, T* dx, T* dw, T* db, int nthreads) {
  const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
  std::vector<T> ws;
  const T* wp = or_fill(w, C, T(1.0), ws);
  const int64_t S = HxW > 0 ? HxW : 1;
  if (dx) {
    std::vector<T> sg(R), sgx(R);
    T* a = sg.data();
    T* bb = sgx.data();
    auto base = [&](int64_t r, int64_t i) { return r * D + i * HxW; };
    auto g_term = [&](int64_t o, int64_t r, int64_t i) { return norm_times_weight<T>(dy[o], wp[(r % G) * Cg + i]); };
    auto gx_term = [&](int64_t o, int64_t r, int64_t i) {
      return norm_g_xhat<T>(norm_times_weight<T>(dy[o], wp[(r % G) * Cg + i]), norm_xhat<T>(x[o], mean[r], rstd[r]));
    };
    auto write_group = [&](int64_t r) {
      const T m = mean[r], is = rstd[r], ka = a[r], kb = bb[r];
      for (int64_t i = 0; i < Cg; ++i) {
        const T wc = wp[(r % G) * Cg + i];
        const int64_t o = r * D + i * HxW;
        const T* xr = x + o;
        const T* gr = dy + o;
        T* dr = dx + o;
        for (int64_t s = 0; s < HxW; ++s)
          dr[s] = norm_dx_batch_stats<T>(norm_times_weight<T>(gr[s], wc), norm_xhat<T>(xr[s], m, is), ka, kb, is);
      }
    };
    if (whole_groups(R, D, nthreads)) {
      const int64_t chunks = D > 0 ? chunk_count(D) : 1;
      rows_parallel(R, nthreads, 6 * D, [&](int64_t r0, int64_t r1) {
        Scratch<T> sc(chunks, 1);
        for (int64_t r = r0; r < r1; ++r) {
          segmented_group<T, 2>(r, D, S, base, g_term, gx_term, sc, &a[r], &bb[r]);
          a[r] = norm_mean<T>(a[r], D);
          bb[r] = norm_mean<T>(bb[r], D);
          write_group(r);
        }
      });
    } else {
      segmented_sums<T, 2>(R, D, S, base, g_term, gx_term, a, bb, nthreads);
      for (int64_t r = 0; r < R; ++r) {
        a[r] = norm_mean<T>(a[r], D);
        bb[r] = norm_mean<T>(bb[r], D);
      }
      rows_parallel(R, nthreads, 6 * D, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) write_group(r);
      });
    }
  }
  if (dw || db) {
    std::vector<T> sdy(C), sdx(C);
    segmented_sums<T, 2>(
        C, N * HxW, S, [&](int64_t c, int64_t n) { return (n * C + c) * HxW; },
        [&](int64_t o, int64_t, int64_t) { return dy[o]; },
        [&](int64_t o, int64_t c, int64_t n) {
          const int64_t r = n * G + c / Cg;
          return norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mean[r], rstd[r]));
        },
        sdy.data(), sdx.data(), nthreads);
    for (int64_t c = 0; c < C; ++c) {
      if (dw) dw[c] = canon(sdx[c]);
      if (db) db[c] = canon(sdy[c]);
    }
  }
}

#define REPMODE_INSTANTIATE(T)                                                                                         \
  template void batch_norm_forward<T>(const T*, T*, int64_t, int64_t, int64_t, bool, const T*, const T*, T*, T*, bool, \
                                      double, double, T*, T*, int);                                                    \
  template void batch_norm_backward<T>(const T*, const T*, int64_t, int64_t, int64_t, bool, const T*, const T*,        \
                                       const T*, const T*, const T*, bool, double, T*, T*, T*, int);                   \
  template void group_norm_forward<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, const T*, const T*, double,    \
                                      T*, T*, int);                                                                    \
  template void group_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t, int64_t,    \
                                       int64_t, T*, T*, T*, int);

REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

void batch_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, bool channels_last,
                        uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                        double eps, uintptr_t save_mean, uintptr_t save_invstd, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_forward<T>(ptr<const T>(x), ptr<T>(y), N, C, S, channels_last, ptr<const T>(w), ptr<const T>(b),
                          ptr<T>(rmean), ptr<T>(rvar), training, momentum, eps, ptr<T>(save_mean), ptr<T>(save_invstd),
                          nthreads);
  });
}

void batch_norm_backward(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                         double eps, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_backward<T>(ptr<const T>(dy), ptr<const T>(x), N, C, S, channels_last, ptr<const T>(w),
                           ptr<const T>(mean), ptr<const T>(invstd), ptr<const T>(rmean), ptr<const T>(rvar), train,
                           eps, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
  });
}

void group_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t w,
                        uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    group_norm_forward<T>(ptr<const T>(x), ptr<T>(y), N, C, HxW, G, ptr<const T>(w), ptr<const T>(b), eps, ptr<T>(mean),
                          ptr<T>(rstd), nthreads);
  });
}

void group_norm_backward(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t N,
                         int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    group_norm_backward<T>(ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd), ptr<const T>(w),
                           N, C, HxW, G, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
  });
}

}  // namespace repmode::cpu

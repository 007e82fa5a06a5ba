// Batch and group normalization on the GPU (csrc/cuda/launchers.h). The twins of
// csrc/cpu/batch_norm.cpp: every per-element step is a function of csrc/common/batch_norm.h,
// every sum the canonical Sum order of csrc/common/reduction_order.h through the group-sum
// engines of norm_sums.cuh.
#include "../common/batch_norm.h"
#include "launchers.h"
#include "norm_sums.cuh"
#include "runtime.cuh"

namespace repmode::cuda {
namespace {

// ---------------------------------------------------------------- batch norm

// The training sums run in float64 (bn_train_sums in csrc/common/batch_norm.h): the terms are
// double(x) and double(x) - m64 squared, the mean kept in float64 between the passes.
template <typename T, typename At>
struct WideLoadTerm : At {
  const T* x;
  __device__ void operator()(int64_t o, int64_t, int64_t, double* t) const { t[0] = double(x[o]); }
};

template <typename T, typename At>
struct WideSqTerm : At {
  const T* x;
  const double* mean;
  __device__ void operator()(int64_t o, int64_t r, int64_t, double* t) const {
    t[0] = norm_sq_term<double>(double(x[o]), mean[r]);
  }
};

struct BnMean64Epi {
  double* mean;
  int64_t M;
  __device__ void operator()(int64_t c, double s, double) const { mean[c] = norm_mean<double>(s, M); }
};

// Group norm's mean (its statistics stay in T: norm_group_stats).
template <typename T>
struct BnMeanEpi {
  T* mean;
  int64_t M;
  __device__ void operator()(int64_t c, T s, T) const { mean[c] = norm_mean<T>(s, M); }
};

// The training statistics of channel c, as the CPU's channel_stats (bn_train_stats).
template <typename T>
struct BnTrainEpi {
  const double* mean64;
  T* mean;
  T* invstd;
  T* save_mean;
  T* save_invstd;
  T* running_mean;
  T* running_var;
  int64_t M;
  double eps;
  double momentum;
  __device__ void operator()(int64_t c, double q, double) const {
    bn_train_stats<T>(mean64[c], q, M, eps, momentum, &mean[c], &invstd[c], save_mean ? &save_mean[c] : nullptr,
                      save_invstd ? &save_invstd[c] : nullptr, running_mean ? &running_mean[c] : nullptr,
                      running_var ? &running_var[c] : nullptr);
  }
};

// Evaluation: the running statistics normalize.
template <typename T>
struct BnEvalStats {
  const T* running_mean;
  const T* running_var;
  T* mean;
  T* invstd;
  T eps;
  __device__ void operator()(int64_t c) const {
    mean[c] = running_mean[c];
    invstd[c] = norm_invstd<T>(running_var[c], eps);
  }
};

// Channel of element o: (n, s, c) for channels-last, else (n, c, s).
struct BnChannel {
  int64_t C, S;
  bool channels_last;
  __device__ int64_t operator()(int64_t o) const { return channels_last ? o % C : (o / S) % C; }
};

template <typename T>
struct BnOutput {
  const T* x;
  const T* w;
  const T* b;
  const T* mean;
  const T* invstd;
  T* y;
  BnChannel channel;
  __device__ void operator()(int64_t o) const {
    const int64_t c = channel(o);
    y[o] = norm_affine<T>(norm_xhat<T>(x[o], mean[c], invstd[c]), w ? w[c] : T(1.0), b ? b[c] : T(-0.0));
  }
};

// The statistics the backward uses and the scale invstd * w, per channel.
template <typename T>
struct BnBackwardStats {
  const T* mean;
  const T* invstd;
  const T* running_mean;
  const T* running_var;
  const T* w;
  bool train;
  T eps;
  T* m;
  T* is;
  T* scale;
  __device__ void operator()(int64_t c) const {
    m[c] = train ? mean[c] : running_mean[c];
    is[c] = train ? invstd[c] : norm_invstd<T>(running_var[c], eps);
    scale[c] = norm_times_weight<T>(is[c], w ? w[c] : T(1.0));
  }
};

// The two gradient sums' terms: dy and dy * xhat (group = channel).
template <typename T, typename At>
struct BnGradTerms : At {
  const T* dy;
  const T* x;
  const T* mean;
  const T* invstd;
  __device__ void operator()(int64_t o, int64_t c, int64_t, T* t) const {
    t[0] = dy[o];
    t[1] = norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mean[c], invstd[c]));
  }
};

// The two gradient sums: dw, db (either may be null) and their means k1, k2 (batch norm per
// channel, group norm per (n, group) with dw = db = null).
template <typename T>
struct GradSumsEpi {
  T* dw;
  T* db;
  T* k1;
  T* k2;
  int64_t M;
  __device__ void operator()(int64_t c, T sg, T sgx) const {
    if (dw) dw[c] = canon(sgx);
    if (db) db[c] = canon(sg);
    k1[c] = norm_mean<T>(sg, M);
    k2[c] = norm_mean<T>(sgx, M);
  }
};

template <typename T>
struct BnDx {
  const T* dy;
  const T* x;
  const T* mean;
  const T* invstd;
  const T* scale;
  const T* k1;
  const T* k2;
  T* dx;
  bool train;
  BnChannel channel;
  __device__ void operator()(int64_t o) const {
    const int64_t c = channel(o);
    dx[o] = train ? norm_dx_batch_stats<T>(dy[o], norm_xhat<T>(x[o], mean[c], invstd[c]), k1[c], k2[c], scale[c])
                  : norm_dx_fixed_stats<T>(dy[o], scale[c]);
  }
};

// ---------------------------------------------------------------- group norm

template <typename T>
struct GnStatsEpi {
  T* mean;
  T* rstd;
  int64_t D;
  T eps;
  __device__ void operator()(int64_t r, T q, T) const {
    rstd[r] = canon(norm_invstd<T>(norm_var<T>(q, D), eps));
    mean[r] = canon(mean[r]);
  }
};

template <typename T>
struct GnOutput {
  const T* x;
  const T* w;
  const T* b;
  const T* mean;
  const T* rstd;
  T* y;
  int64_t C, HxW, D;
  __device__ void operator()(int64_t o) const {
    const int64_t r = o / D, c = (o / HxW) % C;
    y[o] = norm_affine<T>(norm_xhat<T>(x[o], mean[r], rstd[r]), w ? w[c] : T(1.0), b ? b[c] : T(-0.0));
  }
};

// Group r = (n, g), segment i = its i-th channel: g = dy * w_c and g * xhat.
template <typename T>
struct GnDxTerms : RowsAt {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  int64_t G, Cg;
  __device__ void operator()(int64_t o, int64_t r, int64_t i, T* t) const {
    const T g = norm_times_weight<T>(dy[o], w ? w[(r % G) * Cg + i] : T(1.0));
    t[0] = g;
    t[1] = norm_g_xhat<T>(g, norm_xhat<T>(x[o], mean[r], rstd[r]));
  }
};

template <typename T>
struct GnDx {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  const T* w;
  const T* k1;
  const T* k2;
  T* dx;
  int64_t C, HxW, D;
  __device__ void operator()(int64_t o) const {
    const int64_t r = o / D, c = (o / HxW) % C;
    const T g = norm_times_weight<T>(dy[o], w ? w[c] : T(1.0));
    dx[o] = norm_dx_batch_stats<T>(g, norm_xhat<T>(x[o], mean[r], rstd[r]), k1[r], k2[r], rstd[r]);
  }
};

// Channel c, segment n: dy and dy * xhat with the statistics of group (n, c / Cg).
template <typename T>
struct GnParamTerms : ChannelAt {
  const T* dy;
  const T* x;
  const T* mean;
  const T* rstd;
  int64_t G, Cg;
  __device__ void operator()(int64_t o, int64_t c, int64_t n, T* t) const {
    const int64_t r = n * G + c / Cg;
    t[0] = norm_g_xhat<T>(dy[o], norm_xhat<T>(x[o], mean[r], rstd[r]));  // -> dw (CanonPairEpi's first)
    t[1] = dy[o];                                                        // -> db
  }
};

}  // namespace

// Per channel (few outputs, long sums over N*S): every (channel, chunk) of 4096 terms is a
// work item of the segmented (NCHW) or column (channels-last) engine, the chunk values finished
// per channel by a warp whose lane 0 also does the CPU's channel_stats (save_*, running
// statistics in float64 by norm_running_update); then one thread per element for y.
void batch_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S, bool channels_last,
                        uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training, double momentum,
                        double eps, uintptr_t save_mean, uintptr_t save_invstd, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (C <= 0) return;
    const cudaStream_t st = scope.get();
    const int64_t M = N * S;
    const T e = T(eps);
    StreamScratch<T> stats(2 * C, st);
    T* mp = stats.get();
    T* ip = mp + C;
    if (training) {
      const ChannelAt at{C, S};
      StreamScratch<double> mean64(C, st);
      double* m64 = mean64.get();
      channel_sums<double, 1>(st, C, M, S, channels_last, WideLoadTerm<T, ChannelAt>{at, ptr<const T>(x)},
                              BnMean64Epi{m64, M});
      channel_sums<double, 1>(st, C, M, S, channels_last, WideSqTerm<T, ChannelAt>{at, ptr<const T>(x), m64},
                              BnTrainEpi<T>{m64, mp, ip, ptr<T>(save_mean), ptr<T>(save_invstd), ptr<T>(rmean),
                                            ptr<T>(rvar), M, eps, momentum});
    } else {
      launch_each(st, C, BnEvalStats<T>{ptr<const T>(rmean), ptr<const T>(rvar), mp, ip, e});
    }
    launch_each(st, M * C,
                BnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), mp, ip, ptr<T>(y),
                            BnChannel{C, S, channels_last}});
  });
}

// Per channel as the forward: the statistics and scale per channel, the two gradient sums
// (dy, dy * xhat) over the engines when any of dw, db, dx-with-batch-statistics needs them,
// then one thread per element of dx.
void batch_norm_backward(int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean, uintptr_t rvar, bool train,
                         double eps, uintptr_t dx, uintptr_t dw, uintptr_t db, uintptr_t stream) {
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if (C <= 0) return;
    const cudaStream_t st = scope.get();
    const int64_t M = N * S;
    StreamScratch<T> consts(5 * C, st);
    T* mp = consts.get();
    T* ip = mp + C;
    T* sp = ip + C;
    T* k1 = sp + C;
    T* k2 = k1 + C;
    launch_each(st, C,
                BnBackwardStats<T>{ptr<const T>(mean), ptr<const T>(invstd), ptr<const T>(rmean), ptr<const T>(rvar),
                                   ptr<const T>(w), train, T(eps), mp, ip, sp});
    if (dw || db || (dx && train))
      channel_sums<T, 2>(st, C, M, S, channels_last,
                         BnGradTerms<T, ChannelAt>{ChannelAt{C, S}, ptr<const T>(dy), ptr<const T>(x), mp, ip},
                         GradSumsEpi<T>{ptr<T>(dw), ptr<T>(db), k1, k2, M});
    if (dx)
      launch_each(st, M * C,
                  BnDx<T>{ptr<const T>(dy), ptr<const T>(x), mp, ip, sp, k1, k2, ptr<T>(dx), train,
                          BnChannel{C, S, channels_last}});
  });
}

// Per (n, group): its Cg * HxW terms (segments of HxW per channel) through the segmented engine,
// two passes as the CPU (mean written to `mean`, then rstd, both canonicalized), then one
// thread per element for y.
void group_norm_forward(int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t w,
                        uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, uintptr_t stream) {
  if (G <= 0) throw std::invalid_argument("repmode._C_cuda: group_norm_forward needs at least one group");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
    const RowsAt rows{D, HxW};
    group_sums<T, 1, false>(st, R, D, HxW, LoadTerm<T, RowsAt>{rows, ptr<const T>(x)}, BnMeanEpi<T>{ptr<T>(mean), D});
    group_sums<T, 1, false>(st, R, D, HxW, NormSqTerm<T, RowsAt>{rows, ptr<const T>(x), ptr<const T>(mean)},
                            GnStatsEpi<T>{ptr<T>(mean), ptr<T>(rstd), D, T(eps)});
    if (D > 0)
      launch_each(st, R * D,
                  GnOutput<T>{ptr<const T>(x), ptr<const T>(w), ptr<const T>(b), ptr<const T>(mean), ptr<const T>(rstd),
                              ptr<T>(y), C, HxW, D});
  });
}

// dx: per (n, group) sums of g = dy * w and g * xhat (segmented engine), then one thread per
// element. dw/db: per channel over its N segments of HxW (segmented engine, channels as groups).
void group_norm_backward(int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w, int64_t N,
                         int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw, uintptr_t db,
                         uintptr_t stream) {
  if (G <= 0) throw std::invalid_argument("repmode._C_cuda: group_norm_backward needs at least one group");
  StreamScope scope(stream);
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const cudaStream_t st = scope.get();
    const int64_t Cg = C / G, D = Cg * HxW, R = N * G;
    if (dx && R > 0 && D > 0) {
      StreamScratch<T> ks(2 * R, st);
      group_sums<T, 2, false>(st, R, D, HxW,
                              GnDxTerms<T>{RowsAt{D, HxW}, ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean),
                                           ptr<const T>(rstd), ptr<const T>(w), G, Cg},
                              GradSumsEpi<T>{nullptr, nullptr, ks.get(), ks.get() + R, D});
      launch_each(st, R * D,
                  GnDx<T>{ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd), ptr<const T>(w),
                          ks.get(), ks.get() + R, ptr<T>(dx), C, HxW, D});
    }
    if (dw || db)
      group_sums<T, 2, false>(st, C, N * HxW, HxW,
                              GnParamTerms<T>{ChannelAt{C, HxW}, ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean),
                                              ptr<const T>(rstd), G, Cg},
                              CanonPairEpi<T>{ptr<T>(dw), ptr<T>(db)});
  });
}

}  // namespace repmode::cuda

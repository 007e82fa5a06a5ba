// CPU batch norm and group norm. The bits come from csrc/common/batch_norm.h and the canonical
// Sum order; this file only walks memory. A group's terms t[0..M) are laid out in memory as
// segments of S contiguous elements (batch norm, NCHW: one segment per n; group norm: one per
// channel of the group), or, for channels-last batch norm, one term per row of C channels.
// The level-1 chunks (4096 terms) of every group are independent work items, so threads split
// (group, chunk) pairs; each chunk keeps the 32 lanes of the Sum order: a contiguous run adds
// its element q to lane (j0 + q) mod 32, where j0 is its first term index.
#include "batch_norm.h"

#include <vector>

#include "../common/batch_norm.h"
#include "../common/reduce_order.h"
#include "parallel.h"
#include "sum_chunk.h"

namespace repmode::cpu {
namespace {

constexpr int64_t kLanes = kSumLanes;
constexpr int64_t kColumnBlock = 32;  // channels per column item (channels-last batch norm)

// Segmented groups: group r's term j = (seg, s) = (j / S, j % S) sits at base(r, seg) + s;
// term(o, r, seg) gives the term at memory offset o. K (1 or 2) sums are taken at once.

// Chunk [j0, j1) of group r: the terms, computed run by run into contiguous buffers, then
// summed by the 32 lanes.
template <typename T, int K, typename Base, typename Term0, typename Term1>
REPMODE_INLINE void segmented_chunk(int64_t r, int64_t j0, int64_t j1, int64_t S, const Base& base, const Term0& t0,
                                    const Term1& t1, T* buf0, T* buf1, T* v0, T* v1) {
  int64_t seg = j0 / S, s = j0 - seg * S;
  for (int64_t j = j0; j < j1;) {
    const int64_t len = (S - s < j1 - j) ? S - s : j1 - j;
    const int64_t o = base(r, seg) + s;
    const int64_t sg = seg;
    T* __restrict b0 = buf0 + (j - j0);
    for (int64_t q = 0; q < len; ++q) b0[q] = t0(o + q, r, sg);
    if constexpr (K == 2) {
      T* __restrict b1 = buf1 + (j - j0);
      for (int64_t q = 0; q < len; ++q) b1[q] = t1(o + q, r, sg);
    }
    j += len;
    ++seg;
    s = 0;
  }
  *v0 = contiguous_chunk(buf0, j1 - j0);
  if constexpr (K == 2) *v1 = contiguous_chunk(buf1, j1 - j0);
}

// One thread's scratch: the terms of a chunk and the chunk values of `width` groups.
template <typename T>
struct Scratch {
  std::vector<T> buf0, buf1, vals0, vals1;
  Scratch(int64_t chunks, int64_t width)
      : buf0(kSumChunk), buf1(kSumChunk), vals0(chunks * width + 1), vals1(chunks * width + 1) {}
};

// The K sums of group r, whole, on the calling thread.
template <typename T, int K, typename Base, typename Term0, typename Term1>
REPMODE_INLINE void segmented_group(int64_t r, int64_t M, int64_t S, const Base& base, const Term0& t0,
                                    const Term1& t1, Scratch<T>& sc, T* out0, T* out1) {
  if (M == 0) {
    *out0 = T(0.0);
    if constexpr (K == 2) *out1 = T(0.0);
    return;
  }
  const int64_t chunks = chunk_count(M);
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
    segmented_chunk<T, K>(r, j0, j1, S, base, t0, t1, sc.buf0.data(), sc.buf1.data(), &sc.vals0[k], &sc.vals1[k]);
  }
  *out0 = finish_from_chunks(sc.vals0.data(), chunks);
  if constexpr (K == 2) *out1 = finish_from_chunks(sc.vals1.data(), chunks);
}

// The K sums of R groups with (group, chunk) pairs spread over threads (for few, long groups).
template <typename T, int K, typename Base, typename Term0, typename Term1>
void segmented_sums(int64_t R, int64_t M, int64_t S, const Base& base, const Term0& t0, const Term1& t1, T* out0,
                    T* out1, int nthreads) {
  if (R <= 0) return;
  if (M == 0) {
    for (int64_t r = 0; r < R; ++r) {
      out0[r] = T(0.0);
      if (K == 2) out1[r] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  std::vector<T> vals0(R * chunks), vals1(K == 2 ? R * chunks : 1);
  const int64_t per_item = M < kSumChunk ? M : kSumChunk;
  rows_parallel(R * chunks, nthreads, per_item * K, [&](int64_t i0, int64_t i1) {
    Scratch<T> sc(0, 0);
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t r = item / chunks, k = item - r * chunks;
      const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
      segmented_chunk<T, K>(r, j0, j1, S, base, t0, t1, sc.buf0.data(), sc.buf1.data(), &vals0[item],
                            &vals1[K == 2 ? item : 0]);
    }
  });
  for (int64_t r = 0; r < R; ++r) {
    out0[r] = finish_from_chunks(vals0.data() + r * chunks, chunks);
    if (K == 2) out1[r] = finish_from_chunks(vals1.data() + r * chunks, chunks);
  }
}

// Channels-last batch norm: channel c's term j sits at j*C + c; a block of `width` adjacent
// channels is walked together, lanes[l][w] being lane l of channel c0 + w. term(o, c).
template <typename T, int K, typename Term0, typename Term1>
REPMODE_INLINE void column_chunk(int64_t c0, int64_t width, int64_t j0, int64_t j1, int64_t C, const Term0& t0,
                                 const Term1& t1, T* dst0, T* dst1, int64_t dst_stride) {
  T a[kLanes][kColumnBlock], b[K == 2 ? kLanes : 1][kColumnBlock];
  for (int l = 0; l < kLanes; ++l)
    for (int64_t w = 0; w < kColumnBlock; ++w) {
      a[l][w] = T(-0.0);
      if constexpr (K == 2) b[l][w] = T(-0.0);
    }
  for (int64_t j = j0; j < j1; ++j) {
    T* la = a[j & (kLanes - 1)];
    const int64_t o = j * C + c0;
    if constexpr (K == 1) {
      for (int64_t w = 0; w < width; ++w) la[w] = la[w] + t0(o + w, c0 + w);
    } else {
      T* lb = b[j & (kLanes - 1)];
      for (int64_t w = 0; w < width; ++w) {
        la[w] = la[w] + t0(o + w, c0 + w);
        lb[w] = lb[w] + t1(o + w, c0 + w);
      }
    }
  }
  for (int h = kLanes / 2; h >= 1; h /= 2)
    for (int l = 0; l < h; ++l)
      for (int64_t w = 0; w < width; ++w) {
        a[l][w] = a[l][w] + a[l + h][w];
        if constexpr (K == 2) b[l][w] = b[l][w] + b[l + h][w];
      }
  for (int64_t w = 0; w < width; ++w) {
    dst0[w * dst_stride] = a[0][w];
    if constexpr (K == 2) dst1[w * dst_stride] = b[0][w];
  }
}

// The K sums of channels [c0, c0 + width), whole, on the calling thread.
template <typename T, int K, typename Term0, typename Term1>
REPMODE_INLINE void column_group(int64_t c0, int64_t width, int64_t M, int64_t C, const Term0& t0, const Term1& t1,
                                 Scratch<T>& sc, T* out0, T* out1) {
  if (M == 0) {
    for (int64_t w = 0; w < width; ++w) {
      out0[c0 + w] = T(0.0);
      if constexpr (K == 2) out1[c0 + w] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
    column_chunk<T, K>(c0, width, j0, j1, C, t0, t1, sc.vals0.data() + k, sc.vals1.data() + k, chunks);
  }
  for (int64_t w = 0; w < width; ++w) {
    out0[c0 + w] = finish_from_chunks(sc.vals0.data() + w * chunks, chunks);
    if constexpr (K == 2) out1[c0 + w] = finish_from_chunks(sc.vals1.data() + w * chunks, chunks);
  }
}

// The same with (block, chunk) pairs spread over threads.
template <typename T, int K, typename Term0, typename Term1>
void column_sums(int64_t C, int64_t M, const Term0& t0, const Term1& t1, T* out0, T* out1, int nthreads) {
  if (C <= 0) return;
  if (M == 0) {
    for (int64_t c = 0; c < C; ++c) {
      out0[c] = T(0.0);
      if (K == 2) out1[c] = T(0.0);
    }
    return;
  }
  const int64_t chunks = chunk_count(M);
  const int64_t blocks = (C + kColumnBlock - 1) / kColumnBlock;
  std::vector<T> vals0(C * chunks), vals1(K == 2 ? C * chunks : 1);
  const int64_t per_item = (M < kSumChunk ? M : kSumChunk) * kColumnBlock;
  rows_parallel(blocks * chunks, nthreads, per_item * K, [&](int64_t i0, int64_t i1) {
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t blk = item / chunks, k = item - blk * chunks;
      const int64_t c0 = blk * kColumnBlock;
      const int64_t width = C - c0 < kColumnBlock ? C - c0 : kColumnBlock;
      const int64_t j0 = k * kSumChunk, j1 = (M - j0 < kSumChunk) ? M : j0 + kSumChunk;
      column_chunk<T, K>(c0, width, j0, j1, C, t0, t1, vals0.data() + c0 * chunks + k,
                         vals1.data() + (K == 2 ? c0 * chunks + k : 0), chunks);
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    out0[c] = finish_from_chunks(vals0.data() + c * chunks, chunks);
    if (K == 2) out1[c] = finish_from_chunks(vals1.data() + c * chunks, chunks);
  }
}

// Per-channel sums of batch norm in either layout; term(o, c).
template <typename T, int K, typename Term0, typename Term1>
void channel_sums(int64_t N, int64_t C, int64_t S, bool channels_last, const Term0& t0, const Term1& t1, T* out0,
                  T* out1, int nthreads) {
  if (channels_last) {
    column_sums<T, K>(C, N * S, t0, t1, out0, out1, nthreads);
  } else {
    segmented_sums<T, K>(
        C, N * S, S, [&](int64_t c, int64_t n) { return (n * C + c) * S; },
        [&](int64_t o, int64_t c, int64_t) { return t0(o, c); },
        [&](int64_t o, int64_t c, int64_t) { return t1(o, c); },
        out0, out1, nthreads);
  }
}

// f(o, c) for every element of an (N, C, S) tensor in either layout (writes its own output).
template <typename F>
void for_each_element(int64_t N, int64_t C, int64_t S, bool channels_last, int nthreads, const F& f) {
  if (channels_last) {
    rows_parallel(N * S, nthreads, C * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = 0; c < C; ++c) f(r * C + c, c);
    });
  } else {
    rows_parallel(N * C, nthreads, S * 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % C, base = r * S;
        for (int64_t s = 0; s < S; ++s) f(base + s, c);
      }
    });
  }
}

template <typename T>
const T* or_fill(const T* p, int64_t n, T value, std::vector<T>& storage) {
  if (p) return p;
  storage.assign(n, value);
  return storage.data();
}

// Whole groups per thread (one pass of threads, the group's data reused from cache between its
// passes) when there are enough groups; otherwise (group, chunk) pairs per thread. Both give
// the same bits: a chunk's value and the finishing tree do not depend on who computes them.
inline bool whole_groups(int64_t groups, int64_t M, int nthreads) {
  return groups >= nthreads || M < 8 * kSumChunk;
}

// Channels per channels-last block: enough blocks for the threads, at most kColumnBlock.
inline int64_t column_width(int64_t C, int nthreads) {
  const int64_t t = nthreads < 1 ? 1 : nthreads;
  int64_t w = (C + t - 1) / t;
  w = (w + 7) / 8 * 8;
  return w < kColumnBlock ? w : kColumnBlock;
}

}  // namespace

template <typename T>
void batch_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t S, bool channels_last, const T* w,
                        const T* b, T* running_mean, T* running_var, bool training, double momentum,
                        double eps, T* save_mean, T* save_invstd, int nthreads) {
  const int64_t M = N * S;
  const int64_t chunks = M > 0 ? chunk_count(M) : 1;
  const T epsT = T(eps);
  std::vector<T> ws, bs, mean(C), invstd(C), q(C);
  const T* wp = or_fill(w, C, T(1.0), ws);
  const T* bp = or_fill(b, C, T(-0.0), bs);
  T* mp = mean.data();
  T* ip = invstd.data();
  T* qp = q.data();
  auto none = [](int64_t, int64_t) { return T(0.0); };
  auto load_x = [&](int64_t o, int64_t) { return x[o]; };
  auto sq_term = [&](int64_t o, int64_t c) { return norm_sq_term<T>(x[o], mp[c]); };
  // channel c's statistics from its sum of squares (training) or its running statistics
  auto channel_stats = [&](int64_t c) {
    if (!training) {
      mp[c] = running_mean[c];
      ip[c] = norm_invstd<T>(running_var[c], epsT);
      return;
    }
    ip[c] = norm_invstd<T>(norm_var<T>(qp[c], M), epsT);
    if (save_mean) save_mean[c] = canon(mp[c]);
    if (save_invstd) save_invstd[c] = canon(ip[c]);
    if (running_mean) running_mean[c] = norm_running_update<T>(running_mean[c], double(mp[c]), momentum);
    if (running_var) running_var[c] = norm_running_update<T>(running_var[c], norm_unbiased_var<T>(qp[c], M), momentum);
  };
  auto out = [&](int64_t o, int64_t c) { y[o] = norm_affine<T>(norm_xhat<T>(x[o], mp[c], ip[c]), wp[c], bp[c]); };
  if (!channels_last && whole_groups(C, M, nthreads)) {
    auto base = [&](int64_t c, int64_t n) { return (n * C + c) * S; };
    auto seg_x = [&](int64_t o, int64_t, int64_t) { return x[o]; };
    auto seg_sq = [&](int64_t o, int64_t c, int64_t) { return norm_sq_term<T>(x[o], mp[c]); };
    auto seg_none = [](int64_t, int64_t, int64_t) { return T(0.0); };
    rows_parallel(C, nthreads, 4 * M, [&](int64_t c0, int64_t c1) {
      Scratch<T> sc(chunks, 1);
      for (int64_t c = c0; c < c1; ++c) {
        if (training) {
          segmented_group<T, 1>(c, M, S, base, seg_x, seg_none, sc, &mp[c], static_cast<T*>(nullptr));
          mp[c] = norm_mean<T>(mp[c], M);
          segmented_group<T, 1>(c, M, S, base, seg_sq, seg_none, sc, &qp[c], static_cast<T*>(nullptr));
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
      Scratch<T> sc(chunks, width);
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t c0 = blk * width, wd = C - c0 < width ? C - c0 : width;
        if (training) {
          column_group<T, 1>(c0, wd, M, C, load_x, none, sc, mp, static_cast<T*>(nullptr));
          for (int64_t c = c0; c < c0 + wd; ++c) mp[c] = norm_mean<T>(mp[c], M);
          column_group<T, 1>(c0, wd, M, C, sq_term, none, sc, qp, static_cast<T*>(nullptr));
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
    channel_sums<T, 1>(N, C, S, channels_last, load_x, none, mp, static_cast<T*>(nullptr), nthreads);
    for (int64_t c = 0; c < C; ++c) mp[c] = norm_mean<T>(mp[c], M);
    channel_sums<T, 1>(N, C, S, channels_last, sq_term, none, qp, static_cast<T*>(nullptr), nthreads);
  }
  for (int64_t c = 0; c < C; ++c) channel_stats(c);
  for_each_element(N, C, S, channels_last, nthreads, out);
}

template <typename T>
void batch_norm_backward(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, bool channels_last,
                         const T* w, const T* mean, const T* invstd, const T* running_mean,
                         const T* running_var, bool train, double eps, T* dx, T* dw, T* db, int nthreads) {
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
void group_norm_forward(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G, const T* w,
                        const T* b, double eps, T* mean, T* rstd, int nthreads) {
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
void group_norm_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, int64_t N,
                         int64_t C, int64_t HxW, int64_t G, T* dx, T* dw, T* db, int nthreads) {
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

// ---- plain references ----

template <typename T>
void batch_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t S, const T* w,
                                  const T* b, T* running_mean, T* running_var, bool training,
                                  double momentum, double eps, T* save_mean, T* save_invstd) {
  const int64_t M = N * S;
  for (int64_t c = 0; c < C; ++c) {
    auto load = [&](int64_t j) { return x[((j / S) * C + c) * S + j % S]; };
    T mean, q, invstd;
    if (training) {
      norm_group_stats<T>(M, load, T(eps), &mean, &q, &invstd);
      if (save_mean) save_mean[c] = canon(mean);
      if (save_invstd) save_invstd[c] = canon(invstd);
      if (running_mean) running_mean[c] = norm_running_update<T>(running_mean[c], double(mean), momentum);
      if (running_var)
        running_var[c] = norm_running_update<T>(running_var[c], norm_unbiased_var<T>(q, M), momentum);
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
void batch_norm_backward_reference(const T* dy, const T* x, int64_t N, int64_t C, int64_t S, const T* w,
                                   const T* mean, const T* invstd, const T* running_mean,
                                   const T* running_var, bool train, double eps, T* dx, T* dw, T* db) {
  const int64_t M = N * S;
  for (int64_t c = 0; c < C; ++c) {
    const T m = train ? mean[c] : running_mean[c];
    const T is = train ? invstd[c] : norm_invstd<T>(running_var[c], T(eps));
    auto at = [&](int64_t j) { return ((j / S) * C + c) * S + j % S; };
    T sg, sgx;
    norm_grad_sums<T>(M, [&](int64_t j) { return dy[at(j)]; },
                      [&](int64_t j) { return norm_xhat<T>(x[at(j)], m, is); }, &sg, &sgx);
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
void group_norm_forward_reference(const T* x, T* y, int64_t N, int64_t C, int64_t HxW, int64_t G,
                                  const T* w, const T* b, double eps, T* mean, T* rstd) {
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
void group_norm_backward_reference(const T* dy, const T* x, const T* mean, const T* rstd, const T* w,
                                   int64_t N, int64_t C, int64_t HxW, int64_t G, T* dx, T* dw, T* db) {
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
      norm_grad_sums<T>(N * HxW, [&](int64_t j) { return dy[at(j)]; },
                        [&](int64_t j) { return norm_xhat<T>(x[at(j)], mean[grp(j)], rstd[grp(j)]); }, &sg, &sgx);
      if (dw) dw[c] = canon(sgx);
      if (db) db[c] = canon(sg);
    }
  }
}

#define REPMODE_INSTANTIATE(T)                                                                                   \
  template void batch_norm_forward<T>(const T*, T*, int64_t, int64_t, int64_t, bool, const T*, const T*, T*, T*, \
                                      bool, double, double, T*, T*, int);                                        \
  template void batch_norm_backward<T>(const T*, const T*, int64_t, int64_t, int64_t, bool, const T*, const T*,  \
                                       const T*, const T*, const T*, bool, double, T*, T*, T*, int);             \
  template void group_norm_forward<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, const T*, const T*,      \
                                      double, T*, T*, int);                                                      \
  template void group_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int64_t,       \
                                       int64_t, int64_t, T*, T*, T*, int);                                       \
  template void batch_norm_forward_reference<T>(const T*, T*, int64_t, int64_t, int64_t, const T*, const T*, T*, \
                                                T*, bool, double, double, T*, T*);                               \
  template void batch_norm_backward_reference<T>(const T*, const T*, int64_t, int64_t, int64_t, const T*,        \
                                                 const T*, const T*, const T*, const T*, bool, double, T*, T*,   \
                                                 T*);                                                            \
  template void group_norm_forward_reference<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, const T*,      \
                                                const T*, double, T*, T*);                                       \
  template void group_norm_backward_reference<T>(const T*, const T*, const T*, const T*, const T*, int64_t,      \
                                                 int64_t, int64_t, int64_t, T*, T*, T*);

REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

}  // namespace repmode::cpu

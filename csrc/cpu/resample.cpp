// CPU resampling: walks over the canonical formulas of csrc/common/resample.h.
//  * forward, plane walk: threads take whole (n, c) planes; per plane the W pass computes every
//    row value r(d, h)[ow] once (a W-tap combination), the H pass combines rows (vectorised over
//    ow), the D pass combines planes. Each output gets exactly the nested value of
//    resample_output_at (the same operations on the same operands).
//  * forward, lane walk (channel stride 1, e.g. channels_last): threads take output positions;
//    kLanes channels advance together, each running the nested formula of its own plane.
//  * backward: grad_input = +0, then outputs in increasing flat order, taps row-major,
//    acc = fma((w_d * w_h) * w_w, grad_output, acc); threads take planes (plane walk) or
//    (n, channel block) pairs (lane walk); neither changes any element's sequence.
#include "dispatch.h"
#include "entry_points.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/resample.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

constexpr int64_t kLanes = 64;

// The taps of every output index along one axis.
template <typename T>
struct AxisTaps {
  int K = 1;                 // taps per output (the most, for the antialiased modes)
  bool aa = false;           // antialiased: cnt[o] taps, summed by resample_combine_aa
  std::vector<int64_t> idx;  // O * K
  std::vector<T> w;          // O * K
  std::vector<int> cnt;      // O: taps of each output (K but for the antialiased modes)
};

template <typename T>
AxisTaps<T> axis_taps(const ResampleGeom& g, int a) {
  AxisTaps<T> t;
  const int64_t O = g.O[a];
  if (resample_is_aa(g.mode)) {
    if (resample_identity_axis(g, a) || g.I[a] == O) {  // not resampled: selection of o
      t.K = 1;
      t.idx.resize(static_cast<size_t>(O));
      t.w.assign(static_cast<size_t>(O), T(1));
      t.cnt.assign(static_cast<size_t>(O), 1);
      for (int64_t o = 0; o < O; ++o) t.idx[o] = o;
      return t;
    }
    const T scale = resample_area_scale<T>(g.I[a], O, g.align_corners, g.scale[a]);
    const int64_t K = resample_aa_max_taps<T>(g.mode, scale);
    t.K = static_cast<int>(K);
    t.aa = true;
    t.idx.assign(static_cast<size_t>(O * K), 0);
    t.w.assign(static_cast<size_t>(O * K), T(0));
    t.cnt.assign(static_cast<size_t>(O), 0);
    for (int64_t o = 0; o < O; ++o) {
      int64_t xmin = 0;
      const int64_t n = resample_aa_taps<T>(g.mode, o, g.I[a], scale, K, &xmin, t.w.data() + o * K);
      for (int64_t j = 0; j < K; ++j) t.idx[o * K + j] = j < n ? xmin + j : xmin;
      t.cnt[o] = static_cast<int>(n);
    }
    return t;
  }
  int64_t id[kResampleMaxTaps];
  T w[kResampleMaxTaps];
  t.K = resample_taps_of<T>(g, a, 0, id, w);
  t.idx.resize(static_cast<size_t>(O * t.K));
  t.w.resize(static_cast<size_t>(O * t.K));
  for (int64_t o = 0; o < O; ++o) {
    resample_taps_of<T>(g, a, o, id, w);
    for (int j = 0; j < t.K; ++j) {
      t.idx[o * t.K + j] = id[j];
      t.w[o * t.K + j] = w[j];
    }
  }
  t.cnt.assign(static_cast<size_t>(O), t.K);
  return t;
}

// dst[i] = combine(K, (rows[j][i])_j, w) for i < n: the combine sequence, lane by lane.
template <typename T>
REPMODE_INLINE void combine_rows(int K, const T* const* rows, const T* w, T* dst, int64_t n) {
  if (K == 1) {
    std::memcpy(dst, rows[0], sizeof(T) * static_cast<size_t>(n));
    return;
  }
  const T w0 = w[0], w1 = w[1];
  const T* r0 = rows[0];
  const T* r1 = rows[1];
  for (int64_t i = 0; i < n; ++i) dst[i] = repmode_fma(r0[i], w0, r1[i] * w1);
  for (int j = 2; j < K; ++j) {
    const T wj = w[j];
    const T* rj = rows[j];
    for (int64_t i = 0; i < n; ++i) dst[i] = repmode_fma(rj[i], wj, dst[i]);
  }
}

// The antialiased sum over cnt rows: dst = rows[0] w[0], then fmas of the others in order.
template <typename T>
REPMODE_INLINE void combine_rows_aa(int cnt, const T* const* rows, const T* w, T* dst, int64_t n) {
  const T w0 = cnt > 0 ? w[0] : T(0);
  if (cnt <= 0) {
    for (int64_t i = 0; i < n; ++i) dst[i] = T(0);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = rows[0][i] * w0;
  for (int j = 1; j < cnt; ++j) {
    const T wj = w[j];
    const T* rj = rows[j];
    for (int64_t i = 0; i < n; ++i) dst[i] = repmode_fma(rj[i], wj, dst[i]);
  }
}

// One output's combination of the rows of its taps (selection, fixed K, or antialiased).
template <typename T>
REPMODE_INLINE void combine_axis(const AxisTaps<T>& t, int64_t o, const T* const* rows, T* dst, int64_t n) {
  if (t.aa)
    combine_rows_aa(t.cnt[o], rows, t.w.data() + o * t.K, dst, n);
  else
    combine_rows(t.K, rows, t.w.data() + o * t.K, dst, n);
}

template <typename T>
struct Tables {
  AxisTaps<T> d, h, w;
};

template <typename T>
Tables<T> tables_of(const ResampleGeom& g) {
  return Tables<T>{axis_taps<T>(g, 0), axis_taps<T>(g, 1), axis_taps<T>(g, 2)};
}

// ---------------------------------------------------------------- forward, plane walk
template <typename T>
void forward_planes(const T* x, T* out, const ResampleGeom& g, const Tables<T>& tb, int nthreads) {
  const int64_t D = g.I[0], H = g.I[1], OD = g.O[0], OH = g.O[1], OW = g.O[2];
  const bool interp = resample_interpolates(g.mode);
  const int64_t work = (D * H + D * OH + OD * OH) * OW * 4;
  rows_parallel(g.N * g.C, nthreads, work, [&](int64_t p0, int64_t p1) {
    std::vector<T> rbuf(static_cast<size_t>(D * H * OW));   // r(d, h)[ow]
    std::vector<T> hbuf(static_cast<size_t>(D * OH * OW));  // s(d)[oh][ow]
    std::vector<T> obuf(static_cast<size_t>(OW));
    const int kw = tb.w.K, kh = tb.h.K, kd = tb.d.K;
    std::vector<T> vbuf(static_cast<size_t>(kw > kResampleMaxTaps ? kw : kResampleMaxTaps));
    std::vector<const T*> rows(static_cast<size_t>((kh > kd ? kh : kd) + kResampleMaxTaps));
    for (int64_t pl = p0; pl < p1; ++pl) {
      const int64_t n = pl / g.C, c = pl % g.C;
      const T* xp = x + n * g.xs[0] + c * g.xs[1];
      T* op = out + n * g.os[0] + c * g.os[1];
      // W pass
      for (int64_t d = 0; d < D; ++d)
        for (int64_t h = 0; h < H; ++h) {
          const T* row = xp + d * g.xs[2] + h * g.xs[3];
          T* r = rbuf.data() + (d * H + h) * OW;
          const int64_t* ix = tb.w.idx.data();
          const T* ww = tb.w.w.data();
          const int64_t sx = g.xs[4];
          if (kw == 1) {
            for (int64_t ow = 0; ow < OW; ++ow) r[ow] = row[ix[ow] * sx];
          } else if (kw == 2) {
            for (int64_t ow = 0; ow < OW; ++ow)
              r[ow] = repmode_fma(row[ix[2 * ow] * sx], ww[2 * ow], row[ix[2 * ow + 1] * sx] * ww[2 * ow + 1]);
          } else if (tb.w.aa) {
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int n = tb.w.cnt[ow];
              for (int j = 0; j < n; ++j) vbuf[j] = row[ix[kw * ow + j] * sx];
              r[ow] = n > 0 ? resample_combine_aa<T>(n, vbuf.data(), ww + kw * ow) : T(0);
            }
          } else {
            for (int64_t ow = 0; ow < OW; ++ow) {
              for (int j = 0; j < kw; ++j) vbuf[j] = row[ix[kw * ow + j] * sx];
              r[ow] = resample_combine(kw, vbuf.data(), ww + kw * ow);
            }
          }
        }
      // H pass
      for (int64_t d = 0; d < D; ++d)
        for (int64_t oh = 0; oh < OH; ++oh) {
          for (int j = 0; j < kh; ++j) rows[j] = rbuf.data() + (d * H + tb.h.idx[oh * kh + j]) * OW;
          combine_axis(tb.h, oh, rows.data(), hbuf.data() + (d * OH + oh) * OW, OW);
        }
      // D pass, written at the output's strides
      for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh) {
          for (int j = 0; j < kd; ++j) rows[j] = hbuf.data() + (tb.d.idx[od * kd + j] * OH + oh) * OW;
          T* orow = op + od * g.os[2] + oh * g.os[3];
          const bool dense = g.os[4] == 1;
          T* dst = dense ? orow : obuf.data();
          combine_axis(tb.d, od, rows.data(), dst, OW);
          if (interp)
            for (int64_t ow = 0; ow < OW; ++ow) dst[ow] = canon(dst[ow]);
          if (!dense)
            for (int64_t ow = 0; ow < OW; ++ow) orow[ow * g.os[4]] = dst[ow];
        }
    }
  });
}

// ---------------------------------------------------------------- forward, lane walk (xs[1] == os[1] == 1)
template <typename T>
void forward_lanes(const T* x, T* out, const ResampleGeom& g, const Tables<T>& tb, int nthreads) {
  const int64_t OD = g.O[0], OH = g.O[1], OW = g.O[2];
  const int64_t positions = OD * OH * OW;
  const bool interp = resample_interpolates(g.mode);
  const int kd = tb.d.K, kh = tb.h.K, kw = tb.w.K;
  rows_parallel(g.N * positions, nthreads, g.C * kd * kh * kw * 2, [&](int64_t r0, int64_t r1) {
    T sh[kResampleMaxTaps][kLanes], sd[kResampleMaxTaps][kLanes], res[kLanes];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / positions, q = r % positions;
      const int64_t od = q / (OH * OW), oh = (q / OW) % OH, ow = q % OW;
      const int64_t* id = tb.d.idx.data() + od * kd;
      const int64_t* ih = tb.h.idx.data() + oh * kh;
      const int64_t* iw = tb.w.idx.data() + ow * kw;
      const T* wd = tb.d.w.data() + od * kd;
      const T* wh = tb.h.w.data() + oh * kh;
      const T* ww = tb.w.w.data() + ow * kw;
      const T* xn = x + n * g.xs[0];
      T* o = out + n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
      if (kd == 1 && kh == 1 && kw == 1) {  // nearest: a copy of one input position's channels
        std::memcpy(o, xn + id[0] * g.xs[2] + ih[0] * g.xs[3] + iw[0] * g.xs[4], sizeof(T) * size_t(g.C));
        continue;
      }
      if (kd == 1 && kh == 2 && kw == 2) {  // bilinear: the nested formula fused over the channels
        const T* base = xn + id[0] * g.xs[2];
        const T* x00 = base + ih[0] * g.xs[3] + iw[0] * g.xs[4];
        const T* x01 = base + ih[0] * g.xs[3] + iw[1] * g.xs[4];
        const T* x10 = base + ih[1] * g.xs[3] + iw[0] * g.xs[4];
        const T* x11 = base + ih[1] * g.xs[3] + iw[1] * g.xs[4];
        const T w0 = ww[0], w1 = ww[1], h0 = wh[0], h1 = wh[1];
        for (int64_t c = 0; c < g.C; ++c) {
          const T r0 = repmode_fma(x00[c], w0, x01[c] * w1);
          const T r1 = repmode_fma(x10[c], w0, x11[c] * w1);
          o[c] = canon(repmode_fma(r0, h0, r1 * h1));
        }
        continue;
      }
      for (int64_t c0 = 0; c0 < g.C; c0 += kLanes) {
        const int64_t nl = g.C - c0 < kLanes ? g.C - c0 : kLanes;
        for (int a = 0; a < kd; ++a) {
          for (int b = 0; b < kh; ++b) {
            const T* rows[kResampleMaxTaps] = {};
            for (int e = 0; e < kw; ++e) rows[e] = xn + c0 + id[a] * g.xs[2] + ih[b] * g.xs[3] + iw[e] * g.xs[4];
            combine_rows(kw, rows, ww, sh[b], nl);
          }
          const T* hrows[kResampleMaxTaps] = {};
          for (int b = 0; b < kh; ++b) hrows[b] = sh[b];
          combine_rows(kh, hrows, wh, sd[a], nl);
        }
        const T* drows[kResampleMaxTaps] = {};
        for (int a = 0; a < kd; ++a) drows[a] = sd[a];
        combine_rows(kd, drows, wd, res, nl);
        if (interp)
          for (int64_t j = 0; j < nl; ++j) o[c0 + j] = canon(res[j]);
        else
          for (int64_t j = 0; j < nl; ++j) o[c0 + j] = res[j];
      }
    }
  });
}

// ---------------------------------------------------------------- backward
// The accumulation of one plane (or one block of nl channel lanes at channel stride 1):
// outputs in increasing flat order, taps row-major.
template <typename T, bool Lanes>
REPMODE_INLINE void backward_block(const T* go, T* gi, int64_t nl, const ResampleGeom& g, const Tables<T>& tb) {
  const int64_t OD = g.O[0], OH = g.O[1], OW = g.O[2];
  const int kd = tb.d.K, kh = tb.h.K, kw = tb.w.K;
  if (kd == 1 && kh == 1 && kw == 1) {
    // nearest: every weight is 1, and fma(1, g, acc) == acc + g
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh) {
        const T* grow = go + od * g.os[2] + oh * g.os[3];
        T* grow_in = gi + tb.d.idx[od] * g.xs[2] + tb.h.idx[oh] * g.xs[3];
        const int64_t* iw = tb.w.idx.data();
        for (int64_t ow = 0; ow < OW; ++ow) {
          const T* gv = grow + ow * g.os[4];
          T* dst = grow_in + iw[ow] * g.xs[4];
          if (Lanes) {
            for (int64_t j = 0; j < nl; ++j) dst[j] = dst[j] + gv[j];
          } else {
            *dst = *dst + *gv;
          }
        }
      }
    return;
  }
  if (!Lanes && kd == 1 && kw == 2 && !tb.h.aa && !tb.w.aa) {
    // the 1-d and 2-d interpolating case, scalar, with its tap loops unrolled (same sequence)
    for (int64_t od = 0; od < OD; ++od) {
      const T wdv = tb.d.w[od];
      T* gd = gi + tb.d.idx[od] * g.xs[2];
      for (int64_t oh = 0; oh < OH; ++oh) {
        const T* grow = go + od * g.os[2] + oh * g.os[3];
        T* rows[kResampleMaxTaps];
        T wdh[kResampleMaxTaps];
        for (int b = 0; b < kh; ++b) {
          rows[b] = gd + tb.h.idx[oh * kh + b] * g.xs[3];
          wdh[b] = wdv * tb.h.w[oh * kh + b];
        }
        const int64_t* iw = tb.w.idx.data();
        const T* ww = tb.w.w.data();
        const int64_t sx = g.xs[4], so = g.os[4];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const T gv = grow[ow * so];
          const int64_t o0 = iw[2 * ow] * sx, o1 = iw[2 * ow + 1] * sx;
          const T w0 = ww[2 * ow], w1 = ww[2 * ow + 1];
          for (int b = 0; b < kh; ++b) {
            T* p0 = rows[b] + o0;
            *p0 = resample_grad_add(*p0, wdh[b] * w0, gv);
            T* p1 = rows[b] + o1;
            *p1 = resample_grad_add(*p1, wdh[b] * w1, gv);
          }
        }
      }
    }
    return;
  }
  for (int64_t od = 0; od < OD; ++od)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const T* grow = go + od * g.os[2] + oh * g.os[3];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const T* gv = grow + ow * g.os[4];
        const int nd = tb.d.cnt[od], nh = tb.h.cnt[oh], nw = tb.w.cnt[ow];
        for (int a = 0; a < nd; ++a) {
          const T wdv = tb.d.w[od * kd + a];
          T* gd = gi + tb.d.idx[od * kd + a] * g.xs[2];
          for (int b = 0; b < nh; ++b) {
            const T wdh = wdv * tb.h.w[oh * kh + b];
            T* gh = gd + tb.h.idx[oh * kh + b] * g.xs[3];
            for (int e = 0; e < nw; ++e) {
              const T cw = wdh * tb.w.w[ow * kw + e];
              T* dst = gh + tb.w.idx[ow * kw + e] * g.xs[4];
              if (Lanes) {
                for (int64_t j = 0; j < nl; ++j) dst[j] = resample_grad_add(dst[j], cw, gv[j]);
              } else {
                *dst = resample_grad_add(*dst, cw, *gv);
              }
            }
          }
        }
      }
    }
}

template <typename T>
void zero_and_canon(T* gi, int64_t nl, const ResampleGeom& g, bool canonical, bool lane_walk) {
  const int64_t D = g.I[0], H = g.I[1], W = g.I[2];
  const int64_t lanes = lane_walk ? g.C : 1;  // elements per position in a dense block
  if ((!lane_walk || nl == g.C) && g.xs[4] == lanes && g.xs[3] == W * lanes && (D == 1 || g.xs[2] == H * W * lanes)) {
    const int64_t n = D * H * W * lanes;
    if (canonical) {
      for (int64_t i = 0; i < n; ++i) gi[i] = canon(gi[i]);
    } else {
      std::memset(gi, 0, sizeof(T) * static_cast<size_t>(n));
    }
    return;
  }
  for (int64_t d = 0; d < D; ++d)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        T* p = gi + d * g.xs[2] + h * g.xs[3] + w * g.xs[4];
        for (int64_t j = 0; j < nl; ++j) p[j] = canonical ? canon(p[j]) : T(0.0);
      }
}

template <typename T>
void backward_planes(const T* go, T* gi, const ResampleGeom& g, const Tables<T>& tb, int nthreads) {
  const int64_t outputs = g.O[0] * g.O[1] * g.O[2];
  const int64_t work = outputs * tb.d.K * tb.h.K * tb.w.K * 2 + g.I[0] * g.I[1] * g.I[2];
  rows_parallel(g.N * g.C, nthreads, work, [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const int64_t n = pl / g.C, c = pl % g.C;
      T* gp = gi + n * g.xs[0] + c * g.xs[1];
      const T* op = go + n * g.os[0] + c * g.os[1];
      zero_and_canon(gp, 1, g, false, false);
      backward_block<T, false>(op, gp, 1, g, tb);
      zero_and_canon(gp, 1, g, true, false);
    }
  });
}

template <typename T>
void backward_lanes(const T* go, T* gi, const ResampleGeom& g, const Tables<T>& tb, int nthreads) {
  const int64_t blocks = (g.C + kLanes - 1) / kLanes;
  const int64_t outputs = g.O[0] * g.O[1] * g.O[2];
  const int64_t work = (outputs * tb.d.K * tb.h.K * tb.w.K + g.I[0] * g.I[1] * g.I[2]) * kLanes;
  rows_parallel(g.N * blocks, nthreads, work, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / blocks, c0 = (r % blocks) * kLanes;
      const int64_t nl = g.C - c0 < kLanes ? g.C - c0 : kLanes;
      T* gp = gi + n * g.xs[0] + c0;
      const T* op = go + n * g.os[0] + c0;
      zero_and_canon(gp, nl, g, false, true);
      backward_block<T, true>(op, gp, nl, g, tb);
      zero_and_canon(gp, nl, g, true, true);
    }
  });
}

bool lanes(const ResampleGeom& g) { return !resample_is_aa(g.mode) && g.C >= 4 && g.xs[1] == 1 && g.os[1] == 1; }

}  // namespace

// ---------------------------------------------------------------- plain references
namespace {

// The antialiased modes' reference: the nested formula of one output from the tap tables.
template <typename T>
T axis_sum(const AxisTaps<T>& t, int64_t o, const T* v) {
  if (!t.aa) return resample_combine(t.K, v, t.w.data() + o * t.K);
  return t.cnt[o] > 0 ? resample_combine_aa<T>(t.cnt[o], v, t.w.data() + o * t.K) : T(0);
}

template <typename T>
void aa_forward_reference(const T* x, T* out, const ResampleGeom& g) {
  const Tables<T> tb = tables_of<T>(g);
  std::vector<T> vw(static_cast<size_t>(tb.w.K)), vh(static_cast<size_t>(tb.h.K)), vd(static_cast<size_t>(tb.d.K));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t od = 0; od < g.O[0]; ++od)
        for (int64_t oh = 0; oh < g.O[1]; ++oh)
          for (int64_t ow = 0; ow < g.O[2]; ++ow) {
            const T* xp = x + n * g.xs[0] + c * g.xs[1];
            for (int a = 0; a < tb.d.cnt[od]; ++a) {
              for (int b = 0; b < tb.h.cnt[oh]; ++b) {
                for (int e = 0; e < tb.w.cnt[ow]; ++e)
                  vw[e] = xp[tb.d.idx[od * tb.d.K + a] * g.xs[2] + tb.h.idx[oh * tb.h.K + b] * g.xs[3] +
                             tb.w.idx[ow * tb.w.K + e] * g.xs[4]];
                vh[b] = axis_sum(tb.w, ow, vw.data());
              }
              vd[a] = axis_sum(tb.h, oh, vh.data());
            }
            out[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
                canon(axis_sum(tb.d, od, vd.data()));
          }
}

// The plain backward walk, for every mode: each (n, c) plane of the input gradient starts at +0,
// the outputs are visited in increasing flat order, each adding its contributions through
// add(v, od, oh, ow, at) (at(d, h, w): the plane's element), and the plane ends with canon().
template <typename T, class Add>
void backward_reference_walk(const T* go, T* gi, const ResampleGeom& g, const Add& add) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      T* gp = gi + n * g.xs[0] + c * g.xs[1];
      auto at = [&](int64_t d, int64_t h, int64_t w) -> T& { return gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
      for (int64_t d = 0; d < g.I[0]; ++d)
        for (int64_t h = 0; h < g.I[1]; ++h)
          for (int64_t w = 0; w < g.I[2]; ++w) at(d, h, w) = T(0.0);
      for (int64_t od = 0; od < g.O[0]; ++od)
        for (int64_t oh = 0; oh < g.O[1]; ++oh)
          for (int64_t ow = 0; ow < g.O[2]; ++ow)
            add(go[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]], od, oh, ow, at);
      for (int64_t d = 0; d < g.I[0]; ++d)
        for (int64_t h = 0; h < g.I[1]; ++h)
          for (int64_t w = 0; w < g.I[2]; ++w) at(d, h, w) = canon(at(d, h, w));
    }
}

template <typename T>
void aa_backward_reference(const T* go, T* gi, const ResampleGeom& g) {
  const Tables<T> tb = tables_of<T>(g);
  backward_reference_walk(go, gi, g, [&](T v, int64_t od, int64_t oh, int64_t ow, auto& at) {
    for (int a = 0; a < tb.d.cnt[od]; ++a)
      for (int b = 0; b < tb.h.cnt[oh]; ++b)
        for (int e = 0; e < tb.w.cnt[ow]; ++e) {
          T& dst = at(tb.d.idx[od * tb.d.K + a], tb.h.idx[oh * tb.h.K + b], tb.w.idx[ow * tb.w.K + e]);
          const T cw = (tb.d.w[od * tb.d.K + a] * tb.h.w[oh * tb.h.K + b]) * tb.w.w[ow * tb.w.K + e];
          dst = resample_grad_add(dst, cw, v);
        }
  });
}

}  // namespace

template <typename T>
void resample_forward_reference(const T* x, T* out, const ResampleGeom& g) {
  if (resample_is_aa(g.mode)) return aa_forward_reference(x, out, g);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t od = 0; od < g.O[0]; ++od)
        for (int64_t oh = 0; oh < g.O[1]; ++oh)
          for (int64_t ow = 0; ow < g.O[2]; ++ow)
            out[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
                resample_output_at<T>(g, x, n, c, od, oh, ow);
}

template <typename T>
void resample_backward_reference(const T* go, T* gi, const ResampleGeom& g) {
  if (resample_is_aa(g.mode)) return aa_backward_reference(go, gi, g);
  backward_reference_walk(go, gi, g, [&](T v, int64_t od, int64_t oh, int64_t ow, auto& at) {
    int64_t id[kResampleMaxTaps], ih[kResampleMaxTaps], iw[kResampleMaxTaps];
    T wd[kResampleMaxTaps], wh[kResampleMaxTaps], ww[kResampleMaxTaps];
    const int kd = resample_taps_of<T>(g, 0, od, id, wd);
    const int kh = resample_taps_of<T>(g, 1, oh, ih, wh);
    const int kw = resample_taps_of<T>(g, 2, ow, iw, ww);
    for (int a = 0; a < kd; ++a)
      for (int b = 0; b < kh; ++b)
        for (int e = 0; e < kw; ++e) {
          T& dst = at(id[a], ih[b], iw[e]);
          dst = resample_grad_add(dst, (wd[a] * wh[b]) * ww[e], v);
        }
  });
}

template <typename T>
void resample_forward(const T* x, T* out, const ResampleGeom& g, int nthreads) {
  if (g.N * g.C * g.O[0] * g.O[1] * g.O[2] == 0) return;
  const Tables<T> tb = tables_of<T>(g);
  if (lanes(g))
    forward_lanes(x, out, g, tb, nthreads);
  else
    forward_planes(x, out, g, tb, nthreads);
}

template <typename T>
void resample_backward(const T* go, T* gi, const ResampleGeom& g, int nthreads) {
  if (g.N * g.C * g.I[0] * g.I[1] * g.I[2] == 0) return;
  const Tables<T> tb = tables_of<T>(g);
  if (lanes(g))
    backward_lanes(go, gi, g, tb, nthreads);
  else
    backward_planes(go, gi, g, tb, nthreads);
}

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

namespace {

ResampleGeom make_geom(int mode, int nsp, const Ints& in_sizes, const Ints& out_sizes, bool align_corners,
                       const std::vector<double>& scales, const Ints& xs, const Ints& os) {
  if (in_sizes.size() != 5 || out_sizes.size() != 3 || scales.size() != 3 || xs.size() != 5 || os.size() != 5 ||
      nsp < 1 || nsp > 3 || mode < 0 || mode > 5)
    throw std::invalid_argument("repmode._C resample: bad geometry");
  ResampleGeom g;
  g.mode = mode;
  g.nsp = nsp;
  g.N = in_sizes[0];
  g.C = in_sizes[1];
  for (int a = 0; a < 3; ++a) {
    g.I[a] = in_sizes[2 + a];
    g.O[a] = out_sizes[a];
    g.scale[a] = scales[a];
    if (g.I[a] <= 0 || g.O[a] <= 0) throw std::invalid_argument("repmode._C resample: sizes must be positive");
  }
  for (int i = 0; i < 5; ++i) {
    g.xs[i] = xs[i];
    g.os[i] = os[i];
  }
  g.align_corners = align_corners;
  return g;
}

}  // namespace

void resample_forward(int dtype, int mode, int nsp, uintptr_t x, uintptr_t out, const Ints& in_sizes,
                      const Ints& out_sizes, bool align_corners, const std::vector<double>& scales, const Ints& xs,
                      const Ints& os, int nthreads, bool reference) {
  const ResampleGeom g = make_geom(mode, nsp, in_sizes, out_sizes, align_corners, scales, xs, os);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (reference)
      resample_forward_reference<T>(ptr<const T>(x), ptr<T>(out), g);
    else
      resample_forward<T>(ptr<const T>(x), ptr<T>(out), g, nthreads);
  });
}

void resample_backward(int dtype, int mode, int nsp, uintptr_t grad_output, uintptr_t grad_input, const Ints& in_sizes,
                       const Ints& out_sizes, bool align_corners, const std::vector<double>& scales, const Ints& gis,
                       const Ints& gos, int nthreads, bool reference) {
  const ResampleGeom g = make_geom(mode, nsp, in_sizes, out_sizes, align_corners, scales, gis, gos);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (reference)
      resample_backward_reference<T>(ptr<const T>(grad_output), ptr<T>(grad_input), g);
    else
      resample_backward<T>(ptr<const T>(grad_output), ptr<T>(grad_input), g, nthreads);
  });
}

}  // namespace repmode::cpu

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
  int K = 1;
  std::vector<int64_t> idx;  // O * K
  std::vector<T> w;          // O * K
};

template <typename T>
AxisTaps<T> axis_taps(const ResampleGeom& g, int a) {
  AxisTaps<T> t;
  const int64_t O = g.O[a];
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
          } else {
            for (int64_t ow = 0; ow < OW; ++ow) {
              T v[kResampleMaxTaps];
              for (int j = 0; j < kw; ++j) v[j] = row[ix[kw * ow + j] * sx];
              r[ow] = resample_combine(kw, v, ww + kw * ow);
            }
          }
        }
      // H pass
      for (int64_t d = 0; d < D; ++d)
        for (int64_t oh = 0; oh < OH; ++oh) {
          const T* rows[kResampleMaxTaps];
          for (int j = 0; j < kh; ++j) rows[j] = rbuf.data() + (d * H + tb.h.idx[oh * kh + j]) * OW;
          combine_rows(kh, rows, tb.h.w.data() + oh * kh, hbuf.data() + (d * OH + oh) * OW, OW);
        }
      // D pass, written at the output's strides
      for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh) {
          const T* rows[kResampleMaxTaps];
          for (int j = 0; j < kd; ++j) rows[j] = hbuf.data() + (tb.d.idx[od * kd + j] * OH + oh) * OW;
          T* orow = op + od * g.os[2] + oh * g.os[3];
          const bool dense = g.os[4] == 1;
          T* dst = dense ? orow : obuf.data();
          combine_rows(kd, rows, tb.d.w.data() + od * kd, dst, OW);
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
  if (!Lanes && kd == 1 && kw == 2) {
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
        for (int a = 0; a < kd; ++a) {
          const T wdv = tb.d.w[od * kd + a];
          T* gd = gi + tb.d.idx[od * kd + a] * g.xs[2];
          for (int b = 0; b < kh; ++b) {
            const T wdh = wdv * tb.h.w[oh * kh + b];
            T* gh = gd + tb.h.idx[oh * kh + b] * g.xs[3];
            for (int e = 0; e < kw; ++e) {
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

bool lanes(const ResampleGeom& g) { return g.C >= 4 && g.xs[1] == 1 && g.os[1] == 1; }

}  // namespace

// ---------------------------------------------------------------- plain references
template <typename T>
void resample_forward_reference(const T* x, T* out, const ResampleGeom& g) {
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
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      T* gp = gi + n * g.xs[0] + c * g.xs[1];
      auto at = [&](int64_t d, int64_t h, int64_t w) -> T& { return gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
      for (int64_t d = 0; d < g.I[0]; ++d)
        for (int64_t h = 0; h < g.I[1]; ++h)
          for (int64_t w = 0; w < g.I[2]; ++w) at(d, h, w) = T(0.0);
      for (int64_t od = 0; od < g.O[0]; ++od)
        for (int64_t oh = 0; oh < g.O[1]; ++oh)
          for (int64_t ow = 0; ow < g.O[2]; ++ow) {
            const T v = go[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]];
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
          }
      for (int64_t d = 0; d < g.I[0]; ++d)
        for (int64_t h = 0; h < g.I[1]; ++h)
          for (int64_t w = 0; w < g.I[2]; ++w) at(d, h, w) = canon(at(d, h, w));
    }
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
      nsp < 1 || nsp > 3 || mode < 0 || mode > 3)
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

void resample_backward(int dtype, int mode, int nsp, uintptr_t grad_output, uintptr_t grad_input,
                       const Ints& in_sizes, const Ints& out_sizes, bool align_corners,
                       const std::vector<double>& scales, const Ints& gis, const Ints& gos, int nthreads,
                       bool reference) {
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

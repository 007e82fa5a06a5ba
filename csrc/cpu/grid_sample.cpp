// CPU grid sampling: walks over the canonical formulas of csrc/common/grid_sample.h.
//  * forward: threads take rows (n, od, oh) of output positions; per row the taps (input offsets
//    and weights) of every position are computed once, then each channel's outputs are combined
//    in the formula's order. Threads only choose which outputs they compute.
//  * backward: threads take whole batch entries n (grad_input[n] and grad_grid[n] depend on
//    batch entry n alone). grad_input[n] starts at +0; positions are visited in increasing flat
//    order (od, oh, ow), and each position adds its taps in their fixed order (2-d bilinear: nw,
//    ne, sw, se; 3-d: (z, y, x) row-major; bicubic: x tap i outer, y tap j inner) as
//    acc = acc + (weight * grad_output) (two roundings; bicubic (g * cx) * cy). grad_grid of a
//    position sums over the channels in increasing order (the formulas in docs/semantics.md,
//    "Grid sampling"), then multiplies by the coordinate's derivative.
// The per-position formulas (taps, value, backward contributions) are csrc/common/grid_sample.h's;
// the plain references walk every output of every channel by itself with them, in the same
// orders; tests check the walks against them bit for bit.
#include "dispatch.h"
#include "entry_points.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "../common/grid_sample.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

template <typename T>
void zero_plane(const GridSampleGeom& g, T* gp, bool canonical) {
  for (int64_t d = 0; d < g.D; ++d)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t w = 0; w < g.W; ++w) {
        T& v = gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]];
        v = canonical ? canon(v) : T(0.0);
      }
}

// ---------------------------------------------------------------- fast walks
template <typename T>
void forward_fast(const T* x, const T* grid, T* out, const GridSampleGeom& g, int nthreads) {
  const GridAxes<T> ax = grid_axes_of<T>(g);
  const int64_t rows = g.N * g.OD * g.OH;
  rows_parallel(rows, nthreads, g.OW * g.C * 8, [&](int64_t r0, int64_t r1) {
    std::vector<GridTaps<T>> taps(static_cast<size_t>(g.OW));
    const bool bilinear2 = g.interp == kGridBilinear && g.nsp == 2;
    // 2-d bilinear: the row's 4 offsets and weights per position packed densely (the same values)
    std::vector<int64_t> offs(bilinear2 ? static_cast<size_t>(4 * g.OW) : 0);
    std::vector<T> ws(bilinear2 ? static_cast<size_t>(4 * g.OW) : 0);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (g.OD * g.OH), od = (r / g.OH) % g.OD, oh = r % g.OH;
      const T* grow = grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        grid_taps_at<T>(g, ax, grow + ow * g.gs[3], false, taps[ow]);
        if (bilinear2)
          for (int q = 0; q < 4; ++q) {
            offs[4 * ow + q] = taps[ow].off[q];
            ws[4 * ow + q] = taps[ow].w[q];
          }
      }
      for (int64_t c = 0; c < g.C; ++c) {
        const T* plane = x + n * g.xs[0] + c * g.xs[1];
        T* orow = out + n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3];
        if (bilinear2) {  // grid_combine's 2-d bilinear sequence, written out
          const int64_t so = g.os[4];
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t* o = offs.data() + 4 * ow;
            const T* w = ws.data() + 4 * ow;
            const T v0 = o[0] >= 0 ? plane[o[0]] : T(0), v1 = o[1] >= 0 ? plane[o[1]] : T(0);
            const T v2 = o[2] >= 0 ? plane[o[2]] : T(0), v3 = o[3] >= 0 ? plane[o[3]] : T(0);
            T s = v0 * w[0];
            s = repmode_fma(v1, w[1], s);
            s = repmode_fma(v2, w[2], s);
            orow[ow * so] = canon(repmode_fma(v3, w[3], s));
          }
        } else {
          for (int64_t ow = 0; ow < g.OW; ++ow) orow[ow * g.os[4]] = grid_combine<T>(g, taps[ow], plane);
        }
      }
    }
  });
}

template <typename T>
void backward_fast(const T* go, const T* x, const T* grid, T* gi, T* gg, const GridSampleGeom& g, int nthreads) {
  const GridAxes<T> ax = grid_axes_of<T>(g);
  const bool want_grid = gg != nullptr && g.interp != kGridNearest;
  const int64_t positions = g.OD * g.OH * g.OW;
  rows_parallel(g.N, nthreads, positions * g.C * 16, [&](int64_t n0, int64_t n1) {
    std::vector<GridTaps<T>> taps(static_cast<size_t>(g.OW));
    std::vector<GridGrad<T>> acc(static_cast<size_t>(g.OW));
    for (int64_t n = n0; n < n1; ++n) {
      if (gi)
        for (int64_t c = 0; c < g.C; ++c) zero_plane(g, gi + n * g.xs[0] + c * g.xs[1], false);
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const T* grow = grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            grid_taps_at<T>(g, ax, grow + ow * g.gs[3], want_grid, taps[ow]);
            acc[ow] = GridGrad<T>{};
          }
          for (int64_t c = 0; c < g.C; ++c) {
            const T* plane = x + n * g.xs[0] + c * g.xs[1];
            T* gplane = gi ? gi + n * g.xs[0] + c * g.xs[1] : nullptr;
            const T* grow_o = go + n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3];
            if (g.interp == kGridBilinear && g.nsp == 2) {  // the 2-d bilinear case written out (same sequence)
              for (int64_t ow = 0; ow < g.OW; ++ow) {
                const GridTaps<T>& t = taps[ow];
                const T gv = grow_o[ow * g.os[4]];
                if (gplane)
                  for (int q = 0; q < 4; ++q)
                    if (t.off[q] >= 0) gplane[t.off[q]] = gplane[t.off[q]] + t.w[q] * gv;
                if (want_grid) {
                  const T nw = grid_tap_value(plane, t.off[0]), ne = grid_tap_value(plane, t.off[1]);
                  const T sw = grid_tap_value(plane, t.off[2]), se = grid_tap_value(plane, t.off[3]);
                  GridGrad<T>& a = acc[ow];
                  a.gx = repmode_fma(repmode_fma(se - sw, t.dn, (ne - nw) * t.ds), gv, a.gx);
                  a.gy = repmode_fma(repmode_fma(se - ne, t.dw, (sw - nw) * t.de), gv, a.gy);
                }
              }
              continue;
            }
            for (int64_t ow = 0; ow < g.OW; ++ow)
              grid_backward_channel<T>(g, taps[ow], plane, gplane, grow_o[ow * g.os[4]], want_grid, acc[ow]);
          }
          if (gg) {
            T* ggrow = gg + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
            for (int64_t ow = 0; ow < g.OW; ++ow) grid_write_grad<T>(g, taps[ow], acc[ow], ggrow + ow * g.gs[3]);
          }
        }
      if (gi)
        for (int64_t c = 0; c < g.C; ++c) zero_plane(g, gi + n * g.xs[0] + c * g.xs[1], true);
    }
  });
}

// ---------------------------------------------------------------- plain references
template <typename T>
void forward_reference(const T* x, const T* grid, T* out, const GridSampleGeom& g) {
  const GridAxes<T> ax = grid_axes_of<T>(g);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            GridTaps<T> t;
            grid_taps_at<T>(g, ax, grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2] + ow * g.gs[3], false, t);
            out[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
                grid_combine<T>(g, t, x + n * g.xs[0] + c * g.xs[1]);
          }
}

// grad_input: each (n, c) plane separately, positions in flat order; grad_grid: each position
// separately, channels in order.
template <typename T>
void backward_reference(const T* go, const T* x, const T* grid, T* gi, T* gg, const GridSampleGeom& g) {
  const GridAxes<T> ax = grid_axes_of<T>(g);
  auto grid_at = [&](int64_t n, int64_t od, int64_t oh, int64_t ow) {
    return grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2] + ow * g.gs[3];
  };
  auto go_at = [&](int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    return go[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]];
  };
  if (gi)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.C; ++c) {
        T* gp = gi + n * g.xs[0] + c * g.xs[1];
        zero_plane(g, gp, false);
        for (int64_t od = 0; od < g.OD; ++od)
          for (int64_t oh = 0; oh < g.OH; ++oh)
            for (int64_t ow = 0; ow < g.OW; ++ow) {
              GridTaps<T> t;
              grid_taps_at<T>(g, ax, grid_at(n, od, oh, ow), false, t);
              GridGrad<T> unused;
              grid_backward_channel<T>(g, t, nullptr, gp, go_at(n, c, od, oh, ow), false, unused);
            }
        zero_plane(g, gp, true);
      }
  if (gg)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            GridTaps<T> t;
            grid_taps_at<T>(g, ax, grid_at(n, od, oh, ow), true, t);
            GridGrad<T> acc;
            if (g.interp != kGridNearest)
              for (int64_t c = 0; c < g.C; ++c)
                grid_backward_channel<T>(g, t, x + n * g.xs[0] + c * g.xs[1], nullptr, go_at(n, c, od, oh, ow), true,
                                         acc);
            grid_write_grad<T>(g, t, acc, gg + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2] + ow * g.gs[3]);
          }
}

GridSampleGeom make_geom(int nsp, int interp, int padding, bool align_corners, const Ints& in_sizes,
                         const Ints& out_sizes, const Ints& xs, const Ints& gs, const Ints& os) {
  if (nsp < 2 || nsp > 3 || in_sizes.size() != 5 || out_sizes.size() != 3 || xs.size() != 5 || gs.size() != 5 ||
      os.size() != 5 || interp < 0 || interp > 2 || padding < 0 || padding > 2 || (nsp == 3 && interp == kGridBicubic))
    throw std::invalid_argument("repmode._C grid_sample: bad geometry");
  GridSampleGeom g;
  g.nsp = nsp;
  g.interp = interp;
  g.padding = padding;
  g.align_corners = align_corners;
  g.N = in_sizes[0];
  g.C = in_sizes[1];
  g.D = in_sizes[2];
  g.H = in_sizes[3];
  g.W = in_sizes[4];
  g.OD = out_sizes[0];
  g.OH = out_sizes[1];
  g.OW = out_sizes[2];
  for (int i = 0; i < 5; ++i) {
    g.xs[i] = xs[i];
    g.gs[i] = gs[i];
    g.os[i] = os[i];
  }
  return g;
}

}  // namespace

// ---- entry points (csrc/cpu/entry_points.h) ----

void grid_sample_forward(int dtype, int nsp, int interp, int padding, bool align_corners, uintptr_t x, uintptr_t grid,
                         uintptr_t out, const Ints& in_sizes, const Ints& out_sizes, const Ints& xs, const Ints& gs,
                         const Ints& os, int nthreads, bool reference) {
  const GridSampleGeom g = make_geom(nsp, interp, padding, align_corners, in_sizes, out_sizes, xs, gs, os);
  if (g.N * g.C * g.OD * g.OH * g.OW == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (reference)
      forward_reference<T>(ptr<const T>(x), ptr<const T>(grid), ptr<T>(out), g);
    else
      forward_fast<T>(ptr<const T>(x), ptr<const T>(grid), ptr<T>(out), g, nthreads);
  });
}

void grid_sample_backward(int dtype, int nsp, int interp, int padding, bool align_corners, uintptr_t grad_output,
                          uintptr_t x, uintptr_t grid, uintptr_t grad_input, uintptr_t grad_grid, const Ints& in_sizes,
                          const Ints& out_sizes, const Ints& xs, const Ints& gs, const Ints& gos, int nthreads,
                          bool reference) {
  // grad_input has the input's strides (xs), grad_grid the grid's (gs), grad_output gos
  const GridSampleGeom g = make_geom(nsp, interp, padding, align_corners, in_sizes, out_sizes, xs, gs, gos);
  if (g.N * g.C * g.D * g.H * g.W == 0 && g.N * g.OD * g.OH * g.OW == 0) return;
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T* gi = grad_input ? ptr<T>(grad_input) : nullptr;
    T* gg = grad_grid ? ptr<T>(grad_grid) : nullptr;
    if (reference)
      backward_reference<T>(ptr<const T>(grad_output), ptr<const T>(x), ptr<const T>(grid), gi, gg, g);
    else
      backward_fast<T>(ptr<const T>(grad_output), ptr<const T>(x), ptr<const T>(grid), gi, gg, g, nthreads);
  });
}

}  // namespace repmode::cpu

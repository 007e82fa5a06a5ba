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
// The plain references (grid_sample_*_reference) walk every output of every channel by itself,
// in the same orders; tests check the walks against them bit for bit.
#include "dispatch.h"
#include "entry_points.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "../common/grid_sample.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

// The geometry of one output position: per axis the floor index and the weights, plus the
// coordinate derivatives for the grid gradient.
template <typename T>
struct Point {
  // bilinear / nearest / bicubic base indices (x, y, z) and fractional parts
  int64_t ix = 0, iy = 0, iz = 0;
  T x = 0, y = 0, z = 0;        // source coordinates (after padding; bicubic: before)
  T gmx = 0, gmy = 0, gmz = 0;  // d coordinate / d grid value
};

template <typename T>
struct Axes {
  GridAxis<T> x, y, z;
};

template <typename T>
Axes<T> axes_of(const GridSampleGeom& g) {
  const bool three = g.nsp == 3;
  return Axes<T>{grid_axis<T>(g.W, g.padding, g.align_corners, three),
                 grid_axis<T>(g.H, g.padding, g.align_corners, three),
                 grid_axis<T>(g.D, g.padding, g.align_corners, three)};
}

// The taps of one output position: up to 16 (offset into an input plane at strides xs, weight);
// off < 0: outside the input. 2-d bilinear: nw, ne, sw, se; 3-d bilinear: (z, y, x) row-major;
// nearest: one; bicubic: 16, y row j outer, x tap i inner (the forward's nesting).
template <typename T>
struct Taps {
  int count = 0;
  int64_t off[16];
  T w[16];
  // 2-d bilinear: distances n, s, w, e (grid gradient); 3-d: per-axis (lo, hi) weights
  T dn = 0, ds = 0, dw = 0, de = 0;
  T wx[2] = {0, 0}, wy[2] = {0, 0}, wz[2] = {0, 0};
  // bicubic: coefficients and their derivatives
  T cx[4] = {}, cy[4] = {}, cxg[4] = {}, cyg[4] = {};
  T gmx = 0, gmy = 0, gmz = 0;
};

template <typename T>
REPMODE_INLINE int64_t plane_offset(const GridSampleGeom& g, int64_t z, int64_t y, int64_t x) {
  if (!grid_inside(x, g.W) || !grid_inside(y, g.H) || !grid_inside(z, g.D)) return -1;
  return z * g.xs[2] + y * g.xs[3] + x * g.xs[4];
}

template <typename T>
REPMODE_INLINE void taps_at(const GridSampleGeom& g, const Axes<T>& ax, const T* gp, bool want_grad, Taps<T>& t) {
  const T gx = gp[0];
  const T gy = gp[g.gs[4]];
  T* gmx = want_grad ? &t.gmx : nullptr;
  T* gmy = want_grad ? &t.gmy : nullptr;
  if (g.interp == kGridBicubic) {
    const T x = grid_unnormalize(ax.x, gx), y = grid_unnormalize(ax.y, gy);
    const T fx = grid_floor(x), fy = grid_floor(y);
    const T tx = x - fx, ty = y - fy;
    grid_cubic_coeffs(tx, t.cx);
    grid_cubic_coeffs(ty, t.cy);
    if (want_grad) {
      grid_cubic_coeffs_grad(tx, t.cxg);
      grid_cubic_coeffs_grad(ty, t.cyg);
      t.gmx = ax.x.sf;
      t.gmy = ax.y.sf;
    }
    int64_t xi[4], yi[4];
    for (int i = 0; i < 4; ++i) {
      xi[i] = grid_tap_index(ax.x, fx + T(-1 + i));
      yi[i] = grid_tap_index(ax.y, fy + T(-1 + i));
    }
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        t.off[j * 4 + i] = (xi[i] < 0 || yi[j] < 0) ? -1 : yi[j] * g.xs[3] + xi[i] * g.xs[4];
    t.count = 16;
    return;
  }
  const T x = grid_source(ax.x, gx, gmx);
  const T y = grid_source(ax.y, gy, gmy);
  if (g.nsp == 2) {
    if (g.interp == kGridNearest) {
      const int64_t i = grid_index(grid_round_even(x)), j = grid_index(grid_round_even(y));
      t.off[0] = plane_offset<T>(g, 0, j, i);
      t.w[0] = T(1);
      t.count = 1;
      return;
    }
    const T fx = grid_floor(x), fy = grid_floor(y);
    const T w = x - fx, e = T(1) - w, n = y - fy, s = T(1) - n;
    const int64_t i = grid_index(fx), j = grid_index(fy);
    t.dn = n;
    t.ds = s;
    t.dw = w;
    t.de = e;
    t.off[0] = plane_offset<T>(g, 0, j, i);
    t.off[1] = plane_offset<T>(g, 0, j, i + 1);
    t.off[2] = plane_offset<T>(g, 0, j + 1, i);
    t.off[3] = plane_offset<T>(g, 0, j + 1, i + 1);
    t.w[0] = s * e;
    t.w[1] = s * w;
    t.w[2] = n * e;
    t.w[3] = n * w;
    t.count = 4;
    return;
  }
  const T gz = gp[2 * g.gs[4]];
  const T z = grid_source(ax.z, gz, want_grad ? &t.gmz : nullptr);
  if (g.interp == kGridNearest) {
    const int64_t i = grid_index(grid_round_even(x)), j = grid_index(grid_round_even(y)),
                  k = grid_index(grid_round_even(z));
    t.off[0] = plane_offset<T>(g, k, j, i);
    t.w[0] = T(1);
    t.count = 1;
    return;
  }
  const T fx = grid_floor(x), fy = grid_floor(y), fz = grid_floor(z);
  // per axis: lo = (x0 + 1) - x, hi = x - x0 (torch's 3-d form)
  t.wx[0] = (fx + T(1)) - x;
  t.wx[1] = x - fx;
  t.wy[0] = (fy + T(1)) - y;
  t.wy[1] = y - fy;
  t.wz[0] = (fz + T(1)) - z;
  t.wz[1] = z - fz;
  const int64_t i = grid_index(fx), j = grid_index(fy), k = grid_index(fz);
  for (int dz = 0; dz < 2; ++dz)
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int q = dz * 4 + dy * 2 + dx;
        t.off[q] = plane_offset<T>(g, k + dz, j + dy, i + dx);
        t.w[q] = (t.wx[dx] * t.wy[dy]) * t.wz[dz];
      }
  t.count = 8;
}

template <typename T>
REPMODE_INLINE T tap_value(const T* plane, int64_t off) {
  return off >= 0 ? plane[off] : T(0);
}

// One output of one channel plane from its taps.
template <typename T>
REPMODE_INLINE T combine(const GridSampleGeom& g, const Taps<T>& t, const T* plane) {
  if (g.interp == kGridNearest) return tap_value(plane, t.off[0]);
  if (g.interp == kGridBicubic) {
    T r[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t* o = t.off + j * 4;
      T s = repmode_fma(t.cx[0], tap_value(plane, o[0]), t.cx[1] * tap_value(plane, o[1]));
      s = s + t.cx[2] * tap_value(plane, o[2]);
      r[j] = s + t.cx[3] * tap_value(plane, o[3]);
    }
    T s = t.cy[0] * r[0];
    s = repmode_fma(t.cy[1], r[1], s);
    s = repmode_fma(t.cy[2], r[2], s);
    return canon(repmode_fma(t.cy[3], r[3], s));
  }
  if (g.nsp == 2) {
    T s = tap_value(plane, t.off[0]) * t.w[0];
    s = repmode_fma(tap_value(plane, t.off[1]), t.w[1], s);
    s = repmode_fma(tap_value(plane, t.off[2]), t.w[2], s);
    return canon(repmode_fma(tap_value(plane, t.off[3]), t.w[3], s));
  }
  T s = T(0);
  for (int q = 0; q < 8; ++q)
    if (t.off[q] >= 0) s = s + plane[t.off[q]] * t.w[q];
  return canon(s);
}

// The grid-gradient accumulators of one position.
template <typename T>
struct GridGrad {
  T gx = 0, gy = 0, gz = 0;
};

// One channel's contributions: grad_input plane gi (may be null) and the grid gradient.
template <typename T>
REPMODE_INLINE void backward_channel(const GridSampleGeom& g, const Taps<T>& t, const T* plane, T* gi, T go,
                                     bool want_grid, GridGrad<T>& acc) {
  if (g.interp == kGridNearest) {
    if (gi && t.off[0] >= 0) gi[t.off[0]] = gi[t.off[0]] + go;
    return;
  }
  if (g.interp == kGridBicubic) {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int64_t o = t.off[j * 4 + i];
        if (gi && o >= 0) gi[o] = gi[o] + (go * t.cx[i]) * t.cy[j];
        if (want_grid) {
          const T v = tap_value(plane, o);
          acc.gx = repmode_fma(-((v * go) * t.cxg[i]), t.cy[j], acc.gx);
          acc.gy = repmode_fma(-((v * go) * t.cyg[j]), t.cx[i], acc.gy);
        }
      }
    return;
  }
  if (g.nsp == 2) {
    if (gi)
      for (int q = 0; q < 4; ++q)
        if (t.off[q] >= 0) gi[t.off[q]] = gi[t.off[q]] + t.w[q] * go;
    if (want_grid) {
      const T nw = tap_value(plane, t.off[0]), ne = tap_value(plane, t.off[1]);
      const T sw = tap_value(plane, t.off[2]), se = tap_value(plane, t.off[3]);
      acc.gx = repmode_fma(repmode_fma(se - sw, t.dn, (ne - nw) * t.ds), go, acc.gx);
      acc.gy = repmode_fma(repmode_fma(se - ne, t.dw, (sw - nw) * t.de), go, acc.gy);
    }
    return;
  }
  for (int q = 0; q < 8; ++q) {
    const int64_t o = t.off[q];
    if (o < 0) continue;
    if (gi) gi[o] = gi[o] + t.w[q] * go;
    if (want_grid) {
      const int dz = q >> 2, dy = (q >> 1) & 1, dx = q & 1;
      const T v = plane[o];
      const T px = (v * t.wy[dy]) * t.wz[dz];
      const T py = (v * t.wx[dx]) * t.wz[dz];
      const T pz = (v * t.wx[dx]) * t.wy[dy];
      acc.gx = dx ? acc.gx + px * go : acc.gx - px * go;
      acc.gy = dy ? acc.gy + py * go : acc.gy - py * go;
      acc.gz = dz ? acc.gz + pz * go : acc.gz - pz * go;
    }
  }
}

template <typename T>
REPMODE_INLINE void write_grid_grad(const GridSampleGeom& g, const Taps<T>& t, const GridGrad<T>& acc, T* gg) {
  if (g.interp == kGridNearest) {
    gg[0] = T(0);
    gg[g.gs[4]] = T(0);
    if (g.nsp == 3) gg[2 * g.gs[4]] = T(0);
    return;
  }
  if (g.nsp == 3) {
    gg[0] = canon(t.gmx * acc.gx);
    gg[g.gs[4]] = canon(t.gmy * acc.gy);
    gg[2 * g.gs[4]] = canon(t.gmz * acc.gz);
    return;
  }
  gg[0] = canon(acc.gx * t.gmx);
  gg[g.gs[4]] = canon(acc.gy * t.gmy);
}

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
  const Axes<T> ax = axes_of<T>(g);
  const int64_t rows = g.N * g.OD * g.OH;
  rows_parallel(rows, nthreads, g.OW * g.C * 8, [&](int64_t r0, int64_t r1) {
    std::vector<Taps<T>> taps(static_cast<size_t>(g.OW));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (g.OD * g.OH), od = (r / g.OH) % g.OD, oh = r % g.OH;
      const T* grow = grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
      for (int64_t ow = 0; ow < g.OW; ++ow) taps_at<T>(g, ax, grow + ow * g.gs[3], false, taps[ow]);
      for (int64_t c = 0; c < g.C; ++c) {
        const T* plane = x + n * g.xs[0] + c * g.xs[1];
        T* orow = out + n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3];
        if (g.interp == kGridBilinear && g.nsp == 2) {
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const Taps<T>& t = taps[ow];
            T s = tap_value(plane, t.off[0]) * t.w[0];
            s = repmode_fma(tap_value(plane, t.off[1]), t.w[1], s);
            s = repmode_fma(tap_value(plane, t.off[2]), t.w[2], s);
            orow[ow * g.os[4]] = canon(repmode_fma(tap_value(plane, t.off[3]), t.w[3], s));
          }
        } else {
          for (int64_t ow = 0; ow < g.OW; ++ow) orow[ow * g.os[4]] = combine<T>(g, taps[ow], plane);
        }
      }
    }
  });
}

template <typename T>
void backward_fast(const T* go, const T* x, const T* grid, T* gi, T* gg, const GridSampleGeom& g, int nthreads) {
  const Axes<T> ax = axes_of<T>(g);
  const bool want_grid = gg != nullptr && g.interp != kGridNearest;
  const int64_t positions = g.OD * g.OH * g.OW;
  rows_parallel(g.N, nthreads, positions * g.C * 16, [&](int64_t n0, int64_t n1) {
    std::vector<Taps<T>> taps(static_cast<size_t>(g.OW));
    std::vector<GridGrad<T>> acc(static_cast<size_t>(g.OW));
    for (int64_t n = n0; n < n1; ++n) {
      if (gi)
        for (int64_t c = 0; c < g.C; ++c) zero_plane(g, gi + n * g.xs[0] + c * g.xs[1], false);
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const T* grow = grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            taps_at<T>(g, ax, grow + ow * g.gs[3], want_grid, taps[ow]);
            acc[ow] = GridGrad<T>{};
          }
          for (int64_t c = 0; c < g.C; ++c) {
            const T* plane = x + n * g.xs[0] + c * g.xs[1];
            T* gplane = gi ? gi + n * g.xs[0] + c * g.xs[1] : nullptr;
            const T* grow_o = go + n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3];
            if (g.interp == kGridBilinear && g.nsp == 2) {  // the 2-d bilinear case written out (same sequence)
              for (int64_t ow = 0; ow < g.OW; ++ow) {
                const Taps<T>& t = taps[ow];
                const T gv = grow_o[ow * g.os[4]];
                if (gplane)
                  for (int q = 0; q < 4; ++q)
                    if (t.off[q] >= 0) gplane[t.off[q]] = gplane[t.off[q]] + t.w[q] * gv;
                if (want_grid) {
                  const T nw = tap_value(plane, t.off[0]), ne = tap_value(plane, t.off[1]);
                  const T sw = tap_value(plane, t.off[2]), se = tap_value(plane, t.off[3]);
                  GridGrad<T>& a = acc[ow];
                  a.gx = repmode_fma(repmode_fma(se - sw, t.dn, (ne - nw) * t.ds), gv, a.gx);
                  a.gy = repmode_fma(repmode_fma(se - ne, t.dw, (sw - nw) * t.de), gv, a.gy);
                }
              }
              continue;
            }
            for (int64_t ow = 0; ow < g.OW; ++ow)
              backward_channel<T>(g, taps[ow], plane, gplane, grow_o[ow * g.os[4]], want_grid, acc[ow]);
          }
          if (gg) {
            T* ggrow = gg + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2];
            for (int64_t ow = 0; ow < g.OW; ++ow) write_grid_grad<T>(g, taps[ow], acc[ow], ggrow + ow * g.gs[3]);
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
  const Axes<T> ax = axes_of<T>(g);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            Taps<T> t;
            taps_at<T>(g, ax, grid + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2] + ow * g.gs[3], false, t);
            out[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]] =
                combine<T>(g, t, x + n * g.xs[0] + c * g.xs[1]);
          }
}

// grad_input: each (n, c) plane separately, positions in flat order; grad_grid: each position
// separately, channels in order.
template <typename T>
void backward_reference(const T* go, const T* x, const T* grid, T* gi, T* gg, const GridSampleGeom& g) {
  const Axes<T> ax = axes_of<T>(g);
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
              Taps<T> t;
              taps_at<T>(g, ax, grid_at(n, od, oh, ow), false, t);
              GridGrad<T> unused;
              backward_channel<T>(g, t, nullptr, gp, go_at(n, c, od, oh, ow), false, unused);
            }
        zero_plane(g, gp, true);
      }
  if (gg)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            Taps<T> t;
            taps_at<T>(g, ax, grid_at(n, od, oh, ow), true, t);
            GridGrad<T> acc;
            if (g.interp != kGridNearest)
              for (int64_t c = 0; c < g.C; ++c)
                backward_channel<T>(g, t, x + n * g.xs[0] + c * g.xs[1], nullptr, go_at(n, c, od, oh, ow), true,
                                    acc);
            write_grid_grad<T>(g, t, acc, gg + n * g.gs[0] + od * g.gs[1] + oh * g.gs[2] + ow * g.gs[3]);
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

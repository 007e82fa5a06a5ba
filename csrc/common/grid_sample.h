// The canonical formulas of grid sampling (docs/semantics.md, "Grid sampling"): grid_sampler_2d,
// grid_sampler_3d and their backward ops.
//
// Modes and paddings are torch's own integer arguments (interpolation_mode: 0 bilinear, 1 nearest,
// 2 bicubic; padding_mode: 0 zeros, 1 border, 2 reflection), passed through unchanged.
//
// Per output position, a grid value g along an axis of input size S becomes a source coordinate:
//   * 2-d (torch's CPU grid_sampler_2d formulas, its multiply-adds as fmas):
//       align_corners: (g + 1) * sf, sf = T(S - 1) / 2; else fma(g + 1, sf, -0.5), sf = T(S) / 2;
//       border: clip to [0, S - 1] (NaN -> 0); reflection: reflect (below), then clip.
//       reflect: a = |x - low| (low = 0 with align_corners, else -0.5), span2 = 2 (S - 1) or 2 S,
//       f = trunc(a / span2), e = fma(-f, span2, a), r = min(e, span2 - e) + low (align_corners
//       with S = 1: 0).
//   * 3-d (torch's scalar formulas, no fma): align_corners: ((g + 1) / 2) * T(S - 1); else
//       ((g + 1) * T(S) - 1) / 2; border clips; reflection: with min = low and span = span2 / 2,
//       a = |x - min|, e = fmod(a, span) (exact), flips = floor(a / span); r = e + min if flips
//       is even, else (span - e) + min; then clip.
// Bilinear: x0 = floor(x), y0 = floor(y) (z0); 2-d weights w = x - x0, e = 1 - w, n = y - y0,
// s = 1 - n; corners nw (s e), ne (s w), sw (n e), se (n w); out = fma(v_se, se, fma(v_sw, sw,
// fma(v_ne, ne, v_nw * nw))) with v = 0 outside the input (zeros padding).
// 3-d weights per axis lo = (x0 + 1) - x, hi = x - x0; corner (dz, dy, dx) weight (wx wy) wz;
// out = +0 then out + v w (two roundings) over the in-bounds corners in (z, y, x) row-major order.
// Nearest: round half to even (x86 roundps / nearbyint) of the source coordinate.
// Bicubic (2-d only): x = unnormalize(g) (no padding), x0 = floor(x), t = x - x0; coefficients
// grid_cubic_coeffs; taps x0 - 1 + i, read through the padding of their (integral) coordinates;
// row j: r_j = (fma(c_x0, v0, c_x1 v1) + c_x2 v2) + c_x3 v3; out = fma chain over j from c_y0 r_0.
// The backward sums every contribution in a fixed order: see grid_sample.cpp's header comment.
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"
#include "resample.h"

namespace repmode {

enum GridSampleInterp : int { kGridBilinear = 0, kGridNearest = 1, kGridBicubic = 2 };
enum GridSamplePadding : int { kGridZeros = 0, kGridBorder = 1, kGridReflection = 2 };

// An index that is out of bounds for every axis (torch converts NaN and huge coordinates to the
// "integer indefinite" value, which its bounds checks reject; +1 must stay out of bounds too).
constexpr int64_t kGridOutside = -(int64_t(1) << 40);

template <typename T>
struct GridLimits;
template <>
struct GridLimits<float> {
  static constexpr float round_magic = 8388608.0f;   // 2^23
  static constexpr float int_limit = 2147483648.0f;  // torch converts floats to int32
};
template <>
struct GridLimits<double> {
  static constexpr double round_magic = 4503599627370496.0;  // 2^52
  static constexpr double int_limit = 9223372036854775808.0;
};

// floor(x) in T (x finite or not): exact.
template <typename T>
REPMODE_HD T grid_floor(T x) {
  if (!(x < GridLimits<T>::round_magic && x > -GridLimits<T>::round_magic)) return x;  // integral, inf or NaN
  const T t = static_cast<T>(static_cast<int64_t>(x));
  return t > x ? t - T(1) : t;
}

// trunc(x) in T: exact.
template <typename T>
REPMODE_HD T grid_trunc(T x) {
  if (!(x < GridLimits<T>::round_magic && x > -GridLimits<T>::round_magic)) return x;
  return static_cast<T>(static_cast<int64_t>(x));
}

// Round half to even (nearbyint): the magic-number sum in round-to-nearest-even.
template <typename T>
REPMODE_HD T grid_round_even(T x) {
  const T a = x < T(0) ? -x : x;
  if (!(a < GridLimits<T>::round_magic)) return x;
  const T r = (a + GridLimits<T>::round_magic) - GridLimits<T>::round_magic;
  return x < T(0) || (x == T(0) && 1 / x < 0) ? -r : r;
}

// An integral-valued coordinate as an index: kGridOutside for NaN and values beyond the integer
// range torch converts to.
template <typename T>
REPMODE_HD int64_t grid_index(T v) {
  if (!(v < GridLimits<T>::int_limit && v >= -GridLimits<T>::int_limit)) return kGridOutside;
  return static_cast<int64_t>(v);
}

// torch's clamps to [0, S - 1]: 2-d (vector min/max) sends NaN to 0, 3-d (std::min/std::max)
// sends NaN to S - 1.
template <typename T>
REPMODE_HD T grid_clip(T x, T max_val, bool three_d) {
  if (x != x) return three_d ? max_val : T(0);
  const T lo = x > T(0) ? x : T(0);
  return lo < max_val ? lo : max_val;
}

// Exact fmod(a, span) for a >= 0, span > 0 (the remainder is representable; an fma with the
// truncated quotient gives it exactly, a quotient off by one is corrected exactly).
template <typename T>
REPMODE_HD T grid_fmod(T a, T span) {
  if (a != a) return a;
  const T q = grid_trunc(a / span);
  T r = repmode_fma(-q, span, a);
  if (r < T(0)) r = r + span;
  if (r >= span) r = r - span;
  return r;
}

// The per-axis coordinate transform of one call.
template <typename T>
struct GridAxis {
  int64_t size = 1;
  int padding = kGridZeros;
  bool align_corners = false;
  bool three_d = false;
  T max_val = 0, sf = 0, low = 0, span2 = 0;
  bool empty = false;
};

template <typename T>
REPMODE_HD GridAxis<T> grid_axis(int64_t size, int padding, bool align_corners, bool three_d) {
  GridAxis<T> a;
  a.size = size;
  a.padding = padding;
  a.align_corners = align_corners;
  a.three_d = three_d;
  a.max_val = static_cast<T>(size - 1);
  a.sf = align_corners ? static_cast<T>(size - 1) / T(2) : static_cast<T>(size) / T(2);
  a.low = align_corners ? T(0) : T(-0.5);
  a.span2 = align_corners ? static_cast<T>(size - 1) * T(2) : static_cast<T>(size) * T(2);
  a.empty = align_corners ? size <= 1 : size <= 0;
  return a;
}

template <typename T>
REPMODE_HD T grid_unnormalize(const GridAxis<T>& a, T g) {
  if (a.three_d) {  // torch's scalar code: no fused operation
    if (a.align_corners) return ((g + T(1)) / T(2)) * static_cast<T>(a.size - 1);
    return ((g + T(1)) * static_cast<T>(a.size) - T(1)) / T(2);
  }
  if (a.align_corners) return (g + T(1)) * a.sf;
  return repmode_fma(g + T(1), a.sf, T(-0.5));
}

// Reflection; *grad (when given) gets +1 or -1, the derivative's sign.
template <typename T>
REPMODE_HD T grid_reflect(const GridAxis<T>& a, T x, T* grad) {
  if (a.empty) {
    if (grad) *grad = T(0);
    return T(0);
  }
  const T d = x - a.low;
  const bool neg = d < T(0);
  const T ad = neg ? -d : d;
  if (a.three_d) {
    const T span = a.span2 / T(2);
    const T extra = grid_fmod(ad, span);
    const T fl = grid_floor(ad / span);
    // torch: static_cast<int>(floor(a / span)) % 2; parity of the integral value
    const bool even = !(fl == fl) || grid_floor(fl / T(2)) * T(2) == fl;
    if (grad) *grad = (even != neg) ? T(1) : T(-1);
    return even ? extra + a.low : (span - extra) + a.low;
  }
  const T flips = grid_trunc(ad / a.span2);
  const T extra = repmode_fma(-flips, a.span2, ad);
  const T reflected = a.span2 - extra;
  const bool more = extra > reflected;
  if (grad) *grad = (more != neg) ? T(-1) : T(1);
  // torch's minimum(extra, reflected): NaN if either is NaN
  T r;
  if (extra != extra || reflected != reflected)
    r = extra + reflected;
  else
    r = more ? reflected : extra;
  return r + a.low;
}

// Padding applied to an unnormalized coordinate; *gmult (when given) gets d coordinate / d g:
// 2-d: zeros sf; border sf or +0 (clipped); reflection (sign * sf) or +0. 3-d: sf, border
// sf * clip, reflection (sf * sign) * clip (clip 1 inside, 0 at or beyond the borders).
template <typename T>
REPMODE_HD T grid_pad(const GridAxis<T>& a, T x, T* gmult) {
  if (a.padding == kGridZeros) {
    if (gmult) *gmult = a.sf;
    return x;
  }
  T sign = T(1);
  if (a.padding == kGridReflection) x = grid_reflect(a, x, gmult ? &sign : nullptr);
  const T c = grid_clip(x, a.max_val, a.three_d);
  if (gmult) {
    const bool inside = c > T(0) && c < a.max_val;
    if (a.three_d)
      *gmult = (a.sf * sign) * (inside ? T(1) : T(0));
    else
      *gmult = inside ? sign * a.sf : T(0);
  }
  return c;
}

// Source coordinate of grid value g, and (gmult, when given) d coordinate / d g.
template <typename T>
REPMODE_HD T grid_source(const GridAxis<T>& a, T g, T* gmult) {
  return grid_pad(a, grid_unnormalize(a, g), gmult);
}

// Bicubic taps read integral coordinates through the padding (torch's compute_coordinates).
template <typename T>
REPMODE_HD int64_t grid_tap_index(const GridAxis<T>& a, T coord) {
  const T c = grid_pad(a, coord, static_cast<T*>(nullptr));
  const int64_t i = grid_index(grid_trunc(c));
  return (i >= 0 && i < a.size) ? i : kGridOutside;
}

// Cubic coefficients (A = -0.75) of t, as torch 2.13's AVX-512 build evaluates them in its forward
// and in its backward when both gradients are computed (measured; its grid-only backward fuses
// differently, so torch's own bits there depend on which gradients are asked for): the outer two
// ((A x - 5A) x + 8A) x - 4A with every operation rounded, the inner two
// fma(fma(A + 2, x, -(A + 3)) x, x, 1) (resample.h's resample_cubic1).
template <typename T>
REPMODE_HD T grid_cubic_outer(T x) {
  const T A = T(-0.75);
  return ((A * x - T(5) * A) * x + T(8) * A) * x - T(4) * A;
}
template <typename T>
REPMODE_HD void grid_cubic_coeffs(T t, T* c) {
  const T A = T(-0.75);
  c[0] = grid_cubic_outer(t + T(1));
  c[1] = resample_cubic1(t, A);
  c[2] = resample_cubic1(T(1) - t, A);
  c[3] = grid_cubic_outer(T(2) - t);
}
// Their derivatives (negated, torch's polynomials), every operation rounded:
// A = -0.75: -3A = 2.25, -10A = 7.5, -8A = 6, -3(A + 2) = -3.75, -2(A + 3) = -4.5, 3(A + 2) = 3.75,
// 3A = -2.25, 8A = -6 (all exact).
template <typename T>
REPMODE_HD void grid_cubic_coeffs_grad(T t, T* c) {
  T x = T(-1) - t;
  c[0] = (T(2.25) * x + T(7.5)) * x + T(6);
  x = T(0) - t;
  c[1] = (T(-3.75) * x - T(4.5)) * x;
  x = T(1) - t;
  c[2] = (T(3.75) * x - T(4.5)) * x;
  x = T(2) - t;
  c[3] = (T(-2.25) * x + T(7.5)) * x - T(6);
}

REPMODE_HD bool grid_inside(int64_t i, int64_t S) { return i >= 0 && i < S; }

// Sizes, strides and arguments of one call. 2-d calls have D = OD = 1 and zero d strides.
struct GridSampleGeom {
  int nsp = 2;
  int interp = kGridBilinear;
  int padding = kGridZeros;
  bool align_corners = false;
  int64_t N = 1, C = 1, D = 1, H = 1, W = 1;  // input
  int64_t OD = 1, OH = 1, OW = 1;             // output positions (grid (N, OD, OH, OW, nsp))
  int64_t xs[5] = {0, 0, 0, 0, 0};            // input / grad_input strides (n, c, d, h, w)
  int64_t gs[5] = {0, 0, 0, 0, 0};            // grid / grad_grid strides (n, od, oh, ow, coordinate)
  int64_t os[5] = {0, 0, 0, 0, 0};            // output / grad_output strides (n, c, od, oh, ow)
};

// ---- one output position: its taps, its value, its backward contributions (every walk, CPU
// or GPU, computes each value and each contribution with these functions) ----

template <typename T>
struct GridAxes {
  GridAxis<T> x, y, z;
};

template <typename T>
REPMODE_HD GridAxes<T> grid_axes_of(const GridSampleGeom& g) {
  const bool three = g.nsp == 3;
  return GridAxes<T>{grid_axis<T>(g.W, g.padding, g.align_corners, three),
                     grid_axis<T>(g.H, g.padding, g.align_corners, three),
                     grid_axis<T>(g.D, g.padding, g.align_corners, three)};
}

// The taps of one output position: up to 16 (offset into an input plane at strides xs, weight);
// off < 0: outside the input. 2-d bilinear: nw, ne, sw, se; 3-d bilinear: (z, y, x) row-major;
// nearest: one; bicubic: 16, y row j outer, x tap i inner (the forward's nesting).
template <typename T>
struct GridTaps {
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
REPMODE_HD int64_t grid_plane_offset(const GridSampleGeom& g, int64_t z, int64_t y, int64_t x) {
  if (!grid_inside(x, g.W) || !grid_inside(y, g.H) || !grid_inside(z, g.D)) return -1;
  return z * g.xs[2] + y * g.xs[3] + x * g.xs[4];
}

template <typename T>
REPMODE_HD void grid_taps_at(const GridSampleGeom& g, const GridAxes<T>& ax, const T* gp, bool want_grad,
                             GridTaps<T>& t) {
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
      for (int i = 0; i < 4; ++i) t.off[j * 4 + i] = (xi[i] < 0 || yi[j] < 0) ? -1 : yi[j] * g.xs[3] + xi[i] * g.xs[4];
    t.count = 16;
    return;
  }
  const T x = grid_source(ax.x, gx, gmx);
  const T y = grid_source(ax.y, gy, gmy);
  if (g.nsp == 2) {
    if (g.interp == kGridNearest) {
      const int64_t i = grid_index(grid_round_even(x)), j = grid_index(grid_round_even(y));
      t.off[0] = grid_plane_offset<T>(g, 0, j, i);
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
    t.off[0] = grid_plane_offset<T>(g, 0, j, i);
    t.off[1] = grid_plane_offset<T>(g, 0, j, i + 1);
    t.off[2] = grid_plane_offset<T>(g, 0, j + 1, i);
    t.off[3] = grid_plane_offset<T>(g, 0, j + 1, i + 1);
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
    t.off[0] = grid_plane_offset<T>(g, k, j, i);
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
        t.off[q] = grid_plane_offset<T>(g, k + dz, j + dy, i + dx);
        t.w[q] = (t.wx[dx] * t.wy[dy]) * t.wz[dz];
      }
  t.count = 8;
}

template <typename T>
REPMODE_HD T grid_tap_value(const T* plane, int64_t off) {
  return off >= 0 ? plane[off] : T(0);
}

// One output of one channel plane from its taps.
template <typename T>
REPMODE_HD T grid_combine(const GridSampleGeom& g, const GridTaps<T>& t, const T* plane) {
  if (g.interp == kGridNearest) return grid_tap_value(plane, t.off[0]);
  if (g.interp == kGridBicubic) {
    T r[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t* o = t.off + j * 4;
      T s = repmode_fma(t.cx[0], grid_tap_value(plane, o[0]), t.cx[1] * grid_tap_value(plane, o[1]));
      s = s + t.cx[2] * grid_tap_value(plane, o[2]);
      r[j] = s + t.cx[3] * grid_tap_value(plane, o[3]);
    }
    T s = t.cy[0] * r[0];
    s = repmode_fma(t.cy[1], r[1], s);
    s = repmode_fma(t.cy[2], r[2], s);
    return canon(repmode_fma(t.cy[3], r[3], s));
  }
  if (g.nsp == 2) {
    T s = grid_tap_value(plane, t.off[0]) * t.w[0];
    s = repmode_fma(grid_tap_value(plane, t.off[1]), t.w[1], s);
    s = repmode_fma(grid_tap_value(plane, t.off[2]), t.w[2], s);
    return canon(repmode_fma(grid_tap_value(plane, t.off[3]), t.w[3], s));
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
REPMODE_HD void grid_backward_channel(const GridSampleGeom& g, const GridTaps<T>& t, const T* plane, T* gi, T go,
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
          const T v = grid_tap_value(plane, o);
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
      const T nw = grid_tap_value(plane, t.off[0]), ne = grid_tap_value(plane, t.off[1]);
      const T sw = grid_tap_value(plane, t.off[2]), se = grid_tap_value(plane, t.off[3]);
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
REPMODE_HD void grid_write_grad(const GridSampleGeom& g, const GridTaps<T>& t, const GridGrad<T>& acc, T* gg) {
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

}  // namespace repmode

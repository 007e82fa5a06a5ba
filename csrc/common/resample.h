// The canonical formulas of the resampling ops (docs/semantics.md, "Resampling"):
// upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d, upsample_linear1d,
// upsample_bilinear2d, upsample_bicubic2d, upsample_trilinear3d and their backward ops.
//
// Every op works on (n, c) planes of size (D, H, W) -> (OD, OH, OW); 1-d and 2-d ops have
// identity axes in front (size 1 -> 1, one tap of weight 1). Along each resampled axis, output
// index o reads K taps (K = 1 nearest, 2 linear, 4 cubic): input indices idx[0..K) and weights
// w[0..K), computed by resample_axis_taps from (o, I, O, align_corners, scale) with torch's
// formulas (UpSample.h), the source index with one fma.
//   * forward: the value of an output is nested per axis, W innermost:
//       r(d, h) = combine_W(x[d, h, idx_w[j]], w_w[j]); s(d) = combine_H(r(d, idx_h[j]), w_h[j]);
//       out = combine_D(s(idx_d[j]), w_d[j]);
//     combine(v, w) over K taps: K = 1: v[0] (pure selection, no arithmetic);
//     K >= 2: s = v[1] * w[1]; s = fma(v[0], w[0], s); then s = fma(v[j], w[j], s) for j = 2..K-1.
//     Interpolating modes write canon(out).
//   * backward: grad_input = +0.0; for each output (od, oh, ow) in increasing flat order, for each
//     tap (jd, jh, jw) row-major: c = (w_d[jd] * w_h[jh]) * w_w[jw] (two roundings; identity axes
//     and nearest taps have weight 1, so the product is exact there);
//     g[idx_d[jd], idx_h[jh], idx_w[jw]] = fma(c, grad_output, g[...]). Written canon(g).
// Antialiased modes (LINEAR_AA, CUBIC_AA): cnt[o] taps per output from resample_aa_taps (an axis of
// unchanged size is not resampled), combined by resample_combine_aa: s = v[0] w[0]; then fmas.
// Fast paths only change which planes (or channel lanes) a thread computes and, in the forward,
// compute each r(d, h) once per plane instead of once per output (same value, same bits).
#pragma once

#include <cstdint>

#include "defs.h"
#include "math.h"

namespace repmode {

// The resampling modes, defined here once (X(python_name, enumerator, code)); exported to Python as
// _C.codes()["ResampleMode"] (repmode/kernels/resample.py).
// clang-format off
#define REPMODE_RESAMPLE_MODES(X)                  \
  X(NEAREST,       kResampleNearest,      0) \
  X(NEAREST_EXACT, kResampleNearestExact, 1) \
  X(LINEAR,        kResampleLinear,       2) \
  X(CUBIC,         kResampleCubic,        3) \
  X(LINEAR_AA,     kResampleLinearAa,     4) \
  X(CUBIC_AA,      kResampleCubicAa,      5)
// clang-format on

enum ResampleMode : int {
#define REPMODE_X(python_name, name, code) name = code,
  REPMODE_RESAMPLE_MODES(REPMODE_X)
#undef REPMODE_X
};

constexpr int kResampleMaxTaps = 4;

REPMODE_HD int resample_tap_count(int mode) { return mode == kResampleLinear ? 2 : (mode == kResampleCubic ? 4 : 1); }

REPMODE_HD bool resample_is_aa(int mode) { return mode == kResampleLinearAa || mode == kResampleCubicAa; }

REPMODE_HD bool resample_interpolates(int mode) {
  return mode == kResampleLinear || mode == kResampleCubic || resample_is_aa(mode);
}

// floor(x) of a float as an integer (|x| < 2^62): exact.
REPMODE_HD int64_t resample_floorf(float x) {
  int64_t t = static_cast<int64_t>(x);
  if (static_cast<float>(t) > x) t -= 1;
  return t;
}

// torch's compute_scales_value<T>: T(1.0 / scale) (a double division rounded once to T) when a
// scale > 0 is given, else T(I) / T(O) (one division in T). `scale` <= 0 means none.
template <typename T>
REPMODE_HD T resample_scale_value(double scale, int64_t I, int64_t O) {
  return scale > 0.0 ? static_cast<T>(1.0 / scale) : static_cast<T>(I) / static_cast<T>(O);
}

// torch's area_pixel_compute_scale<T>.
template <typename T>
REPMODE_HD T resample_area_scale(int64_t I, int64_t O, bool align_corners, double scale) {
  if (align_corners) return O > 1 ? static_cast<T>(I - 1) / static_cast<T>(O - 1) : T(0);
  return resample_scale_value<T>(scale, I, O);
}

// torch's area_pixel_compute_source_index<T>, its multiply-add as one fma:
// align_corners: ratio * o; else fma(ratio, T(o) + 0.5, -0.5), raised to 0 unless cubic.
template <typename T>
REPMODE_HD T resample_source_index(T ratio, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return ratio * static_cast<T>(o);
  const T src = repmode_fma(ratio, static_cast<T>(o) + T(0.5), T(-0.5));
  return (!cubic && src < T(0)) ? T(0) : src;
}

// torch's guard_index_and_lambda: i = min(floor(float(real)), I - 1) (the floor of real rounded
// to float32, as torch's floorf does for float64 too); t = clamp(real - i, 0, 1).
template <typename T>
REPMODE_HD void resample_guard(T real, int64_t I, int64_t* i, T* t) {
  int64_t f = resample_floorf(static_cast<float>(real));
  if (f > I - 1) f = I - 1;
  T l = real - static_cast<T>(f);
  l = l < T(0) ? T(0) : l;
  l = l > T(1) ? T(1) : l;
  *i = f;
  *t = l;
}

// Cubic convolution kernels (A = -0.75), Horner steps as fmas.
template <typename T>
REPMODE_HD T resample_cubic1(T x, T A) {  // ((A + 2) x - (A + 3)) x x + 1
  const T p = repmode_fma(A + T(2), x, -(A + T(3)));
  return repmode_fma(p * x, x, T(1));
}
template <typename T>
REPMODE_HD T resample_cubic2(T x, T A) {  // ((A x - 5 A) x + 8 A) x - 4 A
  const T p = repmode_fma(A, x, -(T(5) * A));
  const T q = repmode_fma(p, x, T(8) * A);
  return repmode_fma(q, x, -(T(4) * A));
}

// The taps of output o along one axis of I inputs and O outputs: writes idx[0..K) and w[0..K),
// returns K. identity: the axis is not resampled (1-d and 2-d ops): one tap o, weight 1.
template <typename T>
REPMODE_HD int resample_axis_taps(int mode, bool identity, int64_t o, int64_t I, int64_t O, bool align_corners,
                                  double scale, int64_t* idx, T* w) {
  if (identity) {
    idx[0] = o;
    w[0] = T(1);
    return 1;
  }
  if (mode == kResampleNearest || mode == kResampleNearestExact) {
    int64_t i;
    if (mode == kResampleNearest && O == I) {
      i = o;
    } else if (mode == kResampleNearest && O == 2 * I) {
      i = o >> 1;
    } else {
      const float s = resample_scale_value<float>(scale, I, O);
      // nearest: floorf(o * s) in float32; nearest-exact: floorf of (o + 0.5) * s computed in
      // float64 and rounded to float32 (torch's nearest_neighbor_exact_compute_source_index)
      const float v = mode == kResampleNearest ? static_cast<float>(o) * s
                                               : static_cast<float>((static_cast<double>(o) + 0.5) * double(s));
      i = resample_floorf(v);
    }
    idx[0] = i < I - 1 ? i : I - 1;
    w[0] = T(1);
    return 1;
  }
  const T ratio = resample_area_scale<T>(I, O, align_corners, scale);
  if (mode == kResampleLinear) {
    if (O == I) {  // torch's "scale 1: copy" case: both taps on o, weights (1, 0)
      idx[0] = idx[1] = o;
      w[0] = T(1);
      w[1] = T(0);
      return 2;
    }
    int64_t i;
    T l1;
    resample_guard(resample_source_index(ratio, o, align_corners, false), I, &i, &l1);
    idx[0] = i;
    idx[1] = i + (i < I - 1 ? 1 : 0);
    w[0] = T(1) - l1;
    w[1] = l1;
    return 2;
  }
  // cubic
  int64_t i;
  T t;
  resample_guard(resample_source_index(ratio, o, align_corners, true), I, &i, &t);
  const T A = T(-0.75);
  // torch evaluates t + 1.0 and 1.0 - t in double and rounds them to T
  const T x1 = t;
  const T x2 = static_cast<T>(1.0 - static_cast<double>(t));
  w[0] = resample_cubic2(static_cast<T>(static_cast<double>(x1) + 1.0), A);
  w[1] = resample_cubic1(x1, A);
  w[2] = resample_cubic1(x2, A);
  w[3] = resample_cubic2(static_cast<T>(static_cast<double>(x2) + 1.0), A);
  for (int j = 0; j < 4; ++j) {
    int64_t k = i - 1 + j;
    k = k < I - 1 ? k : I - 1;
    idx[j] = k > 0 ? k : 0;
  }
  return 4;
}

// ---- antialiased modes (_upsample_bilinear2d_aa, _upsample_bicubic2d_aa): torch's
// _compute_indices_min_size_weights_aa. An axis whose output size equals its input size is not
// resampled (torch skips that pass). Output o reads the taps xmin .. xmin + size - 1 with
// normalised filter weights; the casts below are torch's (its double constants round to T).

// The filters: linear max(0, 1 - |x|); cubic (a = -0.5) k1(|x|) for |x| < 1, k2(|x|) for |x| < 2.
template <typename T>
REPMODE_HD T resample_aa_filter(int mode, T x) {
  const T a = x < T(0) ? -x : x;
  if (mode == kResampleLinearAa) return a < T(1) ? T(1) - a : T(0);
  const T A = T(-0.5);
  if (a < T(1)) return resample_cubic1(a, A);
  if (a < T(2)) return resample_cubic2(a, A);
  return T(0);
}

// The filter's support and the most taps an output reads.
template <typename T>
REPMODE_HD T resample_aa_support(int mode, T scale) {
  const double half = mode == kResampleLinearAa ? 1.0 : 2.0;  // interp_size * 0.5
  return scale >= T(1) ? static_cast<T>(half * double(scale)) : static_cast<T>(half);
}
template <typename T>
REPMODE_HD int64_t resample_aa_max_taps(int mode, T scale) {
  const T support = resample_aa_support<T>(mode, scale);
  int64_t c = static_cast<int64_t>(support);
  if (static_cast<T>(c) < support) c += 1;  // ceil
  return c * 2 + 1;
}

// The taps of output o: *xmin and the count (<= cap); w[0..count) normalised by their sum
// (a sequential sum from +0.0; a zero sum leaves them as they are).
template <typename T>
REPMODE_HD int64_t resample_aa_taps(int mode, int64_t o, int64_t I, T scale, int64_t cap, int64_t* xmin, T* w) {
  const T support = resample_aa_support<T>(mode, scale);
  const T center = static_cast<T>(double(scale) * (static_cast<double>(o) + 0.5));
  const T invscale = scale >= T(1) ? static_cast<T>(1.0 / double(scale)) : T(1);
  int64_t lo = static_cast<int64_t>(static_cast<double>(center - support) + 0.5);
  lo = lo > 0 ? lo : 0;
  int64_t hi = static_cast<int64_t>(static_cast<double>(center + support) + 0.5);
  hi = hi < I ? hi : I;
  int64_t size = hi - lo;
  size = size < 0 ? 0 : (size > cap ? cap : size);
  T total = T(0);
  for (int64_t j = 0; j < size; ++j) {
    const T d = static_cast<T>(j + lo) - center;  // (j + xmin - center) in T
    w[j] = resample_aa_filter<T>(mode, static_cast<T>((static_cast<double>(d) + 0.5) * double(invscale)));
    total = total + w[j];
  }
  if (total != T(0))
    for (int64_t j = 0; j < size; ++j) w[j] = w[j] / total;
  *xmin = lo;
  return size;
}

// The weighted sum of K tap values (see the header comment): v[1] w[1] first, then fmas of
// taps 0, 2, 3. K = 1 returns v[0] unchanged.
template <typename T>
REPMODE_HD T resample_combine(int K, const T* v, const T* w) {
  if (K == 1) return v[0];
  T s = v[1] * w[1];
  s = repmode_fma(v[0], w[0], s);
  for (int j = 2; j < K; ++j) s = repmode_fma(v[j], w[j], s);
  return s;
}

// The antialiased modes' sum (torch's loop): s = v[0] w[0]; s = fma(v[j], w[j], s) for j >= 1.
template <typename T>
REPMODE_HD T resample_combine_aa(int64_t K, const T* v, const T* w) {
  T s = v[0] * w[0];
  for (int64_t j = 1; j < K; ++j) s = repmode_fma(v[j], w[j], s);
  return s;
}

// One backward contribution: acc + c * g with one rounding.
template <typename T>
REPMODE_HD T resample_grad_add(T acc, T c, T g) {
  return repmode_fma(c, g, acc);
}

// Sizes, strides and arguments of one call.
struct ResampleGeom {
  int mode = 0;
  int nsp = 2;                             // resampled axes: the last nsp of (D, H, W)
  int64_t N = 1, C = 1, I[3] = {1, 1, 1};  // input (D, H, W)
  int64_t O[3] = {1, 1, 1};                // output (OD, OH, OW)
  bool align_corners = false;
  double scale[3] = {0.0, 0.0, 0.0};  // per axis; <= 0: none
  int64_t xs[5] = {0, 0, 0, 0, 0};    // input / grad_input strides (n, c, d, h, w)
  int64_t os[5] = {0, 0, 0, 0, 0};    // output / grad_output strides
};

REPMODE_HD bool resample_identity_axis(const ResampleGeom& g, int a) { return a < 3 - g.nsp; }

template <typename T>
REPMODE_HD int resample_taps_of(const ResampleGeom& g, int a, int64_t o, int64_t* idx, T* w) {
  return resample_axis_taps<T>(g.mode, resample_identity_axis(g, a), o, g.I[a], g.O[a], g.align_corners, g.scale[a],
                               idx, w);
}

// One forward output (n, c, od, oh, ow), the nested formula written plainly.
template <typename T>
REPMODE_HD T resample_output_at(const ResampleGeom& g, const T* x, int64_t n, int64_t c, int64_t od, int64_t oh,
                                int64_t ow) {
  int64_t id[kResampleMaxTaps], ih[kResampleMaxTaps], iw[kResampleMaxTaps];
  T wd[kResampleMaxTaps], wh[kResampleMaxTaps], ww[kResampleMaxTaps];
  const int kd = resample_taps_of<T>(g, 0, od, id, wd);
  const int kh = resample_taps_of<T>(g, 1, oh, ih, wh);
  const int kw = resample_taps_of<T>(g, 2, ow, iw, ww);
  const T* xp = x + n * g.xs[0] + c * g.xs[1];
  T sd[kResampleMaxTaps];
  for (int a = 0; a < kd; ++a) {
    T sh[kResampleMaxTaps];
    for (int b = 0; b < kh; ++b) {
      T v[kResampleMaxTaps];
      for (int e = 0; e < kw; ++e) v[e] = xp[id[a] * g.xs[2] + ih[b] * g.xs[3] + iw[e] * g.xs[4]];
      sh[b] = resample_combine(kw, v, ww);
    }
    sd[a] = resample_combine(kh, sh, wh);
  }
  const T r = resample_combine(kd, sd, wd);
  return resample_interpolates(g.mode) ? canon(r) : r;
}

}  // namespace repmode

// The canonical orders of the pooling ops (docs/semantics.md, "Pooling").
//
// Every pooling op is handled as a 3-d one over (D, H, W) per (n, c) plane (2-d: D = 1 with a
// kernel of 1, stride 1, no padding along D). A window is the product of one span per axis:
// positions start, start + step, ..., start + (count - 1) * step. Window positions are always
// visited row-major: d outermost, then h, then w. The flat index of a position inside its
// plane is (d * H + h) * W + w (torch's index for 2-d and 3-d max pooling).
//   * max:  m = -inf, best = the flat index of the window's first position; for each position
//           p in order: if (x_p > m || x_p is NaN) { m = x_p; best = p }. Output canon(m), best.
//   * avg:  s = +0.0; s = s + x_p for each position in order; output canon(s / T(divisor)).
//           An empty window (a count of 0) gives +0.0.
//   * backward of max: grad_input = +0.0 everywhere, then for each output o in increasing flat
//           output order (row-major over (od, oh, ow)): grad_input[index_o] += grad_output_o.
//   * backward of avg: grad_input = +0.0 everywhere, then for each output o in increasing flat
//           output order: delta = grad_output_o / T(divisor_o) (one division) and
//           grad_input[p] += delta for each position p of o's window.
// Fast paths partition (n, c) planes or channel lanes among threads; each element's sequence
// of operations is the one above.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "defs.h"

namespace repmode {

// One axis of a pooling window.
struct PoolSpan {
  int64_t start;   // first input position (inside [0, I))
  int64_t step;    // distance between positions (the dilation of max pooling, else 1)
  int64_t count;   // number of positions inside the input (0: empty)
  int64_t extent;  // the divisor's length when padded positions count (avg with count_include_pad)
};

// The pooling kinds, defined here once (X(python_name, enumerator, code)); exported to Python as
// _C.codes()["PoolKind"] (repmode/kernels/pooling.py).
// clang-format off
#define REPMODE_POOL_KINDS(X)             \
  X(MAX,          kPoolMax,         0) \
  X(AVG,          kPoolAvg,         1) \
  X(ADAPTIVE_AVG, kPoolAdaptiveAvg, 2) \
  X(ADAPTIVE_MAX, kPoolAdaptiveMax, 3)
// clang-format on

enum PoolKind : int {
#define REPMODE_X(python_name, name, code) name = code,
  REPMODE_POOL_KINDS(REPMODE_X)
#undef REPMODE_X
};

// Sliding max pooling: output o with kernel k, stride s, padding p, dilation d over I inputs
// (torch: start = o*s - p moved up by whole dilations into the input, end = min(start + (k-1)*d
// + 1, I)).
REPMODE_HD PoolSpan pool_span_max(int64_t o, int64_t k, int64_t s, int64_t p, int64_t d, int64_t I) {
  int64_t start = o * s - p;
  const int64_t end0 = start + (k - 1) * d + 1;
  const int64_t end = end0 < I ? end0 : I;
  while (start < 0) start += d;
  const int64_t count = start < end ? (end - start + d - 1) / d : 0;
  return PoolSpan{start, d, count, count};
}

// Sliding average pooling (torch: end = min(o*s - p + k, I + p) before clipping to the input;
// extent = the padded window length used when count_include_pad is set).
REPMODE_HD PoolSpan pool_span_avg(int64_t o, int64_t k, int64_t s, int64_t p, int64_t I) {
  int64_t start = o * s - p;
  const int64_t end0 = (start + k < I + p) ? start + k : I + p;
  const int64_t extent = end0 - start;
  if (start < 0) start = 0;
  const int64_t end = end0 < I ? end0 : I;
  const int64_t count = start < end ? end - start : 0;
  return PoolSpan{start, 1, count, extent};
}

// Adaptive pooling of I inputs to O outputs: [floor(o*I/O), ceil((o+1)*I/O)).
REPMODE_HD PoolSpan pool_span_adaptive(int64_t o, int64_t O, int64_t I) {
  const int64_t start = (o / O) * I + ((o % O) * I) / O;
  const int64_t end = 1 + ((o + 1) * I - 1) / O;
  return PoolSpan{start, 1, end - start, end - start};
}

// The span of output o along one axis for a pooling kind.
REPMODE_HD PoolSpan pool_span(int kind, int64_t o, int64_t O, int64_t I, int64_t k, int64_t s, int64_t p, int64_t d) {
  if (kind == kPoolMax) return pool_span_max(o, k, s, p, d, I);
  if (kind == kPoolAvg) return pool_span_avg(o, k, s, p, I);
  return pool_span_adaptive(o, O, I);
}

// The divisor of an average window: divisor_override when given (nonzero; torch allows a negative
// one), else the product of the extents (count_include_pad) or of the counts.
REPMODE_HD int64_t pool_divisor(const PoolSpan& a, const PoolSpan& b, const PoolSpan& c, bool count_include_pad,
                                int64_t divisor_override) {
  if (divisor_override != 0) return divisor_override;
  if (count_include_pad) return a.extent * b.extent * c.extent;
  return a.count * b.count * c.count;
}

// The span rule of a kind: adaptive max pooling uses the adaptive windows.
REPMODE_HD int pool_span_kind(int kind) { return kind == kPoolAdaptiveMax ? kPoolAdaptiveAvg : kind; }

// The divisor of an average output of a kind: count_include_pad and divisor_override apply to
// sliding average pooling only.
REPMODE_HD int64_t pool_window_divisor(int kind, const PoolSpan& a, const PoolSpan& b, const PoolSpan& c,
                                       bool count_include_pad, int64_t divisor_override) {
  return pool_divisor(a, b, c, kind == kPoolAvg && count_include_pad, kind == kPoolAvg ? divisor_override : 0);
}

// Sizes, strides (in elements, order n, c, d, h, w) and arguments of one pooling call.
struct PoolGeom {
  int kind = 0;                               // repmode::PoolKind
  int64_t N = 1, C = 1, D = 1, H = 1, W = 1;  // input
  int64_t OD = 1, OH = 1, OW = 1;             // output
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor_override = 0;     // 0: none
  int64_t xs[5] = {0, 0, 0, 0, 0};  // input (forward) / grad_input (backward) strides
  int64_t os[5] = {0, 0, 0, 0, 0};  // output (forward) / grad_output (backward) strides
  int64_t is[5] = {0, 0, 0, 0, 0};  // index strides (max kinds)
};

// The geometry from the bindings' arguments: in_sizes = (N, C, D, H, W), out_sizes = (OD, OH, OW),
// k, s, p, dil 3 each, strides 5 each (host only; `who` prefixes the error).
inline PoolGeom pool_geom_of(int kind, const std::vector<int64_t>& in_sizes, const std::vector<int64_t>& out_sizes,
                             const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                             const std::vector<int64_t>& p, const std::vector<int64_t>& dil, bool count_include_pad,
                             int64_t divisor_override, const std::vector<int64_t>& xs, const std::vector<int64_t>& os,
                             const std::vector<int64_t>& is, const char* who) {
  if (in_sizes.size() != 5 || out_sizes.size() != 3 || k.size() != 3 || s.size() != 3 || p.size() != 3 ||
      dil.size() != 3 || xs.size() != 5 || os.size() != 5 || is.size() != 5)
    throw std::invalid_argument(std::string(who) + ": bad geometry lengths");
  PoolGeom g;
  g.kind = kind;
  g.N = in_sizes[0];
  g.C = in_sizes[1];
  g.D = in_sizes[2];
  g.H = in_sizes[3];
  g.W = in_sizes[4];
  g.OD = out_sizes[0];
  g.OH = out_sizes[1];
  g.OW = out_sizes[2];
  for (int i = 0; i < 3; ++i) {
    g.k[i] = k[i];
    g.s[i] = s[i];
    g.p[i] = p[i];
    g.dil[i] = dil[i];
  }
  for (int i = 0; i < 5; ++i) {
    g.xs[i] = xs[i];
    g.os[i] = os[i];
    g.is[i] = is[i];
  }
  g.count_include_pad = count_include_pad;
  g.divisor_override = divisor_override;
  return g;
}

REPMODE_HD bool pool_is_max(int kind) { return kind == kPoolMax || kind == kPoolAdaptiveMax; }

// The span of output o along axis a (0 = D, 1 = H, 2 = W) of a call.
REPMODE_HD PoolSpan pool_span_of(const PoolGeom& g, int a, int64_t o) {
  const int64_t O = a == 0 ? g.OD : (a == 1 ? g.OH : g.OW);
  const int64_t I = a == 0 ? g.D : (a == 1 ? g.H : g.W);
  return pool_span(pool_span_kind(g.kind), o, O, I, g.k[a], g.s[a], g.p[a], g.dil[a]);
}

template <typename T>
REPMODE_HD T pool_neg_inf();
template <>
REPMODE_HD float pool_neg_inf<float>() {
  return float_from_bits(0xff800000u);
}
template <>
REPMODE_HD double pool_neg_inf<double>() {
  return double_from_bits(0xfff0000000000000ull);
}

// One step of the max rule: does value v replace the running maximum m?
template <typename T>
REPMODE_HD bool pool_max_takes(T v, T m) {
  return v > m || v != v;
}

// Max over the window sd x sh x sw of a plane of size (., H, W); load(d, h, w) reads one input.
template <typename T, typename Load>
REPMODE_HD T pool_max_window(const PoolSpan& sd, const PoolSpan& sh, const PoolSpan& sw, int64_t H, int64_t W,
                             const Load& load, int64_t* index) {
  T m = pool_neg_inf<T>();
  int64_t best = (sd.start * H + sh.start) * W + sw.start;
  for (int64_t a = 0; a < sd.count; ++a) {
    const int64_t id = sd.start + a * sd.step;
    for (int64_t b = 0; b < sh.count; ++b) {
      const int64_t ih = sh.start + b * sh.step;
      for (int64_t c = 0; c < sw.count; ++c) {
        const int64_t iw = sw.start + c * sw.step;
        const T v = load(id, ih, iw);
        if (pool_max_takes(v, m)) {
          m = v;
          best = (id * H + ih) * W + iw;
        }
      }
    }
  }
  *index = best;
  return canon(m);
}

// Average over the window: the sequential sum from +0.0, then one division by the divisor.
template <typename T, typename Load>
REPMODE_HD T pool_avg_window(const PoolSpan& sd, const PoolSpan& sh, const PoolSpan& sw, int64_t divisor,
                             const Load& load) {
  if (sd.count <= 0 || sh.count <= 0 || sw.count <= 0) return T(0.0);
  T s = T(0.0);
  for (int64_t a = 0; a < sd.count; ++a)
    for (int64_t b = 0; b < sh.count; ++b)
      for (int64_t c = 0; c < sw.count; ++c) s = s + load(sd.start + a, sh.start + b, sw.start + c);
  return canon(s / T(divisor));
}

// One step of the backward accumulation into a grad_input element (from +0.0): the term of the
// next output, in increasing output order.
template <typename T>
REPMODE_HD T pool_grad_add(T acc, T term) {
  return canon(T(acc + term));
}

// The term an average output's gradient adds to each input of its window.
template <typename T>
REPMODE_HD T pool_avg_grad_term(T grad_output, int64_t divisor) {
  return grad_output / T(divisor);
}

// One forward output (n, c, od, oh, ow) of a call: the max (and its index, when index is not
// null) or the average of its window, written at the call's strides.
template <typename T>
REPMODE_HD void pool_forward_at(const PoolGeom& g, const T* x, T* out, int64_t* index, int64_t n, int64_t c, int64_t od,
                                int64_t oh, int64_t ow) {
  const T* xp = x + n * g.xs[0] + c * g.xs[1];
  auto load = [&](int64_t d, int64_t h, int64_t w) { return xp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
  const PoolSpan a = pool_span_of(g, 0, od), b = pool_span_of(g, 1, oh), cc = pool_span_of(g, 2, ow);
  T& o = out[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]];
  if (pool_is_max(g.kind)) {
    int64_t best;
    o = pool_max_window<T>(a, b, cc, g.H, g.W, load, &best);
    if (index) index[n * g.is[0] + c * g.is[1] + od * g.is[2] + oh * g.is[3] + ow * g.is[4]] = best;
  } else {
    o = pool_avg_window<T>(a, b, cc, pool_window_divisor(g.kind, a, b, cc, g.count_include_pad, g.divisor_override),
                           load);
  }
}

}  // namespace repmode

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

#include "defs.h"

namespace repmode {

// One axis of a pooling window.
struct PoolSpan {
  int64_t start;   // first input position (inside [0, I))
  int64_t step;    // distance between positions (the dilation of max pooling, else 1)
  int64_t count;   // number of positions inside the input (0: empty)
  int64_t extent;  // the divisor's length when padded positions count (avg with count_include_pad)
};

enum PoolKind : int { kPoolMax = 0, kPoolAvg = 1, kPoolAdaptiveAvg = 2, kPoolAdaptiveMax = 3 };

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
REPMODE_HD PoolSpan pool_span(int kind, int64_t o, int64_t O, int64_t I, int64_t k, int64_t s, int64_t p,
                              int64_t d) {
  if (kind == kPoolMax) return pool_span_max(o, k, s, p, d, I);
  if (kind == kPoolAvg) return pool_span_avg(o, k, s, p, I);
  return pool_span_adaptive(o, O, I);
}

// The divisor of an average window: divisor_override when > 0, else the product of the extents
// (count_include_pad) or of the counts.
REPMODE_HD int64_t pool_divisor(const PoolSpan& a, const PoolSpan& b, const PoolSpan& c, bool count_include_pad,
                                int64_t divisor_override) {
  if (divisor_override > 0) return divisor_override;
  if (count_include_pad) return a.extent * b.extent * c.extent;
  return a.count * b.count * c.count;
}

template <typename T> REPMODE_HD T pool_neg_inf();
template <> REPMODE_HD float pool_neg_inf<float>() { return float_from_bits(0xff800000u); }
template <> REPMODE_HD double pool_neg_inf<double>() { return double_from_bits(0xfff0000000000000ull); }

// One step of the max rule: does value v replace the running maximum m?
template <typename T> REPMODE_HD bool pool_max_takes(T v, T m) { return v > m || v != v; }

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

// The term an average output's gradient adds to each input of its window.
template <typename T> REPMODE_HD T pool_avg_grad_term(T grad_output, int64_t divisor) {
  return grad_output / T(divisor);
}

}  // namespace repmode

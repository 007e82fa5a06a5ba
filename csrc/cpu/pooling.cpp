// CPU pooling: two walks over the same canonical sequences (csrc/common/pooling.h).
//  * plane walk: threads take whole (n, c) planes; each plane is computed output by output.
//  * lane walk (channel stride 1, e.g. channels_last): threads take output positions (forward)
//    or (n, channel block) pairs (backward); kLanes channels advance together, each channel
//    running exactly the scalar sequence of its own plane.
#include "pooling.h"
#include "dispatch.h"
#include "entry_points.h"

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/pooling.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

constexpr int64_t kLanes = 64;

struct Spans {
  std::vector<PoolSpan> d, h, w;
};

Spans make_spans(const PoolGeom& g) {
  Spans sp;
  sp.d.resize(g.OD);
  sp.h.resize(g.OH);
  sp.w.resize(g.OW);
  for (int64_t o = 0; o < g.OD; ++o) sp.d[o] = pool_span_of(g, 0, o);
  for (int64_t o = 0; o < g.OH; ++o) sp.h[o] = pool_span_of(g, 1, o);
  for (int64_t o = 0; o < g.OW; ++o) sp.w[o] = pool_span_of(g, 2, o);
  return sp;
}

bool is_max(const PoolGeom& g) { return pool_is_max(g.kind); }

// Element offset (grad_input strides) of each flat plane index (d * H + h) * W + w.
std::vector<int64_t> plane_offsets(const PoolGeom& g) {
  std::vector<int64_t> off(static_cast<size_t>(g.D * g.H * g.W));
  int64_t i = 0;
  for (int64_t d = 0; d < g.D; ++d)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t w = 0; w < g.W; ++w) off[i++] = d * g.xs[2] + h * g.xs[3] + w * g.xs[4];
  return off;
}

int64_t window_divisor(const PoolGeom& g, const PoolSpan& a, const PoolSpan& b, const PoolSpan& c) {
  return pool_window_divisor(g.kind, a, b, c, g.count_include_pad, g.divisor_override);
}

[[noreturn]] void bad_index() {
  throw std::out_of_range("max pooling backward: an index lies outside its input plane");
}

// ---------------------------------------------------------------- forward, plane walk
// Outputs ow in [lo, hi) of a sliding (max or avg) pooling have full, unclipped w spans:
// start = ow*s - p, count = k. For them the window loops run outermost and the ow loop
// innermost, so one pass over a window offset serves a whole output row; each output still
// visits its positions in row-major window order.
struct Interior {
  int64_t lo = 0, hi = 0;
};

Interior interior_w(const PoolGeom& g, const std::vector<PoolSpan>& w) {
  Interior r;
  if (g.kind != kPoolMax && g.kind != kPoolAvg) return r;
  const int64_t full = g.kind == kPoolMax ? (g.k[2] - 1) * g.dil[2] + 1 : g.k[2];
  int64_t lo = 0;
  while (lo < g.OW && (lo * g.s[2] - g.p[2] < 0 || lo * g.s[2] - g.p[2] + full > g.W)) ++lo;
  int64_t hi = lo;
  while (hi < g.OW && hi * g.s[2] - g.p[2] + full <= g.W) ++hi;
  for (int64_t o = lo; o < hi; ++o)  // (always true by construction; kept as the definition)
    if (w[o].count != g.k[2] || w[o].start != o * g.s[2] - g.p[2]) return Interior{};
  r.lo = lo;
  r.hi = hi;
  return r;
}

template <typename T>
void forward_planes(const T* x, T* out, int64_t* index, const PoolGeom& g, const Spans& sp, int nthreads) {
  const bool mx = is_max(g);
  const Interior in = interior_w(g, sp.w);
  const int64_t work = g.OD * g.OH * g.OW * 8;
  rows_parallel(g.N * g.C, nthreads, work, [&](int64_t p0, int64_t p1) {
    std::vector<T> acc(static_cast<size_t>(in.hi - in.lo));
    std::vector<int64_t> best(static_cast<size_t>(mx ? in.hi - in.lo : 0));
    std::vector<T> tmp(static_cast<size_t>(mx ? in.hi - in.lo : 0));
    for (int64_t pl = p0; pl < p1; ++pl) {
      const int64_t n = pl / g.C, c = pl % g.C;
      const T* xp = x + n * g.xs[0] + c * g.xs[1];
      T* op = out + n * g.os[0] + c * g.os[1];
      int64_t* ip = mx && index ? index + n * g.is[0] + c * g.is[1] : nullptr;
      auto load = [&](int64_t d, int64_t h, int64_t w) { return xp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const PoolSpan& a = sp.d[od];
          const PoolSpan& b = sp.h[oh];
          T* orow = op + od * g.os[2] + oh * g.os[3];
          int64_t* irow = ip ? ip + od * g.is[2] + oh * g.is[3] : nullptr;
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            if (ow == in.lo && in.hi > in.lo) {
              ow = in.hi - 1;
              continue;
            }
            const PoolSpan& cc = sp.w[ow];
            if (mx) {
              int64_t bi;
              orow[ow * g.os[4]] = pool_max_window<T>(a, b, cc, g.H, g.W, load, &bi);
              if (irow) irow[ow * g.is[4]] = bi;
            } else {
              orow[ow * g.os[4]] = pool_avg_window<T>(a, b, cc, window_divisor(g, a, b, cc), load);
            }
          }
          const int64_t m = in.hi - in.lo;
          if (m <= 0) continue;
          const int64_t sx = g.s[2] * g.xs[4];
          if (mx) {
            const int64_t first = (a.start * g.H + b.start) * g.W + (in.lo * g.s[2] - g.p[2]);
            for (int64_t j = 0; j < m; ++j) {
              acc[j] = pool_neg_inf<T>();
              best[j] = first + j * g.s[2];
            }
            for (int64_t i = 0; i < a.count; ++i) {
              const int64_t id = a.start + i * a.step;
              for (int64_t k = 0; k < b.count; ++k) {
                const int64_t ih = b.start + k * b.step;
                for (int64_t l = 0; l < g.k[2]; ++l) {
                  const int64_t iw0 = in.lo * g.s[2] - g.p[2] + l * g.dil[2];
                  const T* row = xp + id * g.xs[2] + ih * g.xs[3] + iw0 * g.xs[4];
                  const int64_t pos0 = (id * g.H + ih) * g.W + iw0;
                  const T* vals = row;
                  if (sx != 1) {  // gather the strided inputs first: the select loop then vectorizes
                    for (int64_t j = 0; j < m; ++j) tmp[j] = row[j * sx];
                    vals = tmp.data();
                  }
                  for (int64_t j = 0; j < m; ++j) {
                    const T v = vals[j];
                    const bool take = pool_max_takes(v, acc[j]);
                    acc[j] = take ? v : acc[j];
                    best[j] = take ? pos0 + j * g.s[2] : best[j];
                  }
                }
              }
            }
            for (int64_t j = 0; j < m; ++j) orow[(in.lo + j) * g.os[4]] = canon(acc[j]);
            if (irow)
              for (int64_t j = 0; j < m; ++j) irow[(in.lo + j) * g.is[4]] = best[j];
          } else {
            const PoolSpan& cc = sp.w[in.lo];
            if (a.count <= 0 || b.count <= 0) {
              for (int64_t j = 0; j < m; ++j) orow[(in.lo + j) * g.os[4]] = T(0.0);
              continue;
            }
            const T dv = T(window_divisor(g, a, b, cc));
            for (int64_t j = 0; j < m; ++j) acc[j] = T(0.0);
            for (int64_t i = 0; i < a.count; ++i)
              for (int64_t k = 0; k < b.count; ++k)
                for (int64_t l = 0; l < g.k[2]; ++l) {
                  const T* row =
                      xp + (a.start + i) * g.xs[2] + (b.start + k) * g.xs[3] + (in.lo * g.s[2] - g.p[2] + l) * g.xs[4];
                  for (int64_t j = 0; j < m; ++j) acc[j] = acc[j] + row[j * sx];
                }
            for (int64_t j = 0; j < m; ++j) orow[(in.lo + j) * g.os[4]] = canon(acc[j] / dv);
          }
        }
    }
  });
}

// ---------------------------------------------------------------- forward, lane walk (xs[1] == os[1] == 1)
template <typename T>
REPMODE_INLINE void max_lanes(const T* xq, int64_t nl, const PoolSpan& a, const PoolSpan& b, const PoolSpan& cc,
                              const PoolGeom& g, T* o, int64_t* io) {
  T m[kLanes];
  int64_t best[kLanes];
  const T ninf = pool_neg_inf<T>();
  const int64_t first = (a.start * g.H + b.start) * g.W + cc.start;
  for (int64_t j = 0; j < nl; ++j) {
    m[j] = ninf;
    best[j] = first;
  }
  for (int64_t i = 0; i < a.count; ++i) {
    const int64_t id = a.start + i * a.step;
    for (int64_t k = 0; k < b.count; ++k) {
      const int64_t ih = b.start + k * b.step;
      for (int64_t l = 0; l < cc.count; ++l) {
        const int64_t iw = cc.start + l * cc.step;
        const T* v = xq + id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4];
        const int64_t pos = (id * g.H + ih) * g.W + iw;
        for (int64_t j = 0; j < nl; ++j) {
          const bool take = pool_max_takes(v[j], m[j]);
          m[j] = take ? v[j] : m[j];
          best[j] = take ? pos : best[j];
        }
      }
    }
  }
  for (int64_t j = 0; j < nl; ++j) o[j] = canon(m[j]);
  if (io)
    for (int64_t j = 0; j < nl; ++j) io[j] = best[j];
}

template <typename T>
REPMODE_INLINE void avg_lanes(const T* xq, int64_t nl, const PoolSpan& a, const PoolSpan& b, const PoolSpan& cc,
                              int64_t divisor, const PoolGeom& g, T* o) {
  T s[kLanes];
  for (int64_t j = 0; j < nl; ++j) s[j] = T(0.0);
  if (a.count <= 0 || b.count <= 0 || cc.count <= 0) {
    for (int64_t j = 0; j < nl; ++j) o[j] = T(0.0);
    return;
  }
  for (int64_t i = 0; i < a.count; ++i)
    for (int64_t k = 0; k < b.count; ++k)
      for (int64_t l = 0; l < cc.count; ++l) {
        const T* v = xq + (a.start + i) * g.xs[2] + (b.start + k) * g.xs[3] + (cc.start + l) * g.xs[4];
        for (int64_t j = 0; j < nl; ++j) s[j] = s[j] + v[j];
      }
  const T dv = T(divisor);
  for (int64_t j = 0; j < nl; ++j) o[j] = canon(s[j] / dv);
}

template <typename T>
void forward_lanes(const T* x, T* out, int64_t* index, const PoolGeom& g, const Spans& sp, int nthreads) {
  const bool mx = is_max(g);
  const int64_t positions = g.OD * g.OH * g.OW;
  rows_parallel(g.N * positions, nthreads, g.C * 8, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / positions, q = r % positions;
      const int64_t od = q / (g.OH * g.OW), oh = (q / g.OW) % g.OH, ow = q % g.OW;
      const PoolSpan& a = sp.d[od];
      const PoolSpan& b = sp.h[oh];
      const PoolSpan& cc = sp.w[ow];
      const T* xn = x + n * g.xs[0];
      T* o = out + n * g.os[0] + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
      int64_t* io = mx && index ? index + n * g.is[0] + od * g.is[2] + oh * g.is[3] + ow * g.is[4] : nullptr;
      const int64_t divisor = mx ? 1 : window_divisor(g, a, b, cc);
      for (int64_t c0 = 0; c0 < g.C; c0 += kLanes) {
        const int64_t nl = g.C - c0 < kLanes ? g.C - c0 : kLanes;
        if (mx)
          max_lanes(xn + c0, nl, a, b, cc, g, o + c0, io ? io + c0 : nullptr);
        else
          avg_lanes(xn + c0, nl, a, b, cc, divisor, g, o + c0);
      }
    }
  });
}

// ---------------------------------------------------------------- backward, plane walk
template <typename T>
void backward_planes(const T* go, const int64_t* index, T* gi, const PoolGeom& g, const Spans& sp, int nthreads) {
  const bool mx = is_max(g);
  const int64_t plane = g.D * g.H * g.W;
  const bool dense = g.xs[4] == 1 && g.xs[3] == g.W && (g.D == 1 || g.xs[2] == g.H * g.W);
  const std::vector<int64_t> off = mx && !dense ? plane_offsets(g) : std::vector<int64_t>();
  const int64_t outputs = g.OD * g.OH * g.OW;
  // grad_output and indices dense per plane: outputs in increasing order are consecutive
  const bool flat_out = g.os[4] == 1 && g.os[3] == g.OW && (g.OD == 1 || g.os[2] == g.OH * g.OW) && g.is[4] == 1 &&
                        g.is[3] == g.OW && (g.OD == 1 || g.is[2] == g.OH * g.OW);
  std::atomic<bool> bad{false};
  rows_parallel(g.N * g.C, nthreads, (g.OD * g.OH * g.OW + plane) * 4, [&](int64_t p0, int64_t p1) {
    for (int64_t pl = p0; pl < p1; ++pl) {
      const int64_t n = pl / g.C, c = pl % g.C;
      T* gp = gi + n * g.xs[0] + c * g.xs[1];
      const T* op = go + n * g.os[0] + c * g.os[1];
      auto at = [&](int64_t d, int64_t h, int64_t w) -> T& { return gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
      if (dense) {
        for (int64_t i = 0; i < plane; ++i) gp[i] = T(0.0);
      } else {
        for (int64_t d = 0; d < g.D; ++d)
          for (int64_t h = 0; h < g.H; ++h)
            for (int64_t w = 0; w < g.W; ++w) at(d, h, w) = T(0.0);
      }
      if (mx && dense && flat_out) {
        const int64_t* ip = index + n * g.is[0] + c * g.is[1];
        bool ok = true;
        for (int64_t o = 0; o < outputs; ++o) {
          const int64_t i = ip[o];
          ok &= (i >= 0) & (i < plane);
          const int64_t j = i >= 0 && i < plane ? i : 0;
          gp[j] = pool_grad_add(gp[j], i == j ? op[o] : T(0.0));
        }
        if (!ok) bad = true;
      } else if (mx) {
        const int64_t* ip = index + n * g.is[0] + c * g.is[1];
        for (int64_t od = 0; od < g.OD; ++od)
          for (int64_t oh = 0; oh < g.OH; ++oh)
            for (int64_t ow = 0; ow < g.OW; ++ow) {
              const int64_t i = ip[od * g.is[2] + oh * g.is[3] + ow * g.is[4]];
              if (i < 0 || i >= plane) {
                bad = true;
                continue;
              }
              const T v = op[od * g.os[2] + oh * g.os[3] + ow * g.os[4]];
              T& dst = gp[dense ? i : off[i]];
              dst = pool_grad_add(dst, v);
            }
      } else {
        for (int64_t od = 0; od < g.OD; ++od)
          for (int64_t oh = 0; oh < g.OH; ++oh)
            for (int64_t ow = 0; ow < g.OW; ++ow) {
              const PoolSpan& a = sp.d[od];
              const PoolSpan& b = sp.h[oh];
              const PoolSpan& cc = sp.w[ow];
              if (a.count <= 0 || b.count <= 0 || cc.count <= 0) continue;
              const T delta =
                  pool_avg_grad_term(op[od * g.os[2] + oh * g.os[3] + ow * g.os[4]], window_divisor(g, a, b, cc));
              for (int64_t i = 0; i < a.count; ++i)
                for (int64_t k = 0; k < b.count; ++k)
                  for (int64_t l = 0; l < cc.count; ++l) {
                    T& dst = at(a.start + i, b.start + k, cc.start + l);
                    dst = pool_grad_add(dst, delta);
                  }
            }
      }
    }
  });
  if (bad) bad_index();
}

// ---------------------------------------------------------------- backward, lane walk (xs[1] == os[1] == 1)
template <typename T>
void backward_lanes(const T* go, const int64_t* index, T* gi, const PoolGeom& g, const Spans& sp, int nthreads) {
  const bool mx = is_max(g);
  const int64_t plane = g.D * g.H * g.W;
  const int64_t blocks = (g.C + kLanes - 1) / kLanes;
  const std::vector<int64_t> off = mx ? plane_offsets(g) : std::vector<int64_t>();
  const bool packed = blocks == 1 && g.xs[4] == g.C && g.xs[3] == g.W * g.C && (g.D == 1 || g.xs[2] == g.H * g.W * g.C);
  std::atomic<bool> bad{false};
  rows_parallel(g.N * blocks, nthreads, (g.OD * g.OH * g.OW + plane) * kLanes * 2, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / blocks, c0 = (r % blocks) * kLanes;
      const int64_t nl = g.C - c0 < kLanes ? g.C - c0 : kLanes;
      T* gn = gi + n * g.xs[0] + c0;
      const T* on = go + n * g.os[0] + c0;
      auto at = [&](int64_t d, int64_t h, int64_t w) { return gn + d * g.xs[2] + h * g.xs[3] + w * g.xs[4]; };
      if (packed) {  // this batch's gradient is one dense block of plane * C elements
        std::memset(gn, 0, sizeof(T) * static_cast<size_t>(plane * g.C));
      } else {
        for (int64_t d = 0; d < g.D; ++d)
          for (int64_t h = 0; h < g.H; ++h)
            for (int64_t w = 0; w < g.W; ++w) {
              T* dst = at(d, h, w);
              for (int64_t j = 0; j < nl; ++j) dst[j] = T(0.0);
            }
      }
      const int64_t is1 = g.is[1];
      const int64_t* offs = off.data();
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const T* v = on + od * g.os[2] + oh * g.os[3] + ow * g.os[4];
            if (mx) {
              const int64_t* ip = index + n * g.is[0] + c0 * g.is[1] + od * g.is[2] + oh * g.is[3] + ow * g.is[4];
              bool ok = true;
              for (int64_t j = 0; j < nl; ++j) {
                const int64_t i = ip[j * is1];
                const bool in = (i >= 0) & (i < plane);
                ok &= in;
                T* dst = gn + offs[in ? i : 0] + j;
                *dst = pool_grad_add(*dst, in ? v[j] : T(0.0));
              }
              if (!ok) bad = true;
            } else {
              const PoolSpan& a = sp.d[od];
              const PoolSpan& b = sp.h[oh];
              const PoolSpan& cc = sp.w[ow];
              if (a.count <= 0 || b.count <= 0 || cc.count <= 0) continue;
              const int64_t divisor = window_divisor(g, a, b, cc);
              T delta[kLanes];
              for (int64_t j = 0; j < nl; ++j) delta[j] = pool_avg_grad_term(v[j], divisor);
              for (int64_t i = 0; i < a.count; ++i)
                for (int64_t k = 0; k < b.count; ++k)
                  for (int64_t l = 0; l < cc.count; ++l) {
                    T* dst = at(a.start + i, b.start + k, cc.start + l);
                    for (int64_t j = 0; j < nl; ++j) dst[j] = pool_grad_add(dst[j], delta[j]);
                  }
            }
          }
    }
  });
  if (bad) bad_index();
}

bool lanes_forward(const PoolGeom& g, bool with_index) {
  return g.C >= 4 && g.xs[1] == 1 && g.os[1] == 1 && (!with_index || g.is[1] == 1);
}

}  // namespace

template <typename T>
void pool_forward(const T* x, T* out, int64_t* index, const PoolGeom& g, int nthreads) {
  if (g.N * g.C * g.OD * g.OH * g.OW == 0) return;
  const Spans sp = make_spans(g);
  if (lanes_forward(g, is_max(g) && index))
    forward_lanes(x, out, index, g, sp, nthreads);
  else
    forward_planes(x, out, index, g, sp, nthreads);
}

template <typename T>
void pool_backward(const T* grad_output, const int64_t* index, T* grad_input, const PoolGeom& g, int nthreads) {
  if (g.N * g.C * g.D * g.H * g.W == 0) return;
  const Spans sp = make_spans(g);
  if (g.C >= 4 && g.xs[1] == 1 && g.os[1] == 1)
    backward_lanes(grad_output, index, grad_input, g, sp, nthreads);
  else
    backward_planes(grad_output, index, grad_input, g, sp, nthreads);
}

// ---------------------------------------------------------------- plain references
template <typename T>
void pool_forward_reference(const T* x, T* out, int64_t* index, const PoolGeom& g) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) pool_forward_at<T>(g, x, out, index, n, c, od, oh, ow);
}

template <typename T>
void pool_backward_reference(const T* grad_output, const int64_t* index, T* grad_input, const PoolGeom& g) {
  const bool mx = is_max(g);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      T* gp = grad_input + n * g.xs[0] + c * g.xs[1];
      auto at = [&](int64_t d, int64_t h, int64_t w) -> T& { return gp[d * g.xs[2] + h * g.xs[3] + w * g.xs[4]]; };
      for (int64_t d = 0; d < g.D; ++d)
        for (int64_t h = 0; h < g.H; ++h)
          for (int64_t w = 0; w < g.W; ++w) at(d, h, w) = T(0.0);
      for (int64_t od = 0; od < g.OD; ++od)
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const T v = grad_output[n * g.os[0] + c * g.os[1] + od * g.os[2] + oh * g.os[3] + ow * g.os[4]];
            if (mx) {
              const int64_t i = index[n * g.is[0] + c * g.is[1] + od * g.is[2] + oh * g.is[3] + ow * g.is[4]];
              if (i < 0 || i >= g.D * g.H * g.W) bad_index();
              T& dst = at(i / (g.H * g.W), (i / g.W) % g.H, i % g.W);
              dst = pool_grad_add(dst, v);
            } else {
              const PoolSpan a = pool_span_of(g, 0, od), b = pool_span_of(g, 1, oh), cc = pool_span_of(g, 2, ow);
              if (a.count <= 0 || b.count <= 0 || cc.count <= 0) continue;
              const T delta = pool_avg_grad_term(v, window_divisor(g, a, b, cc));
              for (int64_t i = 0; i < a.count; ++i)
                for (int64_t k = 0; k < b.count; ++k)
                  for (int64_t l = 0; l < cc.count; ++l) {
                    T& dst = at(a.start + i, b.start + k, cc.start + l);
                    dst = pool_grad_add(dst, delta);
                  }
            }
          }
    }
}

#define REPMODE_INSTANTIATE(T)                                                        \
  template void pool_forward<T>(const T*, T*, int64_t*, const PoolGeom&, int);        \
  template void pool_backward<T>(const T*, const int64_t*, T*, const PoolGeom&, int); \
  template void pool_forward_reference<T>(const T*, T*, int64_t*, const PoolGeom&);   \
  template void pool_backward_reference<T>(const T*, const int64_t*, T*, const PoolGeom&);
REPMODE_INSTANTIATE(float)
REPMODE_INSTANTIATE(double)
#undef REPMODE_INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

namespace {

PoolGeom make_geom(int kind, const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p,
                   const Ints& dil, bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os,
                   const Ints& is) {
  return pool_geom_of(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os, is,
                      "repmode._C pooling");
}

}  // namespace

void pool_forward(int dtype, int kind, uintptr_t x, uintptr_t out, uintptr_t index, const Ints& in_sizes,
                  const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil,
                  bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is,
                  int nthreads, bool reference) {
  const PoolGeom g =
      make_geom(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os, is);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (reference)
      pool_forward_reference<T>(ptr<const T>(x), ptr<T>(out), ptr<int64_t>(index), g);
    else
      pool_forward<T>(ptr<const T>(x), ptr<T>(out), ptr<int64_t>(index), g, nthreads);
  });
}

void pool_backward(int dtype, int kind, uintptr_t grad_output, uintptr_t index, uintptr_t grad_input,
                   const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p,
                   const Ints& dil, bool count_include_pad, int64_t divisor_override, const Ints& xs, const Ints& os,
                   const Ints& is, int nthreads, bool reference) {
  const PoolGeom g =
      make_geom(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os, is);
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if (reference)
      pool_backward_reference<T>(ptr<const T>(grad_output), ptr<const int64_t>(index), ptr<T>(grad_input), g);
    else
      pool_backward<T>(ptr<const T>(grad_output), ptr<const int64_t>(index), ptr<T>(grad_input), g, nthreads);
  });
}

}  // namespace repmode::cpu

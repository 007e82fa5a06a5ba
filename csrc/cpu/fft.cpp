// CPU FFT: walks over the canonical transform of csrc/common/fft.h.
//  * Each line (one 1-d signal along the transformed axis) is gathered into a contiguous buffer of
//    complex doubles (complex64 and float32 widen exactly), transformed by fft_recursive (smooth
//    lengths) or fft_bluestein (lengths with a prime factor above 7), then divided by `divisor`
//    (when != 1) and stored, rounding once to the output dtype.
//  * Threads take whole lines (parallel_for over outer * inner lines): nothing of one line's
//    arithmetic depends on the thread count or on the input's strides.
//  * Twiddle tables (W_N^i, i < N) and Bluestein's chirp and filter are computed once per length
//    (and direction) and cached for the life of the process; their values depend on the length only.
#include "dispatch.h"
#include "entry_points.h"

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../common/fft.h"
#include "parallel.h"

namespace repmode::cpu {

namespace {

using Table = std::vector<Cx>;
using TablePtr = std::shared_ptr<const Table>;

std::mutex cache_mutex;
std::map<int64_t, TablePtr> twiddle_cache;                   // N -> W_N^i
std::map<std::pair<int64_t, bool>, TablePtr> chirp_cache;    // (n, forward) -> chirp c_k
std::map<std::pair<int64_t, bool>, TablePtr> filter_cache;   // (n, forward) -> bhat

// W_N^i for i < N: each entry fft_twiddle(i, N), computed by up to nthreads threads (values only).
TablePtr twiddles(int64_t N, int nthreads) {
  {
    std::lock_guard<std::mutex> g(cache_mutex);
    auto it = twiddle_cache.find(N);
    if (it != twiddle_cache.end()) return it->second;
  }
  auto t = std::make_shared<Table>(static_cast<size_t>(N));
  Cx* d = t->data();
  parallel_for(N, nthreads, 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[i] = fft_twiddle(i, N);
  });
  std::lock_guard<std::mutex> g(cache_mutex);
  return twiddle_cache.emplace(N, std::move(t)).first->second;
}

TablePtr chirp(int64_t n, bool forward, int nthreads) {
  const auto key = std::make_pair(n, forward);
  {
    std::lock_guard<std::mutex> g(cache_mutex);
    auto it = chirp_cache.find(key);
    if (it != chirp_cache.end()) return it->second;
  }
  auto t = std::make_shared<Table>(static_cast<size_t>(n));
  Cx* d = t->data();
  parallel_for(n, nthreads, 256, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const Cx c = fft_chirp(k, n);
      d[k] = forward ? c : cx_conj(c);
    }
  });
  std::lock_guard<std::mutex> g(cache_mutex);
  return chirp_cache.emplace(key, std::move(t)).first->second;
}

// bhat = FFT_M(b) * (1/M), b_j = b_{M-j} = conj(c_j) (fft.h, fft_bluestein).
TablePtr filter(int64_t n, bool forward, const Table& c, const Table& twM, int64_t M) {
  const auto key = std::make_pair(n, forward);
  {
    std::lock_guard<std::mutex> g(cache_mutex);
    auto it = filter_cache.find(key);
    if (it != filter_cache.end()) return it->second;
  }
  Table b(static_cast<size_t>(M), Cx{0.0, 0.0});
  for (int64_t j = 0; j < n; ++j) b[j] = cx_conj(c[j]);
  for (int64_t j = 1; j < n; ++j) b[M - j] = cx_conj(c[j]);
  auto t = std::make_shared<Table>(static_cast<size_t>(M));
  fft_recursive(b.data(), 1, t->data(), M, twM.data(), 1, true);
  const double inv_m = 1.0 / double(M);  // a power of two: exact
  for (Cx& v : *t) v = Cx{v.re * inv_m, v.im * inv_m};
  std::lock_guard<std::mutex> g(cache_mutex);
  return filter_cache.emplace(key, std::move(t)).first->second;
}

// Everything one length needs, shared by the lines of a call.
struct Plan {
  int64_t n = 1;
  bool forward = true;
  bool smooth = true;
  TablePtr tw;  // smooth: W_n^i; Bluestein: W_M^i
  int64_t M = 0;
  TablePtr chirp, filter;
};

Plan make_plan(int64_t n, bool forward, int nthreads) {
  Plan p;
  p.n = n;
  p.forward = forward;
  p.smooth = fft_smooth(n);
  if (p.smooth) {
    p.tw = twiddles(n, nthreads);
  } else {
    p.M = fft_bluestein_size(n);
    p.tw = twiddles(p.M, nthreads);
    p.chirp = chirp(n, forward, nthreads);
    p.filter = filter(n, forward, *p.chirp, *p.tw, p.M);
  }
  return p;
}

// The transform of x[0..n) (contiguous) into y[0..n); work: 2 M entries for Bluestein.
void transform(const Plan& p, const Cx* x, Cx* y, Cx* work) {
  if (p.smooth)
    fft_recursive(x, 1, y, p.n, p.tw->data(), 1, p.forward);
  else
    fft_bluestein(x, 1, p.n, y, p.M, p.chirp->data(), p.filter->data(), p.tw->data(), work);
}

// ---- the lane walk: kLanes lines transformed together, each lane running the scalar sequence of
// fft_recursive / fft_bluestein (csrc/common/fft.h) on its own line; the same twiddle for every
// lane. Only + - * on doubles, lane by lane, so the vectorized loops give the scalar bits.
constexpr int kLanes = 4;
struct CxL {
  double re[kLanes], im[kLanes];
};

REPMODE_INLINE void lane_mul(CxL& o, const CxL& a, Cx w) {
  for (int l = 0; l < kLanes; ++l) {
    const double ac = a.re[l] * w.re, bd = a.im[l] * w.im, ad = a.re[l] * w.im, bc = a.im[l] * w.re;
    o.re[l] = ac - bd;
    o.im[l] = ad + bc;
  }
}

REPMODE_INLINE void lane_butterfly(CxL* out, int64_t k, int64_t m, int r, const Cx* tw, int64_t tstep, bool forward) {
  CxL t[7];
  t[0] = out[k];
  for (int j = 1; j < r; ++j) {
    const int64_t e = int64_t(j) * k;
    if (e == 0)
      t[j] = out[j * m + k];
    else
      lane_mul(t[j], out[j * m + k], fft_tw(tw, e * tstep, forward));
  }
  if (r == 2) {
    CxL& o0 = out[k];
    CxL& o1 = out[k + m];
    for (int l = 0; l < kLanes; ++l) {
      o0.re[l] = t[0].re[l] + t[1].re[l];
      o0.im[l] = t[0].im[l] + t[1].im[l];
      o1.re[l] = t[0].re[l] - t[1].re[l];
      o1.im[l] = t[0].im[l] - t[1].im[l];
    }
  } else if (r == 4) {
    CxL& o0 = out[k];
    CxL& o1 = out[k + m];
    CxL& o2 = out[k + 2 * m];
    CxL& o3 = out[k + 3 * m];
    for (int l = 0; l < kLanes; ++l) {
      const double a0r = t[0].re[l] + t[2].re[l], a0i = t[0].im[l] + t[2].im[l];
      const double a1r = t[0].re[l] - t[2].re[l], a1i = t[0].im[l] - t[2].im[l];
      const double a2r = t[1].re[l] + t[3].re[l], a2i = t[1].im[l] + t[3].im[l];
      const double a3r = t[1].re[l] - t[3].re[l], a3i = t[1].im[l] - t[3].im[l];
      const double mr = a1r + a3i, mi = a1i - a3r;  // a1 - i a3
      const double pr = a1r - a3i, pi = a1i + a3r;  // a1 + i a3
      o0.re[l] = a0r + a2r;
      o0.im[l] = a0i + a2i;
      o2.re[l] = a0r - a2r;
      o2.im[l] = a0i - a2i;
      o1.re[l] = forward ? mr : pr;
      o1.im[l] = forward ? mi : pi;
      o3.re[l] = forward ? pr : mr;
      o3.im[l] = forward ? pi : mi;
    }
  } else {
    const int64_t wstep = tstep * m;
    for (int q = 0; q < r; ++q) {
      CxL acc = t[0];
      for (int j = 1; j < r; ++j) {
        const int e = (q * j) % r;
        CxL v;
        if (e == 0)
          v = t[j];
        else
          lane_mul(v, t[j], fft_tw(tw, e * wstep, forward));
        for (int l = 0; l < kLanes; ++l) {
          acc.re[l] = acc.re[l] + v.re[l];
          acc.im[l] = acc.im[l] + v.im[l];
        }
      }
      out[k + q * m] = acc;
    }
  }
}

void lane_recursive(const CxL* in, int64_t is, CxL* out, int64_t n, const Cx* tw, int64_t tstep, bool forward) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const int r = fft_radix(n);
  const int64_t m = n / r;
  if (m == 1) {
    for (int j = 0; j < r; ++j) out[j] = in[j * is];
  } else {
    for (int j = 0; j < r; ++j) lane_recursive(in + j * is, is * r, out + j * m, m, tw, tstep * r, forward);
  }
  for (int64_t k = 0; k < m; ++k) lane_butterfly(out, k, m, r, tw, tstep, forward);
}

// fft_bluestein, lane by lane.
void lane_bluestein(const CxL* x, int64_t n, CxL* out, int64_t M, const Cx* chirp, const Cx* bhat, const Cx* twM,
                    CxL* work) {
  CxL* a = work;
  CxL* A = work + M;
  for (int64_t j = 0; j < n; ++j) lane_mul(a[j], x[j], chirp[j]);
  for (int64_t j = n; j < M; ++j)
    for (int l = 0; l < kLanes; ++l) a[j].re[l] = a[j].im[l] = 0.0;
  lane_recursive(a, 1, A, M, twM, 1, true);
  for (int64_t i = 0; i < M; ++i) lane_mul(A[i], A[i], bhat[i]);
  lane_recursive(A, 1, a, M, twM, 1, false);
  for (int64_t k = 0; k < n; ++k) lane_mul(out[k], a[k], chirp[k]);
}

void lane_transform(const Plan& p, const CxL* x, CxL* y, CxL* work) {
  if (p.smooth)
    lane_recursive(x, 1, y, p.n, p.tw->data(), 1, p.forward);
  else
    lane_bluestein(x, p.n, y, p.M, p.chirp->data(), p.filter->data(), p.tw->data(), work);
}

enum Mode { kC2C = 0, kR2C = 1, kC2R = 2 };

template <typename S>
Cx load_complex(const S* s, int64_t off) {
  return Cx{double(s[2 * off]), double(s[2 * off + 1])};
}

// Line `line` of the (outer, n_src, inner) source as the n complex inputs of the transform.
template <typename S>
void load_line(int mode, const S* src, const Ints& ss, int64_t inner, int64_t line, int64_t n, Cx* x) {
  const int64_t o = line / inner, i = line % inner;
  const int64_t base = o * ss[0] + i * ss[2];
  if (mode == kC2C) {
    for (int64_t k = 0; k < n; ++k) x[k] = load_complex(src, base + k * ss[1]);
  } else if (mode == kR2C) {
    for (int64_t k = 0; k < n; ++k) x[k] = Cx{double(src[base + k * ss[1]]), 0.0};
  } else {  // C2R: the Hermitian extension of X_0 .. X_{n/2}, imaginary parts of X_0 (and X_{n/2}) = +0
    const int64_t h = n / 2;
    for (int64_t k = 0; k <= h; ++k) x[k] = load_complex(src, base + k * ss[1]);
    for (int64_t k = h + 1; k < n; ++k) x[k] = cx_conj(x[n - k]);
    x[0].im = 0.0;
    if (n % 2 == 0) x[h].im = 0.0;
  }
}

// The transform y of line `line`: the r2c zeros, the division, one rounding to D, canonical NaNs.
template <typename D>
void store_line(int mode, Cx* y, int64_t n, int64_t n_dst, double divisor, D* dst, int64_t inner, int64_t line) {
  if (mode == kR2C) {  // the exact values of a real signal's X_0 and X_{n/2}: real
    y[0].im = 0.0;
    if (n % 2 == 0) y[n / 2].im = 0.0;
  }
  if (divisor != 1.0)
    for (int64_t k = 0; k < n_dst; ++k) y[k] = Cx{y[k].re / divisor, y[k].im / divisor};
  const int64_t o = line / inner, i = line % inner;
  if (mode == kC2R) {
    D* out = dst + o * n_dst * inner + i;
    for (int64_t k = 0; k < n_dst; ++k) out[k * inner] = canon(D(y[k].re));
  } else {
    D* out = dst + 2 * (o * n_dst * inner + i);
    for (int64_t k = 0; k < n_dst; ++k) {
      out[2 * k * inner] = canon(D(y[k].re));
      out[2 * k * inner + 1] = canon(D(y[k].im));
    }
  }
}

template <typename S, typename D>
void run_lines(int mode, const S* src, const Ints& ss, D* dst, int64_t outer, int64_t inner, const Plan& p,
               int64_t n_dst, double divisor, int nthreads, bool reference) {
  const int64_t n = p.n;
  const int64_t lines = outer * inner;
  auto body = [&](int64_t begin, int64_t end) {
    std::vector<Cx> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), work(static_cast<size_t>(2 * p.M));
    int64_t line = begin;
    if (!reference && end - begin >= kLanes) {
      std::vector<CxL> xl(static_cast<size_t>(n)), yl(static_cast<size_t>(n)), wl(static_cast<size_t>(2 * p.M));
      for (; line + kLanes <= end; line += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          load_line(mode, src, ss, inner, line + l, n, x.data());
          for (int64_t k = 0; k < n; ++k) {
            xl[k].re[l] = x[k].re;
            xl[k].im[l] = x[k].im;
          }
        }
        lane_transform(p, xl.data(), yl.data(), wl.data());
        for (int l = 0; l < kLanes; ++l) {
          for (int64_t k = 0; k < n; ++k) y[k] = Cx{yl[k].re[l], yl[k].im[l]};
          store_line(mode, y.data(), n, n_dst, divisor, dst, inner, line + l);
        }
      }
    }
    for (; line < end; ++line) {
      load_line(mode, src, ss, inner, line, n, x.data());
      transform(p, x.data(), y.data(), work.data());
      store_line(mode, y.data(), n, n_dst, divisor, dst, inner, line);
    }
  };
  // pieces of whole lines; a piece's split into lane blocks and single lines changes no bits
  parallel_for(lines, nthreads, n * 16, body);
}

}  // namespace

void fft_lines(int mode, int src_dtype, uintptr_t src, const Ints& src_strides, int dst_dtype, uintptr_t dst,
               int64_t outer, int64_t inner, int64_t n_src, int64_t n_fft, int64_t n_dst, bool forward,
               double divisor, int nthreads, bool reference) {
  if (mode < kC2C || mode > kC2R) throw std::invalid_argument("fft_lines: unknown mode " + std::to_string(mode));
  if (src_strides.size() != 3) throw std::invalid_argument("fft_lines: src_strides needs 3 entries");
  if (n_fft < 1) throw std::invalid_argument("fft_lines: the transform length must be positive");
  const int64_t need = mode == kC2R ? n_fft / 2 + 1 : n_fft;
  if (n_src < need) throw std::invalid_argument("fft_lines: the input line is shorter than the transform needs");
  if (n_dst > n_fft) throw std::invalid_argument("fft_lines: more outputs than the transform length");
  if (outer * inner == 0 || n_dst == 0) return;
  const Plan p = make_plan(n_fft, mode == kC2R ? false : forward, nthreads);
  by_dtype(src_dtype, [&](auto s) {
    using S = decltype(s);
    by_dtype(dst_dtype, [&](auto d) {
      using D = decltype(d);
      run_lines<S, D>(mode, ptr<const S>(src), src_strides, ptr<D>(dst), outer, inner, p, n_dst, divisor, nthreads,
                      reference);
    });
  });
}

std::vector<double> fft_twiddle_of(int64_t k, int64_t n) {
  if (n < 1 || k < 0 || k >= n) throw std::invalid_argument("fft_twiddle_of: needs 0 <= k < n");
  const Cx w = fft_twiddle(k, n);
  return {w.re, w.im};
}

// |z| = hypot(re, im) (docs/semantics.md, "FFT"): both parts scaled by the power of two 2^-e that
// brings the larger into [1, 2), the sum of squares as a double-double (exact products), its
// square root corrected once by the residual, then scaled back and rounded once to the dtype.
// inf in either part gives +inf, otherwise NaN gives NaN.
void complex_abs(int dtype, uintptr_t src, uintptr_t dst, int64_t n, int nthreads) {
  by_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    const T* s = ptr<const T>(src);
    T* d = ptr<T>(dst);
    parallel_for(n, nthreads, 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) d[i] = canon(T(complex_abs_value(double(s[2 * i]), double(s[2 * i + 1]))));
    });
  });
}

}  // namespace repmode::cpu

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
std::map<int64_t, TablePtr> twiddle_cache;                  // N -> W_N^i
std::map<std::pair<int64_t, bool>, TablePtr> chirp_cache;   // (n, forward) -> chirp c_k
std::map<std::pair<int64_t, bool>, TablePtr> filter_cache;  // (n, forward) -> bhat

// The caches hold at most kCacheEntries complex values in all: a new table that would pass the
// bound empties them first (tables in use stay alive through their shared_ptr; a dropped table is
// recomputed with the same values). Called with cache_mutex held.
constexpr int64_t kCacheEntries = int64_t(1) << 24;  // 256 MiB of complex doubles
int64_t cached_entries = 0;
void make_room(int64_t entries);

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
  make_room(N);
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
  make_room(n);
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
  make_room(M);
  return filter_cache.emplace(key, std::move(t)).first->second;
}

// The twiddles of each recursion depth of fft_recursive on length N, in the order the butterflies
// use them: depth d (length n_d, radix r, m = n_d / r, tstep = N / n_d) holds W_N^{j k tstep} at
// k (r - 1) + j - 1 (k < m, 1 <= j < r): copies of the table's values, laid out for the lane walk.
struct Levels {
  std::vector<Table> t;
  std::vector<const Cx*> ptrs;
};
using LevelsPtr = std::shared_ptr<const Levels>;
std::map<int64_t, LevelsPtr> levels_cache;

LevelsPtr levels(int64_t N, const Table& tw) {
  {
    std::lock_guard<std::mutex> g(cache_mutex);
    auto it = levels_cache.find(N);
    if (it != levels_cache.end()) return it->second;
  }
  auto lv = std::make_shared<Levels>();
  for (int64_t n = N; n > 1;) {
    const int r = fft_radix(n);
    const int64_t m = n / r, tstep = N / n;
    Table t(static_cast<size_t>(m * (r - 1)));
    for (int64_t k = 0; k < m; ++k)
      for (int j = 1; j < r; ++j) t[k * (r - 1) + (j - 1)] = tw[j * k * tstep];
    lv->t.push_back(std::move(t));
    n = m;
  }
  lv->t.emplace_back();  // depth of length 1: no butterflies
  for (const Table& t : lv->t) lv->ptrs.push_back(t.data());
  std::lock_guard<std::mutex> g(cache_mutex);
  make_room(N);
  return levels_cache.emplace(N, std::move(lv)).first->second;
}

void make_room(int64_t entries) {
  if (cached_entries + entries > kCacheEntries) {
    twiddle_cache.clear();
    chirp_cache.clear();
    filter_cache.clear();
    levels_cache.clear();
    cached_entries = 0;
  }
  cached_entries += entries;
}

// Everything one length needs, shared by the lines of a call.
struct Plan {
  int64_t n = 1;
  bool forward = true;
  bool smooth = true;
  TablePtr tw;  // smooth: W_n^i; Bluestein: W_M^i
  int64_t M = 0;
  TablePtr chirp, filter;
  LevelsPtr lv;  // of n (smooth) or M (Bluestein)
};

Plan make_plan(int64_t n, bool forward, int nthreads) {
  Plan p;
  p.n = n;
  p.forward = forward;
  p.smooth = fft_smooth(n);
  if (p.smooth) {
    p.tw = twiddles(n, nthreads);
    p.lv = levels(n, *p.tw);
  } else {
    p.M = fft_bluestein_size(n);
    p.tw = twiddles(p.M, nthreads);
    p.chirp = chirp(n, forward, nthreads);
    p.filter = filter(n, forward, *p.chirp, *p.tw, p.M);
    p.lv = levels(p.M, *p.tw);
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

// ---- the lane walk (csrc/cpu/fft_lanes.h): kLanes lines transformed together, each lane running the
// scalar sequence of fft_recursive / fft_bluestein (csrc/common/fft.h) on its own line.
constexpr int kLanes = 4;
constexpr int64_t kSplitMin = 64;  // single lines at least this long (n % 4 == 0) run split into lanes
struct CxL {
  double re[kLanes], im[kLanes];
};

namespace lanes_portable {
#include "fft_lanes.h"
}  // namespace lanes_portable
#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
namespace lanes_avx2 {
#include "fft_lanes.h"
}  // namespace lanes_avx2
#pragma GCC pop_options
#endif

// The two copies of the lane walk, as types for run_lines_with.
struct LanesPortable {
  static void lane_transform(const Plan& p, const CxL* x, CxL* y, CxL* w) {
    lanes_portable::lane_transform(p, x, y, w);
  }
  static void line_transform(const Plan& p, const Cx* x, Cx* y, Cx* w, CxL* a, CxL* b) {
    lanes_portable::line_transform(p, x, y, w, a, b);
  }
};
#if defined(__x86_64__)
struct LanesAvx2 {
  static void lane_transform(const Plan& p, const CxL* x, CxL* y, CxL* w) { lanes_avx2::lane_transform(p, x, y, w); }
  static void line_transform(const Plan& p, const Cx* x, Cx* y, Cx* w, CxL* a, CxL* b) {
    lanes_avx2::line_transform(p, x, y, w, a, b);
  }
};
#endif

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

// load_line for the kLanes lines line0 .. line0 + kLanes - 1, each into its lane of xl.
template <typename S>
void load_lanes(int mode, const S* src, const Ints& ss, int64_t inner, int64_t line0, int64_t n, CxL* xl) {
  for (int l = 0; l < kLanes; ++l) {
    const int64_t line = line0 + l;
    const int64_t o = line / inner, i = line % inner;
    const int64_t base = o * ss[0] + i * ss[2];
    if (mode == kC2C) {
      for (int64_t k = 0; k < n; ++k) {
        const int64_t off = base + k * ss[1];
        xl[k].re[l] = double(src[2 * off]);
        xl[k].im[l] = double(src[2 * off + 1]);
      }
    } else if (mode == kR2C) {
      for (int64_t k = 0; k < n; ++k) {
        xl[k].re[l] = double(src[base + k * ss[1]]);
        xl[k].im[l] = 0.0;
      }
    } else {
      const int64_t h = n / 2;
      for (int64_t k = 0; k <= h; ++k) {
        const int64_t off = base + k * ss[1];
        xl[k].re[l] = double(src[2 * off]);
        xl[k].im[l] = double(src[2 * off + 1]);
      }
      for (int64_t k = h + 1; k < n; ++k) {
        xl[k].re[l] = xl[n - k].re[l];
        xl[k].im[l] = -xl[n - k].im[l];
      }
      xl[0].im[l] = 0.0;
      if (n % 2 == 0) xl[h].im[l] = 0.0;
    }
  }
}

// store_line for the kLanes lines of yl.
template <typename D>
void store_lanes(int mode, CxL* yl, int64_t n, int64_t n_dst, double divisor, D* dst, int64_t inner, int64_t line0) {
  for (int l = 0; l < kLanes; ++l) {
    const int64_t line = line0 + l;
    if (mode == kR2C) {
      yl[0].im[l] = 0.0;
      if (n % 2 == 0) yl[n / 2].im[l] = 0.0;
    }
    const int64_t o = line / inner, i = line % inner;
    if (mode == kC2R) {
      D* out = dst + o * n_dst * inner + i;
      for (int64_t k = 0; k < n_dst; ++k) {
        const double re = divisor != 1.0 ? yl[k].re[l] / divisor : yl[k].re[l];
        out[k * inner] = canon(D(re));
      }
    } else {
      D* out = dst + 2 * (o * n_dst * inner + i);
      for (int64_t k = 0; k < n_dst; ++k) {
        double re = yl[k].re[l], im = yl[k].im[l];
        if (divisor != 1.0) {
          re = re / divisor;
          im = im / divisor;
        }
        out[2 * k * inner] = canon(D(re));
        out[2 * k * inner + 1] = canon(D(im));
      }
    }
  }
}

template <typename S, typename D, typename Lanes>
void run_lines_with(int mode, const S* src, const Ints& ss, D* dst, int64_t inner, const Plan& p, int64_t n_dst,
                    double divisor, bool reference, int64_t begin, int64_t end) {
  const int64_t n = p.n;
  const int64_t big = (n > p.M ? n : p.M) / 4 + 1;
  std::vector<Cx> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), work(static_cast<size_t>(2 * p.M));
  int64_t line = begin;
  if (!reference && end - begin >= kLanes) {
    std::vector<CxL> xl(static_cast<size_t>(n)), yl(static_cast<size_t>(n)), wl(static_cast<size_t>(2 * p.M));
    for (; line + kLanes <= end; line += kLanes) {
      load_lanes(mode, src, ss, inner, line, n, xl.data());
      Lanes::lane_transform(p, xl.data(), yl.data(), wl.data());
      store_lanes(mode, yl.data(), n, n_dst, divisor, dst, inner, line);
    }
  }
  std::vector<CxL> sx(static_cast<size_t>(reference ? 0 : big)), sy(static_cast<size_t>(reference ? 0 : big));
  for (; line < end; ++line) {
    load_line(mode, src, ss, inner, line, n, x.data());
    if (reference)
      transform(p, x.data(), y.data(), work.data());
    else
      Lanes::line_transform(p, x.data(), y.data(), work.data(), sx.data(), sy.data());
    store_line(mode, y.data(), n, n_dst, divisor, dst, inner, line);
  }
}

template <typename S, typename D>
void run_lines(int mode, const S* src, const Ints& ss, D* dst, int64_t outer, int64_t inner, const Plan& p,
               int64_t n_dst, double divisor, int nthreads, bool reference) {
  const bool avx2 = active_isa() >= Isa::avx2;
  // pieces of whole lines; a piece's split into lane blocks and single lines changes no bits
  parallel_for(outer * inner, nthreads, p.n * 16, [&](int64_t begin, int64_t end) {
#if defined(__x86_64__)
    if (avx2) {
      run_lines_with<S, D, LanesAvx2>(mode, src, ss, dst, inner, p, n_dst, divisor, reference, begin, end);
      return;
    }
#endif
    run_lines_with<S, D, LanesPortable>(mode, src, ss, dst, inner, p, n_dst, divisor, reference, begin, end);
  });
  (void)avx2;
}

}  // namespace

void fft_lines(int mode, int src_dtype, uintptr_t src, const Ints& src_strides, int dst_dtype, uintptr_t dst,
               int64_t outer, int64_t inner, int64_t n_src, int64_t n_fft, int64_t n_dst, bool forward, double divisor,
               int nthreads, bool reference) {
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

// CPU FFT: walks over the canonical transform of csrc/common/fft.h.
//  * Each line (one 1-d signal along the transformed axis) is gathered into a contiguous buffer of
//    complex doubles (complex64 and float32 widen exactly), transformed by fft_recursive (smooth
//    lengths) or fft_bluestein (lengths with a prime factor above 7), then divided by `divisor`
//    (when != 1) and stored, rounding once to the output dtype.
//  * Threads take whole lines (parallel_for over outer * inner lines); with fewer lines than threads,
//    a long line's phases are shared (split16_line): nothing of one line's arithmetic depends on the
//    thread count, the ISA path or the input's strides.
//  * Fast paths (csrc/cpu/fft_lanes.h: 4 lines per vector, portable / AVX2 / AVX-512) compute the
//    butterflies of fft_recursive / fft_bluestein in another order, each with its own operations;
//    `reference` runs the plain scalar functions instead (tests compare the two bit for bit).
//  * Twiddle tables (W_N^i, i < N) and Bluestein's chirp and filter are computed once per length
//    (and direction) and cached for the life of the process; their values depend on the length only.
#include "dispatch.h"
#include "entry_points.h"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
constexpr int64_t kSplitMin = 64;         // single lines at least this long (n % 4 == 0) run split into lanes
constexpr int64_t kSplit16Min = 1 << 14;  // ... and from this length (n % 16 == 0) on up to nthreads threads
struct alignas(32) CxL {
  double re[kLanes], im[kLanes];
};

// The portable copy: V is kLanes doubles, each operation a loop over the lanes.
namespace lanes_portable {
struct V {
  double v[kLanes];
};
REPMODE_INLINE V vld(const double* p) {
  V r;
  for (int l = 0; l < kLanes; ++l) r.v[l] = p[l];
  return r;
}
REPMODE_INLINE void vst(double* p, V a) {
  for (int l = 0; l < kLanes; ++l) p[l] = a.v[l];
}
REPMODE_INLINE V vset(double x) {
  V r;
  for (int l = 0; l < kLanes; ++l) r.v[l] = x;
  return r;
}
REPMODE_INLINE V vadd(V a, V b) {
  for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] + b.v[l];
  return a;
}
REPMODE_INLINE V vsub(V a, V b) {
  for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] - b.v[l];
  return a;
}
REPMODE_INLINE V vmul(V a, V b) {
  for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] * b.v[l];
  return a;
}
#include "fft_lanes.h"
}  // namespace lanes_portable
#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
// The AVX2 copy: V is one 256-bit register of kLanes = 4 doubles (vaddpd, vsubpd, vmulpd: the IEEE
// operations lane by lane).
namespace lanes_avx2 {
using V = __m256d;
REPMODE_INLINE V vld(const double* p) { return _mm256_loadu_pd(p); }
REPMODE_INLINE void vst(double* p, V a) { _mm256_storeu_pd(p, a); }
REPMODE_INLINE V vset(double x) { return _mm256_set1_pd(x); }
REPMODE_INLINE V vadd(V a, V b) { return _mm256_add_pd(a, b); }
REPMODE_INLINE V vsub(V a, V b) { return _mm256_sub_pd(a, b); }
REPMODE_INLINE V vmul(V a, V b) { return _mm256_mul_pd(a, b); }
#define REPMODE_FFT_AVX2 1
#include "fft_lanes.h"
#undef REPMODE_FFT_AVX2
}  // namespace lanes_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx2")
// No auto-vectorization here: with FMA available (AVX-512 implies it), GCC 12's vectorizer turns the
// scalar complex products (cx_mul in fft_butterfly) into vfmaddsub despite -ffp-contract=off, which
// changes their bits. The lane walk is written with intrinsics and needs no vectorizer.
#pragma GCC optimize("no-tree-vectorize")
// The AVX-512 copy: C is one 512-bit register holding a CxL as it lies in memory (the 4 real parts,
// then the 4 imaginary parts); V (the top level of long lines, loads and stores) as in the AVX2 copy.
// cmulw: P = a w.re, S = (a with its halves swapped) w.im, real parts P - S (a.re w.re - a.im w.im),
// imaginary parts P + S (a.im w.re + a.re w.im: the same sum as cx_mul's, added in the other order);
// cmi / cpi add or subtract the swapped a3: each lane one IEEE operation, as in the pair form.
namespace lanes_avx512 {
using V = __m256d;
REPMODE_INLINE V vld(const double* p) { return _mm256_loadu_pd(p); }
REPMODE_INLINE void vst(double* p, V a) { _mm256_storeu_pd(p, a); }
REPMODE_INLINE V vset(double x) { return _mm256_set1_pd(x); }
REPMODE_INLINE V vadd(V a, V b) { return _mm256_add_pd(a, b); }
REPMODE_INLINE V vsub(V a, V b) { return _mm256_sub_pd(a, b); }
REPMODE_INLINE V vmul(V a, V b) { return _mm256_mul_pd(a, b); }
using C = __m512d;
REPMODE_INLINE C cld(const CxL& a) { return _mm512_loadu_pd(a.re); }
REPMODE_INLINE void cst(CxL& a, C v) { _mm512_storeu_pd(a.re, v); }
REPMODE_INLINE C cadd(C a, C b) { return _mm512_add_pd(a, b); }
REPMODE_INLINE C csub(C a, C b) { return _mm512_sub_pd(a, b); }
REPMODE_INLINE C cswap(C a) { return _mm512_shuffle_f64x2(a, a, 0x4E); }
REPMODE_INLINE C cmulw(C a, double wr, double wi) {
  const C p = _mm512_mul_pd(a, _mm512_set1_pd(wr)), s = _mm512_mul_pd(cswap(a), _mm512_set1_pd(wi));
  return _mm512_mask_add_pd(_mm512_sub_pd(p, s), 0xF0, p, s);
}
REPMODE_INLINE C cmi(C a1, C a3) {  // (a1.re + a3.im, a1.im - a3.re)
  const C s = cswap(a3);
  return _mm512_mask_sub_pd(_mm512_add_pd(a1, s), 0xF0, a1, s);
}
REPMODE_INLINE C cpi(C a1, C a3) {  // (a1.re - a3.im, a1.im + a3.re)
  const C s = cswap(a3);
  return _mm512_mask_add_pd(_mm512_sub_pd(a1, s), 0xF0, a1, s);
}
REPMODE_INLINE C czero() { return _mm512_setzero_pd(); }
#define REPMODE_FFT_AVX2 1
#define REPMODE_FFT_AVX512 1
#include "fft_lanes.h"
#undef REPMODE_FFT_AVX512
#undef REPMODE_FFT_AVX2
}  // namespace lanes_avx512
#pragma GCC pop_options
#endif

// Each copy of the lane walk (portable, AVX2, AVX-512) as a type for run_lines_with: the same
// forwarding members over the copy's namespace.
#define REPMODE_FFT_LANES(Name, ns)                                                                              \
  struct Name {                                                                                                  \
    static void lane_transform(const Plan& p, const CxL* x, CxL* y, CxL* w) { ns::lane_transform(p, x, y, w); }  \
    static void line_transform(const Plan& p, const Cx* x, Cx* y, Cx* w, CxL* a, CxL* b, int nthreads) {         \
      ns::line_transform(p, x, y, w, a, b, nthreads);                                                            \
    }                                                                                                            \
    template <typename S>                                                                                        \
    static bool load(int mode, const S* src, const Ints& ss, int64_t inner, int64_t line0, int64_t n, CxL* xl) { \
      return ns::load_lanes_fast(mode, src, ss, inner, line0, n, xl);                                            \
    }                                                                                                            \
    template <typename D>                                                                                        \
    static bool store(int mode, CxL* yl, int64_t n, int64_t n_dst, double divisor, D* dst, int64_t inner,        \
                      int64_t line0) {                                                                           \
      return ns::store_lanes_fast(mode, yl, n, n_dst, divisor, dst, inner, line0);                               \
    }                                                                                                            \
    static void groups(const CxL* g, CxL* z, int64_t n, const Cx* tw, const Cx* const* lv, bool fw, int64_t b,   \
                       int64_t e) {                                                                              \
      ns::split16_groups(g, z, n, tw, lv, fw, b, e);                                                             \
    }                                                                                                            \
    static void middle(CxL* z, int64_t n, const Cx* const* lv, bool fw, int64_t b, int64_t e) {                  \
      ns::split16_middle(z, n, lv, fw, b, e);                                                                    \
    }                                                                                                            \
    static void top(const CxL* z, Cx* y, int64_t n, const Cx* const* lv, bool fw, int64_t b, int64_t e) {        \
      ns::split16_top(z, y, n, lv, fw, b, e);                                                                    \
    }                                                                                                            \
    template <typename S>                                                                                        \
    static void gather16_c2c(const S* x, CxL* g, int64_t m2, int64_t b, int64_t e) {                             \
      ns::gather16_c2c(x, g, m2, b, e);                                                                          \
    }                                                                                                            \
    template <typename D>                                                                                        \
    static void store_cx(const Cx* y, D* out, int64_t count, bool scale, double divisor) {                       \
      ns::store_cx(y, out, count, scale, divisor);                                                               \
    }                                                                                                            \
  };
REPMODE_FFT_LANES(LanesPortable, lanes_portable)
#if defined(__x86_64__)
REPMODE_FFT_LANES(LanesAvx2, lanes_avx2)
REPMODE_FFT_LANES(LanesAvx512, lanes_avx512)
#endif
#undef REPMODE_FFT_LANES

enum Mode { kC2C = 0, kR2C = 1, kC2R = 2 };

// Working buffers (uninitialized, 64-byte aligned). Each thread keeps one buffer per slot between
// calls, up to kScratchKeep bytes (larger ones are freed at the end of the call): no zeroing and no
// fresh pages on every call. Holds no values from one call to the next that matter (every entry is
// written before it is read).
constexpr size_t kScratchKeep = size_t(32) << 20;
struct ScratchSlot {
  std::unique_ptr<unsigned char[]> mem;
  size_t size = 0;
};
class Scratch {
 public:
  Scratch(int slot, size_t bytes) {
    thread_local ScratchSlot slots[8];
    bytes += 64;
    if (bytes <= kScratchKeep) {
      ScratchSlot& s = slots[slot];
      if (s.size < bytes) {
        s.mem.reset(new unsigned char[bytes]);
        s.size = bytes;
      }
      raw_ = s.mem.get();
    } else {
      own_.reset(new unsigned char[bytes]);
      raw_ = own_.get();
    }
  }
  template <typename T>
  T* as() const {
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(raw_) + 63) & ~uintptr_t(63));
  }

 private:
  std::unique_ptr<unsigned char[]> own_;
  unsigned char* raw_;
};

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

// One long line (smooth, n % 16 == 0) through split16 on up to nthreads threads, the load and the
// store folded into its first and last phases: input x_idx read straight from the source (as
// load_line gives it) into the groups, outputs written straight from the top level's pieces (as
// store_line writes them). Nothing of the arithmetic depends on the thread count.
template <typename S, typename D, typename Lanes>
void split16_line(int mode, const S* src, const Ints& ss, D* dst, int64_t inner, const Plan& p, int64_t n_dst,
                  double divisor, int64_t line, int nthreads) {
  const int64_t n = p.n, m1 = n / 4, m2 = n / 16, h = n / 2;
  const Scratch sg(0, size_t(m1) * sizeof(CxL)), sz(1, size_t(m1) * sizeof(CxL)), sy(2, size_t(n) * sizeof(Cx));
  CxL* g = sg.as<CxL>();
  CxL* z = sz.as<CxL>();
  Cx* y = sy.as<Cx>();
  const Cx* tw = p.tw->data();
  const Cx* const* lv = p.lv->ptrs.data();
  const int64_t o = line / inner, i = line % inner;
  const int64_t base = o * ss[0] + i * ss[2], step = ss[1];
  auto value = [&](int64_t idx) -> Cx {
    if (mode == kC2C) return load_complex(src, base + idx * step);
    if (mode == kR2C) return Cx{double(src[base + idx * step]), 0.0};
    Cx v = idx <= h ? load_complex(src, base + idx * step) : cx_conj(load_complex(src, base + (n - idx) * step));
    if (idx == 0 || (n % 2 == 0 && idx == h)) v.im = 0.0;
    return v;
  };
  parallel_for(m2, nthreads, 64, [&](int64_t b, int64_t e) {
    if (mode == kC2C && step == 1) {
      Lanes::gather16_c2c(src + 2 * base, g, m2, b, e);
      return;
    }
    for (int64_t t = b; t < e; ++t)
      for (int q = 0; q < 4; ++q) {
        CxL& d = g[q * m2 + t];
        for (int l = 0; l < kLanes; ++l) {
          const Cx v = value(16 * t + 4 * q + l);
          d.re[l] = v.re;
          d.im[l] = v.im;
        }
      }
  });
  parallel_for(4, nthreads, m1 * 64, [&](int64_t b, int64_t e) { Lanes::groups(g, z, n, tw, lv, p.forward, b, e); });
  parallel_for(m2, nthreads, 64, [&](int64_t b, int64_t e) { Lanes::middle(z, n, lv, p.forward, b, e); });
  const bool scale = divisor != 1.0;
  parallel_for(m1, nthreads, 64, [&](int64_t b, int64_t e) {
    Lanes::top(z, y, n, lv, p.forward, b, e);
    for (int q = 0; q < 4; ++q) {
      const int64_t kb = b + q * m1, ke = std::min(e + q * m1, n_dst);
      if (mode == kC2R) {
        D* out = dst + o * n_dst * inner + i;
        for (int64_t k = kb; k < ke; ++k) out[k * inner] = canon(D(scale ? y[k].re / divisor : y[k].re));
      } else if (inner == 1 && kb < ke) {
        D* out = dst + 2 * o * n_dst;
        Lanes::store_cx(y + kb, out + 2 * kb, ke - kb, scale, divisor);
        for (const int64_t k : {int64_t(0), n % 2 == 0 ? h : int64_t(-1)})  // r2c: X_0, X_{n/2} real
          if (mode == kR2C && k >= kb && k < ke) {
            out[2 * k] = canon(D(scale ? y[k].re / divisor : y[k].re));
            out[2 * k + 1] = canon(D(0.0));
          }
      } else {
        D* out = dst + 2 * (o * n_dst * inner + i);
        for (int64_t k = kb; k < ke; ++k) {
          Cx v = y[k];
          if (mode == kR2C && (k == 0 || 2 * k == n)) v.im = 0.0;
          if (scale) v = Cx{v.re / divisor, v.im / divisor};
          out[2 * k * inner] = canon(D(v.re));
          out[2 * k * inner + 1] = canon(D(v.im));
        }
      }
    }
  });
}

template <typename S, typename D, typename Lanes>
void run_lines_with(int mode, const S* src, const Ints& ss, D* dst, int64_t inner, const Plan& p, int64_t n_dst,
                    double divisor, bool reference, int64_t begin, int64_t end, int line_threads) {
  const int64_t n = p.n;
  const int64_t big = (n > p.M ? n : p.M) / 4 + 1;
  int64_t line = begin;
  if (!reference && end - begin >= kLanes) {
    const Scratch sx(3, size_t(n) * sizeof(CxL)), sy(4, size_t(n) * sizeof(CxL)), sw(5, size_t(2 * p.M) * sizeof(CxL));
    CxL* xl = sx.as<CxL>();
    CxL* yl = sy.as<CxL>();
    CxL* wl = sw.as<CxL>();
    for (; line + kLanes <= end; line += kLanes) {
      if (!Lanes::load(mode, src, ss, inner, line, n, xl)) load_lanes(mode, src, ss, inner, line, n, xl);
      Lanes::lane_transform(p, xl, yl, wl);
      if (!Lanes::store(mode, yl, n, n_dst, divisor, dst, inner, line))
        store_lanes(mode, yl, n, n_dst, divisor, dst, inner, line);
    }
  }
  if (line == end) return;
  if (!reference && p.smooth && n >= kSplit16Min && n % 16 == 0) {
    for (; line < end; ++line)
      split16_line<S, D, Lanes>(mode, src, ss, dst, inner, p, n_dst, divisor, line, line_threads);
    return;
  }
  const Scratch s0(0, size_t(n) * sizeof(Cx)), s1(1, size_t(n) * sizeof(Cx)), s2(2, size_t(2 * p.M) * sizeof(Cx));
  const Scratch s3(6, size_t(reference ? 0 : big) * sizeof(CxL)), s4(7, size_t(reference ? 0 : big) * sizeof(CxL));
  Cx* x = s0.as<Cx>();
  Cx* y = s1.as<Cx>();
  Cx* work = s2.as<Cx>();
  for (; line < end; ++line) {
    load_line(mode, src, ss, inner, line, n, x);
    if (reference)
      transform(p, x, y, work);
    else
      Lanes::line_transform(p, x, y, work, s3.as<CxL>(), s4.as<CxL>(), line_threads);
    store_line(mode, y, n, n_dst, divisor, dst, inner, line);
  }
}

template <typename S, typename D>
void run_lines(int mode, const S* src, const Ints& ss, D* dst, int64_t outer, int64_t inner, const Plan& p,
               int64_t n_dst, double divisor, int nthreads, bool reference) {
  const Isa isa = active_isa();
  const int64_t lines = outer * inner;
  auto run = [&](int64_t begin, int64_t end, int line_threads) {
#if defined(__x86_64__)
    if (isa >= Isa::avx512) {
      run_lines_with<S, D, LanesAvx512>(mode, src, ss, dst, inner, p, n_dst, divisor, reference, begin, end,
                                        line_threads);
      return;
    }
    if (isa >= Isa::avx2) {
      run_lines_with<S, D, LanesAvx2>(mode, src, ss, dst, inner, p, n_dst, divisor, reference, begin, end,
                                      line_threads);
      return;
    }
#endif
    run_lines_with<S, D, LanesPortable>(mode, src, ss, dst, inner, p, n_dst, divisor, reference, begin, end,
                                        line_threads);
  };
  (void)isa;
  // Fewer lines than threads, each long: one line at a time, its transform on all the threads
  // (line_transform's split16_recursive; the same operations as on one thread).
  if (!reference && nthreads > 1 && lines < nthreads && (p.smooth ? p.n : p.M) >= kSplit16Min) {
    for (int64_t line = 0; line < lines; ++line) run(line, line + 1, nthreads);
    return;
  }
  // pieces of whole lines; a piece's split into lane blocks and single lines changes no bits
  parallel_for(lines, nthreads, p.n * 16, [&](int64_t begin, int64_t end) { run(begin, end, 1); });
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

// The CPU elementwise engine: strided N-d iteration with broadcasting. The formula of each
// op lives in csrc/common/elementwise_formulas.h; this file only walks memory.
#include "elementwise.h"

#include <stdexcept>

#include "../common/elementwise_formulas.h"
#include "array_math.h"
#include "isa.h"
#include "parallel.h"

namespace repmode::cpu {
namespace {

// Dims merged where every operand walks them as one (stride[d-1] == stride[d] * size[d]).
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> s_out, s_a, s_b;
};

Layout coalesce(const std::vector<int64_t>& sizes, const std::vector<int64_t>& so,
                const std::vector<int64_t>& sa, const std::vector<int64_t>& sb) {
  Layout L;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!L.sizes.empty()) {
      const int64_t n = L.sizes.back();
      if (L.s_out.back() == so[d] * sizes[d] && L.s_a.back() == sa[d] * sizes[d] &&
          L.s_b.back() == sb[d] * sizes[d]) {
        L.sizes.back() = n * sizes[d];
        L.s_out.back() = so[d];
        L.s_a.back() = sa[d];
        L.s_b.back() = sb[d];
        continue;
      }
    }
    L.sizes.push_back(sizes[d]);
    L.s_out.push_back(so[d]);
    L.s_a.push_back(sa[d]);
    L.s_b.push_back(sb[d]);
  }
  if (L.sizes.empty()) {
    L.sizes = {1};
    L.s_out = {1};
    L.s_a = {0};
    L.s_b = {0};
  }
  return L;
}

// The innermost loop. The contiguous case is its own loop so the compiler vectorizes it.
template <typename T, EwOp op>
REPMODE_INLINE void inner(int64_t n, T* o, int64_t so, const T* a, int64_t sa, const T* b,
                          int64_t sb, T alpha) {
  using F = EwFormula<T, op>;
  if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(a[i], b[i], alpha);
  } else if (so == 1 && sa == 1 && sb == 0) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(a[i], bv, alpha);
  } else if (so == 1 && sa == 0 && sb == 1) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = F::apply(av, b[i], alpha);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = F::apply(a[i * sa], b[i * sb], alpha);
  }
}

// Walk the linear output indices [begin, end) of layout L.
template <typename T, EwOp op>
REPMODE_INLINE void walk(const Layout& L, T* out, const T* a, const T* b, T alpha, int64_t begin,
                         int64_t end) {
  const int nd = static_cast<int>(L.sizes.size());
  const int64_t last = L.sizes[nd - 1];
  std::vector<int64_t> idx(nd, 0);
  int64_t rem = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rem % L.sizes[d];
    rem /= L.sizes[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t oo = 0, oa = 0, ob = 0;
    for (int d = 0; d < nd; ++d) {
      oo += idx[d] * L.s_out[d];
      oa += idx[d] * L.s_a[d];
      ob += idx[d] * L.s_b[d];
    }
    int64_t n = last - idx[nd - 1];
    if (n > end - pos) n = end - pos;
    inner<T, op>(n, out + oo, L.s_out[nd - 1], a + oa, L.s_a[nd - 1], b + ob, L.s_b[nd - 1], alpha);
    pos += n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] == L.sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <typename T, EwOp op>
REPMODE_TARGET_AVX2 void walk_avx2(const Layout& L, T* out, const T* a, const T* b, T alpha,
                                   int64_t begin, int64_t end) {
  walk<T, op>(L, out, a, b, alpha, begin, end);
}

template <typename T, EwOp op>
void walk_scalar(const Layout& L, T* out, const T* a, const T* b, T alpha, int64_t begin, int64_t end) {
  walk<T, op>(L, out, a, b, alpha, begin, end);
}

template <typename T, EwOp op>
void run(const Layout& L, T* out, const T* a, const T* b, T alpha, int nthreads) {
  int64_t numel = 1;
  for (int64_t s : L.sizes) numel *= s;
  const bool avx2 = active_isa() >= Isa::avx2;
  parallel_for(numel, nthreads, 1, [&](int64_t begin, int64_t end) {
    if (avx2)
      walk_avx2<T, op>(L, out, a, b, alpha, begin, end);
    else
      walk_scalar<T, op>(L, out, a, b, alpha, begin, end);
  });
}

template <typename T, EwOp op>
REPMODE_TARGET_AVX2 void flat_avx2(int64_t n, T* o, const T* a, const T* b, int64_t sb, T alpha) {
  inner<T, op>(n, o, 1, a, 1, b, sb, alpha);
}

template <typename T, EwOp op>
void flat_scalar(int64_t n, T* o, const T* a, const T* b, int64_t sb, T alpha) {
  inner<T, op>(n, o, 1, a, 1, b, sb, alpha);
}

template <typename T, EwOp op>
void run_flat(int64_t n, T* out, const T* a, const T* b, int64_t sb, T alpha, int nthreads) {
  const bool avx2 = active_isa() >= Isa::avx2;
  parallel_for(n, nthreads, 1, [&](int64_t begin, int64_t end) {
    const T* bb = b + begin * sb;
    if (avx2)
      flat_avx2<T, op>(end - begin, out + begin, a + begin, bb, sb, alpha);
    else
      flat_scalar<T, op>(end - begin, out + begin, a + begin, bb, sb, alpha);
  });
}

}  // namespace

template <typename T>
void elementwise_contiguous(int op, int64_t n, T* out, const T* a, const T* b, int64_t sb, T alpha,
                            int nthreads) {
  const T dummy = T(0.0);
  if (!b) {
    b = &dummy;
    sb = 0;
  }
  if (op == int(EwOp::exp) || op == int(EwOp::log)) {  // the array routines: same bits, SIMD
    const bool is_exp = op == int(EwOp::exp);
    parallel_for(n, nthreads, 8, [&](int64_t begin, int64_t end) {
      if (is_exp)
        exp_array(a + begin, out + begin, end - begin);
      else
        log_array(a + begin, out + begin, end - begin);
    });
    return;
  }
  switch (static_cast<EwOp>(op)) {
    case EwOp::add: return run_flat<T, EwOp::add>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::sub: return run_flat<T, EwOp::sub>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::mul: return run_flat<T, EwOp::mul>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::div: return run_flat<T, EwOp::div>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::threshold_backward:
      return run_flat<T, EwOp::threshold_backward>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::neg: return run_flat<T, EwOp::neg>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::relu: return run_flat<T, EwOp::relu>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::exp: return run_flat<T, EwOp::exp>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::log: return run_flat<T, EwOp::log>(n, out, a, b, sb, alpha, nthreads);
    case EwOp::abs: return run_flat<T, EwOp::abs>(n, out, a, b, sb, alpha, nthreads);
  }
  throw std::invalid_argument("repmode: unknown elementwise op code");
}

template <typename T>
void elementwise(int op, const std::vector<int64_t>& sizes, T* out,
                 const std::vector<int64_t>& out_strides, const Operand<T>& a, const Operand<T>& b,
                 T alpha, int nthreads) {
  for (int64_t s : sizes)
    if (s == 0) return;
  const std::vector<int64_t> zeros(sizes.size(), 0);
  // A missing b (unary op) reads a dummy scalar with stride 0.
  const T dummy = T(0.0);
  const T* bp = b.data ? b.data : &dummy;
  const Layout L = coalesce(sizes, out_strides, a.strides, b.data ? b.strides : zeros);
  switch (static_cast<EwOp>(op)) {
    case EwOp::add: return run<T, EwOp::add>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::sub: return run<T, EwOp::sub>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::mul: return run<T, EwOp::mul>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::div: return run<T, EwOp::div>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::threshold_backward:
      return run<T, EwOp::threshold_backward>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::neg: return run<T, EwOp::neg>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::relu: return run<T, EwOp::relu>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::exp: return run<T, EwOp::exp>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::log: return run<T, EwOp::log>(L, out, a.data, bp, alpha, nthreads);
    case EwOp::abs: return run<T, EwOp::abs>(L, out, a.data, bp, alpha, nthreads);
  }
  throw std::invalid_argument("repmode: unknown elementwise op code");
}

template void elementwise_contiguous<float>(int, int64_t, float*, const float*, const float*, int64_t,
                                            float, int);
template void elementwise_contiguous<double>(int, int64_t, double*, const double*, const double*, int64_t,
                                             double, int);
template void elementwise<float>(int, const std::vector<int64_t>&, float*, const std::vector<int64_t>&,
                                 const Operand<float>&, const Operand<float>&, float, int);
template void elementwise<double>(int, const std::vector<int64_t>&, double*, const std::vector<int64_t>&,
                                  const Operand<double>&, const Operand<double>&, double, int);

}  // namespace repmode::cpu

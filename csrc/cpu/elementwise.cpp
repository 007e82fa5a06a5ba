// Entry points of the CPU elementwise engine: builds the job (coalesced layout or the flat
// contiguous form), takes the SIMD array routines where an op has one, and hands the rest
// to the op groups (elementwise_arith/math/activations.cpp).
#include "elementwise.h"
#include "dispatch.h"
#include "entry_points.h"

#include <stdexcept>

#include "array_math.h"
#include "elementwise_engine.h"

namespace repmode::cpu {
namespace {

EwLayout coalesce(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides[4]) {
  EwLayout L;
  std::vector<int64_t>* dst[4] = {&L.s_out, &L.s_a, &L.s_b, &L.s_c};
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !L.sizes.empty();
    for (int k = 0; k < 4 && merge; ++k) merge = dst[k]->back() == (*strides[k])[d] * sizes[d];
    if (merge) {
      L.sizes.back() *= sizes[d];
      for (int k = 0; k < 4; ++k) dst[k]->back() = (*strides[k])[d];
      continue;
    }
    L.sizes.push_back(sizes[d]);
    for (int k = 0; k < 4; ++k) dst[k]->push_back((*strides[k])[d]);
  }
  if (L.sizes.empty()) {
    L.sizes = {1};
    for (int k = 0; k < 4; ++k) *dst[k] = {0};
  }
  return L;
}

template <typename T>
void dispatch(int op, const EwJob<T>& job) {
  if (run_arith<T>(op, job) || run_math<T>(op, job) || run_activations<T>(op, job) || run_more<T>(op, job) ||
      run_mathtail<T>(op, job) || run_special<T>(op, job) || run_bessel<T>(op, job))
    return;
  throw std::invalid_argument("repmode: unknown elementwise op code " + std::to_string(op));
}

}  // namespace

template <typename T>
void elementwise_contiguous(int op, int64_t n, T* out, const T* a, const T* b, int64_t sb, const T* c, int64_t sc,
                            const double params[3], int nthreads) {
  if (n <= 0) return;
  if (unary_array_op<T>(op)) {  // same bits as the formula, through the SIMD array routines
    parallel_for(n, nthreads, 8,
                 [&](int64_t begin, int64_t end) { unary_array(op, a + begin, out + begin, end - begin); });
    return;
  }
  if (b != nullptr && c == nullptr && binary_array_op<T>(op, sb)) {  // likewise, two operands
    parallel_for(n, nthreads, 8, [&](int64_t begin, int64_t end) {
      binary_array(op, a + begin, b + begin * sb, sb, out + begin, end - begin);
    });
    return;
  }
  const T zero = T(0);
  EwJob<T> job;
  job.flat = true;
  job.n = n;
  job.out = out;
  job.a = a;
  job.b = b ? b : &zero;
  job.sb = b ? sb : 0;
  job.c = c ? c : &zero;
  job.sc = c ? sc : 0;
  job.p = {params[0], params[1], params[2]};
  job.nthreads = nthreads;
  dispatch(op, job);
}

template <typename T>
void elementwise(int op, const std::vector<int64_t>& sizes, T* out, const std::vector<int64_t>& out_strides,
                 const Operand<T>& a, const Operand<T>& b, const Operand<T>& c, const double params[3], int nthreads) {
  for (int64_t s : sizes)
    if (s == 0) return;
  const std::vector<int64_t> zeros(sizes.size(), 0);
  const T zero = T(0);
  const std::vector<int64_t>* strides[4] = {&out_strides, &a.strides, b.data ? &b.strides : &zeros,
                                            c.data ? &c.strides : &zeros};
  EwJob<T> job;
  job.L = coalesce(sizes, strides);
  job.out = out;
  job.a = a.data;
  job.b = b.data ? b.data : &zero;
  job.c = c.data ? c.data : &zero;
  job.p = {params[0], params[1], params[2]};
  job.nthreads = nthreads;
  dispatch(op, job);
}

#define INSTANTIATE(T)                                                                                               \
  template void elementwise_contiguous<T>(int, int64_t, T*, const T*, const T*, int64_t, const T*, int64_t,          \
                                          const double[3], int);                                                     \
  template void elementwise<T>(int, const std::vector<int64_t>&, T*, const std::vector<int64_t>&, const Operand<T>&, \
                               const Operand<T>&, const Operand<T>&, const double[3], int);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

// ---- entry points (csrc/cpu/entry_points.h): the dtype dispatch of repmode._C ----

namespace {

// An operand: a tensor (pointer + strides) or, when pointer is 0, the Python number `value`.
template <typename T>
Operand<T> operand(uintptr_t p, const Ints& strides, double value, size_t ndim, T* scalar_slot) {
  if (p) return Operand<T>{ptr<const T>(p), strides};
  *scalar_slot = static_cast<T>(value);  // a Python float is a double: one RNE rounding to T
  return Operand<T>{scalar_slot, Ints(ndim, 0)};
}

}  // namespace

void elementwise(int op, int dtype, const Ints& sizes, uintptr_t out, const Ints& out_strides, uintptr_t a,
                 const Ints& a_strides, double a_value, uintptr_t b, const Ints& b_strides, double b_value, bool has_b,
                 uintptr_t c, const Ints& c_strides, double c_value, bool has_c, const std::vector<double>& params,
                 int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T sa = 0, sb = 0, sc = 0;
    const double p[3] = {params.size() > 0 ? params[0] : 0.0, params.size() > 1 ? params[1] : 0.0,
                         params.size() > 2 ? params[2] : 0.0};
    Operand<T> A = operand<T>(a, a_strides, a_value, sizes.size(), &sa);
    Operand<T> B = has_b ? operand<T>(b, b_strides, b_value, sizes.size(), &sb) : Operand<T>{nullptr, {}};
    Operand<T> C = has_c ? operand<T>(c, c_strides, c_value, sizes.size(), &sc) : Operand<T>{nullptr, {}};
    elementwise<T>(op, sizes, ptr<T>(out), out_strides, A, B, C, p, nthreads);
  });
}

void elementwise_flat(int op, int dtype, int64_t n, uintptr_t out, uintptr_t a, uintptr_t b, double b_value, bool has_b,
                      double p0, double p1, int nthreads) {
  by_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const T scalar = static_cast<T>(b_value);
    const double p[3] = {p0, p1, 0.0};
    const T* bp = !has_b ? nullptr : (b ? ptr<const T>(b) : &scalar);
    elementwise_contiguous<T>(op, n, ptr<T>(out), ptr<const T>(a), bp, b ? 1 : 0, nullptr, 0, p, nthreads);
  });
}

}  // namespace repmode::cpu

// Entry points of the CPU elementwise engine: builds the job (coalesced layout or the flat
// contiguous form), takes the SIMD array routines where an op has one, and hands the rest
// to the op groups (elementwise_arith/math/activations.cpp).
#include "elementwise.h"

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
  if (run_arith<T>(op, job) || run_math<T>(op, job) || run_activations<T>(op, job)) return;
  throw std::invalid_argument("repmode: unknown elementwise op code " + std::to_string(op));
}

}  // namespace

template <typename T>
void elementwise_contiguous(int op, int64_t n, T* out, const T* a, const T* b, int64_t sb,
                            const T* c, int64_t sc, const double params[3], int nthreads) {
  if (n <= 0) return;
  if (unary_array_op<T>(op)) {  // same bits as the formula, through the SIMD array routines
    parallel_for(n, nthreads, 8, [&](int64_t begin, int64_t end) {
      unary_array(op, a + begin, out + begin, end - begin);
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
void elementwise(int op, const std::vector<int64_t>& sizes, T* out,
                 const std::vector<int64_t>& out_strides, const Operand<T>& a, const Operand<T>& b,
                 const Operand<T>& c, const double params[3], int nthreads) {
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

#define INSTANTIATE(T)                                                                              \
  template void elementwise_contiguous<T>(int, int64_t, T*, const T*, const T*, int64_t, const T*, \
                                          int64_t, const double[3], int);                               \
  template void elementwise<T>(int, const std::vector<int64_t>&, T*, const std::vector<int64_t>&,   \
                               const Operand<T>&, const Operand<T>&, const Operand<T>&, const double[3], \
                               int);
INSTANTIATE(float)
INSTANTIATE(double)
#undef INSTANTIATE

}  // namespace repmode::cpu

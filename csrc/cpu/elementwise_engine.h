// Internals of the CPU elementwise engine (csrc/cpu/elementwise.cpp and the
// elementwise_<group>.cpp files that instantiate it for groups of ops, so the many
// instantiations compile in parallel). Only memory walking lives here; the arithmetic of
// one element is EwFormula (csrc/common/elementwise.h), identical on every path.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/elementwise.h"
#include "isa.h"
#include "parallel.h"

namespace repmode::cpu {

// Dims merged where every operand walks them as one; absent operands have stride 0.
struct EwLayout {
  std::vector<int64_t> sizes, s_out, s_a, s_b, s_c;
};

template <typename T>
struct EwJob {
  EwLayout L;         // general form
  bool flat = false;  // contiguous out/a of n elements; b, c stride 0 or 1
  int64_t n = 0, sb = 0, sc = 0;
  T* out = nullptr;
  const T *a = nullptr, *b = nullptr, *c = nullptr;
  EwParams<T> p{};
  int nthreads = 1;
};

namespace ew_engine {

template <typename T, EwOp op, int SB, int SC>
REPMODE_INLINE void contiguous_loop(int64_t n, T* o, const T* a, const T* b, const T* c, const EwParams<T>& p) {
  for (int64_t i = 0; i < n; ++i) o[i] = EwFormula<T, op>::apply(a[i], b[i * SB], c[i * SC], p);
}

// n elements from o/a/b/c with the given strides.
template <typename T, EwOp op>
REPMODE_INLINE void inner(int64_t n, T* o, int64_t so, const T* a, int64_t sa, const T* b, int64_t sb, const T* c,
                          int64_t sc, const EwParams<T>& p) {
  if (so == 1 && sa == 1 && (sb | sc | 1) == 1) {
    if (sb && sc) return contiguous_loop<T, op, 1, 1>(n, o, a, b, c, p);
    if (sb) return contiguous_loop<T, op, 1, 0>(n, o, a, b, c, p);
    if (sc) return contiguous_loop<T, op, 0, 1>(n, o, a, b, c, p);
    return contiguous_loop<T, op, 0, 0>(n, o, a, b, c, p);
  }
  for (int64_t i = 0; i < n; ++i) o[i * so] = EwFormula<T, op>::apply(a[i * sa], b[i * sb], c[i * sc], p);
}

// The linear output indices [begin, end) of job.L.
template <typename T, EwOp op>
REPMODE_INLINE void walk(const EwJob<T>& job, int64_t begin, int64_t end) {
  if (job.flat)
    return inner<T, op>(end - begin, job.out + begin, 1, job.a + begin, 1, job.b + begin * job.sb, job.sb,
                        job.c + begin * job.sc, job.sc, job.p);
  const EwLayout& L = job.L;
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
    int64_t oo = 0, oa = 0, ob = 0, oc = 0;
    for (int d = 0; d < nd; ++d) {
      oo += idx[d] * L.s_out[d];
      oa += idx[d] * L.s_a[d];
      ob += idx[d] * L.s_b[d];
      oc += idx[d] * L.s_c[d];
    }
    int64_t n = last - idx[nd - 1];
    if (n > end - pos) n = end - pos;
    inner<T, op>(n, job.out + oo, L.s_out[nd - 1], job.a + oa, L.s_a[nd - 1], job.b + ob, L.s_b[nd - 1], job.c + oc,
                 L.s_c[nd - 1], job.p);
    pos += n;
    idx[nd - 1] += n;
    for (int d = nd - 1; d > 0 && idx[d] == L.sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

template <typename T, EwOp op>
REPMODE_TARGET_AVX2 void walk_avx2(const EwJob<T>& job, int64_t begin, int64_t end) {
  walk<T, op>(job, begin, end);
}

template <typename T, EwOp op>
REPMODE_TARGET_AVX512 void walk_avx512(const EwJob<T>& job, int64_t begin, int64_t end) {
  walk<T, op>(job, begin, end);
}

template <typename T, EwOp op>
void walk_portable(const EwJob<T>& job, int64_t begin, int64_t end) {
  walk<T, op>(job, begin, end);
}

template <typename T>
int64_t numel_of(const EwJob<T>& job) {
  if (job.flat) return job.n;
  int64_t k = 1;
  for (int64_t s : job.L.sizes) k *= s;
  return k;
}

// kAvx2: also compile AVX2 and AVX-512 copies of the loop (worth it for ops the compiler
// vectorizes; the per-element arithmetic is the same IEEE sequence either way).
template <typename T, EwOp op, bool kAvx2>
void run(const EwJob<T>& job) {
  const Isa isa = kAvx2 ? active_isa() : Isa::scalar;
  parallel_for(numel_of(job), job.nthreads, 1, [&](int64_t begin, int64_t end) {
    if (isa == Isa::avx512)
      walk_avx512<T, op>(job, begin, end);
    else if (isa == Isa::avx2)
      walk_avx2<T, op>(job, begin, end);
    else
      walk_portable<T, op>(job, begin, end);
  });
}

}  // namespace ew_engine

// Each group file defines run_<group>(op, job) -> false when op is not in the group.
template <typename T>
bool run_arith(int op, const EwJob<T>& job);
template <typename T>
bool run_math(int op, const EwJob<T>& job);
template <typename T>
bool run_activations(int op, const EwJob<T>& job);
template <typename T>
bool run_more(int op, const EwJob<T>& job);
template <typename T>
bool run_mathtail(int op, const EwJob<T>& job);
template <typename T>
bool run_special(int op, const EwJob<T>& job);
template <typename T>
bool run_bessel(int op, const EwJob<T>& job);

#define REPMODE_EW_CASE(name, avx2)           \
  case EwOp::name:                            \
    ew_engine::run<T, EwOp::name, avx2>(job); \
    return true;

#define REPMODE_EW_GROUP(group, CASES)                        \
  template <typename T>                                       \
  bool run_##group(int op, const EwJob<T>& job) {             \
    switch (static_cast<EwOp>(op)) {                          \
      CASES                                                   \
      default:                                                \
        return false;                                         \
    }                                                         \
  }                                                           \
  template bool run_##group<float>(int, const EwJob<float>&); \
  template bool run_##group<double>(int, const EwJob<double>&);

}  // namespace repmode::cpu

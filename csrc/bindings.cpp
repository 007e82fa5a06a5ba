// repmode._C: the Python binding of the CPU kernels (families with their own file:
// csrc/bind_families.cpp lists them). No torch headers: Python passes data
// pointers (as integers), sizes and strides in elements, and a dtype code
// (0 = float32, 1 = float64); outputs are allocated by Python.
#include "bind_util.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "cpu/elementwise.h"
#include "cpu/gemm.h"
#include "cpu/isa.h"
#include "common/math_trig.h"
#include "common/philox.h"
#include "cpu/random.h"
#include "cpu/reduce.h"
#include "cpu/reduce_rows.h"
#include "cpu/softmax_loss.h"

namespace py = pybind11;
using namespace repmode::cpu;

namespace {

using repmode::bind::Ints;
using repmode::bind::by_dtype;
using repmode::bind::ptr;

// An operand: a tensor (pointer + strides) or, when pointer is 0, the Python number `value`.
template <typename T>
Operand<T> operand(uintptr_t p, const Ints& strides, double value, size_t ndim, T* scalar_slot) {
  if (p) return Operand<T>{ptr<const T>(p), strides};
  *scalar_slot = static_cast<T>(value);  // a Python float is a double: one RNE rounding to T
  return Operand<T>{scalar_slot, Ints(ndim, 0)};
}

// Operands a, b, c: pointer + strides, or (pointer 0) the Python number `value`; b and c
// may be absent (has_b / has_c false). params: the op's number arguments p0, p1, p2.
void elementwise_py(int op, int dtype, const Ints& sizes, uintptr_t out, const Ints& out_strides,
                    uintptr_t a, const Ints& a_strides, double a_value, uintptr_t b,
                    const Ints& b_strides, double b_value, bool has_b, uintptr_t c,
                    const Ints& c_strides, double c_value, bool has_c, const std::vector<double>& params,
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

// The hot path: contiguous operands of n elements; b is an array (b != 0), the number
// b_value (b == 0, has_b) or absent. Small calls keep the GIL: releasing it costs more than
// the work.
void elementwise_flat(int op, int dtype, int64_t n, uintptr_t out, uintptr_t a, uintptr_t b,
                      double b_value, bool has_b, double p0, double p1, int nthreads) {
  auto call = [&] {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      const T scalar = static_cast<T>(b_value);
      const double p[3] = {p0, p1, 0.0};
      const T* bp = !has_b ? nullptr : (b ? ptr<const T>(b) : &scalar);
      elementwise_contiguous<T>(op, n, ptr<T>(out), ptr<const T>(a), bp, b ? 1 : 0, nullptr, 0, p,
                                nthreads);
    });
  };
  if (n < 4096) {
    call();
  } else {
    py::gil_scoped_release release;
    call();
  }
}

bool flush_denormal_active() {
#if defined(__x86_64__)
  const unsigned csr = _mm_getcsr();
  return (csr & 0x8000u) || (csr & 0x0040u);  // FTZ or DAZ
#else
  return false;
#endif
}

bool set_cpu_isa(const std::string& name) {
  if (name == "auto") return set_active_isa(best_isa());
  if (name == "scalar") return set_active_isa(Isa::scalar);
  if (name == "avx2") return set_active_isa(Isa::avx2);
  if (name == "avx512") return set_active_isa(Isa::avx512);
  return false;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "repmode's reproducible CPU kernels (see docs/semantics.md for every order)";

  repmode::bind::bind_families(m);
  m.def("flush_denormal_active", &flush_denormal_active);
  m.def("set_cpu_isa", &set_cpu_isa);
  m.def("cpu_isa", [] { return std::string(isa_name(active_isa())); });
  m.def("best_cpu_isa", [] { return std::string(isa_name(best_isa())); });

  m.def("philox4x32_10", [](uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    const repmode::PhiloxBlock b = repmode::philox4x32_10(repmode::PhiloxBlock{{c0, c1, c2, c3}}, k0, k1);
    return std::vector<uint32_t>{b.w[0], b.w[1], b.w[2], b.w[3]};
  });
  m.def("sincos_turns", [](double u) {
    double s, c;
    repmode::sincos_turns(u, &s, &c);
    return std::vector<double>{s, c};
  });
  m.def("random_fill", [](int dist, int dtype, uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, double p0,
                          double p1, int nthreads) {
    return by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      return random_fill<T>(dist, ptr<T>(out), n, seed, offset, p0, p1, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());

  m.def("random_ints", [](uintptr_t out, int64_t n, uint64_t seed, uint64_t offset, int64_t lo, uint64_t range,
                          int nthreads) {
    return random_ints(ptr<int64_t>(out), n, seed, offset, lo, range, nthreads);
  }, py::call_guard<py::gil_scoped_release>());

  m.def("elementwise", &elementwise_py, py::call_guard<py::gil_scoped_release>());
  m.def("elementwise_flat", &elementwise_flat);

  m.def("sum_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN,
                       uintptr_t out, int64_t s_out, bool mean, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      sum_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), s_out, mean, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("sum_rows_reference", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN,
                                 uintptr_t out, int64_t s_out, bool mean) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      sum_rows_reference<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), s_out, mean);
    });
  }, py::call_guard<py::gil_scoped_release>());

  m.def("var_mean_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN,
                            double correction, uintptr_t var, uintptr_t mean, bool take_sqrt, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      var_mean_rows<T>(ptr<const T>(x), M, N, sM, sN, correction, ptr<T>(var), ptr<T>(mean), take_sqrt, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("prod_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, uintptr_t out,
                        int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      prod_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("extreme_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, bool is_max,
                           uintptr_t values, uintptr_t indices, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      extreme_rows<T>(ptr<const T>(x), M, N, sM, sN, is_max, ptr<T>(values), ptr<int64_t>(indices), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("logsumexp_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN,
                             uintptr_t out, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      logsumexp_rows<T>(ptr<const T>(x), M, N, sM, sN, ptr<T>(out), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("norm_rows", [](int dtype, uintptr_t x, int64_t M, int64_t N, int64_t sM, int64_t sN, double ord,
                        uintptr_t out, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      norm_rows<T>(ptr<const T>(x), M, N, sM, sN, ord, ptr<T>(out), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("softmax", [](int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner, bool safe,
                      int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      softmax<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, safe, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("softmax_backward", [](int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer, int64_t n,
                               int64_t inner, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      softmax_backward<T>(ptr<const T>(grad), ptr<const T>(y), ptr<T>(out), outer, n, inner, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("cumulative", [](int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                         bool product, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      cumulative<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, product, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());

  m.def("gemm", [](int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A, int64_t sAb,
                   int64_t sAm, int64_t sAk, uintptr_t B, int64_t sBb, int64_t sBk, int64_t sBn,
                   uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      gemm<T>(batch, M, N, K, ptr<const T>(A), sAb, sAm, sAk, ptr<const T>(B), sBb, sBk, sBn, ptr<T>(C),
              sCb, sCm, sCn, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("gemm_reference", [](int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, uintptr_t A,
                             int64_t sAb, int64_t sAm, int64_t sAk, uintptr_t B, int64_t sBb, int64_t sBk,
                             int64_t sBn, uintptr_t C, int64_t sCb, int64_t sCm, int64_t sCn) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      gemm_reference<T>(batch, M, N, K, ptr<const T>(A), sAb, sAm, sAk, ptr<const T>(B), sBb, sBk, sBn,
                        ptr<T>(C), sCb, sCm, sCn);
    });
  }, py::call_guard<py::gil_scoped_release>());

  m.def("log_softmax", [](int dtype, uintptr_t x, uintptr_t out, int64_t outer, int64_t n, int64_t inner,
                          int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      log_softmax<T>(ptr<const T>(x), ptr<T>(out), outer, n, inner, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("log_softmax_backward", [](int dtype, uintptr_t grad, uintptr_t y, uintptr_t out, int64_t outer,
                                   int64_t n, int64_t inner, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      log_softmax_backward<T>(ptr<const T>(grad), ptr<const T>(y), ptr<T>(out), outer, n, inner, nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());

  m.def("nll_loss_forward", [](int dtype, uintptr_t x, int64_t N, int64_t C, int64_t sN, int64_t sC,
                               uintptr_t target, int64_t s_target, uintptr_t weight, int reduction,
                               int64_t ignore_index, uintptr_t out, int64_t s_out, uintptr_t total_weight) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      nll_loss_forward<T>(ptr<const T>(x), N, C, sN, sC, ptr<const int64_t>(target), s_target,
                          ptr<const T>(weight), reduction, ignore_index, ptr<T>(out), s_out,
                          ptr<T>(total_weight));
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("nll_loss_backward", [](int dtype, uintptr_t grad_input, int64_t N, int64_t C, uintptr_t grad,
                                int64_t s_grad, uintptr_t target, int64_t s_target, uintptr_t weight,
                                int reduction, int64_t ignore_index, uintptr_t total_weight) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      nll_loss_backward<T>(ptr<T>(grad_input), N, C, ptr<const T>(grad), s_grad,
                           ptr<const int64_t>(target), s_target, ptr<const T>(weight), reduction,
                           ignore_index, *ptr<const T>(total_weight));
    });
  }, py::call_guard<py::gil_scoped_release>());
}

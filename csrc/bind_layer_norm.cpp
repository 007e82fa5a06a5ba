// Bindings of the layer norm family (repmode/kernels/layer_norm.py). Pointers as integers,
// 0 for an absent weight/bias/output.
#include "bind_util.h"
#include "cpu/layer_norm.h"

namespace repmode::bind {

namespace py = pybind11;

void bind_layer_norm(py::module_& m) {
  using namespace repmode::cpu;
  m.def("layer_norm_forward", [](int dtype, uintptr_t x, int64_t M, int64_t N, uintptr_t w, uintptr_t b, double eps,
                                 uintptr_t y, uintptr_t mean, uintptr_t rstd, int nthreads, bool reference) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      if (reference)
        layer_norm_forward_reference<T>(ptr<const T>(x), M, N, ptr<const T>(w), ptr<const T>(b), eps, ptr<T>(y),
                                        ptr<T>(mean), ptr<T>(rstd));
      else
        layer_norm_forward<T>(ptr<const T>(x), M, N, ptr<const T>(w), ptr<const T>(b), eps, ptr<T>(y),
                              ptr<T>(mean), ptr<T>(rstd), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("layer_norm_backward", [](int dtype, uintptr_t g, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                                  int64_t M, int64_t N, uintptr_t dx, uintptr_t dw, uintptr_t db, int nthreads,
                                  bool reference) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      if (reference)
        layer_norm_backward_reference<T>(ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                                         ptr<const T>(w), M, N, ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
      else
        layer_norm_backward<T>(ptr<const T>(g), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                               ptr<const T>(w), M, N, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
}

}  // namespace repmode::bind

// Bindings of the batch norm / group norm family (csrc/cpu/batch_norm.h). Pointers are
// integers (0 = absent), sizes in elements, dtype code 0 = float32, 1 = float64.
#include "bind_util.h"
#include "cpu/batch_norm.h"

namespace py = pybind11;

namespace repmode::bind {

void bind_batch_norm(py::module_& m) {
  using namespace repmode::cpu;
  m.def("batch_norm_forward", [](int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S,
                                 bool channels_last, uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar,
                                 bool training, double momentum, double eps, uintptr_t save_mean,
                                 uintptr_t save_invstd, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      batch_norm_forward<T>(ptr<const T>(x), ptr<T>(y), N, C, S, channels_last, ptr<const T>(w), ptr<const T>(b),
                            ptr<T>(rmean), ptr<T>(rvar), training, momentum, eps, ptr<T>(save_mean),
                            ptr<T>(save_invstd), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("batch_norm_forward_reference", [](int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t S,
                                           uintptr_t w, uintptr_t b, uintptr_t rmean, uintptr_t rvar, bool training,
                                           double momentum, double eps, uintptr_t save_mean, uintptr_t save_invstd) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      batch_norm_forward_reference<T>(ptr<const T>(x), ptr<T>(y), N, C, S, ptr<const T>(w), ptr<const T>(b),
                                      ptr<T>(rmean), ptr<T>(rvar), training, momentum, eps, ptr<T>(save_mean),
                                      ptr<T>(save_invstd));
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("batch_norm_backward", [](int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S,
                                  bool channels_last, uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean,
                                  uintptr_t rvar, bool train, double eps, uintptr_t dx, uintptr_t dw, uintptr_t db,
                                  int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      batch_norm_backward<T>(ptr<const T>(dy), ptr<const T>(x), N, C, S, channels_last, ptr<const T>(w),
                             ptr<const T>(mean), ptr<const T>(invstd), ptr<const T>(rmean), ptr<const T>(rvar), train,
                             eps, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("batch_norm_backward_reference", [](int dtype, uintptr_t dy, uintptr_t x, int64_t N, int64_t C, int64_t S,
                                            uintptr_t w, uintptr_t mean, uintptr_t invstd, uintptr_t rmean,
                                            uintptr_t rvar, bool train, double eps, uintptr_t dx, uintptr_t dw,
                                            uintptr_t db) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      batch_norm_backward_reference<T>(ptr<const T>(dy), ptr<const T>(x), N, C, S, ptr<const T>(w),
                                       ptr<const T>(mean), ptr<const T>(invstd), ptr<const T>(rmean),
                                       ptr<const T>(rvar), train, eps, ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("group_norm_forward", [](int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW, int64_t G,
                                 uintptr_t w, uintptr_t b, double eps, uintptr_t mean, uintptr_t rstd, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      group_norm_forward<T>(ptr<const T>(x), ptr<T>(y), N, C, HxW, G, ptr<const T>(w), ptr<const T>(b), eps,
                            ptr<T>(mean), ptr<T>(rstd), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("group_norm_forward_reference", [](int dtype, uintptr_t x, uintptr_t y, int64_t N, int64_t C, int64_t HxW,
                                           int64_t G, uintptr_t w, uintptr_t b, double eps, uintptr_t mean,
                                           uintptr_t rstd) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      group_norm_forward_reference<T>(ptr<const T>(x), ptr<T>(y), N, C, HxW, G, ptr<const T>(w), ptr<const T>(b),
                                      eps, ptr<T>(mean), ptr<T>(rstd));
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("group_norm_backward", [](int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd, uintptr_t w,
                                  int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t dx, uintptr_t dw,
                                  uintptr_t db, int nthreads) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      group_norm_backward<T>(ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                             ptr<const T>(w), N, C, HxW, G, ptr<T>(dx), ptr<T>(dw), ptr<T>(db), nthreads);
    });
  }, py::call_guard<py::gil_scoped_release>());
  m.def("group_norm_backward_reference", [](int dtype, uintptr_t dy, uintptr_t x, uintptr_t mean, uintptr_t rstd,
                                            uintptr_t w, int64_t N, int64_t C, int64_t HxW, int64_t G, uintptr_t dx,
                                            uintptr_t dw, uintptr_t db) {
    by_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      group_norm_backward_reference<T>(ptr<const T>(dy), ptr<const T>(x), ptr<const T>(mean), ptr<const T>(rstd),
                                       ptr<const T>(w), N, C, HxW, G, ptr<T>(dx), ptr<T>(dw), ptr<T>(db));
    });
  }, py::call_guard<py::gil_scoped_release>());
}

}  // namespace repmode::bind

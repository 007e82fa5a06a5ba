// Bindings of the recurrent family (repmode/kernels/recurrent.py): one LSTM cell step,
// forward and backward (csrc/cpu/recurrent.h).
#include "bind_util.h"
#include "cpu/recurrent.h"

namespace py = pybind11;

namespace repmode::bind {

void bind_recurrent(py::module_& m) {
  m.def(
      "lstm_forward_step",
      [](int dtype, int64_t B, int64_t H, uintptr_t a, int64_t a_rs, uintptr_t r, int64_t r_rs, uintptr_t c_prev,
         int64_t c_rs, uintptr_t ws, uintptr_t h, int nthreads) {
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::lstm_forward_step<T>(B, H, ptr<T>(a), a_rs, ptr<T>(r), r_rs, ptr<T>(c_prev), c_rs, ptr<T>(ws),
                                    ptr<T>(h), nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "lstm_backward_step",
      [](int dtype, int64_t B, int64_t H, uintptr_t go, int64_t go_rs, int64_t go_cs, uintptr_t dh, uintptr_t dc,
         uintptr_t ws, uintptr_t c_prev, int64_t c_rs, uintptr_t dgates, uintptr_t dc_out, int nthreads) {
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::lstm_backward_step<T>(B, H, ptr<T>(go), go_rs, go_cs, ptr<T>(dh), ptr<T>(dc), ptr<T>(ws),
                                     ptr<T>(c_prev), c_rs, ptr<T>(dgates), ptr<T>(dc_out), nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace repmode::bind

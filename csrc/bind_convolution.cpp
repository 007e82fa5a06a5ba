// Python bindings of the convolution family (csrc/cpu/convolution.h). The geometry comes as
// 22 integers: N, Ci, Co, G, then in[3], out[3], kernel[3], stride[3], padding[3],
// dilation[3] (1-d and 2-d convolutions padded to 3-d with leading size-1 dims).
#include "bind_util.h"
#include "cpu/convolution.h"

namespace py = pybind11;

namespace repmode::bind {
namespace {

ConvGeom geom_of(const Ints& v) { return conv_geom_of(v, "repmode._C"); }

}  // namespace

void bind_convolution(py::module_& m) {
  m.def(
      "conv_forward",
      [](int dtype, const Ints& geom, uintptr_t x, uintptr_t w, uintptr_t bias, uintptr_t y, int nthreads) {
        const ConvGeom g = geom_of(geom);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::conv_forward<T>(g, ptr<const T>(x), ptr<const T>(w), ptr<const T>(bias), ptr<T>(y), nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "conv_grad_input",
      [](int dtype, const Ints& geom, uintptr_t gy, uintptr_t w, uintptr_t bias, uintptr_t gx, int nthreads) {
        const ConvGeom g = geom_of(geom);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::conv_grad_input<T>(g, ptr<const T>(gy), ptr<const T>(w), ptr<const T>(bias), ptr<T>(gx),
                                  nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "conv_grad_weight",
      [](int dtype, const Ints& geom, uintptr_t x, uintptr_t gy, uintptr_t gw, int nthreads) {
        const ConvGeom g = geom_of(geom);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::conv_grad_weight<T>(g, ptr<const T>(x), ptr<const T>(gy), ptr<T>(gw), nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
  m.def("set_conv_chunk_elems", &cpu::set_conv_chunk_elems);
  // what: 0 forward (a = x, b = w), 1 grad input (a = gy, b = w), 2 grad weight (a = x, b = gy).
  m.def(
      "convolution_reference",
      [](int what, int dtype, const Ints& geom, uintptr_t a, uintptr_t b, uintptr_t bias, uintptr_t out) {
        const ConvGeom g = geom_of(geom);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          cpu::conv_reference<T>(what, g, ptr<const T>(a), ptr<const T>(b), ptr<const T>(bias), ptr<T>(out));
        });
      },
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace repmode::bind

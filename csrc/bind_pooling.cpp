// Bindings of the pooling family (csrc/cpu/pooling.h): one geometry description shared by the
// forward and backward entries and their plain references.
#include "bind_util.h"
#include "cpu/pooling.h"

namespace repmode::bind {

namespace py = pybind11;
using cpu::PoolGeom;

namespace {

PoolGeom make_geom(int kind, const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s,
                   const Ints& p, const Ints& dil, bool count_include_pad, int64_t divisor_override,
                   const Ints& xs, const Ints& os, const Ints& is) {
  return pool_geom_of(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override, xs, os, is,
                      "repmode._C pooling");
}

}  // namespace

void bind_pooling(py::module_& m) {
  m.def(
      "pool_forward",
      [](int dtype, int kind, uintptr_t x, uintptr_t out, uintptr_t index, const Ints& in_sizes,
         const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil, bool count_include_pad,
         int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is, int nthreads, bool reference) {
        const PoolGeom g = make_geom(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override,
                                     xs, os, is);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          if (reference)
            cpu::pool_forward_reference<T>(ptr<const T>(x), ptr<T>(out), ptr<int64_t>(index), g);
          else
            cpu::pool_forward<T>(ptr<const T>(x), ptr<T>(out), ptr<int64_t>(index), g, nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "pool_backward",
      [](int dtype, int kind, uintptr_t grad_output, uintptr_t index, uintptr_t grad_input, const Ints& in_sizes,
         const Ints& out_sizes, const Ints& k, const Ints& s, const Ints& p, const Ints& dil, bool count_include_pad,
         int64_t divisor_override, const Ints& xs, const Ints& os, const Ints& is, int nthreads, bool reference) {
        const PoolGeom g = make_geom(kind, in_sizes, out_sizes, k, s, p, dil, count_include_pad, divisor_override,
                                     xs, os, is);
        by_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          if (reference)
            cpu::pool_backward_reference<T>(ptr<const T>(grad_output), ptr<const int64_t>(index),
                                            ptr<T>(grad_input), g);
          else
            cpu::pool_backward<T>(ptr<const T>(grad_output), ptr<const int64_t>(index), ptr<T>(grad_input), g,
                                  nthreads);
        });
      },
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace repmode::bind

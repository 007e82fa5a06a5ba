// Bindings of the pooling family (csrc/cpu/pooling.h): one geometry description shared by the
// forward and backward entries and their plain references.
#include "bind_util.h"
#include "cpu/pooling.h"

namespace repmode::bind {

namespace py = pybind11;
using cpu::PoolGeom;

namespace {

// in_sizes = (N, C, D, H, W), out_sizes = (OD, OH, OW); args = (k, s, p, dil) x 3 each;
// strides in elements (n, c, d, h, w) for the input-side tensor, the output-side tensor and the
// indices.
PoolGeom make_geom(int kind, const Ints& in_sizes, const Ints& out_sizes, const Ints& k, const Ints& s,
                   const Ints& p, const Ints& dil, bool count_include_pad, int64_t divisor_override,
                   const Ints& xs, const Ints& os, const Ints& is) {
  if (in_sizes.size() != 5 || out_sizes.size() != 3 || k.size() != 3 || s.size() != 3 || p.size() != 3 ||
      dil.size() != 3 || xs.size() != 5 || os.size() != 5 || is.size() != 5)
    throw std::invalid_argument("repmode._C pooling: bad geometry lengths");
  PoolGeom g;
  g.kind = kind;
  g.N = in_sizes[0];
  g.C = in_sizes[1];
  g.D = in_sizes[2];
  g.H = in_sizes[3];
  g.W = in_sizes[4];
  g.OD = out_sizes[0];
  g.OH = out_sizes[1];
  g.OW = out_sizes[2];
  for (int i = 0; i < 3; ++i) {
    g.k[i] = k[i];
    g.s[i] = s[i];
    g.p[i] = p[i];
    g.dil[i] = dil[i];
  }
  for (int i = 0; i < 5; ++i) {
    g.xs[i] = xs[i];
    g.os[i] = os[i];
    g.is[i] = is[i];
  }
  g.count_include_pad = count_include_pad;
  g.divisor_override = divisor_override;
  return g;
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

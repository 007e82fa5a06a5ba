// repmode._C: the Python binding of the CPU kernels. Every function is a row of
// csrc/bindings/entry_points.def bound to its repmode::cpu entry point (csrc/cpu/entry_points.h).
// No torch headers: Python passes data pointers (as integers), sizes and strides in elements,
// and a dtype code (codes()["Dtype"]); outputs are allocated by Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "../cpu/entry_points.h"
#include "module_common.h"

namespace py = pybind11;
namespace rb = repmode::bindings;
namespace rc = repmode::cpu;

PYBIND11_MODULE(_C, m) {
  m.doc() = "repmode's reproducible CPU kernels (see docs/semantics.md for every order)";
  const auto nogil = py::call_guard<py::gil_scoped_release>();
  std::vector<std::tuple<std::string, std::string>> bound;

#define REPMODE_ENTRY(family, name) \
  m.def(#name, &rc::name, nogil);   \
  bound.emplace_back(#family, #name);
#define REPMODE_CPU_ENTRY(family, name) REPMODE_ENTRY(family, name)
#define REPMODE_CPU_CONTROL(family, name) \
  m.def(#name, &rc::name);                \
  bound.emplace_back(#family, #name);
#define REPMODE_ENTRY_SIZED(family, name, size_arg)                   \
  m.def(#name, &rb::ReleaseGilAboveSmall<&rc::name, size_arg>::call); \
  bound.emplace_back(#family, #name);
#include "entry_points.def"

  m.def("entry_points", [bound] { return bound; }, "the (family, name) of every entry point this module binds");
  m.def("codes", &rb::codes, "the op, dtype and layout codes the entry points take (defined in csrc/common/)");
}

// repmode._C_cuda: the Python binding of the CUDA kernels. Every function is a row of
// csrc/bindings/entry_points.def bound to its repmode::cuda launcher (csrc/cuda/launchers.h), with
// the signature of its CPU twin in repmode._C except that the CPU's thread count is the CUDA
// stream (an integer handle), so a kernel family calls either module the same way
// (repmode/_ext.py, repmode/kernels/_common.py: `kernels_for`, `launch_arg`). Built only by the
// CUDA build switch (setup.py, REPMODE_CUDA); plain C++, compiled by the host compiler.
//
// The host emulator of the kernels (tests/cuda/emulator/build.py) compiles this file as well,
// with REPMODE_CUDA_MODULE_NAME set to its module name and REPMODE_CUDA_MODULE_HOOK naming a
// function that adds the emulator's own functions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "../cuda/launchers.h"
#include "module_common.h"

#ifndef REPMODE_CUDA_MODULE_NAME
#define REPMODE_CUDA_MODULE_NAME _C_cuda
#endif

namespace py = pybind11;
namespace rb = repmode::bindings;
namespace rc = repmode::cuda;

#ifdef REPMODE_CUDA_MODULE_HOOK
void REPMODE_CUDA_MODULE_HOOK(py::module_& m);
#endif

PYBIND11_MODULE(REPMODE_CUDA_MODULE_NAME, m) {
  m.doc() = "repmode's reproducible CUDA kernels (same bits as repmode._C; docs/cuda.md)";
  const auto nogil = py::call_guard<py::gil_scoped_release>();
  std::vector<std::tuple<std::string, std::string>> bound;

#define REPMODE_ENTRY(family, name) \
  m.def(#name, &rc::name, nogil);   \
  bound.emplace_back(#family, #name);
#define REPMODE_CUDA_ENTRY(family, name) REPMODE_ENTRY(family, name)
#define REPMODE_ENTRY_SIZED(family, name, size_arg) REPMODE_ENTRY(family, name)
#define REPMODE_CUDA_CONTROL(family, name) \
  m.def(#name, &rc::name);                 \
  bound.emplace_back(#family, #name);
#include "entry_points.def"

  m.def("entry_points", [bound] { return bound; }, "the (family, name) of every entry point this module binds");
  m.def("codes", &rb::codes, "the op, dtype and layout codes the entry points take (defined in csrc/common/)");
#ifdef REPMODE_CUDA_MODULE_HOOK
  REPMODE_CUDA_MODULE_HOOK(m);
#endif
}

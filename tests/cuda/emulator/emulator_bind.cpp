// Functions the emulated module has beyond csrc/bindings/cuda_module.cpp's (build.py names this
// function REPMODE_CUDA_MODULE_HOOK, which cuda_module.cpp calls).
#include <pybind11/pybind11.h>

#include "cuda_runtime.h"

void repmode_emu_register(pybind11::module_& m) {
  m.attr("EMULATED") = true;
  m.def("live_allocation_count", &repmode_emu::live_allocation_count,
        "cudaMallocAsync blocks not yet freed by cudaFreeAsync");
}

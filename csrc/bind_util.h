// Helpers shared by the binding files (csrc/bindings.cpp and one csrc/bind_<family>.cpp per
// kernel family): Python passes data pointers as integers, sizes and strides in elements and
// a dtype code (0 = float32, 1 = float64).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace repmode::bind {

using Ints = std::vector<int64_t>;

template <typename T> T* ptr(uintptr_t p) { return reinterpret_cast<T*>(p); }

[[noreturn]] inline void bad_dtype(int dtype) {
  throw std::invalid_argument("repmode._C: unsupported dtype code " + std::to_string(dtype));
}

// Call fn(T{}) with T = float or double by dtype code.
template <typename Fn>
auto by_dtype(int dtype, Fn&& fn) {
  if (dtype == 0) return fn(float{});
  if (dtype == 1) return fn(double{});
  bad_dtype(dtype);
}

// One per family file: adds that family's functions to the module.
void bind_families(pybind11::module_& m);

}  // namespace repmode::bind

// The dtype dispatch of the CPU entry points (csrc/cpu/entry_points.h): Python passes data
// pointers as integers, sizes and strides in elements and a dtype code (REPMODE_DTYPES in
// csrc/common/defs.h: 0 = float32, 1 = float64); each entry point turns them into typed calls.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/defs.h"

namespace repmode::cpu {

using Ints = std::vector<int64_t>;

template <typename T>
T* ptr(uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

[[noreturn]] inline void bad_dtype(int dtype) {
  throw std::invalid_argument("repmode._C: unsupported dtype code " + std::to_string(dtype));
}

// Call fn(T{}) with T = float or double by dtype code.
template <typename Fn>
auto by_dtype(int dtype, Fn&& fn) {
  if (dtype == int(Dtype::float32)) return fn(float{});
  if (dtype == int(Dtype::float64)) return fn(double{});
  bad_dtype(dtype);
}

}  // namespace repmode::cpu

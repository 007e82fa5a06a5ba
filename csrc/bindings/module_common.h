// What repmode._C (cpu_module.cpp) and repmode._C_cuda (cuda_module.cpp) export alike: the op,
// dtype and layout codes defined once in csrc/common/ (`codes()`), and the GIL policy of the
// REPMODE_ENTRY_SIZED rows of csrc/bindings/entry_points.def.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "../common/convolution.h"
#include "../common/defs.h"
#include "../common/elementwise.h"
#include "../common/pooling.h"
#include "../common/random.h"
#include "../common/resample.h"
#include "../common/softmax_loss.h"

namespace repmode::bindings {

namespace py = pybind11;

inline std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// codes() -> {"EwOp": {"ADD": 0, ...}, "RandomDist": {...}, "PoolKind": {...}, "Reduction": {...},
// "Dtype": {"float32": 0, "float64": 1}, "ConvGeom": ["N", "Ci", ...]} (the Python names).
inline py::dict codes() {
  py::dict d, ew, dist, pool, red, dtype, resample;
  py::list geom;
#define REPMODE_X(name, code) ew[py::str(upper(#name))] = code;
  REPMODE_EW_OPS(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(name, code) dist[py::str(upper(#name))] = code;
  REPMODE_RANDOM_DISTS(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(python_name, name, code) pool[#python_name] = code;
  REPMODE_POOL_KINDS(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(python_name, name, code) resample[#python_name] = code;
  REPMODE_RESAMPLE_MODES(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(python_name, name, code) red[#python_name] = code;
  REPMODE_REDUCTIONS(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(name, type, code) dtype[#name] = code;
  REPMODE_DTYPES(REPMODE_X)
#undef REPMODE_X
#define REPMODE_X(field, member) geom.append(#field);
  REPMODE_CONV_GEOM_FIELDS(REPMODE_X)
#undef REPMODE_X
  d["EwOp"] = ew;
  d["RandomDist"] = dist;
  d["PoolKind"] = pool;
  d["ResampleMode"] = resample;
  d["Reduction"] = red;
  d["Dtype"] = dtype;
  d["ConvGeom"] = geom;
  return d;
}

// Calls below this many elements keep the GIL (REPMODE_ENTRY_SIZED): releasing and taking it
// back costs more than the work.
constexpr int64_t kSmallCall = 4096;

// Fn with the GIL released unless its argument number SizeArg is below kSmallCall.
template <auto Fn, size_t SizeArg>
struct ReleaseGilAboveSmall;
template <typename R, typename... A, R (*Fn)(A...), size_t SizeArg>
struct ReleaseGilAboveSmall<Fn, SizeArg> {
  static R call(A... args) {
    if (int64_t(std::get<SizeArg>(std::forward_as_tuple(args...))) < kSmallCall) return Fn(args...);
    py::gil_scoped_release release;
    return Fn(args...);
  }
};

}  // namespace repmode::bindings

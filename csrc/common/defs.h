// Shared definitions for code that defines bits. Every header under csrc/common is
// compiled both by the host C++ compiler and by nvcc, so functions that decide the
// arithmetic of an output are marked REPMODE_HD and use only IEEE-754 basic operations.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define REPMODE_HD __host__ __device__ __forceinline__
#else
#define REPMODE_HD inline
#endif

namespace repmode {

// The dtype codes Python passes (exported as _C.codes()["Dtype"]): name, C++ type, code.
// clang-format off
#define REPMODE_DTYPES(X) \
  X(float32, float,  0)   \
  X(float64, double, 1)
// clang-format on

enum class Dtype : int {
#define REPMODE_X(name, type, code) name = code,
  REPMODE_DTYPES(REPMODE_X)
#undef REPMODE_X
};

// Reinterpret bits without undefined behaviour, on host and device.
REPMODE_HD uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
REPMODE_HD uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
}
REPMODE_HD float float_from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}
REPMODE_HD double double_from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, 8);
  return x;
}

// The one NaN repmode writes (positive, quiet, zero payload). x86 propagates input
// payloads and CUDA writes 0x7fffffff, so every kernel output passes through canon().
constexpr uint32_t kCanonicalNanBits32 = 0x7fc00000u;
constexpr uint64_t kCanonicalNanBits64 = 0x7ff8000000000000ull;

template <typename T>
struct Canonical;
template <>
struct Canonical<float> {
  static REPMODE_HD float nan() { return float_from_bits(kCanonicalNanBits32); }
};
template <>
struct Canonical<double> {
  static REPMODE_HD double nan() { return double_from_bits(kCanonicalNanBits64); }
};

template <typename T>
REPMODE_HD T canon(T x) {
  return x != x ? Canonical<T>::nan() : x;
}

}  // namespace repmode

// What every CUDA launcher of repmode needs: error checks that throw, the stream and device a
// launch belongs to, launch sizes, and 64-bit grid-stride loops. Device code that defines bits is
// never here: it lives in csrc/common/ (shared with the CPU).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace repmode::cuda {

[[noreturn]] inline void fail(cudaError_t err, const char* what) {
  throw std::runtime_error(std::string("repmode._C_cuda: ") + what + ": " + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ")");
}

inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail(err, what);
}

// After every launch: a bad configuration shows here; faults inside a kernel show at the next
// synchronizing call on the stream (repmode.cuda.synchronize, or any torch copy to the host).
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

[[noreturn]] inline void bad_dtype(int dtype) {
  throw std::invalid_argument("repmode._C_cuda: unsupported dtype code " + std::to_string(dtype));
}

// Call fn(T{}) with T = float (code 0) or double (code 1).
template <typename Fn>
auto by_dtype(int dtype, Fn&& fn) {
  if (dtype == 0) return fn(float{});
  if (dtype == 1) return fn(double{});
  bad_dtype(dtype);
}

template <typename T>
T* ptr(uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

// The launch runs on the stream's own device (the tensors' device: Python passes the stream of
// that device); the caller's current device is restored afterwards.
class StreamScope {
 public:
  explicit StreamScope(uintptr_t stream) : stream_(reinterpret_cast<cudaStream_t>(stream)) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    int device = previous_;
    if (stream_ != nullptr) check(cudaStreamGetDevice(stream_, &device), "cudaStreamGetDevice");
    if (device != previous_) check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~StreamScope() { cudaSetDevice(previous_); }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_;
  int previous_ = 0;
};

// Device scratch of n values of T, allocated and freed in stream order (also when a launch check
// throws); what the long reductions and the convolution's rounds keep between kernels.
template <typename T>
class StreamScratch {
 public:
  StreamScratch(int64_t n, cudaStream_t stream) : stream_(stream) {
    check(cudaMallocAsync(reinterpret_cast<void**>(&p_), sizeof(T) * static_cast<size_t>(n > 0 ? n : 1), stream),
          "cudaMallocAsync");
  }
  ~StreamScratch() { cudaFreeAsync(p_, stream_); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
  cudaStream_t stream_;
};

constexpr int kBlock = 256;

// Blocks for n independent items at kBlock threads each (grid-stride loops cover the rest).
inline unsigned blocks_for(int64_t n, int block = kBlock) {
  const int64_t want = (n + block - 1) / block;
  const int64_t cap = int64_t(1) << 20;  // grid-stride beyond this
  return static_cast<unsigned>(want < 1 ? 1 : (want > cap ? cap : want));
}

// 64-bit index of this thread and the grid's stride, for `for (i = first; i < n; i += stride)`.
__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Makes the compiler forget what it knows of a 64-bit value (no code is emitted): values derived
// from it are then computed where they are used, not hoisted out of a loop and kept live in
// registers across it. Speed only (register pressure of the GEMM's fold); a no-op off the GPU.
template <typename T>
__device__ __forceinline__ void opaque(T& v) {
  static_assert(sizeof(T) == 8, "a 64-bit value");
#ifdef __CUDA_ARCH__
  asm volatile("" : "+l"(v));
#endif
}

}  // namespace repmode::cuda

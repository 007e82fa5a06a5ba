// Host emulation of the small part of the CUDA runtime and device language that repmode's
// kernels use (csrc/cuda/*.cu), so that g++ can compile them and tests/cuda can run them on the
// CPU (docs/cuda.md, "Emulated runs"). A test aid only: it checks index arithmetic, partitioning,
// shared-memory, barrier and warp-shuffle logic and scratch handling, not a GPU's memory model,
// timing or alignment rules. Every thread of a block is a fiber on the calling OS thread
// (emulator.cpp); blocks run one after another.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// One copy per kernel instantiation; blocks run one at a time, so one copy serves every block.
// It is not reset between blocks (neither is a GPU's).
#define __shared__ static

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct float2 {
  float x, y;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(16) double2 {
  double x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

// The running thread's coordinates (set by the scheduler before it resumes a fiber).
inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

// ---- runtime API -------------------------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorLaunchFailure = 719,
};
typedef struct CUstream_st* cudaStream_t;
struct cudaDeviceProp {
  char name[256];
};

const char* cudaGetErrorName(cudaError_t err);
const char* cudaGetErrorString(cudaError_t err);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* n);  // one emulated device
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize();
// Scratch memory: new blocks are filled with a poison pattern, frees of unknown pointers fail.
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* p, cudaStream_t stream);
template <typename T>
cudaError_t cudaMallocAsync(T** p, size_t bytes, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void**>(p), bytes, stream);
}

// ---- launches, barriers, warp exchange (emulator.cpp) ---------------------------------------
namespace repmode_emu {

// Runs body(ctx) once per thread of every block of a grid whose x extent is capped
// (REPMODE_EMU_GRID_CAP, default 3: the kernels are grid-stride). An invalid configuration
// sets the error that cudaGetLastError returns, as a real launch does.
void run_grid(dim3 grid, dim3 block, size_t shared_bytes, void (*body)(void*), void* ctx);

template <typename F>
void launch(F&& kernel_call, dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t = nullptr) {
  using Fn = std::remove_reference_t<F>;
  run_grid(grid, block, shared_bytes, [](void* c) { (*static_cast<Fn*>(c))(); }, &kernel_call);
}

// Scratch blocks from cudaMallocAsync not yet freed (tests check it returns to 0).
size_t live_allocation_count();

void sync_block(const char* file, int line);
void sync_warp(unsigned mask);
// This thread's lane and the value `bytes` at `mine` of lane `src` of its warp (all lanes of
// the warp must take part; a lane that does not exist is an error).
unsigned lane();
void warp_exchange(const void* mine, void* out, size_t bytes, unsigned src, unsigned mask);

template <typename T>
T exchange(T v, unsigned src, unsigned mask) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16, "shuffle of a type the emulator does not carry");
  T out;
  warp_exchange(&v, &out, sizeof(T), src, mask);
  return out;
}

}  // namespace repmode_emu

#define __syncthreads() ::repmode_emu::sync_block(__FILE__, __LINE__)
inline void __syncwarp(unsigned mask = 0xffffffffu) { repmode_emu::sync_warp(mask); }
// A device-side trap ends the process, as it ends the CUDA context on a GPU.
[[noreturn]] inline void __trap() {
  std::fputs("repmode CUDA emulator: a kernel called __trap()\n", stderr);
  std::abort();
}

// Lane arithmetic as documented for the __shfl_*_sync intrinsics (width a power of 2 <= 32).
template <typename T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned l = repmode_emu::lane(), base = l - l % width;
  return repmode_emu::exchange(v, base + unsigned(src) % width, mask);
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned l = repmode_emu::lane();
  return repmode_emu::exchange(v, l % width + delta < unsigned(width) ? l + delta : l, mask);
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned l = repmode_emu::lane();
  return repmode_emu::exchange(v, l % width >= delta ? l - delta : l, mask);
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned l = repmode_emu::lane(), src = l ^ unsigned(lane_mask);
  return repmode_emu::exchange(v, src / width == l / width ? src : l, mask);
}

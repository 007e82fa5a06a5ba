// Device queries and stream synchronization for repmode._C_cuda (csrc/cuda/launchers.h).
#include "launchers.h"
#include "runtime.cuh"

namespace repmode::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: report none, leave no sticky error behind
    return 0;
  }
  return n;
}

std::string device_name(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return prop.name;
}

void synchronize(uintptr_t stream) {
  StreamScope scope(stream);
  check(cudaStreamSynchronize(scope.get()), "cudaStreamSynchronize");
}

}  // namespace repmode::cuda

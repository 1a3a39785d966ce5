// Error handling and device selection shared by the CUDA device, its kernels
// and the NCCL process group.
#pragma once
#include <cuda_runtime.h>

#include "base/error.h"

namespace oar {

// Raises RuntimeError "[api] what failed: reason" unless e is cudaSuccess.
inline void cuda_check(cudaError_t e, const char* api, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // reset the thread's last-error state
    fail(ErrorKind::Runtime, "[", api, "] ", what, " failed: ", cudaGetErrorString(e));
  }
}

// Makes `index` the calling thread's current device for its lifetime.
struct DeviceGuard {
  int prev = -1;
  explicit DeviceGuard(int index) {
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    if (prev != index) cuda_check(cudaSetDevice(index), "oar", "cudaSetDevice");
  }
  ~DeviceGuard() {
    int cur = -1;
    if (prev >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev) cudaSetDevice(prev);
  }
};

}  // namespace oar

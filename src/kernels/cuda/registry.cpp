#include "kernels/cuda/registry.h"

namespace oar::cuda {

bool register_all(const char* op, KernelFn fn, std::initializer_list<DType> dtypes) {
  for (DType d : dtypes) register_kernel(op, DeviceType::CUDA, {d}, fn);
  return true;
}

bool register_real(const char* op, KernelFn fn, std::initializer_list<DType> dtypes) {
  for (DType d : dtypes)
    if (!is_complex(d)) register_kernel(op, DeviceType::CUDA, {d}, fn);
  return true;
}

}  // namespace oar::cuda

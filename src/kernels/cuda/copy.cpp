// CUDA kernels of this build: copies between dense tensors of one dtype
// (op `cast` with the source dtype: clone, contiguous, copy_). Everything
// else has no CUDA kernel yet and raises NotImplementedError from dispatch.
#include <cuda_runtime.h>

#include "device/cuda/cuda_check.h"
#include "kernels/cpu/dtype_lists.h"
#include "ops/op.h"

namespace oar {
namespace {

void copy_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  Tensor& y = out[0];
  OAR_CHECK(x.dtype() == y.dtype(), NotImplemented, "[oar.cast] casting ", dtype_name(x.dtype()), " to ",
            dtype_name(y.dtype()), " on ", y.device().str(), " is not supported in this build (no CUDA kernel); "
            "cast on the CPU");
  OAR_CHECK(x.is_contiguous() && y.is_contiguous(), NotImplemented, "[oar.cast] copies between non-contiguous "
            "tensors on ", y.device().str(), " are not supported in this build (no CUDA kernel)");
  const size_t n = size_t(y.numel()) * y.itemsize();
  if (n == 0 || x.raw_data() == y.raw_data()) return;
  DeviceGuard guard(y.device().index);
  cuda_check(cudaMemcpyAsync(y.raw_data(), x.raw_data(), n, cudaMemcpyDeviceToDevice, cudaStreamLegacy),
             "oar.cast", "cudaMemcpyAsync");
}

KernelRegistrar r_copy("cast", DeviceType::CUDA, OAR_ALL_DTYPES, copy_kernel);

}  // namespace
}  // namespace oar

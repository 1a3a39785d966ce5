// The dense linear-algebra ops and the FFTs on CUDA by an explicit host
// round trip: the inputs are copied to the host, the CPU kernel (LAPACK,
// oneMKL) runs, and the outputs are copied back. These factorisations are
// latency-bound at the sizes the models here use, and the round trip gives
// exactly the CPU's results (signs of eigenvectors and singular vectors
// included); cuSOLVER and cuFFT kernels are the way to speed them up.
//
// Note [CUDA host round trip]
// KernelFn carries no op, so each op gets its own instantiation of
// round_trip<I>, with I its position in kHostOps. Work queued on the device
// is finished by the synchronous copies before the CPU kernel reads, and the
// outputs are written back before the kernel returns.
#include <array>
#include <utility>

#include "base/error.h"
#include "kernels/cpu/dtype_lists.h"
#include "ops/ops.h"
#include "tensor/autograd_meta.h"
#include "tensor/device.h"

namespace oar::cuda {
namespace {

constexpr std::array<const char*, 14> kHostOps = {
    "linalg_svd",  "linalg_eigh",     "linalg_qr", "linalg_inv", "linalg_det",
    "linalg_slogdet", "linalg_solve", "linalg_cholesky", "linalg_eig", "linalg_lu", "linalg_triangular_solve",
    "fft_c2c", "fft_r2c", "fft_c2r"};

void run_on_host(const char* name, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  const OpDef* op = find_op(name);
  OAR_CHECK(op, Runtime, "[oar.", name, "] internal: op not registered");
  NoGradGuard ng;
  Tensors host_in;
  for (const Tensor& t : in) host_in.push_back(t.defined() ? ops::to_device(t, Device{}) : t);
  const DType key = !host_in.empty() && host_in[0].defined() ? host_in[0].dtype() : out[0].dtype();
  KernelFn k = op->kernels[int(DeviceType::CPU)][int(key)];
  OAR_CHECK(k, NotImplemented, "[oar.", name, "] has no CPU kernel for dtype ", dtype_name(key));
  Tensors host_out;
  for (const Tensor& o : out) host_out.push_back(empty_tensor(o.shape(), o.dtype(), Device{}));
  k(std::span<const Tensor>(host_in.data(), host_in.size()), std::span<Tensor>(host_out.data(), host_out.size()),
    attrs);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t n = size_t(out[i].numel()) * out[i].itemsize();
    if (n == 0) continue;
    const Tensor h = ops::contiguous(host_out[i]);
    device_interface(out[i].device().type).copy_from_host(out[i].raw_data(), h.raw_data(), n, out[i].device().index);
  }
}

template <size_t I> void round_trip(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  run_on_host(kHostOps[I], in, out, attrs);
}

template <size_t... I> bool register_all_ops(std::index_sequence<I...>) {
  // The CPU kernels' dtypes, read when this library loads (after liboar's).
  auto reg = [](const char* name, KernelFn fn) {
    const OpDef* op = find_op(name);
    if (!op) return;
    for (int d = 0; d < kNumDTypes; ++d)
      if (op->kernels[int(DeviceType::CPU)][d]) register_kernel(name, DeviceType::CUDA, {DType(d)}, fn);
  };
  (reg(kHostOps[I], &round_trip<I>), ...);
  return true;
}

const bool registered = register_all_ops(std::make_index_sequence<kHostOps.size()>());

}  // namespace
}  // namespace oar::cuda

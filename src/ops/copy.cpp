#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

Metas cast_meta(std::span<const Tensor> in, const Attrs& a) { return {TensorMeta{in[0].shape(), a.dtype(0)}}; }

Tensors cast_grad(const GradCtx& ctx) {
  DType from = ctx.in(0).dtype();
  Tensor g = ctx.grad();
  if (is_complex(g.dtype()) && !is_complex(from)) g = ops::real(g);
  return {ops::cast(g, from)};
}

OpDef& kCast = OpBuilder("cast").attrs({"dtype"}).meta(cast_meta).grad(cast_grad)
                   .traits({.elementwise = true}).saves(true, false);

}  // namespace

namespace ops {

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return dispatch1(kCast, {x}, Attrs{dtype});
}

Tensor clone(const Tensor& x) { return dispatch1(kCast, {x}, Attrs{x.dtype()}); }

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  OAR_CHECK(!x.is_dist(), NotImplemented, "[oar.Tensor.to] moving a distributed tensor between devices is not supported");
  DeviceInterface& to = device_interface(device.type);
  OAR_CHECK(device.index >= 0 && device.index < to.device_count(), Value, "[oar.Tensor.to] device ", device.str(),
            " does not exist: ", to.device_count(), " device(s) of that type are visible");
  // Reading x as one block needs it dense; only the CPU can make it so here.
  Tensor src = x.is_contiguous() ? x : x.device().type == DeviceType::CPU ? contiguous(x) : Tensor();
  OAR_CHECK(src.defined(), NotImplemented, "[oar.Tensor.to] a non-contiguous tensor on ", x.device().str(),
            " cannot be moved; this build has no kernels there to make it contiguous");
  Tensor out = empty_tensor(x.shape(), x.dtype(), device);
  const size_t n = size_t(x.numel()) * x.itemsize();
  if (n == 0) return out;
  const void* from = src.raw_data();
  void* dst = out.raw_data();
  if (x.device().type == DeviceType::CPU) {
    to.copy_from_host(dst, from, n, device.index);
  } else if (device.type == DeviceType::CPU) {
    device_interface(x.device().type).copy_to_host(dst, from, n, x.device().index);
  } else {
    // Between two accelerators: through host memory.
    Tensor host = empty_tensor(x.shape(), x.dtype(), Device{});
    device_interface(x.device().type).copy_to_host(host.raw_data(), from, n, x.device().index);
    to.copy_from_host(dst, host.raw_data(), n, device.index);
  }
  return out;
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  Tensor s = src.shape() == dst.shape() ? src : expand(src, dst.shape());
  Tensor in[] = {s};
  return dispatch_inplace(kCast, dst, in, Attrs{dst.dtype()});
}

}  // namespace ops
}  // namespace oar

#include <cstdlib>
#include <cstring>

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

// Moving a tensor between devices (ops::to_device) is recorded as this op
// for autograd; it never goes through dispatch (its output is on another
// device than its input), so it has no kernel.
Tensors to_device_grad(const GradCtx& ctx) {
  const Device from{DeviceType(ctx.attr().i(0)), int16_t(ctx.attr().i(1))};
  return {ops::to_device(ctx.grad(), from)};
}
Metas to_device_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }

OpDef& kToDevice = OpBuilder("to_device").attrs({"device_type", "device_index"}).meta(to_device_meta)
                       .grad(to_device_grad).saves(false, false);

}  // namespace

namespace ops {

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return dispatch1(kCast, {x}, Attrs{dtype});
}

Tensor clone(const Tensor& x) { return dispatch1(kCast, {x}, Attrs{x.dtype()}); }

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor to_device(const Tensor& x, Device device, bool blocking) {
  if (x.device() == device) return x;
  OAR_CHECK(!x.is_dist(), NotImplemented, "[oar.Tensor.to] moving a distributed tensor between devices is not supported");
  DeviceInterface& to = device_interface(device.type);
  OAR_CHECK(device.index >= 0 && device.index < to.device_count(), Value, "[oar.Tensor.to] device ", device.str(),
            " does not exist: ", to.device_count(), " device(s) of that type are visible");
  // Reading x as one block needs it dense: made so on its own device (a
  // device without a copy kernel raises NotImplementedError naming it).
  Tensor src;
  {
    NoGradGuard ng;
    src = contiguous(x);
  }
  Tensor out;
  try {
    out = empty_tensor(x.shape(), x.dtype(), device);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Memory) throw;
    fail(ErrorKind::Memory, "[oar.Tensor.to] out of memory on ", device.str(), " for a tensor of shape ",
         shape_str(x.shape()), " (", dtype_name(x.dtype()), "): ", e.what());
  }
  const size_t n = size_t(x.numel()) * x.itemsize();
  const void* from = src.raw_data();
  void* dst = out.raw_data();
  if (n == 0) {
  } else if (x.device().type == DeviceType::CPU && !blocking) {
    // The stream reads a private copy of the host block, freed once it has
    // (on whichever thread the device calls back on: so not a Tensor, whose
    // references may be Python's).
    void* staging = std::malloc(n);
    OAR_CHECK(staging, Memory, "[oar.Tensor.to] out of host memory for a ", n, "-byte staging buffer");
    std::memcpy(staging, from, n);
    to.copy_from_host_async(dst, staging, n, device.index, current_stream(device), [staging] { std::free(staging); });
  } else if (x.device().type == DeviceType::CPU) {
    to.copy_from_host(dst, from, n, device.index);
  } else if (device.type == DeviceType::CPU) {
    device_interface(x.device().type).copy_to_host(dst, from, n, x.device().index);
  } else {
    // Between two devices that are not the host: through host memory.
    Tensor host = empty_tensor(x.shape(), x.dtype(), Device{});
    device_interface(x.device().type).copy_to_host(host.raw_data(), from, n, x.device().index);
    to.copy_from_host(dst, host.raw_data(), n, device.index);
  }
  // Differentiable: the gradient goes back to x's device.
  if (dispatch_hooks().record && grad_enabled() && x.requires_grad()) {
    Tensors outs{out};
    const Tensor in[] = {x};
    dispatch_hooks().record(kToDevice, std::span<const Tensor>(in, 1),
                            Attrs{int64_t(x.device().type), int64_t(x.device().index)}, outs);
    out = outs[0];
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

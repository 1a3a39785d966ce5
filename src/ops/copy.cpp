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

Tensor& copy_(Tensor& dst, const Tensor& src) {
  Tensor s = src.shape() == dst.shape() ? src : expand(src, dst.shape());
  Tensor in[] = {s};
  return dispatch_inplace(kCast, dst, in, Attrs{dst.dtype()});
}

}  // namespace ops
}  // namespace oar

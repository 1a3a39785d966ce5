// Pooling ops (kernels/cpu/pool.cpp).
//
// Note [pool gradients]
// Both poolings are linear in the values they move once the window choice
// (the max mask) is fixed. avg_pool's gradient is avg_pool_grad, whose own
// gradient is avg_pool again. max_pool's gradient scatters the output gradient
// to the saved mask (max_pool_grad), whose gradient gathers at the mask
// (max_pool_gather), whose gradient scatters again: any order works.
#include "ops/pool.h"

#include <cstdint>

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

// attrs: kernel, strides, pads_l, pads_r, ceil_mode, adaptive, exclusive, spatial (input spatial shape)
Attrs pool_attrs(const PoolParams& p, const Dims& spatial) {
  return Attrs{p.kernel, p.strides, p.pads_l, p.pads_r, p.ceil_mode, p.adaptive, p.exclusive, spatial};
}
PoolParams params_of(const Attrs& a) {
  return PoolParams{a.ints(0), a.ints(1), a.ints(2), a.ints(3), a.b(4), a.b(5), a.b(6)};
}
Dims tail(const Dims& s) { return Dims(s.begin() + 2, s.end()); }

Dims pool_shape(const Tensor& x, const PoolParams& p, const char* api) {
  const Dims& xs = x.shape();
  OAR_CHECK(xs.size() >= 3 && xs.size() <= 5, Value, "[", api, "] expects a 3-D, 4-D or 5-D input, got shape ",
            shape_str(xs));
  OAR_CHECK(is_floating(x.dtype()), Type, "[", api, "] expects a floating-point input, got ", dtype_name(x.dtype()));
  size_t nsp = xs.size() - 2;
  OAR_CHECK(p.kernel.size() == nsp, Value, "[", api, "] ", p.adaptive ? "output_size" : "kernel_size", " needs ",
            nsp, " entries, got ", shape_str(p.kernel));
  int64_t plane = 1;
  for (size_t i = 2; i < xs.size(); ++i) plane *= xs[i];
  OAR_CHECK(plane <= INT32_MAX, Value, "[", api, "] the spatial size ", plane,
            " is too large for the int32 pooling mask");
  Dims out{xs[0], xs[1]};
  if (p.adaptive) {
    for (int64_t v : p.kernel) {
      OAR_CHECK(v > 0, Value, "[", api, "] output_size must be positive, got ", shape_str(p.kernel));
      out.push_back(v);
    }
    return out;
  }
  OAR_CHECK(p.strides.size() == nsp && p.pads_l.size() == nsp && p.pads_r.size() == nsp, Value, "[", api,
            "] stride and padding need ", nsp, " entries each");
  for (size_t i = 0; i < nsp; ++i) {
    OAR_CHECK(p.kernel[i] > 0, Value, "[", api, "] kernel_size must be positive, got ", shape_str(p.kernel));
    OAR_CHECK(p.strides[i] > 0, Value, "[", api, "] stride must be positive, got ", shape_str(p.strides));
    OAR_CHECK(p.pads_l[i] >= 0 && p.pads_r[i] >= 0, Value, "[", api, "] padding must be non-negative, got ",
              shape_str(p.pads_l), " and ", shape_str(p.pads_r));
    OAR_CHECK(p.kernel[i] <= xs[2 + i] + p.pads_l[i] + p.pads_r[i], Value, "[", api, "] kernel size ",
              p.kernel[i], " of spatial dim ", i, " is larger than the padded input size ",
              xs[2 + i] + p.pads_l[i] + p.pads_r[i]);
    int64_t o = pool_out_size(xs[2 + i], p.kernel[i], p.strides[i], p.pads_l[i], p.pads_r[i], p.ceil_mode);
    OAR_CHECK(o > 0, Value, "[", api, "] output size must be positive, got ", o);
    out.push_back(o);
  }
  return out;
}

Metas max_pool_meta(std::span<const Tensor> in, const Attrs& a) {
  Dims s = pool_shape(in[0], params_of(a), "oar.max_pool");
  return {TensorMeta{s, in[0].dtype()}, TensorMeta{s, DType::Int32}};
}
Metas avg_pool_meta(std::span<const Tensor> in, const Attrs& a) {
  return {TensorMeta{pool_shape(in[0], params_of(a), "oar.avg_pool"), in[0].dtype()}};
}
Metas avg_pool_grad_meta(std::span<const Tensor> in, const Attrs& a) {
  Dims s{in[0].shape()[0], in[0].shape()[1]};
  for (int64_t v : a.ints(7)) s.push_back(v);
  return {TensorMeta{s, in[0].dtype()}};
}
// in: values (N, C, *o), mask (N, C, *o) -> (N, C, *spatial)
Metas max_pool_grad_meta(std::span<const Tensor> in, const Attrs& a) {
  OAR_CHECK(in[0].shape() == in[1].shape() && in[1].dtype() == DType::Int32, Value,
            "[oar.max_pool_grad] values and int32 mask must have one shape");
  Dims s{in[0].shape()[0], in[0].shape()[1]};
  for (int64_t v : a.ints(0)) s.push_back(v);
  return {TensorMeta{s, in[0].dtype()}};
}
// in: g (N, C, *spatial), mask (N, C, *o) -> (N, C, *o)
Metas max_pool_gather_meta(std::span<const Tensor> in, const Attrs&) {
  OAR_CHECK(in[0].dim() == in[1].dim() && in[0].shape()[0] == in[1].shape()[0] &&
                in[0].shape()[1] == in[1].shape()[1] && in[1].dtype() == DType::Int32,
            Value, "[oar.max_pool_gather] g and mask disagree");
  return {TensorMeta{in[1].shape(), in[0].dtype()}};
}

Tensor max_pool_grad(const Tensor& g, const Tensor& mask, const Dims& spatial);
Tensor max_pool_gather(const Tensor& g, const Tensor& mask);
Tensor avg_pool_grad(const Tensor& g, const Attrs& a);

Tensors max_pool_grad_rule(const GradCtx& c) {
  return {max_pool_grad(c.grad(0), c.out(1), tail(c.in(0).shape()))};
}
Tensors avg_pool_grad_rule(const GradCtx& c) {
  return {avg_pool_grad(c.grad(), pool_attrs(params_of(c.attr()), tail(c.in(0).shape())))};
}
Tensors avg_pool_grad_grad(const GradCtx& c) {
  return {avg_pool(c.grad(), params_of(c.attr()))};
}
Tensors max_pool_grad_grad(const GradCtx& c) { return {max_pool_gather(c.grad(), c.in(1)), Tensor()}; }
Tensors max_pool_gather_grad(const GradCtx& c) {
  return {max_pool_grad(c.grad(), c.in(1), tail(c.in(0).shape())), Tensor()};
}

constexpr std::initializer_list<const char*> kPoolAttrs = {"kernel", "strides", "pads_l", "pads_r", "ceil_mode",
                                                           "adaptive", "exclusive", "spatial"};
OpDef& kMaxPool = OpBuilder("max_pool").attrs(kPoolAttrs).meta(max_pool_meta).grad(max_pool_grad_rule).saves(true, true);
OpDef& kAvgPool = OpBuilder("avg_pool").attrs(kPoolAttrs).meta(avg_pool_meta).grad(avg_pool_grad_rule);
OpDef& kAvgPoolGrad = OpBuilder("avg_pool_grad").attrs(kPoolAttrs).meta(avg_pool_grad_meta).grad(avg_pool_grad_grad);
OpDef& kMaxPoolGrad = OpBuilder("max_pool_grad").attrs({"spatial"}).meta(max_pool_grad_meta).grad(max_pool_grad_grad);
OpDef& kMaxPoolGather = OpBuilder("max_pool_gather").meta(max_pool_gather_meta).grad(max_pool_gather_grad);

Tensor max_pool_grad(const Tensor& g, const Tensor& mask, const Dims& spatial) {
  Tensor in[2] = {contiguous(g), contiguous(mask)};
  return dispatch1(kMaxPoolGrad, in, Attrs{spatial});
}
Tensor max_pool_gather(const Tensor& g, const Tensor& mask) {
  Tensor in[2] = {contiguous(g), contiguous(mask)};
  return dispatch1(kMaxPoolGather, in, Attrs{});
}
Tensor avg_pool_grad(const Tensor& g, const Attrs& a) {
  Tensor in[1] = {contiguous(g)};
  return dispatch1(kAvgPoolGrad, in, a);
}

}  // namespace

namespace ops {

std::pair<Tensor, Tensor> max_pool(const Tensor& x, const PoolParams& p, const char* api) {
  pool_shape(x, p, api);
  Tensor in[1] = {contiguous(x)};
  Tensors r = dispatch(kMaxPool, in, pool_attrs(p, {}));
  return {r[0], r[1]};
}

Tensor avg_pool(const Tensor& x, const PoolParams& p, const char* api) {
  pool_shape(x, p, api);
  Tensor in[1] = {contiguous(x)};
  return dispatch1(kAvgPool, in, pool_attrs(p, {}));
}

}  // namespace ops
}  // namespace oar

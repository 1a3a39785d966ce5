// softmax_cross_entropy: outputs (loss, lse), attrs ignore_index. The row's
// log-sum-exp is kept as a second output for the gradient
// dx = (exp(x - lse) - one_hot(label)) * g, which runs as one fused kernel
// when no graph of the gradient is being built, and as a composite of ops
// (softmax, put_along_axis, ...) when it is, so higher orders work.
#include "ops/loss.h"

#include "ops/grad.h"
#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/index.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

DType lse_dtype(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

Metas sce_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor &x = in[0], &label = in[1];
  const char* api = "[oar.nn.functional.cross_entropy]";
  OAR_CHECK(is_floating(x.dtype()), Type, api, " logits must be a floating-point tensor, got ", dtype_name(x.dtype()));
  OAR_CHECK(label.dtype() == DType::Int64 || label.dtype() == DType::Int32, Type, api,
            " labels must be int32 or int64, got ", dtype_name(label.dtype()));
  OAR_CHECK(x.dim() >= 1, Value, api, " logits must have a class axis, got a 0-D tensor");
  Dims rows = x.shape();
  rows.back() = 1;
  OAR_CHECK(label.shape() == rows, Value, api, " label shape ", shape_str(label.shape()), " must be ",
            shape_str(rows), " for logits of shape ", shape_str(x.shape()));
  return {TensorMeta{rows, x.dtype()}, TensorMeta{rows, lse_dtype(x.dtype())}};
}

Metas sce_grad_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }
// Dispatched only with grad mode off (see sce_grad), so it needs no rule of its own.
OpDef& kSceGrad = OpBuilder("softmax_cross_entropy_grad").attrs({"ignore_index"}).meta(sce_grad_meta)
                      .spmd("softmax_cross_entropy_grad");

Tensors sce_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &label = c.in(1);
  const int64_t ignore = c.attr().i(0);
  Tensor g = c.grad(0);
  if (!grad_enabled()) {
    Tensor in[4] = {contiguous(x), contiguous(label), contiguous(c.out(1)), contiguous(g)};
    return {dispatch1(kSceGrad, in, c.attr()), Tensor()};
  }
  Tensor valid = not_equal(label, full({}, Scalar(ignore), label.dtype()));
  Tensor safe = where(valid, label, zeros_like(label));
  Tensor onehot = put_along_axis(zeros_like(x), safe, ones_like(safe, x.dtype()), -1);
  Tensor scale = multiply(g, cast(valid, x.dtype()));
  return {multiply(subtract(softmax(x, -1), onehot), scale), Tensor()};
}

OpDef& kSce = OpBuilder("softmax_cross_entropy").attrs({"ignore_index"}).meta(sce_meta).grad(sce_grad)
                  .saves(true, true).spmd("softmax_cross_entropy").amp(CastPolicy::Float32);

}  // namespace

namespace ops {

Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& label, int64_t ignore_index) {
  Tensor in[2] = {contiguous(logits), contiguous(label)};  // the kernels walk dense rows
  return dispatch(kSce, in, Attrs{ignore_index})[0];
}

}  // namespace ops
}  // namespace oar

// Reductions: sum, mean, prod, amax, amin (kernels/cpu/reduce.cpp).
#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

// attrs: axes (normalised, sorted), keepdim, dtype (the output dtype of
// integer inputs). Floating inputs reduce to their own dtype: the C++ API casts
// them first, and so may the autocast stage, after the attrs were made.

Metas reduce_meta(std::span<const Tensor> in, const Attrs& a) {
  DType out = is_inexact(in[0].dtype()) ? in[0].dtype() : a.dtype(2);
  return {TensorMeta{reduced_shape(in[0].shape(), a.ints(0), a.b(1)), out}};
}

// g reshaped to keepdim form and broadcast back to the input's shape.
Tensor expand_back(const Tensor& g, const Tensor& x, const Attrs& a) {
  Tensor gk = a.b(1) ? g : reshape(g, reduced_shape(x.shape(), a.ints(0), true));
  return expand(gk, x.shape());
}

Tensors sum_grad(const GradCtx& c) { return {cast(expand_back(c.grad(), c.in(0), c.attr()), c.in(0).dtype())}; }
Tensors mean_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  int64_t n = 1;
  for (int64_t ax : c.attr().ints(0)) n *= x.shape()[ax];
  return {scale(expand_back(c.grad(), x, c.attr()), 1.0 / double(std::max<int64_t>(n, 1)))};
}
Tensors prod_grad(const GradCtx& c) {
  // d prod / d x_i = prod / x_i; exact where no zeros. Zeros: product of the others,
  // computed with a masked product.
  const Tensor& x = c.in(0);
  Tensor g = expand_back(c.grad(), x, c.attr());
  Tensor is_zero = equal(x, zeros_like(x));
  Tensor safe = where(is_zero, ones_like(x), x);
  Tensor p_nz = expand_back(prod(safe, c.attr().ints(0), c.attr().b(1)), x, c.attr());
  Tensor nzeros = expand_back(sum(cast(is_zero, DType::Int64), c.attr().ints(0), c.attr().b(1)), x, c.attr());
  Tensor one = ones_like(nzeros);
  // No zero in the slice: p/x. Exactly one zero: p_nz at the zero, 0 elsewhere.
  Tensor res = where(equal(nzeros, zeros_like(nzeros)), divide(p_nz, safe),
                     where(logical_and(equal(nzeros, one), is_zero), p_nz, zeros_like(x)));
  return {multiply(g, conj(res))};
}
Tensors extreme_grad(const GradCtx& c) {
  // Evenly shared among the elements equal to the extreme.
  const Tensor& x = c.in(0);
  Tensor y = expand_back(c.out(0), x, c.attr());
  Tensor mask = cast(equal(x, y), x.dtype());
  Tensor cnt = expand_back(sum(mask, c.attr().ints(0), c.attr().b(1)), x, c.attr());
  return {multiply(expand_back(c.grad(), x, c.attr()), divide(mask, cnt))};
}

constexpr OpTraits kReduce{.reduction = true};
OpDef& kSum = OpBuilder("sum").attrs({"axis", "keepdim", "dtype"}).meta(reduce_meta).grad(sum_grad).traits(kReduce)
                  .spmd("reduce_sum").amp(CastPolicy::Float32);
OpDef& kMean = OpBuilder("mean").attrs({"axis", "keepdim", "dtype"}).meta(reduce_meta).grad(mean_grad).traits(kReduce)
                   .spmd("reduce_mean").amp(CastPolicy::Float32);
OpDef& kProd = OpBuilder("prod").attrs({"axis", "keepdim", "dtype"}).meta(reduce_meta).grad(prod_grad).traits(kReduce)
                   .spmd("reduce_prod").amp(CastPolicy::Float32);
OpDef& kAmax = OpBuilder("amax").attrs({"axis", "keepdim", "dtype"}).meta(reduce_meta).grad(extreme_grad)
                   .traits(kReduce).saves(true, true).spmd("reduce_max");
OpDef& kAmin = OpBuilder("amin").attrs({"axis", "keepdim", "dtype"}).meta(reduce_meta).grad(extreme_grad)
                   .traits(kReduce).saves(true, true).spmd("reduce_min");

Tensor reduce(OpDef& op, const Tensor& x, const Dims& axes, bool keepdim, DType out) {
  std::string api = "oar." + op.name;
  Dims ax = normalize_axes(axes, x.dim(), api.c_str());
  Tensor in[1] = {x};
  return dispatch1(op, in, Attrs{ax, keepdim, out});
}

}  // namespace

namespace ops {

Tensor sum(const Tensor& x, const Dims& axes, bool keepdim, std::optional<DType> dtype) {
  DType t = x.dtype();
  if (t == DType::Bool || t == DType::Int32 || t == DType::Int8 || t == DType::Int16 || t == DType::UInt8) t = DType::Int64;
  t = dtype.value_or(t);
  Tensor xx = dtype ? cast(x, *dtype) : x;
  return reduce(kSum, xx, axes, keepdim, t);
}

Tensor mean(const Tensor& x, const Dims& axes, bool keepdim) {
  Tensor xx = is_inexact(x.dtype()) ? x : cast(x, default_float_dtype());
  return reduce(kMean, xx, axes, keepdim, xx.dtype());
}

Tensor prod(const Tensor& x, const Dims& axes, bool keepdim) {
  DType t = x.dtype();
  if (t == DType::Bool || (is_integral(t) && t != DType::Int64)) t = DType::Int64;
  return reduce(kProd, cast(x, t), axes, keepdim, t);
}

Tensor amax(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims ax = normalize_axes(axes, x.dim(), "oar.amax");
  for (int64_t a : ax)
    OAR_CHECK(x.shape()[a] > 0, Value, "[oar.amax] cannot reduce over the zero-size axis ", a, " of shape ",
              shape_str(x.shape()));
  return reduce(kAmax, x, axes, keepdim, x.dtype());
}

Tensor amin(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims ax = normalize_axes(axes, x.dim(), "oar.amin");
  for (int64_t a : ax)
    OAR_CHECK(x.shape()[a] > 0, Value, "[oar.amin] cannot reduce over the zero-size axis ", a, " of shape ",
              shape_str(x.shape()));
  return reduce(kAmin, x, axes, keepdim, x.dtype());
}

Tensor sum_to(const Tensor& x, const Dims& shape) {
  if (x.shape() == shape) return x;
  int64_t lead = x.dim() - int64_t(shape.size());
  Dims axes;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) axes.push_back(d);
  Tensor s = axes.empty() ? x : reduce(kSum, x, axes, true, x.dtype());
  return reshape(s, shape);
}

}  // namespace ops
}  // namespace oar

// Activation functions. Kernels: kernels/cpu/activation.cpp.
#include "ops/activation.h"

#include <cmath>
#include <numbers>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

Tensor adds(const Tensor& a, double s) { return binary_scalar("add", a, Scalar(s), false); }
Tensor gts(const Tensor& a, double s) { return binary_scalar("greater_than", a, Scalar(s), false); }

Metas float_meta(std::span<const Tensor> in, const char* api) {
  OAR_CHECK(is_floating(in[0].dtype()), Type, "[", api, "] expects a floating-point tensor, got ",
            dtype_name(in[0].dtype()));
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}

// relu: the gradient passes where the output is positive.
Metas relu_meta(std::span<const Tensor> in, const Attrs&) { return float_meta(in, "oar.nn.functional.relu"); }

// relu_grad(y, g) = g where y > 0, else 0, in one pass (a comparison, a
// select and a zero tensor as ops). Linear in g with the same mask, so its
// own gradient is itself and it is differentiable to any order.
Metas relu_grad_meta(std::span<const Tensor> in, const Attrs&) {
  constexpr const char* api = "oar.nn.functional.relu_grad";
  float_meta(in, api);
  OAR_CHECK(in[1].dtype() == in[0].dtype() && in[1].shape() == in[0].shape(), Value, "[", api,
            "] the output gradient must have the output's shape ", shape_str(in[0].shape()), " and dtype ",
            dtype_name(in[0].dtype()), ", got ", shape_str(in[1].shape()), " ", dtype_name(in[1].dtype()));
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}
Tensors relu_grad_grad(const GradCtx& c);
OpDef& kReluGrad = OpBuilder("relu_grad").meta(relu_grad_meta).grad(relu_grad_grad).traits({.elementwise = true})
                       .saves(true, false);

// g where y > 0, else 0, with ops.
Tensor masked_by_ops(const Tensor& y, const Tensor& g) { return where(gts(y, 0.0), g, zeros_like(g)); }

Tensor masked_by_output(const Tensor& y, const Tensor& g) {
  if (g.shape() == y.shape() && is_floating(g.dtype()) && kReluGrad.kernels[int(y.device().type)][int(y.dtype())]) {
    Tensor in[2] = {y, g.dtype() == y.dtype() ? g : cast(g, y.dtype())};
    return dispatch1(kReluGrad, in, no_attrs());
  }
  return masked_by_ops(y, g);
}

Tensors relu_grad_grad(const GradCtx& c) {
  Tensors r(2);
  if (c.needs_grad(1)) r[1] = masked_by_output(c.in(0), c.grad());
  return r;
}

Tensors relu_grad(const GradCtx& c) { return {masked_by_output(c.out(0), c.grad())}; }
OpDef& kRelu = OpBuilder("relu").meta(relu_meta).grad(relu_grad).traits({.elementwise = true}).saves(false, true);

// gelu: attrs approximate (tanh form).
constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluC = 0.044715;
Metas gelu_meta(std::span<const Tensor> in, const Attrs&) { return float_meta(in, "oar.nn.functional.gelu"); }
// gelu'(x), written with ops (differentiable again).
Tensor gelu_derivative(const Tensor& x, bool approximate) {
  if (approximate) {
    // y = x/2 (1 + tanh u), u = k (x + c x^3): y' = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2)
    Tensor x2 = multiply(x, x);
    Tensor t = tanh(scale(add(x, scale(multiply(x2, x), kGeluC)), kSqrt2OverPi));
    Tensor du = scale(adds(scale(x2, 3 * kGeluC), 1.0), kSqrt2OverPi);
    Tensor one_m_t2 = binary_scalar("subtract", multiply(t, t), Scalar(1.0), true);
    return add(scale(adds(t, 1.0), 0.5), multiply(scale(x, 0.5), multiply(one_m_t2, du)));
  }
  // y' = Phi(x) + x phi(x)
  Tensor cdf = scale(adds(erf(scale(x, 1 / std::numbers::sqrt2)), 1.0), 0.5);
  Tensor pdf = scale(exp(scale(multiply(x, x), -0.5)), 1 / std::sqrt(2 * std::numbers::pi));
  return add(cdf, multiply(x, pdf));
}

// gelu_grad(x, g) = g * gelu'(x) in one vectorised pass; its own gradient is
// the composite's.
Metas gelu_grad_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }
// gelu''(x) with ops: phi(x) (2 - x^2) for the erf form; for the tanh form
// (1 - t^2) u' + x/2 (1 - t^2) (u'' - 2 t u'^2).
Tensor gelu_second_derivative(const Tensor& x, bool approximate) {
  Tensor x2 = multiply(x, x);
  if (approximate) {
    Tensor t = tanh(scale(add(x, scale(multiply(x2, x), kGeluC)), kSqrt2OverPi));
    Tensor du = scale(adds(scale(x2, 3 * kGeluC), 1.0), kSqrt2OverPi);
    Tensor ddu = scale(x, 6 * kGeluC * kSqrt2OverPi);
    Tensor sech2 = binary_scalar("subtract", multiply(t, t), Scalar(1.0), true);
    Tensor inner = subtract(ddu, scale(multiply(t, multiply(du, du)), 2.0));
    return add(multiply(sech2, du), multiply(scale(x, 0.5), multiply(sech2, inner)));
  }
  Tensor pdf = scale(exp(scale(x2, -0.5)), 1 / std::sqrt(2 * std::numbers::pi));
  return multiply(pdf, binary_scalar("subtract", x2, Scalar(2.0), true));
}

Tensors gelu_grad_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &g = c.in(1);
  bool approx = c.attr().b(0);
  Tensors r(2);
  if (c.needs_grad(0)) r[0] = multiply(c.grad(), multiply(g, gelu_second_derivative(x, approx)));
  if (c.needs_grad(1)) r[1] = multiply(c.grad(), gelu_derivative(x, approx));
  return r;
}
OpDef& kGeluGrad = OpBuilder("gelu_grad").attrs({"approximate"}).meta(gelu_grad_meta).grad(gelu_grad_grad)
                       .traits({.elementwise = true});

Tensors gelu_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  bool approx = c.attr().b(0);
  if (!grad_enabled() && x.dtype() != DType::Float64) {
    Tensor in[2] = {contiguous(x), contiguous(c.grad())};
    return {dispatch1(kGeluGrad, in, Attrs{approx})};
  }
  return {multiply(c.grad(), gelu_derivative(x, approx))};
}

OpDef& kGelu = OpBuilder("gelu").attrs({"approximate"}).meta(gelu_meta).grad(gelu_grad).traits({.elementwise = true});

// silu = x sigmoid(x): y' = s (1 + x (1 - s)).
Metas silu_meta(std::span<const Tensor> in, const Attrs&) { return float_meta(in, "oar.nn.functional.silu"); }
Tensors silu_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  Tensor s = sigmoid(x);
  Tensor one_m_s = binary_scalar("subtract", s, Scalar(1.0), true);
  return {multiply(c.grad(), multiply(s, adds(multiply(x, one_m_s), 1.0)))};
}
OpDef& kSilu = OpBuilder("silu").meta(silu_meta).grad(silu_grad).traits({.elementwise = true});

// log_sigmoid = min(x, 0) - log1p(exp(-|x|)) (stable both ways): y' = sigmoid(-x).
Metas log_sigmoid_meta(std::span<const Tensor> in, const Attrs&) {
  return float_meta(in, "oar.nn.functional.log_sigmoid");
}
Tensors log_sigmoid_grad(const GradCtx& c) { return {multiply(c.grad(), sigmoid(neg(c.in(0))))}; }
OpDef& kLogSigmoid =
    OpBuilder("log_sigmoid").meta(log_sigmoid_meta).grad(log_sigmoid_grad).traits({.elementwise = true});

// softmax / log_softmax: attrs axis (normalised; 0 for a 0-D input).
Metas softmax_meta_for(std::span<const Tensor> in, const Attrs& a, const char* api) {
  Metas m = float_meta(in, api);
  int64_t nd = std::max<int64_t>(in[0].dim(), 1);
  OAR_CHECK(a.i(0) >= 0 && a.i(0) < nd, Index, "[", api, "] axis ", a.i(0), " is out of range for a ",
            in[0].dim(), "-D tensor");
  return m;
}
Metas softmax_meta(std::span<const Tensor> in, const Attrs& a) {
  return softmax_meta_for(in, a, "oar.nn.functional.softmax");
}
Metas log_softmax_meta(std::span<const Tensor> in, const Attrs& a) {
  return softmax_meta_for(in, a, "oar.nn.functional.log_softmax");
}
Dims axis_of(const GradCtx& c) { return c.out(0).dim() == 0 ? Dims{} : Dims{c.attr().i(0)}; }
// dx = y (g - sum(g y))
Tensor softmax_grad_composite(const Tensor& y, const Tensor& g, const Dims& axis) {
  Tensor gy = multiply(g, y);
  return subtract(gy, multiply(y, sum(gy, axis, true)));
}

// softmax_grad(y, g) = y (g - sum(g y)) along the axis in one pass per row.
Metas softmax_grad_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }
Tensors softmax_grad_grad(const GradCtx& c) {
  // Differentiate the composite: the result is bilinear in (y, g) apart from the sum.
  const Tensor &y = c.in(0), &g = c.in(1);
  int64_t axis = c.attr().i(0);
  Tensor h = c.grad();
  Tensors r(2);
  Tensor s = sum(multiply(g, y), Dims{axis}, true);
  if (c.needs_grad(0)) {
    // d/dy [g y - y s] with s = sum(g y): h g - h s - g sum(h y)
    r[0] = subtract(subtract(multiply(h, g), multiply(h, s)), multiply(g, sum(multiply(h, y), Dims{axis}, true)));
  }
  if (c.needs_grad(1)) {
    // d/dg: h y - y sum(h y)
    r[1] = softmax_grad_composite(y, h, Dims{axis});
  }
  return r;
}
OpDef& kSoftmaxGrad = OpBuilder("softmax_grad").attrs({"axis"}).meta(softmax_grad_meta).grad(softmax_grad_grad)
                          .spmd("softmax_grad");

Tensors softmax_grad(const GradCtx& c) {
  const Tensor& y = c.out(0);
  Dims axis = axis_of(c);
  if (!grad_enabled() && !axis.empty() && axis[0] == y.dim() - 1 && y.dtype() != DType::Float64) {
    Tensor in[2] = {contiguous(y), contiguous(c.grad())};
    return {dispatch1(kSoftmaxGrad, in, Attrs{axis[0]})};
  }
  return {softmax_grad_composite(y, c.grad(), axis)};
}
// dx = g - exp(y) sum(g)
Tensors log_softmax_grad(const GradCtx& c) {
  Tensor g = c.grad();
  return {subtract(g, multiply(exp(c.out(0)), sum(g, axis_of(c), true)))};
}
OpDef& kSoftmax =
    OpBuilder("softmax").attrs({"axis"}).meta(softmax_meta).grad(softmax_grad).saves(false, true).spmd("softmax").amp(CastPolicy::Float32);
OpDef& kLogSoftmax =
    OpBuilder("log_softmax").attrs({"axis"}).meta(log_softmax_meta).grad(log_softmax_grad).saves(false, true)
        .spmd("softmax").amp(CastPolicy::Float32);

// Integers are promoted to the default float dtype, as Paddle's activations do.
Tensor as_float(const Tensor& x, const char* api) {
  OAR_CHECK(!is_complex(x.dtype()), Type, "[", api, "] does not support complex input (", dtype_name(x.dtype()), ")");
  return is_floating(x.dtype()) ? x : cast(x, default_float_dtype());
}

Tensor run1(const OpDef& op, const Tensor& x, const char* api, const Attrs& a = {}) {
  Tensor in[1] = {as_float(x, api)};
  return dispatch1(op, in, a);
}

Tensor softmax_like(const OpDef& op, const Tensor& x, int64_t axis, std::optional<DType> dtype, const char* api) {
  Tensor xx = dtype ? cast(x, *dtype) : as_float(x, api);
  int64_t ax = xx.dim() == 0 ? (axis == 0 || axis == -1 ? 0 : normalize_axis(axis, 0, api))
                             : normalize_axis(axis, xx.dim(), api);
  Tensor in[1] = {contiguous(xx)};  // the kernel walks rows of a dense tensor
  return dispatch1(op, in, Attrs{ax});
}

}  // namespace

namespace ops {

void relu_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  NoGradGuard no_grad;  // (called as a kernel: below autograd, nothing to record)
  copy_(out[0], masked_by_ops(in[0], in[1]));
}

Tensor relu(const Tensor& x) { return run1(kRelu, x, "oar.nn.functional.relu"); }
Tensor& relu_(Tensor& x) {
  OAR_CHECK(is_floating(x.dtype()), Type, "[oar.nn.functional.relu_] expects a floating-point tensor, got ",
            dtype_name(x.dtype()));
  Tensor in[1] = {x};
  return dispatch_inplace(kRelu, x, in);
}
Tensor gelu(const Tensor& x, bool approximate) { return run1(kGelu, x, "oar.nn.functional.gelu", Attrs{approximate}); }
Tensor silu(const Tensor& x) { return run1(kSilu, x, "oar.nn.functional.silu"); }
Tensor log_sigmoid(const Tensor& x) { return run1(kLogSigmoid, x, "oar.nn.functional.log_sigmoid"); }
Tensor softmax(const Tensor& x, int64_t axis, std::optional<DType> dtype) {
  return softmax_like(kSoftmax, x, axis, dtype, "oar.nn.functional.softmax");
}
Tensor log_softmax(const Tensor& x, int64_t axis, std::optional<DType> dtype) {
  return softmax_like(kLogSoftmax, x, axis, dtype, "oar.nn.functional.log_softmax");
}

// Composites. Where a branch could overflow (exp of a large x) its input is
// masked first, so that the unused branch cannot put inf * 0 = nan into the
// gradient.
Tensor relu6(const Tensor& x) {
  return clip(as_float(x, "oar.nn.functional.relu6"), Scalar(0.0), Scalar(6.0));
}
Tensor leaky_relu(const Tensor& x, double slope) {
  Tensor xx = as_float(x, "oar.nn.functional.leaky_relu");
  return where(gts(xx, 0.0), xx, scale(xx, slope));
}
Tensor elu(const Tensor& x, double alpha) {
  Tensor xx = as_float(x, "oar.nn.functional.elu");
  Tensor pos = gts(xx, 0.0);
  Tensor neg_part = where(pos, zeros_like(xx), xx);
  return where(pos, xx, scale(unary("expm1", neg_part), alpha));
}
Tensor selu(const Tensor& x, double sc, double alpha) {
  OAR_CHECK(sc > 1.0, Value, "[oar.nn.functional.selu] scale must be greater than 1.0, got ", sc);
  OAR_CHECK(alpha >= 0.0, Value, "[oar.nn.functional.selu] alpha must be no less than zero, got ", alpha);
  Tensor xx = as_float(x, "oar.nn.functional.selu");
  return scale(elu(xx, alpha), sc);
}
Tensor softplus(const Tensor& x, double beta, double threshold) {
  OAR_CHECK(beta != 0.0, Value, "[oar.nn.functional.softplus] beta must be non-zero");
  Tensor xx = as_float(x, "oar.nn.functional.softplus");
  Tensor bx = scale(xx, beta);
  Tensor lin = gts(bx, threshold);
  Tensor safe = where(lin, zeros_like(bx), bx);
  return where(lin, xx, scale(unary("log1p", exp(safe)), 1.0 / beta));
}
Tensor softsign(const Tensor& x) {
  Tensor xx = as_float(x, "oar.nn.functional.softsign");
  return divide(xx, adds(abs(xx), 1.0));
}
Tensor hardswish(const Tensor& x) {
  Tensor xx = as_float(x, "oar.nn.functional.hardswish");
  return multiply(xx, scale(clip(adds(xx, 3.0), Scalar(0.0), Scalar(6.0)), 1.0 / 6.0));
}
Tensor hardsigmoid(const Tensor& x, double slope, double offset) {
  Tensor xx = as_float(x, "oar.nn.functional.hardsigmoid");
  return clip(adds(scale(xx, slope), offset), Scalar(0.0), Scalar(1.0));
}
Tensor mish(const Tensor& x) {
  Tensor xx = as_float(x, "oar.nn.functional.mish");
  return multiply(xx, tanh(softplus(xx, 1.0, 20.0)));
}

}  // namespace ops
}  // namespace oar

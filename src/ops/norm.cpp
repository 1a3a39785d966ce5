// Normalisation ops (kernels/cpu/norm.cpp).
//
// Note [norm gradients]
// With R the normalised axes, M their element count, xhat = (x - mean) * r and
// r = rsqrt(var + eps), the input gradient of y = xhat * w + b is
//   r * (gw - mean_R(gw) - xhat * mean_R(gw * xhat)),   gw = g * w,
// when the statistics come from x, and g * w * r when they are fixed. The rules
// recompute mean and r from x with ops instead of reading the forward's
// saved statistics, so that they stay differentiable without the forward's
// statistics outputs needing gradients of their own.
#include "ops/norm.h"

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

void check_float(const Tensor& x, const char* api) {
  OAR_CHECK(is_floating(x.dtype()), Type, "[", api, "] expects a floating-point input, got ", dtype_name(x.dtype()));
}

void check_param(const Tensor& t, const Tensor& x, const Dims& shape, const char* what, const char* api) {
  if (!t.defined()) return;
  OAR_CHECK(t.shape() == shape, Value, "[", api, "] ", what, " must have shape ", shape_str(shape), ", got ",
            shape_str(t.shape()));
  OAR_CHECK(t.dtype() == x.dtype(), Type, "[", api, "] ", what, " dtype ", dtype_name(t.dtype()),
            " differs from the input dtype ", dtype_name(x.dtype()));
}

// float16/bfloat16 activations with float32 parameters (mixed precision, where
// norm layers keep float32 weights): normalise in float32, return the input's
// dtype.
bool mixed_precision(const Tensor& x, std::initializer_list<const Tensor*> params) {
  if (x.dtype() != DType::Float16 && x.dtype() != DType::BFloat16) return false;
  for (const Tensor* p : params)
    if (p->defined() && p->dtype() == DType::Float32) return true;
  return false;
}

// A default weight or bias, or a placeholder statistic, filled with v on x's
// device (the kernels read every operand on one device).
Tensor filled(const Dims& shape, int64_t v, const Tensor& x) {
  return to_device(full(shape, Scalar(v), x.dtype()), x.device());
}

// Shape that broadcasts a per-channel vector against x with channels on `axis`.
Dims channel_shape(const Tensor& x, int64_t axis) {
  Dims s(size_t(x.dim()), 1);
  s[size_t(axis)] = x.shape()[axis];
  return s;
}

// Input gradient with statistics over `axes` taken from x (Note [norm gradients]).
Tensor stats_input_grad(const Tensor& x, const Tensor& gw, const Dims& axes, double eps) {
  Tensor mu = mean(x, axes, true);
  Tensor xc = subtract(x, mu);
  Tensor r = rsqrt(binary_scalar("add", mean(square(xc), axes, true), Scalar(eps), false));
  Tensor xhat = multiply(xc, r);
  Tensor t = subtract(subtract(gw, mean(gw, axes, true)), multiply(xhat, mean(multiply(gw, xhat), axes, true)));
  return multiply(r, t);
}

Tensor xhat_of(const Tensor& x, const Dims& axes, double eps) {
  Tensor mu = mean(x, axes, true);
  Tensor xc = subtract(x, mu);
  return multiply(xc, rsqrt(binary_scalar("add", mean(square(xc), axes, true), Scalar(eps), false)));
}

// ---- batch_norm: in (x, weight, bias, mean, var); attrs axis, eps, use_batch_stats;
// out (y, batch_mean, batch_var).

Metas batch_norm_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  Dims c{x.shape()[a.i(0)]};
  return {TensorMeta{x.shape(), x.dtype()}, TensorMeta{c, x.dtype()}, TensorMeta{c, x.dtype()}};
}

Dims all_but(int64_t ndim, int64_t axis) {
  Dims r;
  for (int64_t d = 0; d < ndim; ++d)
    if (d != axis) r.push_back(d);
  return r;
}

// Fused gradient kernels for first-order backward (grad mode off inside the
// engine unless create_graph); they have no rule of their own because they
// are never recorded. Higher orders use the composite rules.
Metas batch_norm_grad_meta(std::span<const Tensor> in, const Attrs& a) {
  Dims cs{in[0].shape()[a.i(0)]};
  return {TensorMeta{in[0].shape(), in[0].dtype()}, TensorMeta{cs, in[0].dtype()}, TensorMeta{cs, in[0].dtype()}};
}
OpDef& kBatchNormGrad = OpBuilder("batch_norm_grad").attrs({"axis", "eps", "use_batch_stats"})
                            .meta(batch_norm_grad_meta).saves(false, false);

Metas layer_norm_grad_meta(std::span<const Tensor> in, const Attrs&) {
  return {TensorMeta{in[0].shape(), in[0].dtype()}, TensorMeta{in[1].shape(), in[0].dtype()},
          TensorMeta{in[1].shape(), in[0].dtype()}};
}
OpDef& kLayerNormGrad = OpBuilder("layer_norm_grad").attrs({"begin_axis", "eps"}).meta(layer_norm_grad_meta)
                            .saves(false, false).spmd("layer_norm_grad");

Tensors pick(Tensors r, const GradCtx& c, size_t n) {
  Tensors out(n);
  for (size_t i = 0; i < 3 && i < n; ++i)
    if (c.needs_grad(i)) out[i] = r[i];
  return out;
}

Tensors batch_norm_grad(const GradCtx& c) {
  if (!grad_enabled()) {
    Tensor in[5] = {c.in(0), c.in(1), contiguous(c.grad(0)), c.in(3), c.in(4)};
    return pick(dispatch(kBatchNormGrad, in, c.attr()), c, 5);
  }
  const Tensor &x = c.in(0), &w = c.in(1);
  int64_t axis = c.attr().i(0);
  double eps = c.attr().f(1);
  Dims cs = channel_shape(x, axis), R = all_but(x.dim(), axis);
  Tensor g = c.grad(0);
  Tensor wb = reshape(w, cs);
  Tensor xhat;
  Tensors r(5);
  if (c.attr().b(2)) {
    xhat = xhat_of(x, R, eps);
    if (c.needs_grad(0)) r[0] = stats_input_grad(x, multiply(g, wb), R, eps);
  } else {
    Tensor rs = rsqrt(binary_scalar("add", reshape(c.in(4), cs), Scalar(eps), false));
    xhat = multiply(subtract(x, reshape(c.in(3), cs)), rs);
    if (c.needs_grad(0)) r[0] = multiply(g, multiply(wb, rs));
  }
  if (c.needs_grad(1)) r[1] = sum(multiply(g, xhat), R);
  if (c.needs_grad(2)) r[2] = sum(g, R);
  return r;
}

OpDef& kBatchNorm = OpBuilder("batch_norm").attrs({"axis", "eps", "use_batch_stats"}).meta(batch_norm_meta)
                        .grad(batch_norm_grad).amp(CastPolicy::Float32);

// ---- layer_norm: in (x, weight, bias); attrs begin_axis, eps; out y.

Metas layer_norm_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }

Tensors layer_norm_grad(const GradCtx& c) {
  if (!grad_enabled()) {
    Tensor in[3] = {c.in(0), c.in(1), contiguous(c.grad(0))};
    return pick(dispatch(kLayerNormGrad, in, c.attr()), c, 3);
  }
  const Tensor &x = c.in(0), &w = c.in(1);
  int64_t begin = c.attr().i(0);
  double eps = c.attr().f(1);
  Dims R, lead;
  for (int64_t d = 0; d < x.dim(); ++d) (d >= begin ? R : lead).push_back(d);
  Tensor g = c.grad(0);
  Tensors r(3);
  if (c.needs_grad(0)) r[0] = stats_input_grad(x, multiply(g, w), R, eps);
  if (c.needs_grad(1)) r[1] = lead.empty() ? multiply(g, xhat_of(x, R, eps)) : sum(multiply(g, xhat_of(x, R, eps)), lead);
  if (c.needs_grad(2)) r[2] = lead.empty() ? g : sum(g, lead);
  return r;
}

OpDef& kLayerNorm = OpBuilder("layer_norm").attrs({"begin_axis", "eps"}).meta(layer_norm_meta).grad(layer_norm_grad)
                        .spmd("layer_norm").amp(CastPolicy::Float32);

// ---- rms_norm: in (x, weight?); attrs begin_axis, eps; out y = x * r * weight
// with r = rsqrt(mean_R(x^2) + eps) over the trailing dims R from begin_axis.
//
// Note [rms_norm gradients]
// With xhat = x * r and gw = g * weight (g without a weight),
//   dx = r * (gw - xhat * mean_R(gw * xhat)),   dweight = sum_lead(g * xhat).
// The composite rule (grad mode on: create_graph, double backward) writes
// this with ops, recomputing r from x; a first-order backward dispatches
// rms_norm_grad, whose kernel computes dx and dweight in one sweep per row.
// rms_norm_grad: in (x, weight?, g); attrs begin_axis, eps, weight_grad; out
// (dx, dweight), dweight empty ([0]) unless weight_grad (the caller asks for
// it only when weight is defined and needs a gradient).

Metas rms_norm_grad_meta(std::span<const Tensor> in, const Attrs& a) {
  Dims ws = a.b(2) && in[1].defined() ? in[1].shape() : Dims{0};
  return {TensorMeta{in[0].shape(), in[0].dtype()}, TensorMeta{ws, in[0].dtype()}};
}
OpDef& kRmsNormGrad = OpBuilder("rms_norm_grad").attrs({"begin_axis", "eps", "weight_grad"})
                          .meta(rms_norm_grad_meta).optional({1}).saves(false, false).spmd("rms_norm_grad");

Metas rms_norm_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }

// 1 / rms of x over R, keeping R's dims.
Tensor inv_rms(const Tensor& x, const Dims& R, double eps) {
  return rsqrt(binary_scalar("add", mean(square(x), R, true), Scalar(eps), false));
}

// Note [rms_norm gradients] with ops: (dx, dweight), each only when asked for.
Tensors rms_norm_grads_of(const Tensor& x, const Tensor& w, const Tensor& g, int64_t begin, double eps, bool want_dx,
                          bool want_dw) {
  Dims R, lead;
  for (int64_t d = 0; d < x.dim(); ++d) (d >= begin ? R : lead).push_back(d);
  Tensor r = inv_rms(x, R, eps);
  Tensor xhat = multiply(x, r);
  Tensors out(2);
  if (want_dx) {
    Tensor gw = w.defined() ? multiply(g, w) : g;
    out[0] = multiply(r, subtract(gw, multiply(xhat, mean(multiply(gw, xhat), R, true))));
  }
  if (want_dw) out[1] = lead.empty() ? multiply(g, xhat) : sum(multiply(g, xhat), lead);
  return out;
}

Tensors rms_norm_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  const bool weight_grad = w.defined() && c.needs_grad(1);
  if (!grad_enabled()) {
    Tensor in[3] = {x, w, contiguous(c.grad(0))};
    Tensors r = dispatch(kRmsNormGrad, in, Attrs{c.attr().i(0), c.attr().f(1), weight_grad});
    Tensors out(2);
    if (c.needs_grad(0)) out[0] = r[0];
    if (weight_grad) out[1] = r[1];
    return out;
  }
  return rms_norm_grads_of(x, w, c.grad(0), c.attr().i(0), c.attr().f(1), c.needs_grad(0), weight_grad);
}

OpDef& kRmsNorm = OpBuilder("rms_norm").attrs({"begin_axis", "eps"}).meta(rms_norm_meta).grad(rms_norm_grad)
                      .optional({1}).spmd("rms_norm").amp(CastPolicy::Float32);

}  // namespace

namespace ops {

Tensor batch_norm(const Tensor& x, Tensor running_mean, Tensor running_var, const Tensor& weight,
                  const Tensor& bias, bool use_batch_stats, double momentum, double eps, int64_t axis,
                  const char* api) {
  check_float(x, api);
  if (mixed_precision(x, {&weight, &bias, &running_mean, &running_var}))
    return cast(batch_norm(cast(x, DType::Float32), running_mean, running_var, weight, bias, use_batch_stats,
                           momentum, eps, axis, api), x.dtype());
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] expects an input with at least 2 dims, got shape ", shape_str(x.shape()));
  axis = normalize_axis(axis, x.dim(), api);
  int64_t C = x.shape()[axis];
  Dims cs{C};
  check_param(weight, x, cs, "weight", api);
  check_param(bias, x, cs, "bias", api);
  check_param(running_mean, x, cs, "running_mean", api);
  check_param(running_var, x, cs, "running_variance", api);
  if (!use_batch_stats)
    OAR_CHECK(running_mean.defined() && running_var.defined(), Value, "[", api,
              "] running_mean and running_var are required when not using batch statistics");
  if (use_batch_stats)
    OAR_CHECK(x.numel() > C || x.numel() == 0, Value, "[", api,
              "] expects more than one value per channel when training, got input shape ", shape_str(x.shape()));
  Tensor w = weight.defined() ? weight : filled(cs, 1, x);
  Tensor b = bias.defined() ? bias : filled(cs, 0, x);
  // Batch statistics never read the running tensors; placeholders keep the
  // in-place update below from invalidating what autograd saved.
  Tensor rm = !use_batch_stats ? running_mean : filled(cs, 0, x);
  Tensor rv = !use_batch_stats ? running_var : filled(cs, 1, x);
  Tensor in[5] = {contiguous(x), contiguous(w), contiguous(b), contiguous(rm), contiguous(rv)};
  Tensors r = dispatch(kBatchNorm, in, Attrs{axis, eps, use_batch_stats});
  if (use_batch_stats && running_mean.defined() && running_var.defined()) {
    NoGradGuard ng;
    Tensor nm = add(scale(detach(running_mean), momentum), scale(detach(r[1]), 1.0 - momentum));
    Tensor nv = add(scale(detach(running_var), momentum), scale(detach(r[2]), 1.0 - momentum));
    copy_(running_mean, nm);
    copy_(running_var, nv);
  }
  return r[0];
}

Tensor layer_norm(const Tensor& x, int64_t begin_axis, const Tensor& weight, const Tensor& bias, double eps,
                  const char* api) {
  check_float(x, api);
  if (mixed_precision(x, {&weight, &bias}))
    return cast(layer_norm(cast(x, DType::Float32), begin_axis, weight, bias, eps, api), x.dtype());
  OAR_CHECK(begin_axis >= 0 && begin_axis < x.dim(), Value, "[", api, "] normalized_shape must be non-empty and have at most the input's dims, input shape ",
            shape_str(x.shape()));
  Dims ns(x.shape().begin() + begin_axis, x.shape().end());
  check_param(weight, x, ns, "weight", api);
  check_param(bias, x, ns, "bias", api);
  Tensor w = weight.defined() ? weight : filled(ns, 1, x);
  Tensor b = bias.defined() ? bias : filled(ns, 0, x);
  Tensor in[3] = {contiguous(x), contiguous(w), contiguous(b)};
  return dispatch1(kLayerNorm, in, Attrs{begin_axis, eps});
}

// Per-channel affine of a (N, C, *) tensor.
Tensor channel_affine(const Tensor& y, const Tensor& w, const Tensor& b) {
  Dims cs = channel_shape(y, 1);
  Tensor r = w.defined() ? multiply(y, reshape(w, cs)) : y;
  return b.defined() ? add(r, reshape(b, cs)) : r;
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps,
                  const char* api) {
  check_float(x, api);
  if (mixed_precision(x, {&weight, &bias}))
    return cast(group_norm(cast(x, DType::Float32), groups, weight, bias, eps, api), x.dtype());
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] expects an input with at least 2 dims, got shape ", shape_str(x.shape()));
  int64_t C = x.shape()[1];
  OAR_CHECK(groups > 0 && C % groups == 0, Value, "[", api, "] the number of channels (", C,
            ") must be divisible by num_groups (", groups, ")");
  check_param(weight, x, Dims{C}, "weight", api);
  check_param(bias, x, Dims{C}, "bias", api);
  int64_t per = x.numel() / std::max<int64_t>(x.shape()[0] * groups, 1);
  Tensor y = layer_norm(reshape(x, Dims{x.shape()[0], groups, per}), 2, Tensor(), Tensor(), eps, api);
  return channel_affine(reshape(y, x.shape()), weight, bias);
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, const char* api) {
  check_float(x, api);
  OAR_CHECK(x.dim() >= 3, Value, "[", api, "] expects an input with at least 3 dims (N, C, *), got shape ",
            shape_str(x.shape()));
  return group_norm(x, x.shape()[1], weight, bias, eps, api);
}

Tensor rms_norm(const Tensor& x, int64_t begin_axis, const Tensor& weight, double eps, const char* api) {
  check_float(x, api);
  if (mixed_precision(x, {&weight}))
    return cast(rms_norm(cast(x, DType::Float32), begin_axis, weight, eps, api), x.dtype());
  OAR_CHECK(begin_axis >= 0 && begin_axis < x.dim(), Value, "[", api, "] normalized_shape must be non-empty and have at most the input's dims, input shape ",
            shape_str(x.shape()));
  Dims ns(x.shape().begin() + begin_axis, x.shape().end());
  check_param(weight, x, ns, "weight", api);
  Tensor in[2] = {contiguous(x), weight.defined() ? contiguous(weight) : Tensor()};
  return dispatch1(kRmsNorm, in, Attrs{begin_axis, eps});
}

// Note [rms_norm by ops]: the ops of the composite gradient rule and of the
// forward, run in float32 for 16-bit inputs as the fused CPU kernels
// accumulate, for devices without fused kernels of their own.
void rms_norm_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  NoGradGuard no_grad;  // (called as a kernel: below autograd, nothing to record)
  const bool low = in[0].dtype() == DType::Float16 || in[0].dtype() == DType::BFloat16;
  auto up = [&](const Tensor& t) { return low && t.defined() ? cast(t, DType::Float32) : t; };
  Tensor x = up(in[0]);
  Dims R;
  for (int64_t d = a.i(0); d < x.dim(); ++d) R.push_back(d);
  Tensor y = multiply(x, inv_rms(x, R, a.f(1)));
  if (in[1].defined()) y = multiply(y, up(in[1]));
  copy_(out[0], low ? cast(y, in[0].dtype()) : y);
}

void rms_norm_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  NoGradGuard no_grad;
  const bool low = in[0].dtype() == DType::Float16 || in[0].dtype() == DType::BFloat16;
  auto up = [&](const Tensor& t) { return low && t.defined() ? cast(t, DType::Float32) : t; };
  const bool want_dw = a.b(2) && in[1].defined();
  Tensors r = rms_norm_grads_of(up(in[0]), up(in[1]), up(in[2]), a.i(0), a.f(1), true, want_dw);
  for (size_t k = 0; k < (want_dw ? 2u : 1u); ++k) copy_(out[k], low ? cast(r[k], in[0].dtype()) : r[k]);
}

}  // namespace ops
}  // namespace oar

// matmul (kernels/cpu/matmul.cpp). Inputs reaching the op are at least 2-D;
// the front end lifts 1-D operands and squeezes the result.
#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

Metas matmul_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor &x = in[0], &y = in[1];
  bool tx = a.b(0), ty = a.b(1);
  OAR_CHECK(x.dtype() == y.dtype(), Type, "[oar.matmul] x and y must have the same dtype, got ",
            dtype_name(x.dtype()), " and ", dtype_name(y.dtype()));
  OAR_CHECK(x.dim() >= 2 && y.dim() >= 2, Runtime, "[oar.matmul] internal: operands must be at least 2-D");
  int64_t m = x.shape()[x.dim() - (tx ? 1 : 2)], kx = x.shape()[x.dim() - (tx ? 2 : 1)];
  int64_t ky = y.shape()[y.dim() - (ty ? 1 : 2)], n = y.shape()[y.dim() - (ty ? 2 : 1)];
  OAR_CHECK(kx == ky, Value, "[oar.matmul] the contracted dims differ: x has ", kx, " (shape ", shape_str(x.shape()),
            tx ? ", transposed" : "", ") and y has ", ky, " (shape ", shape_str(y.shape()), ty ? ", transposed" : "", ")");
  Dims bx(x.shape().begin(), x.shape().end() - 2), by(y.shape().begin(), y.shape().end() - 2);
  Dims out = broadcast_shapes(bx, by, "oar.matmul");
  out.push_back(m);
  out.push_back(n);
  return {TensorMeta{out, x.dtype()}};
}

Tensors matmul_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &y = c.in(1);
  bool tx = c.attr().b(0), ty = c.attr().b(1);
  Tensor g = c.grad();
  Tensor xc = conj(x), yc = conj(y);
  Tensor gx, gy;
  if (c.needs_grad(0)) {
    if (!tx) gx = ty ? matmul(g, yc, false, false) : matmul(g, yc, false, true);
    else gx = ty ? matmul(yc, g, true, true) : matmul(yc, g, false, true);
    gx = sum_to(gx, x.shape());
  }
  if (c.needs_grad(1)) {
    if (y.dim() == 2 && x.dim() > 2 && !tx) {
      // One matrix applied to a stack (a Linear layer on [B, S, K]): fold the
      // stack into rows, one product instead of B products and a batch sum.
      int64_t K = x.shape()[x.dim() - 1], N = g.shape()[g.dim() - 1];
      Tensor x2 = reshape(xc, Dims{xc.numel() / std::max<int64_t>(K, 1), K});
      Tensor g2 = reshape(g, Dims{g.numel() / std::max<int64_t>(N, 1), N});
      gy = ty ? matmul(g2, x2, true, false) : matmul(x2, g2, true, false);
    } else {
      if (!ty) gy = tx ? matmul(xc, g, false, false) : matmul(xc, g, true, false);
      else gy = tx ? matmul(g, xc, true, true) : matmul(g, xc, true, false);
      gy = sum_to(gy, y.shape());
    }
  }
  return {gx, gy};
}

OpDef& kMatmul = OpBuilder("matmul").attrs({"transpose_x", "transpose_y"}).meta(matmul_meta).grad(matmul_grad)
                     .spmd("matmul").amp(CastPolicy::Low);

// ---- linear: x [..., K] @ w [K, N] + b [N] in one product (the kernel starts
// the output from the broadcast bias), so a Linear layer makes one pass over
// its output instead of two.
Metas linear_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor &x = in[0], &w = in[1], &b = in[2];
  OAR_CHECK(x.dtype() == w.dtype() && x.dtype() == b.dtype(), Type,
            "[oar.nn.functional.linear] x, weight and bias must have the same dtype, got ", dtype_name(x.dtype()), ", ",
            dtype_name(w.dtype()), " and ", dtype_name(b.dtype()));
  OAR_CHECK(is_floating(x.dtype()), Type, "[oar.nn.functional.linear] expects floating-point tensors, got ",
            dtype_name(x.dtype()));
  OAR_CHECK(w.dim() == 2, Value, "[oar.nn.functional.linear] weight must be 2-D [in, out], got shape ",
            shape_str(w.shape()));
  OAR_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] == w.shape()[0], Value,
            "[oar.nn.functional.linear] x.shape[-1] must equal weight.shape[0] (", w.shape()[0], "), got x.shape ",
            shape_str(x.shape()));
  OAR_CHECK(b.dim() == 1 && b.shape()[0] == w.shape()[1], Value,
            "[oar.nn.functional.linear] bias must have shape [", w.shape()[1], "], got ", shape_str(b.shape()));
  Dims out = x.shape();
  out.back() = w.shape()[1];
  return {TensorMeta{out, x.dtype()}};
}

Tensors linear_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  Tensor g = c.grad();
  int64_t K = w.shape()[0], N = w.shape()[1];
  Tensor g2 = reshape(g, Dims{g.numel() / std::max<int64_t>(N, 1), N});
  Tensor gx, gw, gb;
  if (c.needs_grad(0)) gx = matmul(g, w, false, true);
  if (c.needs_grad(1)) gw = matmul(reshape(x, Dims{x.numel() / std::max<int64_t>(K, 1), K}), g2, true, false);
  if (c.needs_grad(2)) gb = sum(g2, Dims{0});
  return {gx, gw, gb};
}

OpDef& kLinear = OpBuilder("linear").meta(linear_meta).grad(linear_grad).spmd("linear").amp(CastPolicy::Low);

}  // namespace

namespace ops {

Tensor matmul(const Tensor& x0, const Tensor& y0, bool tx, bool ty) {
  OAR_CHECK(x0.dim() >= 1 && y0.dim() >= 1, Value, "[oar.matmul] operands must be at least 1-D, got shapes ",
            shape_str(x0.shape()), " and ", shape_str(y0.shape()));
  DType t = promote_types(x0.dtype(), y0.dtype());
  OAR_CHECK(t != DType::Bool, Type, "[oar.matmul] does not support bool tensors");
  Tensor x = cast(x0, t), y = cast(y0, t);
  bool x1 = x.dim() == 1, y1 = y.dim() == 1;
  if (x1) { x = unsqueeze(x, Dims{0}); tx = false; }
  if (y1) { y = unsqueeze(y, Dims{1}); ty = false; }
  Tensor in[2] = {x, y};
  Tensor out = dispatch1(kMatmul, in, Attrs{tx, ty});
  if (x1 && y1) return reshape(out, Dims{});
  if (x1) return squeeze(out, Dims{out.dim() - 2});
  if (y1) return squeeze(out, Dims{out.dim() - 1});
  return out;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  // Under autocast the dispatch stage casts all three to the low dtype;
  // otherwise mixed float dtypes promote like matmul and add would.
  if (!dispatch_state().autocast) {
    DType t = promote_types(promote_types(x.dtype(), w.dtype()), b.dtype());
    Tensor in[3] = {cast(x, t), cast(w, t), cast(b, t)};
    return dispatch1(kLinear, in);
  }
  Tensor in[3] = {x, w, b};
  return dispatch1(kLinear, in);
}

}  // namespace ops
}  // namespace oar

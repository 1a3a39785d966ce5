// Forward-mode differentiation of captured programs (Note [forward mode] in
// autograd/transforms.h).
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd.h"
#include "autograd/transforms.h"
#include "ops/dispatch.h"
#include "ops/grad.h"
#include "ops/ops.h"

namespace oar {

namespace {

Tensors call(const OpDef& op, const Tensors& in, const Attrs& a) {
  return dispatch(op, std::span<const Tensor>(in.data(), in.size()), a);
}

bool differentiable(const Tensor& t) { return t.defined() && (is_floating(t.dtype()) || is_complex(t.dtype())); }

// Ops linear in all their floating inputs together: the tangent is the op
// applied to the tangents (zeros where an input has none); integer inputs
// (indices) keep their values.
const std::unordered_set<std::string>& linear_ops() {
  static const std::unordered_set<std::string> s{
      "add", "subtract", "neg", "reshape", "transpose", "expand", "squeeze", "unsqueeze", "sum", "mean",
      "strided_slice", "concat", "stack", "split", "flip", "index_select", "take_along_axis", "pick_along_axis",
      "diagonal", "cumsum", "conj", "real", "imag", "slice_scatter", "max_pool_gather", "max_pool_grad",
      "avg_pool", "avg_pool_grad", "scale", "tril", "triu", "roll", "tile", "pad", "contiguous", "clone"};
  return s;
}

// Ops linear in each of two inputs separately: the product rule.
const std::unordered_set<std::string>& bilinear_ops() {
  static const std::unordered_set<std::string> s{"multiply", "matmul", "conv", "conv_transpose", "conv_grad_weight"};
  return s;
}

Tensor zero_tangent(const Tensor& primal) { return ops::zeros_like(primal); }

Tensor add_tangents(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return ops::binary("add", a, b);
}

// J t from the op's gradient rule: d<J^T u, t>/du at u = 0.
Tensors derived_tangents(const OpDef& op, const Tensors& in, const Tensors& out, const Tensors& tin,
                         const Attrs& a) {
  GradModeGuard on(true);
  Tensors u;
  Metas metas;
  for (const Tensor& o : out) {
    Tensor z = ops::zeros(o.shape(), o.dtype());
    if (differentiable(o)) z.autograd_meta().stop_gradient = false;
    u.push_back(z);
    metas.push_back(TensorMeta{o.shape(), o.dtype()});
  }
  std::unique_ptr<bool[]> needs(new bool[std::max<size_t>(tin.size(), 1)]());
  for (size_t i = 0; i < tin.size(); ++i) needs[i] = tin[i].defined();
  GradCtx ctx;
  ctx.inputs = std::span<const Tensor>(in.data(), in.size());
  ctx.outputs = std::span<const Tensor>(out.data(), out.size());
  ctx.grads = std::span<Tensor>(u.data(), u.size());
  ctx.out_metas = std::span<const TensorMeta>(metas.data(), metas.size());
  ctx.attrs = &a;
  ctx.needs = needs.get();
  Tensors g = op.grad(ctx);
  Tensors ys, ts;
  for (size_t i = 0; i < g.size() && i < tin.size(); ++i)
    if (g[i].defined() && tin[i].defined() && g[i].requires_grad()) {
      ys.push_back(g[i]);
      ts.push_back(tin[i].dtype() == g[i].dtype() ? tin[i] : ops::cast(tin[i], g[i].dtype()));
    }
  Tensors res(out.size());
  if (ys.empty()) return res;
  Tensors wrt;
  SmallVector<size_t, 2> where;
  for (size_t k = 0; k < u.size(); ++k)
    if (u[k].requires_grad()) wrt.push_back(u[k]), where.push_back(k);
  const bool higher = any_requires_grad(std::span<const Tensor>(in.data(), in.size())) ||
                      any_requires_grad(std::span<const Tensor>(tin.data(), tin.size()));
  Tensors r = run_backward(std::span<const Tensor>(ys.data(), ys.size()), std::span<const Tensor>(ts.data(), ts.size()),
                           /*retain_graph=*/false, /*create_graph=*/higher, std::span<const Tensor>(wrt.data(), wrt.size()),
                           /*allow_unused=*/true);
  for (size_t j = 0; j < where.size(); ++j) res[where[j]] = r[j];
  return res;
}

Tensors tangents_of(const OpDef& op, const Tensors& in, const Tensors& out, const Tensors& tin, const Attrs& a) {
  const std::string& name = op.name;
  // An op without a gradient rule is a constant to reverse mode (creation,
  // comparisons, indices); forward mode agrees.
  if (!op.grad) return Tensors(out.size());
  if (linear_ops().count(name)) {
    Tensors args;
    for (size_t i = 0; i < in.size(); ++i)
      args.push_back(!differentiable(in[i]) ? in[i] : tin[i].defined() ? tin[i] : zero_tangent(in[i]));
    return call(op, args, a);
  }
  if (bilinear_ops().count(name) && in.size() == 2) {
    Tensors r(out.size());
    if (tin[0].defined()) r = call(op, {tin[0], in[1]}, a);
    if (tin[1].defined()) {
      Tensors r2 = call(op, {in[0], tin[1]}, a);
      for (size_t k = 0; k < r.size(); ++k) r[k] = add_tangents(r[k], r2[k]);
    }
    return r;
  }
  // A real elementwise op of one input has a diagonal Jacobian: J t = J^T t,
  // its gradient rule applied to t.
  if (op.traits.elementwise && in.size() == 1 && out.size() == 1 && is_floating(in[0].dtype()) && op.grad) {
    Tensors u{tin[0]};
    TensorMeta m{out[0].shape(), out[0].dtype()};
    bool needs[1] = {true};
    GradCtx ctx;
    ctx.inputs = std::span<const Tensor>(in.data(), in.size());
    ctx.outputs = std::span<const Tensor>(out.data(), out.size());
    ctx.grads = std::span<Tensor>(u.data(), u.size());
    ctx.out_metas = std::span<const TensorMeta>(&m, 1);
    ctx.attrs = &a;
    ctx.needs = needs;
    return op.grad(ctx);
  }
  return derived_tangents(op, in, out, tin, a);
}

}  // namespace

Tensors run_jvp(const ir::Program& p, std::span<const Tensor> inputs, std::span<const Tensor> tangents,
                std::span<const Tensor> params) {
  OAR_CHECK(inputs.size() == p.inputs().size() && tangents.size() == inputs.size() &&
                params.size() == p.parameters().size(),
            Value, "[oar.func.jvp] the program takes ", p.inputs().size(), " input(s) with as many tangents and ",
            p.parameters().size(), " parameter(s), got ", inputs.size(), ", ", tangents.size(), " and ",
            params.size());
  OAR_CHECK(p.state_updates().empty(), NotImplemented,
            "[oar.func.jvp] the function writes to tensors from outside it (in-place updates of captured state); "
            "return the new values instead");
  std::unordered_map<const ir::Value*, std::pair<Tensor, Tensor>> env;  // value -> (primal, tangent)
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = tangents[i];
    if (t.defined())
      OAR_CHECK(t.shape() == inputs[i].shape(), Value, "[oar.func.jvp] tangent ", i, " has shape ",
                ops::shape_str(t.shape()), ", its primal has shape ", ops::shape_str(inputs[i].shape()));
    // Kernels take dense inputs, as in the program executor.
    env[p.inputs()[i].value] = {ops::contiguous(inputs[i]),
                                differentiable(inputs[i]) && t.defined() ? ops::contiguous(t) : Tensor()};
  }
  for (size_t i = 0; i < params.size(); ++i) env[p.parameters()[i].value] = {params[i], Tensor()};
  for (const auto& op : p.body().operations()) {
    OAR_CHECK(op->num_regions() == 0, NotImplemented, "[oar.func.jvp] control flow that depends on tensor values "
              "('", op->name(), "') is not supported in forward mode; express the choice with oar.where");
    Tensors in, tin;
    bool any = false;
    for (size_t i = 0; i < op->num_operands(); ++i) {
      ir::Value* v = op->operand(i);
      if (!v) {
        in.push_back(Tensor()), tin.push_back(Tensor());
        continue;
      }
      auto found = env.find(v);
      OAR_CHECK(found != env.end(), Value, "[oar.func.jvp] operand ", i, " of op '", op->name(), "' is undefined");
      in.push_back(found->second.first);
      tin.push_back(found->second.second);
      any = any || found->second.second.defined();
    }
    Tensors out = call(op->def(), in, op->attrs());
    Tensors tout(out.size());
    if (any) {
      tout = tangents_of(op->def(), in, out, tin, op->attrs());
      tout.resize(out.size());
      for (size_t k = 0; k < out.size(); ++k)
        if (!differentiable(out[k])) tout[k] = Tensor();
    }
    for (size_t k = 0; k < out.size(); ++k) env[op->result(k)] = {out[k], tout[k]};
  }
  Tensors res, tres;
  for (const auto& o : p.outputs()) {
    auto found = env.find(o.value);
    OAR_CHECK(found != env.end(), Value, "[oar.func.jvp] output '", o.name, "' is undefined");
    res.push_back(found->second.first);
    tres.push_back(found->second.second.defined() ? found->second.second : ops::zeros_like(found->second.first));
  }
  for (Tensor& t : tres) res.push_back(t);
  return res;
}

}  // namespace oar

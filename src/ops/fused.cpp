// Fused ops: fused_linear_act, fused_attention, fused_elementwise
// (kernels/cpu/fused.cpp, kernels/cpu/fused_attention.cpp).
//
// Note [fused gradients]
// A fused op's gradient rule rebuilds the ops it replaces (a small list of
// nodes over its inputs), runs them forward with dispatch, and then walks the
// list backwards calling each op's own gradient rule. The gradient is thus
// exactly the unfused pattern's, and since every step is an op it is
// recorded when grad mode is on, so it differentiates again (higher order).
#include "ops/fused.h"
#include "tensor/autograd_meta.h"

#include <cmath>
#include <limits>

#include "ops/grad.h"
#include "ops/conv.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

const OpDef& op_named(const char* name) {
  const OpDef* d = find_op(name);
  OAR_CHECK(d && d->infer_meta, Runtime, "[oar.fused] internal: op '", name, "' is not registered");
  return *d;
}

// One op of a rebuilt pattern: its operands index the values list (the fused
// op's inputs, then extra constants, then each node's result in order).
struct Node {
  const OpDef* def;
  SmallVector<int, 3> args;
  Attrs attrs;
};

// Note [fused gradients]. `values` holds the fused op's inputs followed by
// constants the pattern reads (no gradient); returns one gradient per input.
Tensors composite_grad(const GradCtx& c, Tensors values, size_t n_inputs, std::span<const Node> nodes) {
  const size_t base = values.size();
  std::vector<char> need(base + nodes.size(), 0);
  for (size_t i = 0; i < n_inputs; ++i) need[i] = values[i].defined() && c.needs_grad(i);
  for (size_t k = 0; k < nodes.size(); ++k) {
    Tensors in;
    for (int a : nodes[k].args) {
      in.push_back(values[size_t(a)]);
      need[base + k] = need[base + k] || need[size_t(a)];
    }
    values.push_back(dispatch1(*nodes[k].def, std::span<const Tensor>(in.data(), in.size()), nodes[k].attrs));
  }
  std::vector<Tensor> adj(values.size());
  // The fused output may be broader than the rebuilt result (an input that
  // only broadcasts it); reduce the incoming gradient to the result's shape.
  Tensor g0 = c.grad(0);
  adj.back() = g0.shape() == values.back().shape() ? g0 : sum_to(g0, values.back().shape());
  for (size_t k = nodes.size(); k-- > 0;) {
    const size_t r = base + k;
    if (!need[r] || !adj[r].defined()) continue;
    const Node& n = nodes[k];
    Tensors in;
    bool needs[4] = {false, false, false, false};
    for (size_t j = 0; j < n.args.size(); ++j) {
      in.push_back(values[size_t(n.args[j])]);
      needs[j] = need[size_t(n.args[j])];
    }
    Tensor out[1] = {values[r]};
    Tensor g[1] = {adj[r]};
    TensorMeta meta[1] = {TensorMeta{values[r].shape(), values[r].dtype()}};
    GradCtx ctx;
    ctx.inputs = std::span<const Tensor>(in.data(), in.size());
    ctx.outputs = std::span<const Tensor>(out, 1);
    ctx.grads = std::span<Tensor>(g, 1);
    ctx.out_metas = std::span<const TensorMeta>(meta, 1);
    ctx.attrs = &n.attrs;
    ctx.needs = needs;
    Tensors gs = n.def->grad(ctx);
    for (size_t j = 0; j < n.args.size() && j < gs.size(); ++j) {
      if (!needs[j] || !gs[j].defined()) continue;
      Tensor& acc = adj[size_t(n.args[j])];
      acc = acc.defined() ? add(acc, gs[j]) : gs[j];
    }
  }
  Tensors r(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i)
    if (need[i]) r[i] = adj[i].defined() ? adj[i] : zeros_like(values[i]);
  return r;
}

void check_floating(const Tensor& t, const char* api, const char* what) {
  OAR_CHECK(is_floating(t.dtype()), Type, "[", api, "] ", what, " must be a floating-point tensor, got ",
            dtype_name(t.dtype()));
}

void check_same_dtype(const Tensor& t, const Tensor& like, const char* api, const char* what) {
  OAR_CHECK(t.dtype() == like.dtype(), Type, "[", api, "] ", what, " must have dtype ", dtype_name(like.dtype()),
            ", got ", dtype_name(t.dtype()));
}

// ---------------------------------------------------------------- fused_linear_act

struct Activation {
  const char* name;
  const char* op;
  bool approximate;  // gelu only
};
constexpr Activation kActivations[] = {
    {"relu", "relu", false}, {"gelu", "gelu", false}, {"gelu_tanh", "gelu", true},
    {"silu", "silu", false}, {"sigmoid", "sigmoid", false}, {"tanh", "tanh", false},
};
constexpr const char* kActivationNames[] = {"relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh"};

const Activation* find_activation(const std::string& name) {
  for (const Activation& a : kActivations)
    if (name == a.name) return &a;
  return nullptr;
}

Attrs activation_attrs(const Activation& a) {
  return std::string(a.op) == "gelu" ? Attrs{a.approximate} : Attrs{};
}

constexpr const char* kLinearApi = "oar.fused_linear_act";

// A program file may hold any operand and attribute lists: check their
// shape before reading them.
void check_arity(std::span<const Tensor> in, size_t n_in, const Attrs& a, std::initializer_list<size_t> kinds,
                 const char* api) {
  OAR_CHECK(in.size() == n_in, Value, "[", api, "] takes ", n_in, " inputs, got ", in.size());
  OAR_CHECK(a.size() == kinds.size(), Value, "[", api, "] takes ", kinds.size(), " attributes, got ", a.size());
  size_t k = 0;
  for (size_t kind : kinds) {
    OAR_CHECK(a[k].index() == kind, Type, "[", api, "] attribute ", k, " has the wrong type");
    ++k;
  }
}

// AttrValue alternatives, by index.
constexpr size_t kBool = 1, kDouble = 3, kString = 6;
static_assert(std::is_same_v<std::variant_alternative_t<kBool, AttrValue>, bool> &&
              std::is_same_v<std::variant_alternative_t<kDouble, AttrValue>, double> &&
              std::is_same_v<std::variant_alternative_t<kString, AttrValue>, std::string>);

Metas fused_linear_act_meta(std::span<const Tensor> in, const Attrs& a) {
  check_arity(in, 3, a, {kString}, kLinearApi);
  const Tensor &x = in[0], &w = in[1], &b = in[2];
  OAR_CHECK(find_activation(a.s(0)), Value, "[", kLinearApi, "] act must be one of relu, gelu, gelu_tanh, silu, "
            "sigmoid, tanh, got '", a.s(0), "'");
  OAR_CHECK(x.defined() && w.defined() && b.defined(), Value, "[", kLinearApi, "] x, weight and bias are required");
  check_floating(x, kLinearApi, "x");
  check_same_dtype(w, x, kLinearApi, "weight");
  check_same_dtype(b, x, kLinearApi, "bias");
  OAR_CHECK(w.dim() == 2, Value, "[", kLinearApi, "] weight must be 2-D [in, out], got shape ", shape_str(w.shape()));
  OAR_CHECK(x.dim() >= 1 && x.shape()[x.dim() - 1] == w.shape()[0], Value, "[", kLinearApi,
            "] x.shape[-1] must equal weight.shape[0] (", w.shape()[0], "), got x.shape ", shape_str(x.shape()));
  OAR_CHECK(b.dim() == 1 && b.shape()[0] == w.shape()[1], Value, "[", kLinearApi, "] bias must have shape [",
            w.shape()[1], "], got ", shape_str(b.shape()));
  Dims out = x.shape();
  out.back() = w.shape()[1];
  return {TensorMeta{out, x.dtype()}};
}

Tensors fused_linear_act_grad(const GradCtx& c) {
  const Activation& act = *find_activation(c.attr().s(0));
  Node nodes[2] = {{&op_named("linear"), {0, 1, 2}, Attrs{}}, {&op_named(act.op), {3}, activation_attrs(act)}};
  return composite_grad(c, Tensors{c.in(0), c.in(1), c.in(2)}, 3, nodes);
}

OpDef& kFusedLinearAct =
    OpBuilder("fused_linear_act").attrs({"act"}).meta(fused_linear_act_meta).grad(fused_linear_act_grad).amp(CastPolicy::Low);

// ---------------------------------------------------------------- fused_conv

constexpr const char* kConvApi = "oar.fused_conv";
constexpr size_t kInts = 7, kInt = 2;
static_assert(std::is_same_v<std::variant_alternative_t<kInts, AttrValue>, Dims> &&
              std::is_same_v<std::variant_alternative_t<kInt, AttrValue>, int64_t>);

// act(conv(x, w) + bias + residual). attrs: conv's five (strides, pads_l,
// pads_r, dilations, groups) and its `spatial` (empty), act ("" for none, a
// kActivations name, or "clip"), and clip's bounds lo, hi (+-inf for none).
Metas fused_conv_meta(std::span<const Tensor> in, const Attrs& a) {
  check_arity(in, 4, a, {kInts, kInts, kInts, kInts, kInt, kInts, kString, kDouble, kDouble}, kConvApi);
  const Tensor &x = in[0], &w = in[1], &b = in[2], &r = in[3];
  OAR_CHECK(x.defined() && w.defined(), Value, "[", kConvApi, "] x and weight are required");
  OAR_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::BFloat16, Type, "[", kConvApi,
            "] supports float32 and bfloat16, got ", dtype_name(x.dtype()));
  check_same_dtype(w, x, kConvApi, "weight");
  OAR_CHECK(x.dim() == 4, Value, "[", kConvApi, "] expects a 4-D input, got shape ", shape_str(x.shape()));
  OAR_CHECK(a.ints(5).empty(), Value, "[", kConvApi, "] spatial must be empty, got ", shape_str(a.ints(5)));
  const std::string& act = a.s(6);
  OAR_CHECK(act.empty() || act == "clip" || find_activation(act), Value, "[", kConvApi,
            "] act must be empty, clip, relu, gelu, gelu_tanh, silu, sigmoid or tanh, got '", act, "'");
  OAR_CHECK(!(a.f(7) > a.f(8)) && !std::isnan(a.f(7)) && !std::isnan(a.f(8)), Value, "[", kConvApi,
            "] clip bounds must be ordered numbers, got ", a.f(7), " and ", a.f(8));
  Dims out = conv_output_shape(x.shape(), w.shape(), conv_params(a), kConvApi);
  if (b.defined()) {
    check_same_dtype(b, x, kConvApi, "bias");
    // One value per output channel, broadcasting along dim 1: [O], [O, 1, 1] or [1, O, 1, 1].
    bool channel = b.numel() == out[1] && b.dim() <= 4;
    for (int64_t d = 0; channel && d < b.dim(); ++d)
      channel = b.shape()[d] == (d == b.dim() - 3 ? out[1] : 1) || (b.dim() == 1 && b.shape()[0] == out[1]);
    OAR_CHECK(channel, Value, "[", kConvApi, "] bias must hold one value per output channel ([", out[1], "], [",
              out[1], ", 1, 1] or [1, ", out[1], ", 1, 1]), got shape ", shape_str(b.shape()));
  }
  if (r.defined()) {
    check_same_dtype(r, x, kConvApi, "residual");
    OAR_CHECK(r.shape() == out, Value, "[", kConvApi, "] residual must have the output's shape ", shape_str(out),
              ", got ", shape_str(r.shape()));
  }
  return {TensorMeta{out, x.dtype()}};
}

Tensors fused_conv_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  const Tensor &b = c.in(2), &r = c.in(3);
  // values: x, w, bias, residual, [bias as [O, 1, 1]], [clip bounds], then the nodes' results
  Tensors values{c.in(0), c.in(1), b, r};
  const std::string& act = a.s(6);
  // clip's bounds; an absent one is an undefined operand of the rebuilt clip
  int lo = -1, hi = -1;
  if (act == "clip") {
    values.push_back(Tensor());
    lo = hi = int(values.size()) - 1;
    if (std::isfinite(a.f(7))) {
      values.push_back(scalar_tensor(Scalar(a.f(7)), c.in(0).dtype()));
      lo = int(values.size()) - 1;
    }
    if (std::isfinite(a.f(8))) {
      values.push_back(scalar_tensor(Scalar(a.f(8)), c.in(0).dtype()));
      hi = int(values.size()) - 1;
    }
  }
  const int base = int(values.size());
  std::vector<Node> nodes;
  auto last = [&] { return base + int(nodes.size()) - 1; };
  int bias = 2;
  if (b.defined() && b.dim() == 1) {  // [O] broadcasts along the channels as [O, 1, 1]
    nodes.push_back({&op_named("reshape"), {2}, Attrs{Dims{b.numel(), 1, 1}}});
    bias = last();
  }
  nodes.push_back({&op_named("conv"), {0, 1}, conv_attrs(conv_params(a))});
  const int conv_out = last();
  if (b.defined()) nodes.push_back({&op_named("add"), {conv_out, bias}, Attrs{}});
  if (r.defined()) nodes.push_back({&op_named("add"), {last(), 3}, Attrs{}});
  if (act == "clip") {
    nodes.push_back({&op_named("clip"), {last(), lo, hi}, Attrs{}});
  } else if (!act.empty()) {
    const Activation& f = *find_activation(act);
    nodes.push_back({&op_named(f.op), {last()}, activation_attrs(f)});
  }
  return composite_grad(c, values, 4, nodes);
}

OpDef& kFusedConv = OpBuilder("fused_conv")
                        .attrs({"strides", "pads_l", "pads_r", "dilations", "groups", "spatial", "act", "lo", "hi"})
                        .optional({2, 3})
                        .meta(fused_conv_meta)
                        .grad(fused_conv_grad);

// ---------------------------------------------------------------- fused_attention

constexpr const char* kAttnApi = "oar.fused_attention";

Metas fused_attention_meta(std::span<const Tensor> in, const Attrs& a) {
  check_arity(in, 4, a, {kDouble, kBool}, kAttnApi);
  const Tensor &q = in[0], &k = in[1], &v = in[2], &mask = in[3];
  OAR_CHECK(q.defined() && k.defined() && v.defined(), Value, "[", kAttnApi, "] q, k and v are required");
  check_floating(q, kAttnApi, "q");
  check_same_dtype(k, q, kAttnApi, "k");
  check_same_dtype(v, q, kAttnApi, "v");
  OAR_CHECK(q.dim() >= 2 && k.dim() == q.dim() && v.dim() == q.dim(), Value, "[", kAttnApi,
            "] q, k and v must have the same rank (at least 2), got shapes ", shape_str(q.shape()), ", ",
            shape_str(k.shape()), " and ", shape_str(v.shape()));
  const int64_t nd = q.dim();
  const Dims lead(q.shape().begin(), q.shape().end() - 2);
  OAR_CHECK(Dims(k.shape().begin(), k.shape().end() - 2) == lead &&
                Dims(v.shape().begin(), v.shape().end() - 2) == lead,
            Value, "[", kAttnApi, "] q, k and v must have the same leading dims, got shapes ", shape_str(q.shape()),
            ", ", shape_str(k.shape()), " and ", shape_str(v.shape()));
  const int64_t lq = q.shape()[nd - 2], d = q.shape()[nd - 1], lk = k.shape()[nd - 2];
  OAR_CHECK(k.shape()[nd - 1] == d, Value, "[", kAttnApi, "] k.shape[-1] (", k.shape()[nd - 1],
            ") must equal q.shape[-1] (", d, ")");
  OAR_CHECK(v.shape()[nd - 2] == lk, Value, "[", kAttnApi, "] v.shape[-2] (", v.shape()[nd - 2],
            ") must equal k.shape[-2] (", lk, ")");
  OAR_CHECK(std::isfinite(a.f(0)), Value, "[", kAttnApi, "] scale must be finite, got ", a.f(0));
  Dims scores = lead;
  scores.push_back(lq);
  scores.push_back(lk);
  if (mask.defined()) {
    check_same_dtype(mask, q, kAttnApi, "mask");
    OAR_CHECK(mask.dim() <= nd, Value, "[", kAttnApi, "] mask of shape ", shape_str(mask.shape()),
              " has more dims than the scores ", shape_str(scores));
    OAR_CHECK(broadcast_shapes(mask.shape(), scores, kAttnApi) == scores, Value, "[", kAttnApi, "] mask of shape ",
              shape_str(mask.shape()), " does not broadcast to the scores' shape ", shape_str(scores));
  }
  Dims out = lead;
  out.push_back(lq);
  out.push_back(v.shape()[nd - 1]);
  return {TensorMeta{out, q.dtype()}};
}

// The additive causal mask [Lq, Lk] on `device`: 0 where key j <= query i,
// -inf elsewhere (written on the host, then copied).
Tensor causal_mask(int64_t lq, int64_t lk, DType dtype, Device device) {
  Tensor m = empty_tensor(Dims{lq, lk}, DType::Float64);
  double* p = m.data<double>();
  for (int64_t i = 0; i < lq; ++i)
    for (int64_t j = 0; j < lk; ++j) p[i * lk + j] = j <= i ? 0.0 : -std::numeric_limits<double>::infinity();
  return to_device(cast(m, dtype), device);
}

// fused_attention_grad(q, k, v, mask, dout) -> (dq, dk, dv): the first-order
// gradient in one pass (Note [attention backward] in the CPU kernel).
Metas fused_attention_grad_meta(std::span<const Tensor> in, const Attrs& a) {
  const TensorMeta out = fused_attention_meta(in.first(4), a)[0];
  OAR_CHECK(in[4].defined() && in[4].dtype() == out.dtype && in[4].shape() == out.shape, Value, "[", kAttnApi,
            "] the output gradient must have the output's shape ", shape_str(out.shape), " and dtype ",
            dtype_name(out.dtype), ", got ", in[4].defined() ? shape_str(in[4].shape()) : "none",
            in[4].defined() ? std::string(" ") + dtype_name(in[4].dtype()) : "");
  return {TensorMeta{in[0].shape(), in[0].dtype()}, TensorMeta{in[1].shape(), in[0].dtype()},
          TensorMeta{in[2].shape(), in[0].dtype()}};
}

OpDef& kFusedAttentionGrad = OpBuilder("fused_attention_grad").attrs({"scale", "causal"}).optional({3})
                                 .meta(fused_attention_grad_meta).saves(false, false).spmd("fused_attention_grad");

// The gradient through the rebuilt pattern (matmul, scale, masks, softmax,
// matmul): differentiable again, and the route of devices without the fused
// backward kernel (fused_attention_grad_by_ops).
Tensors attention_grad_composite(const GradCtx& c) {
  const Tensor &q = c.in(0), &k = c.in(1), &mask = c.in(3);
  const int64_t nd = q.dim();
  const bool causal = c.attr().b(1);
  // values: q, k, v, mask, scale, [causal mask], then the nodes' results
  Tensors values{q, k, c.in(2), mask, scalar_tensor(Scalar(c.attr().f(0)), q.dtype())};
  if (causal) values.push_back(causal_mask(q.shape()[nd - 2], k.shape()[nd - 2], q.dtype(), q.device()));
  const int base = int(values.size());
  std::vector<Node> nodes;
  auto last = [&] { return base + int(nodes.size()) - 1; };
  nodes.push_back({&op_named("matmul"), {0, 1}, Attrs{false, true}});
  nodes.push_back({&op_named("multiply"), {last(), 4}, Attrs{}});
  if (mask.defined()) nodes.push_back({&op_named("add"), {last(), 3}, Attrs{}});
  if (causal) nodes.push_back({&op_named("add"), {last(), 5}, Attrs{}});
  nodes.push_back({&op_named("softmax"), {last()}, Attrs{nd - 1}});
  nodes.push_back({&op_named("matmul"), {last(), 2}, Attrs{false, false}});
  return composite_grad(c, values, 4, nodes);
}

Tensors fused_attention_grad(const GradCtx& c) {
  const Tensor &q = c.in(0), &mask = c.in(3);
  // The fused kernel serves first-order gradients that need nothing for the
  // mask; a gradient of the gradient, or of the mask, is the composite's.
  if (!grad_enabled() && !(mask.defined() && c.needs_grad(3)) &&
      kFusedAttentionGrad.kernels[int(q.device().type)][int(q.dtype())]) {
    Tensor g = c.grad(0);
    Tensor in[5] = {q, c.in(1), c.in(2), mask, g.dtype() == q.dtype() ? g : cast(g, q.dtype())};
    Tensors r = dispatch(kFusedAttentionGrad, in, c.attr());
    r.resize(4);
    for (size_t i = 0; i < 3; ++i)
      if (!c.needs_grad(i)) r[i] = Tensor();
    return r;
  }
  return attention_grad_composite(c);
}

OpDef& kFusedAttention = OpBuilder("fused_attention").attrs({"scale", "causal"}).optional({3}).meta(fused_attention_meta)
                             .grad(fused_attention_grad).spmd("fused_attention").amp(CastPolicy::Low);

// ---------------------------------------------------------------- fused_elementwise

struct ElementwiseOp {
  const char* op;
  int arity;
  int approximate;  // gelu: the value of its attribute; -1 for ops without attributes
};
// Note [fused elementwise program]: append only.
constexpr ElementwiseOp kElementwiseOps[] = {
    {"add", 2, -1},       {"subtract", 2, -1}, {"multiply", 2, -1}, {"divide", 2, -1},   {"maximum", 2, -1},
    {"minimum", 2, -1},   {"pow", 2, -1},      {"neg", 1, -1},      {"exp", 1, -1},      {"log", 1, -1},
    {"sqrt", 1, -1},      {"rsqrt", 1, -1},    {"square", 1, -1},   {"reciprocal", 1, -1}, {"sin", 1, -1},
    {"cos", 1, -1},       {"tanh", 1, -1},     {"sigmoid", 1, -1},  {"erf", 1, -1},      {"abs", 1, -1},
    {"relu", 1, -1},      {"silu", 1, -1},     {"gelu", 1, 0},      {"gelu", 1, 1},      {"expm1", 1, -1},
    {"log1p", 1, -1},
};
constexpr int kNumElementwiseOps = int(std::size(kElementwiseOps));
static_assert(kNumElementwiseOps == int(EwCode::kCount), "the kernels' codes (fused.h) must follow this table");

Attrs elementwise_attrs(int code) {
  const ElementwiseOp& e = kElementwiseOps[code];
  return e.approximate < 0 ? Attrs{} : Attrs{e.approximate == 1};
}

constexpr const char* kEwApi = "oar.fused_elementwise";

Metas fused_elementwise_meta(std::span<const Tensor> in, const Attrs& a) {
  OAR_CHECK(a.size() == 1 && std::holds_alternative<Dims>(a[0]), Value, "[", kEwApi,
            "] takes one attribute, the program (a list of ints)");
  const Dims& prog = a.ints(0);
  OAR_CHECK(!in.empty(), Value, "[", kEwApi, "] needs at least one input");
  const int64_t n_in = int64_t(in.size());
  OAR_CHECK(!prog.empty() && prog.size() % 3 == 0, Value, "[", kEwApi,
            "] the program must be a non-empty list of (code, a, b) triples, got ", prog.size(), " ints");
  DType dt = DType::Float32;
  Dims shape;
  for (size_t i = 0; i < in.size(); ++i) {
    OAR_CHECK(in[i].defined(), Value, "[", kEwApi, "] input ", i, " is undefined");
    if (i == 0) dt = in[i].dtype();
    check_floating(in[i], kEwApi, "every input");
    OAR_CHECK(in[i].dtype() == dt, Type, "[", kEwApi, "] every input must have dtype ", dtype_name(dt), ", input ", i,
              " has ", dtype_name(in[i].dtype()));
  }
  // Inputs broadcast to the output shape (evaluating every op of the tree at
  // the broadcast shape gives the tree's result: elementwise ops commute
  // with broadcasting).
  for (const Tensor& t : in) shape = t.shape() == shape ? shape : broadcast_shapes(shape, t.shape(), kEwApi);
  for (size_t k = 0; k < prog.size() / 3; ++k) {
    const int64_t code = prog[3 * k], x = prog[3 * k + 1], y = prog[3 * k + 2];
    const int64_t regs = n_in + int64_t(k);
    OAR_CHECK(code >= 0 && code < kNumElementwiseOps, Value, "[", kEwApi, "] instruction ", k, " has unknown code ",
              code);
    const int arity = kElementwiseOps[code].arity;
    OAR_CHECK(x >= 0 && x < regs && (arity == 1 ? y == -1 : (y >= 0 && y < regs)), Value, "[", kEwApi,
              "] instruction ", k, " reads registers (", x, ", ", y, "); it may read only the ", n_in,
              " inputs and earlier results", arity == 1 ? ", and its second operand must be -1" : "");
  }
  return {TensorMeta{shape, dt}};
}

// The ops of a fused_elementwise program, as composite_grad's nodes.
std::vector<Node> elementwise_nodes(const Dims& prog) {
  std::vector<Node> nodes;
  for (size_t k = 0; k < prog.size() / 3; ++k) {
    const int code = int(prog[3 * k]);
    Node n{&op_named(kElementwiseOps[code].op), {int(prog[3 * k + 1])}, elementwise_attrs(code)};
    if (kElementwiseOps[code].arity == 2) n.args.push_back(int(prog[3 * k + 2]));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Tensors fused_elementwise_grad(const GradCtx& c) {
  std::vector<Node> nodes = elementwise_nodes(c.attr().ints(0));
  Tensors values(c.inputs.begin(), c.inputs.end());
  return composite_grad(c, values, values.size(), nodes);
}

OpDef& kFusedElementwise =
    OpBuilder("fused_elementwise").attrs({"program"}).meta(fused_elementwise_meta).grad(fused_elementwise_grad);

// ---------------------------------------------------------------- fused_reduce

constexpr const char* kRdApi = "oar.fused_reduce";
// ReduceKind's order (compiler/codegen_cpu.h): the reduction ops by kind.
constexpr const char* kReduceOps[] = {"sum", "mean", "amax", "amin"};

// attrs: program, kind, axes (of the inputs' broadcast shape), keepdim.
Metas fused_reduce_meta(std::span<const Tensor> in, const Attrs& a) {
  OAR_CHECK(a.size() == 4 && std::holds_alternative<Dims>(a[0]) && std::holds_alternative<int64_t>(a[1]) &&
                std::holds_alternative<Dims>(a[2]) && std::holds_alternative<bool>(a[3]),
            Value, "[", kRdApi, "] takes the attributes (program, kind, axes, keepdim)");
  Metas m = fused_elementwise_meta(in, Attrs{a.ints(0)});
  const Dims& shape = m[0].shape;
  // Each register's shape: the program's result must span the whole broadcast
  // shape, which the axes index.
  const Dims& prog = a.ints(0);
  std::vector<Dims> regs;
  for (const Tensor& t : in) regs.push_back(t.shape());
  for (size_t k = 0; k < prog.size() / 3; ++k) {
    Dims r = regs[size_t(prog[3 * k + 1])];
    if (prog[3 * k + 2] >= 0) r = broadcast_shapes(r, regs[size_t(prog[3 * k + 2])], kRdApi);
    regs.push_back(r);
  }
  OAR_CHECK(regs.back() == shape, Value, "[", kRdApi, "] the program's result must have the inputs' broadcast shape ",
            shape_str(shape), ", got ", shape_str(regs.back()));
  const int64_t kind = a.i(1);
  OAR_CHECK(kind >= 0 && kind < int64_t(std::size(kReduceOps)), Value, "[", kRdApi, "] kind must be 0-3 (sum, mean, amax, amin), got ", kind);
  const Dims& axes = a.ints(2);
  for (size_t i = 0; i < axes.size(); ++i)
    OAR_CHECK(axes[i] >= 0 && axes[i] < int64_t(shape.size()) && (i == 0 || axes[i] > axes[i - 1]), Value, "[",
              kRdApi, "] axes must be sorted, distinct dims of the broadcast shape ", shape_str(shape), ", got ",
              shape_str(axes));
  return {TensorMeta{reduced_shape(shape, axes, a.b(3)), m[0].dtype}};
}

// The attributes of fused_reduce's reduction op (axes, keepdim, dtype).
Attrs reduce_attrs(const Attrs& a, DType dt) { return Attrs{a.ints(2), a.b(3), dt}; }

Tensors fused_reduce_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  std::vector<Node> nodes = elementwise_nodes(a.ints(0));
  const int last = int(c.inputs.size() + nodes.size()) - 1;
  nodes.push_back(Node{&op_named(kReduceOps[a.i(1)]), {last}, reduce_attrs(a, c.inputs[0].dtype())});
  Tensors values(c.inputs.begin(), c.inputs.end());
  return composite_grad(c, values, values.size(), nodes);
}

OpDef& kFusedReduce =
    OpBuilder("fused_reduce").attrs({"program", "kind", "axes", "keepdim"}).meta(fused_reduce_meta).grad(fused_reduce_grad);

}  // namespace

namespace ops {

Tensor fused_conv(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& residual, const ConvParams& p,
                  const std::string& act, double lo, double hi) {
  Tensor in[4] = {contiguous(x), contiguous(w), bias.defined() ? contiguous(bias) : bias,
                  residual.defined() ? contiguous(residual) : residual};
  Attrs a = conv_attrs(p);
  a.push_back(act);
  a.push_back(lo);
  a.push_back(hi);
  return dispatch1(kFusedConv, in, a);
}

Tensor fused_linear_act(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& act) {
  Tensor in[3] = {x, w, b};
  return dispatch1(kFusedLinearAct, in, Attrs{act});
}

std::span<const char* const> fused_linear_activations() { return kActivationNames; }

std::string activation_of(const OpDef& def, const Attrs& attrs) {
  for (const Activation& a : kActivations) {
    if (def.name != a.op) continue;
    if (def.name == "gelu" && (attrs.size() != 1 || attrs.b(0) != a.approximate)) continue;
    return a.name;
  }
  return "";
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                       bool causal) {
  Tensor in[4] = {q, k, v, mask};
  return dispatch1(kFusedAttention, in, Attrs{scale, causal});
}

Tensor fused_elementwise(std::span<const Tensor> inputs, const Dims& program) {
  return dispatch1(kFusedElementwise, inputs, Attrs{program});
}

Tensor fused_reduce(std::span<const Tensor> inputs, const Dims& program, int64_t kind, const Dims& axes,
                    bool keepdim) {
  return dispatch1(kFusedReduce, inputs, Attrs{program, kind, axes, keepdim});
}

void fused_reduce_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  NoGradGuard no_grad;  // (called as a kernel: below autograd, nothing to record)
  Tensor v[1] = {fused_elementwise(in, a.ints(0))};
  copy_(out[0], dispatch1(op_named(kReduceOps[a.i(1)]), v, reduce_attrs(a, v[0].dtype())));
}

void fused_attention_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  NoGradGuard no_grad;  // (called as a kernel: below autograd, nothing to record)
  // In float32 for 16-bit inputs, as the CPU kernel accumulates.
  const bool low = in[0].dtype() == DType::Float16 || in[0].dtype() == DType::BFloat16;
  auto up = [&](const Tensor& t) { return low && t.defined() ? cast(t, DType::Float32) : t; };
  Tensor inputs[4] = {up(in[0]), up(in[1]), up(in[2]), up(in[3])};
  Tensor outputs[1] = {};
  Tensor grads[1] = {up(in[4])};
  TensorMeta metas[1] = {TensorMeta{in[4].shape(), grads[0].dtype()}};
  const bool needs[4] = {true, true, true, false};
  GradCtx c;
  c.inputs = std::span<const Tensor>(inputs, 4);
  c.outputs = std::span<const Tensor>(outputs, 0);
  c.grads = std::span<Tensor>(grads, 1);
  c.out_metas = std::span<const TensorMeta>(metas, 1);
  c.attrs = &a;
  c.needs = needs;
  Tensors r = attention_grad_composite(c);
  for (size_t i = 0; i < 3; ++i) copy_(out[i], low ? cast(r[i], in[0].dtype()) : r[i]);
}

const char* reduce_op_of(int64_t kind) {
  return kind >= 0 && kind < int64_t(std::size(kReduceOps)) ? kReduceOps[kind] : nullptr;
}

int elementwise_code(const OpDef& def, const Attrs& attrs) {
  for (int c = 0; c < kNumElementwiseOps; ++c) {
    const ElementwiseOp& e = kElementwiseOps[c];
    if (def.name != e.op) continue;
    if (e.approximate >= 0 && (attrs.size() != 1 || attrs.b(0) != (e.approximate == 1))) continue;
    return c;
  }
  return -1;
}

int elementwise_arity(int code) { return code >= 0 && code < kNumElementwiseOps ? kElementwiseOps[code].arity : 0; }

}  // namespace ops
}  // namespace oar

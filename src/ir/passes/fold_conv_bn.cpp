// conv + inference batch_norm folding (see passes.h for why this is for
// inference programs only).
//
// With s = gamma / sqrt(var + eps) per output channel,
//   bn(conv(x, W) + b) = conv(x, W * s) + ((b - mean) * s + beta),
// so the normalisation disappears from the program. The folded tensors are
// computed in float64 from the bound parameters and cast back.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tensor/autograd_meta.h"
#include "ir/passes/passes.h"
#include "ops/ops.h"

namespace oar::ir {

namespace {

struct ConvBnFolder {
  Program& p;
  std::vector<Tensor>& bindings;
  std::unordered_map<const Value*, size_t> param_index;
  ConstantAdder adder;

  // The bound tensor of `v` if it is a program parameter, viewed with v's
  // shape through a reshape of a parameter if need be.
  std::optional<Tensor> bound(Value* v) {
    if (!v) return std::nullopt;
    auto it = param_index.find(v);
    if (it != param_index.end()) {
      const Tensor& t = bindings[it->second];
      if (!t.defined() || Type::of(t) != v->type()) return std::nullopt;
      return t;
    }
    Operation* op = v->defining_op();
    if (op && op->name() == "reshape" && op->num_regions() == 0 && op->num_operands() == 1) {
      std::optional<Tensor> src = bound(op->operand(0));
      int64_t n = 1;
      for (int64_t d : v->type().shape) n *= d;
      if (src && src->numel() == n) {
        NoGradGuard ng;
        return ops::reshape(detach(*src), v->type().shape);
      }
    }
    return std::nullopt;
  }

  bool fold_block(Block& b) {
    bool changed = false;
    const OpDef& add_def = *find_op("add");
    for (auto it = b.begin(); it != b.end();) {
      Operation* bn = it->get();
      ++it;
      if (bn->name() != "batch_norm" || bn->num_regions() != 0 || bn->num_operands() != 5) continue;
      const Attrs& a = bn->attrs();
      if (a.i(0) != 1 || a.b(2)) continue;  // channels on axis 1, running statistics
      if (bn->result(1)->has_uses() || bn->result(2)->has_uses()) continue;
      Value* h = bn->operand(0);
      if (!h || h->uses().size() != 1 || !h->uses()[0].op) continue;
      Operation* hop = h->defining_op();
      if (!hop || hop->parent() != &b || hop->num_regions() != 0) continue;
      Operation* add = nullptr;
      Operation* conv = hop;
      std::optional<Tensor> bias;
      if (hop->name() == "add") {
        add = hop;
        conv = nullptr;
        for (int side = 0; side < 2 && !conv; ++side) {
          Value* cv = add->operand(size_t(side));
          Operation* c = cv ? cv->defining_op() : nullptr;
          if (!c || c->name() != "conv" || c->parent() != &b || cv->uses().size() != 1) continue;
          bias = bound(add->operand(size_t(1 - side)));
          if (bias) conv = c;
        }
        if (!conv) continue;
      }
      if (conv->name() != "conv" || conv->num_regions() != 0 || conv->example_shapes()) continue;
      const Type& ot = conv->result(0)->type();
      if (ot != h->type() || ot.shape.size() < 3) continue;
      std::optional<Tensor> w = bound(conv->operand(1));
      std::optional<Tensor> gamma = bound(bn->operand(1)), beta = bound(bn->operand(2));
      std::optional<Tensor> mean = bound(bn->operand(3)), var = bound(bn->operand(4));
      if (!w || !gamma || !beta || !mean || !var) continue;
      const DType dt = ot.dtype;
      const int64_t C = w->shape()[0];
      if (w->dtype() != dt || gamma->dtype() != dt || mean->dtype() != dt || gamma->numel() != C) continue;
      Dims cshape(ot.shape.size(), 1);  // [1, C, 1, ...]
      cshape[1] = C;
      if (bias && (bias->dtype() != dt || bias->numel() != C)) continue;
      Tensor w2, b2;
      try {
        NoGradGuard ng;  // constants: no graph
        auto f64 = [](const Tensor& t) { return ops::cast(detach(t), DType::Float64); };
        Tensor s = ops::divide(f64(*gamma),
                               ops::sqrt(ops::binary_scalar("add", f64(*var), Scalar(a.f(1)), false)));
        Dims wshape(size_t(w->dim()), 1);
        wshape[0] = C;
        w2 = ops::cast(ops::multiply(f64(*w), ops::reshape(s, wshape)), dt);
        Tensor b0 = bias ? ops::reshape(f64(*bias), Dims{C}) : ops::zeros(Dims{C}, DType::Float64);
        b2 = ops::cast(ops::add(ops::multiply(ops::subtract(b0, f64(*mean)), s), f64(*beta)), dt);
        b2 = ops::contiguous(ops::reshape(b2, cshape));
      } catch (const Error&) {
        continue;
      }
      Value* wc = adder.add(w2);
      Value* bc = adder.add(b2);
      std::vector<Value*> conv_in{conv->operand(0), wc};
      Operation* nconv = b.insert(it, conv->def(), conv_in, conv->attrs(), std::span<const Type>(&ot, 1));
      std::vector<Value*> add_in{nconv->result(0), bc};
      const Type& yt = bn->result(0)->type();
      Operation* nadd = b.insert(it, add_def, add_in, Attrs{}, std::span<const Type>(&yt, 1));
      bn->result(0)->replace_all_uses_with(nadd->result(0));
      b.erase(bn);
      if (add) b.erase(add);
      b.erase(conv);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

bool fold_conv_batch_norm(Program& p, std::vector<Tensor>& bindings) {
  OAR_CHECK(bindings.size() == p.parameters().size(), Value, "[oar.ir.passes] conv + batch-norm folding needs one "
            "tensor per program parameter (", p.parameters().size(), "), got ", bindings.size());
  ConvBnFolder f{p, bindings, {}, ConstantAdder(p, bindings)};
  for (size_t i = 0; i < p.parameters().size(); ++i) f.param_index[p.parameters()[i].value] = i;
  // Only the top block: the new constants are arguments of it.
  return f.fold_block(p.body());
}

}  // namespace oar::ir

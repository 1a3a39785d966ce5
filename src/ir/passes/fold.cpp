// Constant folding: ops over auto-named constants run once, eagerly, and
// their results become new constants (see passes.h for why the pass takes
// the parameters' bindings).
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tensor/autograd_meta.h"
#include "ir/passes/passes.h"
#include "ops/dispatch.h"

namespace oar::ir {

namespace {

// Ops with no tensor operands (full, arange, ...; the tracer records a
// Python scalar operand as a `full`) are constant sources: folding them on
// their own would only trade a cheap op for a tensor the program has to
// carry, so they are evaluated only when an op that reads them folds, and
// dropped once nothing reads them.
bool pure(const Operation& op) {
  return !op.def().traits.random && !op.def().traits.side_effect && op.num_regions() == 0 && op.num_results() > 0;
}

bool is_source(const Operation& op) {
  if (!pure(op)) return false;
  for (Value* v : op.operands())
    if (v) return false;
  return true;
}

struct Folder {
  Program& p;
  std::vector<Tensor>& bindings;
  std::unordered_map<const Value*, size_t> constants;  // constant parameter -> index into bindings
  std::unordered_map<const Value*, Tensor> source_values;  // evaluated results of source ops
  std::vector<Operation*> evaluated_sources;
  ConstantAdder adder;

  static bool is_constant_source_value(const Value* v) {
    return v->defining_op() && is_source(*v->defining_op());
  }

  bool foldable(const Operation& op) const {
    if (!pure(op)) return false;
    bool any = false;
    for (Value* v : op.operands()) {
      if (!v) continue;  // an undefined optional input
      if (!constants.count(v) && !is_constant_source_value(v)) return false;
      any = true;
    }
    return any;
  }

  // Runs `op` on `in`; empty when it fails or its results do not have the
  // recorded types (dynamic or example shapes would make the users' recorded
  // types disagree with a constant).
  static std::optional<Tensors> evaluate(const Operation& op, const Tensors& in) {
    // Folding trades run time for memory held by the program: results that
    // are large (or of unknown size) stay ops. This also bounds what a
    // program file can make the loader allocate (the runtime folds on load).
    for (size_t i = 0; i < op.num_results(); ++i) {
      const Type& t = op.result(i)->type();
      int64_t bytes = int64_t(itemsize(t.dtype));
      for (int64_t d : t.shape)
        if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxFoldedBytes) return std::nullopt;
    }
    Tensors out;
    try {
      NoGradGuard ng;  // constants are not trained; the folded value needs no graph
      out = run_eager(op.def(), std::span<const Tensor>(in.data(), in.size()), op.attrs());
    } catch (const Error&) {
      return std::nullopt;  // e.g. no kernel for this dtype: leave it to fail (or not) at run time
    }
    if (out.size() != op.num_results()) return std::nullopt;
    for (size_t i = 0; i < out.size(); ++i)
      if (!out[i].defined() || Type::of(out[i]) != op.result(i)->type()) return std::nullopt;
    return out;
  }

  std::optional<Tensor> value_of(Value* v) {
    auto c = constants.find(v);
    if (c != constants.end()) return bindings[c->second];
    auto s = source_values.find(v);
    if (s != source_values.end()) return s->second;
    Operation* src = v->defining_op();
    std::optional<Tensors> out = evaluate(*src, Tensors{});
    if (!out) return std::nullopt;
    for (size_t i = 0; i < out->size(); ++i) source_values[src->result(i)] = (*out)[i];
    evaluated_sources.push_back(src);
    return source_values.at(v);
  }

  bool fold(Operation& op) {
    Tensors in;
    for (Value* v : op.operands()) {
      if (!v) {
        in.push_back(Tensor());
        continue;
      }
      std::optional<Tensor> t = value_of(v);
      if (!t) return false;
      in.push_back(*t);
    }
    std::optional<Tensors> out = evaluate(op, in);
    if (!out) return false;
    for (size_t i = 0; i < out->size(); ++i) {
      Value* c = adder.add((*out)[i]);
      constants[c] = bindings.size() - 1;
      op.result(i)->replace_all_uses_with(c);
    }
    op.parent()->erase(&op);
    return true;
  }

  // Source ops that fed folded ops and that nothing else reads.
  void drop_unused_sources() {
    for (Operation* src : evaluated_sources) {
      bool used = false;
      for (size_t i = 0; i < src->num_results(); ++i) used = used || src->result(i)->has_uses();
      if (!used) src->parent()->erase(src);
    }
    evaluated_sources.clear();
  }

  bool fold_block(Block& b) {
    bool changed = false;
    for (auto it = b.begin(); it != b.end();) {
      Operation* op = it->get();
      ++it;  // folding erases `op`; `it` stays valid
      for (size_t r = 0; r < op->num_regions(); ++r) changed = fold_block(op->region(r)) || changed;
      if (foldable(*op)) changed = fold(*op) || changed;
    }
    return changed;
  }

  bool drop_unused_constants() {
    bool changed = false;
    for (size_t i = p.parameters().size(); i-- > 0;) {
      const NamedValue& n = p.parameters()[i];
      if (!n.constant || n.value->has_uses()) continue;
      p.erase_parameter(i);
      bindings.erase(bindings.begin() + std::ptrdiff_t(i));
      changed = true;
    }
    return changed;
  }
};

}  // namespace

bool constant_folding(Program& p, std::vector<Tensor>& bindings) {
  OAR_CHECK(bindings.size() == p.parameters().size(), Value, "[oar.ir.passes] constant folding needs one tensor per "
            "program parameter (", p.parameters().size(), "), got ", bindings.size());
  Folder f{p, bindings, {}, {}, {}, ConstantAdder(p, bindings)};
  for (size_t i = 0; i < p.parameters().size(); ++i) {
    const NamedValue& n = p.parameters()[i];
    if (n.constant) {
      OAR_CHECK(bindings[i].defined(), Value, "[oar.ir.passes] constant '", n.name, "' is bound to no tensor");
      // A captured tensor that requires grad (a layer's weight read through a
      // closure) is trained: folding it would bake in its value and cut its
      // gradient.
      if (!bindings[i].requires_grad()) f.constants[n.value] = i;
    }
  }
  bool changed = f.fold_block(p.body());
  f.drop_unused_sources();
  changed = f.drop_unused_constants() || changed;
  return changed;
}

}  // namespace oar::ir

// Pattern fusions (see passes.h): linear + activation, attention,
// hand-written softmax and layer norm, and elementwise chains. Each pass walks every block (regions included) in
// order; a pattern is matched from its last op, and the fused op is inserted
// right after that op, where every operand of the pattern is defined and
// before every user of its result.
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/passes/passes.h"
#include "ops/fused.h"

namespace oar::ir {

namespace {

const OpDef& def_of(const char* name) {
  const OpDef* d = find_op(name);
  OAR_CHECK(d, Runtime, "[oar.ir.passes] internal: op '", name, "' is not registered");
  return *d;
}

// An op that a pattern may absorb: no regions, one result, types derived
// from its operands (not kept from the example run).
bool plain(const Operation* op) {
  return op && op->num_regions() == 0 && op->num_results() == 1 && !op->example_shapes();
}

// The op defining `v` if it is a plain op named `name` in block `b`.
Operation* producer(Value* v, const char* name, const Block* b) {
  if (!v) return nullptr;
  Operation* op = v->defining_op();
  return plain(op) && op->name() == name && op->parent() == b ? op : nullptr;
}

// `v` is read by exactly one op (and is no block's yield).
bool single_use(const Value* v) { return v->uses().size() == 1 && v->uses()[0].op; }

// The value of a 0-D `full` (a traced Python scalar), if `v` is one.
bool scalar_value(Value* v, double* out) {
  Operation* op = v ? v->defining_op() : nullptr;
  if (!op || op->name() != "full" || op->num_operands() != 0 || !v->type().shape.empty()) return false;
  if (!is_floating(v->type().dtype)) return false;
  const AttrValue& a = op->attrs()[1];
  if (std::holds_alternative<std::complex<double>>(a)) return false;
  *out = ops::attr_scalar(a).d;
  return true;
}

// Inserts the fused op after `root`, points root's users at its result and
// erases root and then `dead` (each must be unused by then, so in reverse
// order of definition). Returns false, changing nothing, if the fused op's
// result type cannot be derived or differs from root's.
bool replace(Block& b, Block::OpList::iterator after_root, Operation* root, const OpDef& def,
             const std::vector<Value*>& operands, Attrs attrs, std::initializer_list<Operation*> dead) {
  std::vector<const Type*> types;
  for (Value* v : operands) types.push_back(v ? &v->type() : nullptr);
  InferResult r = infer_result_types(def, types, attrs);
  if (!r.types || r.types->size() != 1 || (*r.types)[0] != root->result(0)->type()) return false;
  Operation* fused = b.insert(after_root, def, operands, std::move(attrs), *r.types);
  root->result(0)->replace_all_uses_with(fused->result(0));
  b.erase(root);
  for (Operation* op : dead)
    if (op) b.erase(op);
  return true;
}

template <typename F> bool for_each_block(Block& b, F&& f) {
  bool changed = false;
  for (const auto& op : b.operations())
    for (size_t r = 0; r < op->num_regions(); ++r) changed = for_each_block(op->region(r), f) || changed;
  return f(b) || changed;
}

// ---------------------------------------------------------------- linear + activation

bool fuse_linear_act_block(Block& b) {
  bool changed = false;
  const OpDef& fused = def_of("fused_linear_act");
  for (auto it = b.begin(); it != b.end();) {
    Operation* act = it->get();
    ++it;
    if (!plain(act) || act->num_operands() != 1) continue;
    const std::string name = ops::activation_of(act->def(), act->attrs());
    if (name.empty()) continue;
    Value* h = act->operand(0);
    if (!h || !single_use(h)) continue;
    if (Operation* lin = producer(h, "linear", &b)) {
      changed = replace(b, it, act, fused, {lin->operand(0), lin->operand(1), lin->operand(2)}, Attrs{name}, {lin}) ||
                changed;
      continue;
    }
    Operation* add = producer(h, "add", &b);
    if (!add) continue;
    for (int side = 0; side < 2; ++side) {
      Value* mm_v = add->operand(size_t(side));
      Value* bias = add->operand(size_t(1 - side));
      Operation* mm = producer(mm_v, "matmul", &b);
      if (!mm || !single_use(mm_v) || mm->attrs().b(0) || mm->attrs().b(1)) continue;
      const Type& w = mm->operand(1)->type();
      const Type& bt = bias->type();
      // The bias must run along the last dim only: [N] with N = w.shape[1].
      if (w.shape.size() != 2 || bt.shape.size() != 1 || bt.shape[0] != w.shape[1] || w.shape[1] < 0) continue;
      if (replace(b, it, act, fused, {mm->operand(0), mm->operand(1), bias}, Attrs{name}, {add, mm})) {
        changed = true;
        break;
      }
    }
  }
  return changed;
}

// ---------------------------------------------------------------- convolution + bias + residual + activation

// The only reader of `v`, if there is one and it is a plain op of block `b`.
Operation* sole_user(Value* v, const Block& b) {
  if (!single_use(v)) return nullptr;
  Operation* u = v->uses()[0].op;
  return plain(u) && u->parent() == &b ? u : nullptr;
}

// The other operand of a two-operand `add` that reads `v`.
Value* other_addend(Operation* add, const Value* v) {
  if (add->name() != "add" || add->num_operands() != 2) return nullptr;
  return add->operand(0) == v ? add->operand(1) : add->operand(0);
}

// A value holding one number per channel of an [N, C, H, W] result: [C, 1, 1] or [1, C, 1, 1].
bool channel_shaped(const Type& t, int64_t channels, DType dt) {
  const Dims& s = t.shape;
  if (t.dtype != dt || channels < 0) return false;
  if (s.size() == 3) return s[0] == channels && s[1] == 1 && s[2] == 1;
  return s.size() == 4 && s[0] == 1 && s[1] == channels && s[2] == 1 && s[3] == 1;
}

bool fuse_conv_act_block(Block& b) {
  bool changed = false;
  const OpDef& fused = def_of("fused_conv");
  for (auto it = b.begin(); it != b.end();) {
    Operation* conv = it->get();
    ++it;
    if (!plain(conv) || conv->name() != "conv" || conv->num_operands() != 2) continue;
    const Type& t = conv->result(0)->type();
    if (t.shape.size() != 4 || (t.dtype != DType::Float32 && t.dtype != DType::BFloat16)) continue;
    // Grow forwards: [+ bias] [+ residual] [activation], each the sole reader of the previous result.
    std::vector<Operation*> absorbed{conv};
    Value* cur = conv->result(0);
    Value *bias = nullptr, *residual = nullptr;
    std::string act;
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    Operation* u = sole_user(cur, b);
    if (u && u->result(0)->type() == t) {
      Value* o = other_addend(u, cur);
      if (o && o != cur && channel_shaped(o->type(), t.shape[1], t.dtype)) {
        bias = o;
        absorbed.push_back(u);
        cur = u->result(0);
        u = sole_user(cur, b);
      }
    }
    if (u && u->result(0)->type() == t) {
      Value* o = other_addend(u, cur);
      if (o && o != cur && o->type() == t) {
        residual = o;
        absorbed.push_back(u);
        cur = u->result(0);
        u = sole_user(cur, b);
      }
    }
    if (u && u->result(0)->type() == t && u->operand(0) == cur) {
      if (u->name() == "clip" && u->num_operands() == 3) {
        double l = lo, h = hi;
        bool ok = (!u->operand(1) || scalar_value(u->operand(1), &l)) && (!u->operand(2) || scalar_value(u->operand(2), &h));
        if (ok && !(l > h)) {
          act = "clip";
          lo = l;
          hi = h;
        }
      } else if (u->num_operands() == 1) {
        act = ops::activation_of(u->def(), u->attrs());
      }
      if (!act.empty()) absorbed.push_back(u);
    }
    if (absorbed.size() < 2) continue;
    Operation* root = absorbed.back();
    Attrs attrs = conv->attrs();
    attrs.push_back(act);
    attrs.push_back(lo);
    attrs.push_back(hi);
    auto after = std::find_if(b.begin(), b.end(), [&](const auto& op) { return op.get() == root; });
    ++after;
    // Erased after the root, users before producers: absorbed[n-2], ..., absorbed[1], conv.
    Operation* dead[3] = {nullptr, nullptr, nullptr};
    for (size_t k = 0; k + 1 < absorbed.size(); ++k) dead[k] = absorbed[absorbed.size() - 2 - k];
    if (replace(b, after, root, fused, {conv->operand(0), conv->operand(1), bias, residual}, attrs,
                {dead[0], dead[1], dead[2]})) {
      changed = true;
      it = b.begin();  // the iterator may point at an erased op: start over (already fused convs are skipped)
    }
  }
  return changed;
}

// ---------------------------------------------------------------- attention

bool fuse_attention_block(Block& b) {
  bool changed = false;
  const OpDef& fused = def_of("fused_attention");
  for (auto it = b.begin(); it != b.end();) {
    Operation* out = it->get();
    ++it;
    if (!plain(out) || out->name() != "matmul" || out->attrs().b(0) || out->attrs().b(1)) continue;
    Value* pv = out->operand(0);
    Operation* sm = producer(pv, "softmax", &b);
    if (!sm || !single_use(pv)) continue;
    const int64_t rank = int64_t(pv->type().shape.size());
    if (sm->attrs().i(0) != rank - 1) continue;
    Value* s = sm->operand(0);
    if (!single_use(s)) continue;
    Operation* add = producer(s, "add", &b);
    Value* mask = nullptr;
    if (add) {
      // scores + mask, either way round: the scores are the side that comes from the product.
      for (int side = 0; side < 2 && !mask; ++side) {
        Value* cand = add->operand(size_t(side));
        if (producer(cand, "multiply", &b) || producer(cand, "divide", &b) || producer(cand, "matmul", &b)) {
          s = cand;
          mask = add->operand(size_t(1 - side));
        }
      }
      if (!mask || !single_use(s)) continue;
    }
    double scale = 1.0;
    Operation* scale_op = nullptr;
    if (Operation* m = producer(s, "multiply", &b)) {
      double c;
      for (int side = 0; side < 2 && !scale_op; ++side)
        if (scalar_value(m->operand(size_t(1 - side)), &c)) {
          scale = c;
          s = m->operand(size_t(side));
          scale_op = m;
        }
      if (!scale_op) continue;
    } else if (Operation* d = producer(s, "divide", &b)) {
      double c;
      if (!scalar_value(d->operand(1), &c) || c == 0.0) continue;
      scale = 1.0 / c;
      s = d->operand(0);
      scale_op = d;
    }
    if (scale_op && !single_use(s)) continue;
    Operation* qk = producer(s, "matmul", &b);
    if (!qk || qk->attrs().b(0) || !qk->attrs().b(1)) continue;
    Value* q = qk->operand(0);
    Value* k = qk->operand(1);
    Value* v = out->operand(1);
    // q * c feeding only the product: c joins the scale.
    Operation* q_scale = nullptr;
    if (Operation* m = producer(q, "multiply", &b); m && single_use(q)) {
      double c;
      for (int side = 0; side < 2 && !q_scale; ++side)
        if (scalar_value(m->operand(size_t(1 - side)), &c) && m->operand(size_t(side))->type() == q->type()) {
          scale *= c;
          q = m->operand(size_t(side));
          q_scale = m;
        }
    }
    // Leading dims must match exactly: the fused op does not broadcast them.
    auto lead = [](const Value* x) { return Dims(x->type().shape.begin(), x->type().shape.end() - 2); };
    if (q->type().shape.size() < 2 || lead(q) != lead(k) || lead(q) != lead(v)) continue;
    if (replace(b, it, out, fused, {q, k, v, mask}, Attrs{scale, false}, {sm, add, scale_op, qk, q_scale}))
      changed = true;
  }
  return changed;
}

// ---------------------------------------------------------------- elementwise chains

// An op fused_elementwise can evaluate: one floating dtype throughout. Its
// operands may broadcast (the fused op broadcasts its inputs at run time,
// so dynamic dims are fine too).
bool ew_candidate(const Operation* op, const Block& b) {
  if (!plain(op) || op->parent() != &b) return false;
  const int code = ops::elementwise_code(op->def(), op->attrs());
  if (code < 0 || op->num_operands() != size_t(ops::elementwise_arity(code))) return false;
  const Type& t = op->result(0)->type();
  if (!is_floating(t.dtype)) return false;
  for (Value* v : op->operands())
    if (!v || v->type().dtype != t.dtype) return false;
  return true;
}

bool fuse_elementwise_block(Block& b) {
  bool changed = false;
  const OpDef& fused = def_of("fused_elementwise");
  std::unordered_map<const Operation*, size_t> pos;
  size_t n = 0;
  for (const auto& op : b.operations()) pos[op.get()] = n++;
  for (auto it = b.begin(); it != b.end();) {
    Operation* root = it->get();
    ++it;
    if (!ew_candidate(root, b)) continue;
    const Type& t = root->result(0)->type();
    // Not a root if its only reader would absorb it.
    const Value* r = root->result(0);
    if (single_use(r) && ew_candidate(r->uses()[0].op, b) && r->uses()[0].op->result(0)->type() == t) continue;
    // Grow backwards: an operand's producer joins when it is a candidate of
    // the same type and every reader of its result is already in the tree.
    std::unordered_set<const Operation*> in_tree{root};
    std::vector<Operation*> tree{root};
    for (size_t i = 0; i < tree.size(); ++i)
      for (Value* v : tree[i]->operands()) {
        Operation* p = v->defining_op();
        if (!p || in_tree.count(p) || !ew_candidate(p, b) || v->type() != t) continue;
        bool inside = std::all_of(v->uses().begin(), v->uses().end(),
                                  [&](const Use& u) { return u.op && in_tree.count(u.op); });
        if (!inside) continue;
        in_tree.insert(p);
        tree.push_back(p);
      }
    if (tree.size() < 2) continue;
    std::sort(tree.begin(), tree.end(), [&](const Operation* x, const Operation* y) { return pos[x] < pos[y]; });
    // Registers: external operands first (in order of first use), then one per op.
    std::vector<Value*> inputs;
    std::unordered_map<const Value*, int64_t> reg;
    for (Operation* op : tree)
      for (Value* v : op->operands())
        if (!in_tree.count(v->defining_op()) && !reg.count(v)) {
          reg[v] = int64_t(inputs.size());
          inputs.push_back(v);
        }
    Dims prog;
    for (size_t k = 0; k < tree.size(); ++k) {
      Operation* op = tree[k];
      prog.push_back(ops::elementwise_code(op->def(), op->attrs()));
      prog.push_back(reg.at(op->operand(0)));
      prog.push_back(op->num_operands() == 2 ? reg.at(op->operand(1)) : -1);
      reg[op->result(0)] = int64_t(inputs.size() + k);
    }
    std::vector<Operation*> dead(tree.rbegin() + 1, tree.rend());  // users before producers
    std::vector<const Type*> types;
    for (Value* v : inputs) types.push_back(&v->type());
    InferResult res = infer_result_types(fused, types, Attrs{prog});
    if (!res.types || res.types->size() != 1 || (*res.types)[0] != t) continue;
    Operation* f = b.insert(it, fused, inputs, Attrs{prog}, *res.types);
    root->result(0)->replace_all_uses_with(f->result(0));
    b.erase(root);
    for (Operation* op : dead) b.erase(op);
    changed = true;
  }
  return changed;
}

// ---------------------------------------------------------------- decomposed softmax and layer norm

// A reduction over the last axis with keepdim, in the dtype of its input.
bool last_axis_reduce(const Operation* op, const char* name, const Block* b) {
  if (!plain(op) || op->name() != name || op->parent() != b || op->num_operands() != 1) return false;
  const Type& in = op->operand(0)->type();
  const Dims& axes = op->attrs().ints(0);
  return !in.shape.empty() && axes.size() == 1 && axes[0] == int64_t(in.shape.size()) - 1 && op->attrs().b(1) &&
         op->result(0)->type().dtype == in.dtype;
}

// The layer_norm and softmax kernels read their input as dense rows, so the
// fused op must not receive a strided view: its input must be the fresh
// result of a non-view op.
bool dense_value(const Value* v) {
  const Operation* op = v->defining_op();
  return op && !op->def().traits.view && op->num_regions() == 0;
}

// The other operand of binary `op` when one operand is `v`, else null.
Value* other_operand(const Operation* op, const Value* v) {
  if (op->num_operands() != 2) return nullptr;
  if (op->operand(0) == v) return op->operand(1);
  if (op->operand(1) == v) return op->operand(0);
  return nullptr;
}

// exp(x - amax(x)) / sum(exp(x - amax(x))) over the last axis, or
// exp(x) / sum(exp(x)), becomes softmax(x).
bool fuse_softmax_at(Block& b, Block::OpList::iterator after, Operation* root) {
  if (!plain(root) || root->name() != "divide") return false;
  Value* e = root->operand(0);
  Value* s = root->operand(1);
  Operation* sum = s->defining_op();
  Operation* ex = producer(e, "exp", &b);
  if (!ex || !last_axis_reduce(sum, "sum", &b) || sum->operand(0) != e || !single_use(s)) return false;
  if (e->uses().size() != 2 || e->type() != root->result(0)->type()) return false;  // read by the sum and the divide only
  Value* x = ex->operand(0);
  Operation* sub = producer(x, "subtract", &b);
  Operation* mx = nullptr;
  if (sub && single_use(x)) {
    Operation* m = sub->operand(1)->defining_op();
    if (last_axis_reduce(m, "amax", &b) && m->operand(0) == sub->operand(0) && single_use(sub->operand(1))) {
      mx = m;
      x = sub->operand(0);
    }
  }
  if (!mx) sub = nullptr;
  if (x->type() != root->result(0)->type() || !dense_value(x)) return false;
  const int64_t axis = int64_t(x->type().shape.size()) - 1;
  return replace(b, after, root, def_of("softmax"), {x}, Attrs{axis}, {sum, ex, sub, mx});
}

// (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) [* w] [+ b] over the
// last axis (or the same divided by sqrt(...)) becomes layer_norm; a missing
// weight or bias becomes a `full` of ones or zeros.
bool fuse_layer_norm_at(Block& b, Operation* y0) {
  if (!plain(y0) || (y0->name() != "multiply" && y0->name() != "divide")) return false;
  const Type& t = y0->result(0)->type();
  if (t.shape.empty() || t.shape.back() < 0 || !is_floating(t.dtype)) return false;
  const int64_t D = t.shape.back();
  // y0 = xc * rsqrt(ve) (either order) or xc / sqrt(ve)
  Operation* root_op = nullptr;  // rsqrt or sqrt
  Value* xc = nullptr;
  for (int side = 0; side < 2 && !root_op; ++side) {
    if (y0->name() == "divide" && side == 1) break;
    Value* r = y0->operand(size_t(y0->name() == "divide" ? 1 : 1 - side));
    Operation* ro = producer(r, y0->name() == "divide" ? "sqrt" : "rsqrt", &b);
    if (ro && single_use(r)) {
      root_op = ro;
      xc = y0->operand(size_t(y0->name() == "divide" ? 0 : side));
    }
  }
  if (!root_op) return false;
  Value* ve = root_op->operand(0);
  Operation* add_eps = producer(ve, "add", &b);
  if (!add_eps || !single_use(ve)) return false;
  double eps = 0;
  Value* v = nullptr;
  for (int side = 0; side < 2 && !v; ++side)
    if (scalar_value(add_eps->operand(size_t(1 - side)), &eps)) v = add_eps->operand(size_t(side));
  Operation* var = v ? v->defining_op() : nullptr;
  if (!v || !single_use(v) || !last_axis_reduce(var, "mean", &b)) return false;
  Value* sq = var->operand(0);
  Operation* sq_op = sq->defining_op();
  if (!plain(sq_op) || sq_op->parent() != &b || !single_use(sq)) return false;
  double two = 0;
  const bool squares = (sq_op->name() == "square" && sq_op->operand(0) == xc) ||
                       (sq_op->name() == "multiply" && sq_op->operand(0) == xc && sq_op->operand(1) == xc) ||
                       (sq_op->name() == "pow" && sq_op->operand(0) == xc && scalar_value(sq_op->operand(1), &two) &&
                        two == 2.0);
  if (!squares) return false;
  Operation* sub = producer(xc, "subtract", &b);
  if (!sub || xc->type() != t) return false;
  for (const Use& u : xc->uses())
    if (u.op != sq_op && u.op != y0) return false;
  Value* x = sub->operand(0);
  Operation* mu = sub->operand(1)->defining_op();
  if (!last_axis_reduce(mu, "mean", &b) || mu->operand(0) != x || !single_use(sub->operand(1))) return false;
  if (x->type() != t || !dense_value(x)) return false;
  // Optional affine: * w [D], then + b [D].
  const Type vec{t.dtype, {D}};
  Operation* root = y0;
  Value* w = nullptr;
  Value* bias = nullptr;
  Operation* mul_w = nullptr;
  Operation* add_b = nullptr;
  // The op reading `op`'s result alone, named `name`, and its other operand
  // when that is a [D] vector (not the result itself: x * x of a 1-D x).
  auto affine = [&](Operation* op, const char* name, Value** vec_operand) -> Operation* {
    const Value* r = op->result(0);
    if (!single_use(r)) return nullptr;
    Operation* u = r->uses()[0].op;
    if (!plain(u) || u->name() != name || u->parent() != &b || u->result(0)->type() != t) return nullptr;
    Value* o = other_operand(u, r);
    if (!o || o == r || o->type() != vec) return nullptr;
    *vec_operand = o;
    return u;
  };
  if (Operation* m = affine(root, "multiply", &w)) root = mul_w = m;
  if (Operation* a = affine(root, "add", &bias)) root = add_b = a;
  const int64_t begin = int64_t(t.shape.size()) - 1;
  const OpDef& ln = def_of("layer_norm");
  const Type* types[3] = {&x->type(), &vec, &vec};
  InferResult r = infer_result_types(ln, types, Attrs{begin, eps});
  if (!r.types || r.types->size() != 1 || (*r.types)[0] != root->result(0)->type()) return false;
  auto after = b.begin();
  while (after != b.end() && after->get() != root) ++after;
  if (after == b.end()) return false;
  ++after;
  const OpDef& full = def_of("full");
  if (!w) w = b.insert(after, full, {}, Attrs{Dims{D}, 1.0, t.dtype}, std::span<const Type>(&vec, 1))->result(0);
  if (!bias) bias = b.insert(after, full, {}, Attrs{Dims{D}, 0.0, t.dtype}, std::span<const Type>(&vec, 1))->result(0);
  // Erased users first: root goes in replace(), then what is left of the chain.
  Operation* between[2] = {nullptr, nullptr};
  if (add_b && mul_w) between[0] = mul_w;
  if (root != y0) (between[0] ? between[1] : between[0]) = y0;
  return replace(b, after, root, ln, {x, w, bias}, Attrs{begin, eps},
                 {between[0], between[1], root_op, add_eps, var, sq_op, sub, mu});
}

bool fuse_softmax_layer_norm_block(Block& b) {
  bool changed = false;
  for (auto it = b.begin(); it != b.end();) {
    Operation* op = it->get();
    ++it;
    if (fuse_softmax_at(b, it, op) || fuse_layer_norm_at(b, op)) {
      changed = true;
      it = b.begin();  // the layer-norm rewrite erases ops after `op`; start over (each rewrite removes ops)
    }
  }
  return changed;
}

}  // namespace

bool fuse_softmax_layer_norm(Program& p) { return for_each_block(p.body(), fuse_softmax_layer_norm_block); }

bool fuse_linear_activation(Program& p) { return for_each_block(p.body(), fuse_linear_act_block); }
bool fuse_conv_activation(Program& p) { return for_each_block(p.body(), fuse_conv_act_block); }
bool fuse_attention(Program& p) { return for_each_block(p.body(), fuse_attention_block); }
// A reduction (sum, mean, amax, amin) of a fused_elementwise result, or of
// one elementwise op, that nothing else reads becomes one fused_reduce: the
// group's values are reduced as they are computed, never stored.
bool fuse_reduce_block(Block& b) {
  bool changed = false;
  const OpDef& fused = def_of("fused_reduce");
  for (auto it = b.begin(); it != b.end();) {
    Operation* red = it->get();
    ++it;
    if (!plain(red) || red->parent() != &b || red->num_operands() != 1) continue;
    int64_t kind = 0;
    while (ops::reduce_op_of(kind) && red->name() != ops::reduce_op_of(kind)) ++kind;
    if (!ops::reduce_op_of(kind)) continue;
    Value* v = red->operand(0);
    Operation* p = v->defining_op();
    if (!p || !plain(p) || p->parent() != &b || !single_use(v) || !is_floating(v->type().dtype) ||
        red->result(0)->type().dtype != v->type().dtype)
      continue;
    Dims prog;
    if (p->name() == "fused_elementwise") {
      prog = p->attrs().ints(0);
    } else if (ew_candidate(p, b)) {
      prog = {ops::elementwise_code(p->def(), p->attrs()), 0, p->num_operands() == 2 ? 1 : -1};
    } else {
      continue;
    }
    const std::vector<Value*> inputs(p->operands().begin(), p->operands().end());
    Attrs attrs{prog, kind, red->attrs().ints(0), red->attrs().b(1)};
    if (replace(b, it, red, fused, inputs, std::move(attrs), {p})) changed = true;
  }
  return changed;
}

bool fuse_elementwise(Program& p) {
  bool changed = for_each_block(p.body(), fuse_elementwise_block);
  return for_each_block(p.body(), fuse_reduce_block) || changed;
}

}  // namespace oar::ir

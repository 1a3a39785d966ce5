// The verifier: structural invariants (ownership, use-lists, SSA scoping) and
// that each op's result types are what its infer_meta gives for its operand
// types (Note [dynamic dims] in ir.h). Control-flow ops (ops/control_flow.h)
// are checked against their regions instead: region and argument counts,
// yields against the results, and the predicate or index operand.
//
// Scoping: a value is visible after its definition in its block and in every
// region nested below that point (implicit capture); values of a region are
// not visible after the region, so neither the enclosing block nor a sibling
// region can read them.
#include <unordered_set>

#include "ir/ir.h"
#include "ops/control_flow.h"

namespace oar::ir {

namespace {

struct Verifier {
  const std::unordered_map<const Value*, int>& ids;
  std::unordered_set<const Value*> scope;  // values visible at the current point
  int op_counter = 0;

  void check_updates(const Program& p);

  std::string ref(const Value* v) const {
    auto it = ids.find(v);
    if (it == ids.end()) return "a value of another program";
    std::string s = "%";
    s += std::to_string(it->second);
    return s;
  }
  std::string where(const Operation& op, int k) const {
    std::string s = "op #" + std::to_string(k) + " '" + op.name() + "'";
    if (op.num_results()) s += " (defining " + ref(op.result(0)) + ")";
    return s;
  }

  void check_type(const Value* v, const std::string& what) const {
    for (int64_t d : v->type().shape)
      OAR_CHECK(d >= kDynamic, Value, "[oar.ir.verify] ", what, " (", ref(v), ") has type ", v->type().str(),
                ": dims must be sizes >= 0, or -1 for a dynamic dim");
  }

  static bool has_use(const Value* v, const Use& u) {
    for (const Use& x : v->uses())
      if (x == u) return true;
    return false;
  }

  void check_types(const Operation& op, int k) {
    std::vector<const Type*> in;
    for (Value* v : op.operands()) in.push_back(v ? &v->type() : nullptr);
    auto types_str = [&] {
      std::string s = "(";
      for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + (in[i] ? in[i]->str() : std::string("none"));
      return s + ")";
    };
    InferResult r = infer_result_types(op.def(), std::span<const Type* const>(in.data(), in.size()), op.attrs());
    // Shapes specialised to the example (Note [dynamic dims]): infer_meta
    // cannot confirm them from -1 dims, so check what it can.
    const bool example = op.example_shapes();
    if (!r.types && example) {
      // A size of 1 broadcasts against anything, so it is the likeliest to
      // pass infer_meta and still tell the result dtypes.
      try {
        Tensors ms;
        for (const Type* t : in) ms.push_back(t ? meta_tensor(*t, 1) : Tensor());
        Metas m = infer_metas(op.def(), std::span<const Tensor>(ms.data(), ms.size()), op.attrs());
        std::vector<Type> ts;
        for (const TensorMeta& x : m) ts.push_back(Type{x.dtype, x.shape});
        r.types = std::move(ts);
      } catch (const Error&) {
        return;  // nothing can be checked without the example's sizes
      }
    }
    if (!r.types) {
      fail(ErrorKind::Value, "[oar.ir.verify] ", where(op, k), ": infer_meta rejects the operand types ",
           types_str(), r.dynamic_rejected ? " (dynamic dims probed as " : "",
           r.dynamic_rejected ? std::to_string(kDynProbeA) + " and " + std::to_string(kDynProbeB) + ")" : "",
           ": ", r.error);
    }
    const std::vector<Type>& want = *r.types;
    OAR_CHECK(want.size() == op.num_results(), Value, "[oar.ir.verify] ", where(op, k), " has ", op.num_results(),
              " result(s) but infer_meta gives ", want.size(), " for operand types ", types_str());
    for (size_t i = 0; i < want.size(); ++i) {
      const Type& got = op.result(i)->type();
      // Data-dependent sizes: only the dtype is known before the kernel runs.
      bool ok = op.def().traits.dynamic_shape || example ? got.dtype == want[i].dtype : got == want[i];
      OAR_CHECK(ok, Value, "[oar.ir.verify] ", where(op, k), ": result ", i, " (", ref(op.result(i)),
                ") has type ", got.str(), " but infer_meta gives ", want[i].str(), " for operand types ",
                types_str());
    }
  }

  // A value yielded into a control-flow result (or passed as a loop's initial
  // value) fits the result type: same dtype and rank, and equal dims where the
  // result's dim is static.
  static bool fits(const Type& result, const Type& v) {
    if (result.dtype != v.dtype || result.shape.size() != v.shape.size()) return false;
    for (size_t d = 0; d < result.shape.size(); ++d)
      if (result.shape[d] != kDynamic && result.shape[d] != v.shape[d]) return false;
    return true;
  }

  void check_yields(const Operation& op, int k, const Block& region, size_t r) {
    OAR_CHECK(region.num_yields() == op.num_results(), Value, "[oar.ir.verify] ", where(op, k), ": region ", r,
              " yields ", region.num_yields(), " value(s) but the op has ", op.num_results(), " result(s)");
    for (size_t i = 0; i < region.num_yields(); ++i) {
      const Value* y = region.yield(i);
      if (!y) continue;  // reported by check_block
      OAR_CHECK(fits(op.result(i)->type(), y->type()), Value, "[oar.ir.verify] ", where(op, k), ": region ", r,
                " yields ", y->type().str(), " (", ref(y), ") as result ", i, ", which has type ",
                op.result(i)->type().str(), " (the dtype and rank must match, and every static dim)");
    }
  }

  void check_selector_operand(const Operation& op, int k, bool index) {
    const char* what = index ? "branch index" : "predicate";
    OAR_CHECK(op.num_operands() >= 1 && op.operand(0), Value, "[oar.ir.verify] ", where(op, k), ": the ", what,
              " operand is missing");
    const Type& t = op.operand(0)->type();
    std::string bad = check_selector(t.dtype, t.shape, index);
    OAR_CHECK(bad.empty(), Value, "[oar.ir.verify] ", where(op, k), ": the ", what, " (", ref(op.operand(0)), ") ",
              bad);
  }

  void check_control_flow(const Operation& op, int k) {
    const size_t nr = op.num_regions();
    if (&op.def() == &kPyLayer) {
      OAR_CHECK(nr == 1, Value, "[oar.ir.verify] ", where(op, k), " needs 1 region (forward), has ", nr);
      const Block& region = op.region(0);
      OAR_CHECK(region.num_arguments() == op.num_operands(), Value, "[oar.ir.verify] ", where(op, k), ": region 0 "
                "takes ", region.num_arguments(), " argument(s), the op has ", op.num_operands(), " input(s)");
      for (size_t i = 0; i < op.num_operands(); ++i) {
        const Value* v = op.operand(i);
        OAR_CHECK(v, Value, "[oar.ir.verify] ", where(op, k), ": input ", i, " is missing");
        OAR_CHECK(fits(region.argument(i)->type(), v->type()), Value, "[oar.ir.verify] ", where(op, k), ": input ",
                  i, " (", ref(v), ") has type ", v->type().str(), ", which does not fit the region argument type ",
                  region.argument(i)->type().str());
      }
      check_yields(op, k, region, 0);
      return;
    }
    if (&op.def() == &kCond || &op.def() == &kSwitchCase) {
      const bool sw = &op.def() == &kSwitchCase;
      check_selector_operand(op, k, sw);
      OAR_CHECK(op.num_operands() == 1, Value, "[oar.ir.verify] ", where(op, k), " takes 1 operand, has ",
                op.num_operands());
      if (sw) {
        const AttrValue& a = op.attrs()[0];
        OAR_CHECK(std::holds_alternative<Dims>(a), Value, "[oar.ir.verify] ", where(op, k),
                  ": branch_indices must be a list of ints");
        const Dims& keys = std::get<Dims>(a);
        OAR_CHECK(nr == keys.size() + 1, Value, "[oar.ir.verify] ", where(op, k), " has ", keys.size(),
                  " branch index(es) and so needs ", keys.size() + 1, " regions (one per branch and the default), has ",
                  nr);
        std::unordered_set<int64_t> seen;
        for (int64_t key : keys)
          OAR_CHECK(seen.insert(key).second, Value, "[oar.ir.verify] ", where(op, k), ": branch index ", key,
                    " appears twice");
      } else {
        OAR_CHECK(nr == 2, Value, "[oar.ir.verify] ", where(op, k), " needs 2 regions (then, else), has ", nr);
      }
      for (size_t r = 0; r < nr; ++r) {
        OAR_CHECK(op.region(r).num_arguments() == 0, Value, "[oar.ir.verify] ", where(op, k), ": region ", r,
                  " must take no arguments, takes ", op.region(r).num_arguments());
        check_yields(op, k, op.region(r), r);
      }
      return;
    }
    // while_loop
    const size_t n = op.num_results();
    OAR_CHECK(nr == 2, Value, "[oar.ir.verify] ", where(op, k), " needs 2 regions (cond, body), has ", nr);
    OAR_CHECK(op.num_operands() == n, Value, "[oar.ir.verify] ", where(op, k), " has ", op.num_operands(),
              " initial value(s) but ", n, " result(s)");
    for (size_t i = 0; i < n; ++i) {
      const Value* v = op.operand(i);
      OAR_CHECK(v, Value, "[oar.ir.verify] ", where(op, k), ": initial value ", i, " is missing");
      OAR_CHECK(fits(op.result(i)->type(), v->type()), Value, "[oar.ir.verify] ", where(op, k), ": initial value ", i,
                " (", ref(v), ") has type ", v->type().str(), ", which does not fit the loop value type ",
                op.result(i)->type().str());
    }
    for (size_t r = 0; r < 2; ++r) {
      const Block& region = op.region(r);
      OAR_CHECK(region.num_arguments() == n, Value, "[oar.ir.verify] ", where(op, k), ": region ", r, " takes ",
                region.num_arguments(), " argument(s), the loop has ", n, " value(s)");
      for (size_t i = 0; i < n; ++i)
        OAR_CHECK(region.argument(i)->type() == op.result(i)->type(), Value, "[oar.ir.verify] ", where(op, k),
                  ": argument ", i, " of region ", r, " has type ", region.argument(i)->type().str(),
                  " but loop value ", i, " has type ", op.result(i)->type().str());
    }
    const Block& c = op.region(0);
    OAR_CHECK(c.num_yields() == 1, Value, "[oar.ir.verify] ", where(op, k), ": the cond region must yield 1 value, "
              "yields ", c.num_yields());
    if (c.yield(0)) {
      const Type& t = c.yield(0)->type();
      std::string bad = check_selector(t.dtype, t.shape, false);
      OAR_CHECK(bad.empty(), Value, "[oar.ir.verify] ", where(op, k), ": the predicate yielded by the cond region (",
                ref(c.yield(0)), ") ", bad);
    }
    check_yields(op, k, op.region(1), 1);
  }

  void check_op(const Operation& op, const Block& b) {
    const int k = op_counter++;
    OAR_CHECK(op.parent() == &b, Value, "[oar.ir.verify] ", where(op, k), " does not record its block as parent");
    OAR_CHECK(op.def().attr_names.size() == op.attrs().size(), Value, "[oar.ir.verify] ", where(op, k), " has ",
              op.attrs().size(), " attribute(s) but the op declares ", op.def().attr_names.size());
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (!v) {  // an undefined optional input
        OAR_CHECK(op.def().input_optional(i), Value, "[oar.ir.verify] ", where(op, k), ": operand ", i,
                  " is undefined, but the op requires that input");
        continue;
      }
      OAR_CHECK(scope.count(v), Value, "[oar.ir.verify] ", where(op, k), ": operand ", i, " (", ref(v),
                ") is used before it is defined, or is not visible from this block");
      OAR_CHECK(has_use(v, Use{const_cast<Operation*>(&op), nullptr, int(i)}), Value, "[oar.ir.verify] ",
                where(op, k), ": operand ", i, " (", ref(v), ") does not list this op among its uses");
    }
    for (size_t i = 0; i < op.num_results(); ++i) {
      const Value* v = op.result(i);
      OAR_CHECK(v->defining_op() == &op && v->index() == int(i) && !v->is_block_argument(), Value,
                "[oar.ir.verify] ", where(op, k), ": result ", i, " does not record this op as its definition");
      check_type(v, where(op, k) + ": result " + std::to_string(i));
    }
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Block& region = op.region(r);
      OAR_CHECK(region.parent_op() == &op, Value, "[oar.ir.verify] ", where(op, k), ": region ", r,
                " does not record this op as its parent");
      check_block(region, "region " + std::to_string(r) + " of " + where(op, k));
    }
    // An op with regions (control flow) states its own result types through
    // its regions' yields; it is checked against infer_meta only if it has one.
    if (is_control_flow(op.def())) {
      check_control_flow(op, k);
    } else if (op.num_regions() == 0 || op.def().infer_meta) {
      if (op.num_regions() == 0) {
        OAR_CHECK(op.def().infer_meta, Value, "[oar.ir.verify] ", where(op, k), ": the op has no infer_meta");
      }
      check_types(op, k);
    }
    for (size_t i = 0; i < op.num_results(); ++i) scope.insert(op.result(i));
  }

  void check_block(const Block& b, const std::string& what, const Program* updates_of = nullptr) {
    std::vector<const Value*> added;
    for (size_t i = 0; i < b.num_arguments(); ++i) {
      const Value* a = b.argument(i);
      OAR_CHECK(a->owner_block() == &b && a->index() == int(i) && !a->defining_op(), Value,
                "[oar.ir.verify] argument ", i, " of ", what, " does not record its block and index");
      check_type(a, "argument " + std::to_string(i) + " of " + what);
      scope.insert(a);
      added.push_back(a);
    }
    for (const auto& op : b.operations()) {
      check_op(*op, b);
      for (size_t i = 0; i < op->num_results(); ++i) added.push_back(op->result(i));
    }
    for (size_t i = 0; i < b.num_yields(); ++i) {
      const Value* v = b.yield(i);
      OAR_CHECK(v, Value, "[oar.ir.verify] yield ", i, " of ", what, " is missing");
      OAR_CHECK(scope.count(v), Value, "[oar.ir.verify] yield ", i, " of ", what, " (", ref(v),
                ") is not defined in this block or an enclosing one");
      OAR_CHECK(has_use(v, Use{nullptr, const_cast<Block*>(&b), int(i)}), Value, "[oar.ir.verify] yield ", i,
                " of ", what, " (", ref(v), ") does not list the block among its uses");
    }
    if (updates_of) check_updates(*updates_of);
    // Values of a region are not visible after it.
    for (const Value* v : added) scope.erase(v);
  }
};

void Verifier::check_updates(const Program& p) {
  std::unordered_set<const Value*> seen;
  const Block& ub = p.updates_block();
  for (const StateUpdate& u : p.state_updates()) {
    const int64_t i = p.parameter_index(u.parameter);
    OAR_CHECK(i >= 0, Value, "[oar.ir.verify] a state update names a value that is not a program parameter");
    const NamedValue& pa = p.parameters()[size_t(i)];
    OAR_CHECK(seen.insert(u.parameter).second, Value, "[oar.ir.verify] parameter '", pa.name,
              "' has more than one state update");
    OAR_CHECK(!pa.constant, Value, "[oar.ir.verify] parameter '", pa.name, "' is updated but marked constant");
    OAR_CHECK(u.value, Value, "[oar.ir.verify] the new value of parameter '", pa.name, "' is missing");
    OAR_CHECK(scope.count(u.value), Value, "[oar.ir.verify] the new value of parameter '", pa.name, "' (",
              ref(u.value), ") is not defined in the program's body");
    // A dynamic dim of the new value is checked against the parameter when the program runs.
    Type relaxed = u.value->type();
    for (size_t d = 0; d < relaxed.shape.size() && d < pa.value->type().shape.size(); ++d)
      if (relaxed.shape[d] == kDynamic) relaxed.shape[d] = pa.value->type().shape[d];
    OAR_CHECK(fits(pa.value->type(), relaxed), Value, "[oar.ir.verify] the new value of parameter '",
              pa.name, "' (", ref(u.value), ") has type ", u.value->type().str(), ", the parameter has type ",
              pa.value->type().str());
    bool listed = false;
    for (const Use& use : u.value->uses()) listed = listed || (use.op == nullptr && use.block == &ub);
    OAR_CHECK(listed, Value, "[oar.ir.verify] the new value of parameter '", pa.name,
              "' does not list the program's updates among its uses");
  }
}

void check_names(const std::vector<NamedValue>& vs, const char* kind, std::unordered_set<std::string>& seen) {
  for (const NamedValue& n : vs) {
    OAR_CHECK(!n.name.empty(), Value, "[oar.ir.verify] a program ", kind, " has an empty name");
    OAR_CHECK(seen.insert(n.name).second, Value, "[oar.ir.verify] the name '", n.name, "' is used by more than "
              "one program input or parameter");
  }
}

}  // namespace

void verify(const Program& p) {
  const Block& body = p.body();
  OAR_CHECK(body.parent_op() == nullptr, Value, "[oar.ir.verify] the program's body must not have a parent op");
  std::unordered_set<std::string> seen;
  check_names(p.inputs(), "input", seen);
  check_names(p.parameters(), "parameter", seen);
  // Each body argument is exactly one input or parameter.
  std::unordered_set<const Value*> named;
  for (const auto* list : {&p.inputs(), &p.parameters()})
    for (const NamedValue& n : *list) {
      OAR_CHECK(n.value && n.value->owner_block() == &body, Value, "[oar.ir.verify] program input or parameter '",
                n.name, "' is not an argument of the program's body");
      named.insert(n.value);
    }
  OAR_CHECK(named.size() == body.num_arguments() && named.size() == p.inputs().size() + p.parameters().size(),
            Value, "[oar.ir.verify] the program's body has ", body.num_arguments(), " argument(s) but ",
            p.inputs().size(), " input(s) and ", p.parameters().size(), " parameter(s) name them");
  OAR_CHECK(p.output_names().size() == body.num_yields(), Value, "[oar.ir.verify] the program names ",
            p.output_names().size(), " output(s) but its body yields ", body.num_yields());
  std::unordered_set<std::string> out_seen;
  for (const std::string& n : p.output_names())
    OAR_CHECK(!n.empty() && out_seen.insert(n).second, Value, "[oar.ir.verify] output name '", n,
              "' is empty or used twice");
  auto ids = number_values(p);
  Verifier v{ids, {}, 0};
  v.check_block(body, "the program's body", &p);
}

}  // namespace oar::ir

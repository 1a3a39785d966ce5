// The verifier: structural invariants (ownership, use-lists, SSA scoping) and
// that each op's result types are what its infer_meta gives for its operand
// types (Note [dynamic dims] in ir.h).
#include <unordered_set>

#include "ir/ir.h"

namespace oar::ir {

namespace {

struct Verifier {
  const std::unordered_map<const Value*, int>& ids;
  std::unordered_set<const Value*> scope;  // values visible at the current point
  int op_counter = 0;

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
        Metas m = op.def().infer_meta(std::span<const Tensor>(ms.data(), ms.size()), op.attrs());
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

  void check_op(const Operation& op, const Block& b) {
    const int k = op_counter++;
    OAR_CHECK(op.parent() == &b, Value, "[oar.ir.verify] ", where(op, k), " does not record its block as parent");
    OAR_CHECK(op.def().attr_names.size() == op.attrs().size(), Value, "[oar.ir.verify] ", where(op, k), " has ",
              op.attrs().size(), " attribute(s) but the op declares ", op.def().attr_names.size());
    for (size_t i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (!v) continue;  // an undefined optional input
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
    if (op.num_regions() == 0 || op.def().infer_meta) {
      if (op.num_regions() == 0) {
        OAR_CHECK(op.def().infer_meta, Value, "[oar.ir.verify] ", where(op, k), ": the op has no infer_meta");
      }
      check_types(op, k);
    }
    for (size_t i = 0; i < op.num_results(); ++i) scope.insert(op.result(i));
  }

  void check_block(const Block& b, const std::string& what) {
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
    // Values of a region are not visible after it.
    for (const Value* v : added) scope.erase(v);
  }
};

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
  v.check_block(body, "the program's body");
}

}  // namespace oar::ir

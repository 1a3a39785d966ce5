#include "ir/executor.h"

#include "autograd/autograd.h"
#include "ir/tracer.h"
#include "ops/control_flow.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::ir {

namespace {

PyLayerRunner& py_layer_runner() {
  static auto* r = new PyLayerRunner();  // set once, by the Python bindings
  return *r;
}

bool matches(const Type& want, const Tensor& t) {
  if (t.dtype() != want.dtype || size_t(t.dim()) != want.shape.size()) return false;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] != kDynamic && want.shape[d] != t.shape()[d]) return false;
  return true;
}

void bind(std::unordered_map<const Value*, Tensor>& env, const std::vector<NamedValue>& vs,
          std::span<const Tensor> ts, const char* kind, bool dense) {
  OAR_CHECK(ts.size() == vs.size(), Value, "[oar.ir.run] the program takes ", vs.size(), " ", kind,
            "(s), got ", ts.size());
  for (size_t i = 0; i < vs.size(); ++i) {
    const Tensor& t = ts[i];
    const Type& want = vs[i].value->type();
    OAR_CHECK(t.defined(), Type, "[oar.ir.run] ", kind, " '", vs[i].name, "' must be a Tensor");
    OAR_CHECK(matches(want, t), Value, "[oar.ir.run] ", kind, " '", vs[i].name, "' expects ", want.str(),
              ", got ", Type::of(t).str());
    // Program inputs are handed to kernels directly, without the ops:: front
    // ends that make rows dense, so a strided input (a transposed tensor passed
    // to a to_static function) is made contiguous here; ops::contiguous keeps
    // autograd. Parameters stay the bound tensors: state updates and in-place
    // ops must reach them.
    env[vs[i].value] = dense ? ops::contiguous(t) : t;
  }
}

const Block* block_of(const Value* v) {
  return v->is_block_argument() ? v->owner_block() : v->defining_op()->parent();
}

// Every value read by `op` or by an op of its regions (implicit capture
// reads enclosing values from inside a region).
void collect_reads(const Operation& op, std::vector<const Value*>& out) {
  for (Value* v : op.operands())
    if (v) out.push_back(v);
  for (size_t r = 0; r < op.num_regions(); ++r) {
    const Block& b = op.region(r);
    for (const auto& inner : b.operations()) collect_reads(*inner, out);
    for (Value* y : b.yields())
      if (y) out.push_back(y);
  }
}

// The value of a selector (predicate or branch index) as an integer.
int64_t selector_value(const Tensor& t, const Operation& op) {
  OAR_CHECK(t.defined() && t.numel() == 1, Value, "[oar.ir.run] the selector of '", op.name(),
            "' must hold exactly one element, got shape ", ops::shape_str(t.defined() ? t.shape() : Dims{}));
  OAR_CHECK(t.device().type == DeviceType::CPU, NotImplemented, "[oar.ir.run] the selector of '", op.name(),
            "' must be on the CPU");
  switch (t.dtype()) {
    case DType::Bool: return *t.data<bool>() ? 1 : 0;
    case DType::UInt8: return *t.data<uint8_t>();
    case DType::Int8: return *t.data<int8_t>();
    case DType::Int16: return *t.data<int16_t>();
    case DType::Int32: return *t.data<int32_t>();
    case DType::Int64: return *t.data<int64_t>();
    default: break;
  }
  fail(ErrorKind::Type, "[oar.ir.run] the selector of '", op.name(), "' must be a bool or integer tensor, got ",
       dtype_name(t.dtype()));
}

struct Exec {
  std::unordered_map<const Value*, Tensor> env;
  // Per block: the values of that block to drop after each of its ops.
  std::unordered_map<const Block*, std::vector<std::vector<const Value*>>> plans;
  int64_t limit = kDefaultMaxLoopIterations;

  // A value's tensor is dropped after its last reader in its own block, so
  // intermediates free as they would in eager code. Block arguments and the
  // block's yields (plus `keep`: the state updates) live to the end.
  const std::vector<std::vector<const Value*>>& plan(const Block& b, std::span<Value* const> keep) {
    auto it = plans.find(&b);
    if (it != plans.end()) return it->second;
    std::unordered_map<const Value*, size_t> last;
    size_t k = 0;
    for (const auto& op : b.operations()) {
      for (size_t i = 0; i < op->num_results(); ++i) last[op->result(i)] = k;
      std::vector<const Value*> reads;
      collect_reads(*op, reads);
      for (const Value* v : reads)
        if (!v->is_block_argument() && block_of(v) == &b) last[v] = k;
      ++k;
    }
    for (Value* y : b.yields()) last.erase(y);
    for (Value* y : keep) last.erase(y);
    std::vector<std::vector<const Value*>> drops(b.operations().size());
    for (const auto& [v, at] : last) drops[at].push_back(v);
    return plans.emplace(&b, std::move(drops)).first->second;
  }

  Tensor get(const Value* v, const Operation& op, size_t i) const {
    auto it = env.find(v);
    OAR_CHECK(it != env.end(), Value, "[oar.ir.run] operand ", i, " of op '", op.name(),
              "' is not defined before it is used (run verify() on the program)");
    return it->second;
  }

  // Runs `b` with its arguments bound to `args` (the program's body: bound
  // by the caller, `top`); returns its yields.
  Tensors run_block(const Block& b, std::span<const Tensor> args, std::span<Value* const> keep = {},
                    bool top = false) {
    if (!top) {
      OAR_CHECK(args.size() == b.num_arguments(), Value, "[oar.ir.run] a region takes ", b.num_arguments(),
                " argument(s), got ", args.size());
      for (size_t i = 0; i < args.size(); ++i) env[b.argument(i)] = args[i];
    }
    const auto& drops = plan(b, keep);
    size_t k = 0;
    for (const auto& op : b.operations()) {
      Tensors out = run_op(*op);
      OAR_CHECK(out.size() == op->num_results(), Runtime, "[oar.ir.run] op '", op->name(), "' returned ",
                out.size(), " result(s), the program expects ", op->num_results());
      for (size_t i = 0; i < out.size(); ++i) env[op->result(i)] = std::move(out[i]);
      for (const Value* v : drops[k]) env.erase(v);
      ++k;
    }
    Tensors ys;
    for (Value* y : b.yields()) {
      auto it = y ? env.find(y) : env.end();
      OAR_CHECK(it != env.end(), Value, "[oar.ir.run] a yielded value is not defined");
      ys.push_back(it->second);
    }
    return ys;
  }

  // Runs a region and forgets its values afterwards (a loop runs it again).
  Tensors run_region(const Block& b, std::span<const Tensor> args) {
    Tensors ys = run_block(b, args);
    for (size_t i = 0; i < b.num_arguments(); ++i) env.erase(b.argument(i));
    for (const auto& op : b.operations())
      for (size_t i = 0; i < op->num_results(); ++i) env.erase(op->result(i));
    return ys;
  }

  void check_results(const Operation& op, const Tensors& out, const char* what) const {
    for (size_t i = 0; i < out.size() && i < op.num_results(); ++i)
      OAR_CHECK(out[i].defined() && matches(op.result(i)->type(), out[i]), Value, "[oar.ir.run] ", what, " of '",
                op.name(), "' gives ", out[i].defined() ? Type::of(out[i]).str() : std::string("no tensor"),
                " for result ", i, ", which has type ", op.result(i)->type().str());
  }

  Tensors run_op(const Operation& op) {
    if (is_control_flow(op.def())) return run_control_flow(op);
    OAR_CHECK(op.num_regions() == 0, NotImplemented, "[oar.ir.run] op '", op.name(),
              "' has regions but is not a control-flow op the executor knows");
    Tensors in;
    for (size_t i = 0; i < op.num_operands(); ++i) {
      Value* v = op.operand(i);
      in.push_back(v ? get(v, op, i) : Tensor());
    }
    return dispatch(op.def(), std::span<const Tensor>(in.data(), in.size()), op.attrs());
  }

  Tensors run_control_flow(const Operation& op) {
    Tensors in;
    for (size_t i = 0; i < op.num_operands(); ++i) in.push_back(get(op.operand(i), op, i));
    const bool tracing = is_tracing();
    if (&op.def() == &kPyLayer) {
      OAR_CHECK(op.num_regions() == 1, Value, "[oar.ir.run] py_layer needs 1 region (run verify())");
      std::optional<Tensors> out;
      if (const PyLayerRunner& runner = py_layer_runner()) out = runner(op.attrs().i(0), in);
      if (!out) out = run_region(op.region(0), std::span<const Tensor>(in.data(), in.size()));
      check_results(op, *out, "the forward");
      OAR_CHECK(out->size() == op.num_results(), Value, "[oar.ir.run] the forward of py_layer gives ", out->size(),
                " result(s), the op has ", op.num_results());
      return std::move(*out);
    }
    if (&op.def() == &kWhileLoop) {
      OAR_CHECK(op.num_regions() == 2, Value, "[oar.ir.run] while_loop needs 2 regions (run verify())");
      auto cond = [&](const Tensors& vals) {
        Tensors p = run_region(op.region(0), std::span<const Tensor>(vals.data(), vals.size()));
        OAR_CHECK(p.size() == 1, Value, "[oar.ir.run] the cond region of while_loop must yield 1 value");
        return p[0];
      };
      auto body = [&](const Tensors& vals) {
        Tensors next = run_region(op.region(1), std::span<const Tensor>(vals.data(), vals.size()));
        check_results(op, next, "the body");
        return next;
      };
      if (tracing) return trace_while_loop(cond, body, in, "oar.static.nn.while_loop", limit);
      Tensors vals = in;
      for (int64_t it = 0;; ++it) {
        if (!selector_value(cond(vals), op)) break;
        OAR_CHECK(it < limit, Runtime, "[oar.ir.run] while_loop ran ", limit, " iterations and its condition is "
                  "still true; if the loop is meant to run longer, raise the limit with "
                  "oar.static.nn.set_max_loop_iterations(n)");
        vals = body(vals);
      }
      return vals;
    }
    // cond and switch_case: one region runs, chosen by the selector.
    std::vector<int64_t> keys;
    if (&op.def() == &kSwitchCase) {
      const Dims& k = op.attrs().ints(0);
      keys.assign(k.begin(), k.end());
    }
    const size_t want_regions = &op.def() == &kCond ? 2 : keys.size() + 1;
    OAR_CHECK(op.num_regions() == want_regions && !in.empty(), Value, "[oar.ir.run] '", op.name(),
              "' has ", op.num_regions(), " regions, expected ", want_regions, " (run verify())");
    auto branch = [&](size_t r) {
      return [&, r]() {
        Tensors out = run_region(op.region(r), {});
        check_results(op, out, "a branch");
        return out;
      };
    };
    std::vector<BranchFn> fns;
    for (size_t r = 0; r < op.num_regions(); ++r) fns.push_back(branch(r));
    if (tracing) {
      if (&op.def() == &kCond) return trace_cond(in[0], fns[0], fns[1]);
      return trace_switch_case(in[0], Dims(keys.begin(), keys.end()), fns);
    }
    const int64_t s = selector_value(in[0], op);
    size_t r = 0;
    if (&op.def() == &kCond) {
      r = s ? 0 : 1;
    } else {
      r = keys.size();  // the default
      for (size_t i = 0; i < keys.size(); ++i)
        if (keys[i] == s) r = i;
    }
    return fns[r]();
  }
};

}  // namespace

void set_py_layer_runner(PyLayerRunner runner) { py_layer_runner() = std::move(runner); }

Tensors run(const Program& p, std::span<const Tensor> inputs, std::span<const Tensor> parameters) {
  Exec ex;
  ex.limit = max_loop_iterations();
  bind(ex.env, p.inputs(), inputs, "input", true);
  bind(ex.env, p.parameters(), parameters, "parameter", false);
  std::vector<StateUpdate> updates = p.state_updates();
  std::vector<Value*> keep;
  for (const StateUpdate& u : updates) keep.push_back(u.value);
  Tensors outs = ex.run_block(p.body(), {}, keep, true);
  for (const Tensor& t : outs) OAR_CHECK(t.defined(), Value, "[oar.ir.run] a program output is not defined");
  // State updates: the bound tensors take their new values in place, after
  // every output is computed (an output may read a parameter's old value).
  std::vector<std::pair<Tensor, Tensor>> writes;
  for (const StateUpdate& u : updates) {
    const int64_t i = p.parameter_index(u.parameter);
    OAR_CHECK(i >= 0 && u.value, Value, "[oar.ir.run] a state update names no parameter (run verify())");
    const std::string& name = p.parameters()[size_t(i)].name;
    auto it = ex.env.find(u.value);
    OAR_CHECK(it != ex.env.end(), Value, "[oar.ir.run] the new value of parameter '", name, "' is not defined");
    Tensor dst = parameters[size_t(i)];
    const Tensor& src = it->second;
    OAR_CHECK(src.dtype() == dst.dtype() && src.shape() == dst.shape(), Value, "[oar.ir.run] the new value of "
              "parameter '", name, "' has type ", Type::of(src).str(), ", the parameter has type ",
              Type::of(dst).str());
    writes.emplace_back(dst, src);
  }
  if (!writes.empty()) {
    NoGradGuard ng;
    // A new value may share memory with a parameter written before it; copy first.
    Tensors srcs;
    for (auto& [dst, src] : writes) srcs.push_back(ops::clone(src));
    for (size_t k = 0; k < writes.size(); ++k) ops::copy_(writes[k].first, srcs[k]);
  }
  return outs;
}

}  // namespace oar::ir

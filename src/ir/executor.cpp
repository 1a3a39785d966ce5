#include "ir/executor.h"

#include "ops/dispatch.h"

namespace oar::ir {

namespace {

bool matches(const Type& want, const Tensor& t) {
  if (t.dtype() != want.dtype || size_t(t.dim()) != want.shape.size()) return false;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] != kDynamic && want.shape[d] != t.shape()[d]) return false;
  return true;
}

void bind(std::unordered_map<const Value*, Tensor>& env, const std::vector<NamedValue>& vs,
          std::span<const Tensor> ts, const char* kind) {
  OAR_CHECK(ts.size() == vs.size(), Value, "[oar.ir.run] the program takes ", vs.size(), " ", kind,
            "(s), got ", ts.size());
  for (size_t i = 0; i < vs.size(); ++i) {
    const Tensor& t = ts[i];
    const Type& want = vs[i].value->type();
    OAR_CHECK(t.defined(), Type, "[oar.ir.run] ", kind, " '", vs[i].name, "' must be a Tensor");
    OAR_CHECK(matches(want, t), Value, "[oar.ir.run] ", kind, " '", vs[i].name, "' expects ", want.str(),
              ", got ", Type::of(t).str());
    env[vs[i].value] = t;
  }
}

}  // namespace

Tensors run(const Program& p, std::span<const Tensor> inputs, std::span<const Tensor> parameters) {
  std::unordered_map<const Value*, Tensor> env;
  bind(env, p.inputs(), inputs, "input");
  bind(env, p.parameters(), parameters, "parameter");
  // A value's tensor is dropped after its last reader, so intermediates free
  // as they would in eager code.
  std::unordered_map<const Value*, size_t> remaining;
  for (const auto& op : p.body().operations())
    for (Value* v : op->operands())
      if (v) ++remaining[v];
  for (const auto& op : p.body().operations()) {
    OAR_CHECK(op->num_regions() == 0, NotImplemented, "[oar.ir.run] op '", op->name(),
              "' has control-flow regions, which the executor does not run yet");
    Tensors in;
    for (size_t i = 0; i < op->num_operands(); ++i) {
      Value* v = op->operand(i);
      if (!v) {
        in.push_back(Tensor());
        continue;
      }
      auto it = env.find(v);
      OAR_CHECK(it != env.end(), Value, "[oar.ir.run] operand ", i, " of op '", op->name(),
                "' is not defined before it is used (run verify() on the program)");
      in.push_back(it->second);
    }
    Tensors out = dispatch(op->def(), std::span<const Tensor>(in.data(), in.size()), op->attrs());
    OAR_CHECK(out.size() == op->num_results(), Runtime, "[oar.ir.run] op '", op->name(), "' returned ", out.size(),
              " result(s), the program expects ", op->num_results());
    for (size_t i = 0; i < out.size(); ++i) env[op->result(i)] = std::move(out[i]);
    for (Value* v : op->operands())
      if (v && --remaining[v] == 0 && !v->is_block_argument()) {
        bool is_output = false;
        for (Value* y : p.body().yields()) is_output = is_output || y == v;
        if (!is_output) env.erase(v);
      }
  }
  Tensors outs;
  for (Value* y : p.body().yields()) {
    auto it = env.find(y);
    OAR_CHECK(y && it != env.end(), Value, "[oar.ir.run] a program output is not defined");
    outs.push_back(it->second);
  }
  return outs;
}

}  // namespace oar::ir

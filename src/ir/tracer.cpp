#include "ir/tracer.h"

#include <algorithm>

#include "autograd/autograd.h"
#include "ops/dispatch.h"

namespace oar::ir {

namespace {

std::vector<Tracer*>& tracer_stack() {
  thread_local std::vector<Tracer*> s;
  return s;
}

// Turns dispatch stage 1 off while an op runs eagerly under the trace, so the
// ops a kernel or composite calls internally are not recorded a second time.
struct TracingOff {
  bool prev;
  TracingOff() : prev(dispatch_state().tracing) { dispatch_state().tracing = false; }
  ~TracingOff() { dispatch_state().tracing = prev; }
};

bool trace_hook(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensors& out) {
  auto& stack = tracer_stack();
  if (stack.empty()) return false;
  // Autograd records as in eager mode, so gradients taken inside the trace
  // (oar.grad, append_backward) run the ops' gradient rules through dispatch,
  // and are captured too: the backward becomes part of the program.
  const bool track = op.grad && grad_enabled() && any_requires_grad(inputs);
  {
    TracingOff off;
    NoGradGuard ng;
    out = run_eager(op, inputs, attrs);
  }
  for (Tracer* t : stack) t->record(op, inputs, attrs, out);
  if (track) record_op(op, inputs, attrs, out);
  return true;
}

bool trace_inplace_hook(const OpDef& op, Tensor& self, std::span<const Tensor> inputs, const Attrs& attrs) {
  auto& stack = tracer_stack();
  // Operands are read before the write changes the storage version.
  std::vector<std::pair<Tracer*, std::vector<Value*>>> takers;
  for (Tracer* t : stack) {
    std::vector<Value*> operands;
    if (t->inplace_operands(op, self, inputs, &operands)) takers.emplace_back(t, std::move(operands));
  }
  if (takers.empty()) return false;
  {
    TracingOff off;
    NoGradGuard ng;
    dispatch_inplace(op, self, inputs, attrs);
  }
  for (auto& [t, operands] : takers) t->record_inplace(op, self, attrs, operands);
  return true;
}

const bool kInstalled = (install_tracer(), true);

}  // namespace

void install_tracer() {
  dispatch_hooks().trace = trace_hook;
  dispatch_hooks().trace_inplace = trace_inplace_hook;
}

bool is_tracing() { return !tracer_stack().empty(); }

Tracer::Tracer() : program_(std::make_unique<Program>()) {
  (void)kInstalled;
  install_tracer();
  prev_tracing_ = dispatch_state().tracing;
  tracer_stack().push_back(this);
  dispatch_state().tracing = true;
}

Tracer::~Tracer() {
  auto& stack = tracer_stack();
  auto it = std::find(stack.begin(), stack.end(), this);
  if (it != stack.end()) stack.erase(it);
  dispatch_state().tracing = prev_tracing_ || !stack.empty();
}

std::string Tracer::unique_name(const std::string& base) {
  std::string name = base.empty() ? "x" : base;
  int& n = used_names_[name];
  if (n++ == 0) return name;
  // The suffixed name may itself be taken; keep counting.
  for (;;) {
    std::string cand = name + "_" + std::to_string(n - 1);
    if (used_names_[cand]++ == 0) return cand;
    ++n;
  }
}

Value* Tracer::add_input(const std::string& name, const Tensor& example, const Dims& dynamic_dims) {
  OAR_CHECK(active_, Runtime, "[oar.ir.trace] add_input after the trace finished");
  OAR_CHECK(example.defined(), Type, "[oar.ir.trace] input '", name, "' must be a Tensor");
  // One tensor cannot stand for two inputs: ops reading it would have to
  // pick one of them.
  auto seen = map_.find(example.impl());
  OAR_CHECK(seen == map_.end() || !(seen->second.traced && seen->second.value->is_block_argument()), Value, "[oar.ir.trace] input '", name,
            "' is the same tensor as an earlier input; pass it once (or a copy)");
  Type t = Type::of(example);
  const int64_t rank = int64_t(t.shape.size());
  for (int64_t d : dynamic_dims) {
    OAR_CHECK(d >= -rank && d < rank, Index, "[oar.ir.trace] dynamic dim ", d, " is out of range for input '",
              name, "' of rank ", rank);
    t.shape[size_t(d < 0 ? d + rank : d)] = kDynamic;
  }
  Value* v = program_->add_input(unique_name(name), std::move(t));
  map_tensor(example, v, true);
  return v;
}

void Tracer::name_parameter(const std::string& name, const Tensor& t) {
  OAR_CHECK(t.defined(), Type, "[oar.ir.trace] parameter '", name, "' must be a Tensor");
  param_names_.emplace(&t.storage(), std::make_pair(t, name));
}

namespace {
bool same_geometry(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.strides() == b.strides() && a.offset() == b.offset();
}
}  // namespace

const std::string* Tracer::parameter_name(const Tensor& t) const {
  auto range = param_names_.equal_range(&t.storage());
  const std::string* alias = nullptr;
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.first.same(t)) return &it->second.second;
    if (!alias && same_geometry(it->second.first, t)) alias = &it->second.second;
  }
  return alias;
}

void Tracer::map_tensor(const Tensor& t, Value* v, bool traced) {
  map_[t.impl()] = Entry{t, v, t.storage().version(), traced};
  by_storage_.emplace(&t.storage(), t.impl());
}

Value* Tracer::alias_of(const Tensor& t, const char* user) {
  auto range = by_storage_.equal_range(&t.storage());
  bool aliases_traced = false;
  for (auto it = range.first; it != range.second; ++it) {
    auto e = map_.find(it->second);
    if (e == map_.end()) continue;
    const Tensor& k = e->second.keep;
    if (same_geometry(k, t)) {
      Entry alias = e->second;
      alias.keep = t;
      map_[t.impl()] = alias;
      return alias.value;
    }
    aliases_traced = aliases_traced || e->second.traced;
  }
  OAR_CHECK(!aliases_traced, NotImplemented, "[oar.ir.trace] '", user, "' reads a tensor that shares memory with "
            "a traced value but was not made by an op, so the trace cannot follow it; make views with the op "
            "API (reshape, slicing, transpose, ...)");
  return nullptr;
}

Value* Tracer::value_of(const Tensor& t, const char* user) {
  auto it = map_.find(t.impl());
  if (it == map_.end()) {
    if (alias_of(t, user)) it = map_.find(t.impl());
  }
  if (it != map_.end()) {
    OAR_CHECK(it->second.version == t.storage().version(), NotImplemented, "[oar.ir.trace] '", user,
              "' reads a tensor that was modified in place during the trace; in-place ops are not captured, "
              "use the out-of-place form (x = x + y rather than x += y, or paddle.where rather than x[mask] = v)");
    return it->second.value;
  }
  // Produced outside the trace: bound to the tensor at run time.
  const std::string* pn = parameter_name(t);
  const bool constant = pn == nullptr;
  std::string name = constant ? "const_" + std::to_string(num_constants_++) : *pn;
  Value* v = program_->add_parameter(unique_name(name), Type::of(t), constant);
  bindings_.push_back(t);
  map_tensor(t, v, false);
  return v;
}

void Tracer::add_output(const std::string& name, const Tensor& t) {
  OAR_CHECK(active_, Runtime, "[oar.ir.trace] add_output after the trace finished");
  OAR_CHECK(t.defined(), Type, "[oar.ir.trace] output '", name, "' must be a Tensor");
  for (const std::string& n : program_->output_names())
    OAR_CHECK(n != name, Value, "[oar.ir.trace] output name '", name, "' is used twice");
  program_->add_output(name, value_of(t, "output"));
}

void Tracer::record(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, const Tensors& outputs) {
  if (!active_) return;
  std::vector<Value*> operands;
  for (const Tensor& t : inputs) operands.push_back(t.defined() ? value_of(t, op.name.c_str()) : nullptr);
  // A view shares its base's memory: it holds example data only if the base
  // does (a view of a weight is not data an untracked alias could bake in).
  bool traced = true;
  if (op.traits.view && !inputs.empty() && inputs[0].defined()) traced = map_.at(inputs[0].impl()).traced;
  append(op, std::move(operands), attrs, std::span<const Tensor>(outputs.data(), outputs.size()), traced);
}

bool Tracer::inplace_operands(const OpDef& op, const Tensor& self, std::span<const Tensor> inputs,
                              std::vector<Value*>* operands) {
  if (!active_) return false;
  auto it = map_.find(self.impl());
  if (it == map_.end() || !it->second.traced) return false;
  for (const Tensor& t : inputs) operands->push_back(t.defined() ? value_of(t, op.name.c_str()) : nullptr);
  return true;
}

void Tracer::record_inplace(const OpDef& op, const Tensor& self, const Attrs& attrs,
                            const std::vector<Value*>& operands) {
  append(op, operands, attrs, std::span<const Tensor>(&self, 1), true);
}

void Tracer::append(const OpDef& op, std::vector<Value*> operands, const Attrs& attrs,
                    std::span<const Tensor> outputs, bool traced) {
  std::vector<const Type*> operand_types;
  bool any_dynamic = false;
  for (Value* v : operands) {
    operand_types.push_back(v ? &v->type() : nullptr);
    any_dynamic = any_dynamic || (v && v->type().is_dynamic());
  }
  std::vector<Type> types;
  for (const Tensor& o : outputs) types.push_back(o.defined() ? Type::of(o) : Type{});
  std::string note;
  if (op.traits.dynamic_shape) {
    for (Type& t : types) std::fill(t.shape.begin(), t.shape.end(), kDynamic);
  } else if (any_dynamic) {
    InferResult r = infer_result_types(op, std::span<const Type* const>(operand_types.data(), operand_types.size()),
                                       attrs);
    // The symbolic types must agree with what the example produced.
    bool agree = r.types && r.types->size() == types.size();
    for (size_t i = 0; agree && i < types.size(); ++i) {
      const Type& s = (*r.types)[i];
      agree = s.dtype == types[i].dtype && s.shape.size() == types[i].shape.size();
      for (size_t d = 0; agree && d < s.shape.size(); ++d)
        agree = s.shape[d] == kDynamic || s.shape[d] == types[i].shape[d];
    }
    if (agree) {
      types = std::move(*r.types);
    } else {
      note = "dynamic dims kept concrete: " +
             (r.error.empty() ? std::string("infer_meta disagrees with the example's shapes") : r.error);
    }
  }
  Operation* o = program_->body().append(op, std::span<Value* const>(operands.data(), operands.size()), attrs,
                                         std::span<const Type>(types.data(), types.size()));
  if (!note.empty()) {
    program_->notes().push_back("op #" + std::to_string(program_->body().operations().size() - 1) + " '" +
                                op.name + "': " + note);
    o->mark_example_shapes(note);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].defined()) map_tensor(outputs[i], o->result(i), traced);
}

std::unique_ptr<Program> Tracer::finish() {
  OAR_CHECK(active_, Runtime, "[oar.ir.trace] the trace already finished");
  active_ = false;
  map_.clear();
  by_storage_.clear();
  return std::move(program_);
}

}  // namespace oar::ir

#include "ir/tracer.h"

#include <algorithm>
#include <unordered_set>

#include "autograd/autograd.h"
#include "ir/executor.h"
#include "ops/control_flow.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::ir {

namespace {

std::vector<Tracer*>& tracer_stack() {
  thread_local std::vector<Tracer*> s;
  return s;
}

// > 0 while a while_loop's remaining iterations run eagerly during a trace.
thread_local int t_paused = 0;

// Storages written in place while a trace was open on this thread by a write
// no tracer captured (a write through a view of bound data). value_of keeps
// refusing to read tensors on them; a write made outside every trace (an
// optimizer step between static-mode runs) is not listed, and a bound tensor
// it changed is still read correctly through its binding. Cleared when the
// last tracer of the thread ends.
std::unordered_set<const void*>& uncaptured_writes() {
  thread_local std::unordered_set<const void*> s;
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
  if (takers.empty()) {
    if (!stack.empty()) uncaptured_writes().insert(&self.storage());
    return false;
  }
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

bool is_tracing() {
  if (t_paused) return false;
  for (Tracer* t : tracer_stack())
    if (t->active()) return true;
  return false;
}

Tracer::Tracer() : program_(std::make_unique<Program>()) {
  (void)kInstalled;
  frames_.push_back(Frame{&program_->body(), {}});
  install_tracer();
  prev_tracing_ = dispatch_state().tracing;
  tracer_stack().push_back(this);
  dispatch_state().tracing = true;
}

Tracer::~Tracer() {
  auto& stack = tracer_stack();
  auto it = std::find(stack.begin(), stack.end(), this);
  if (it != stack.end()) stack.erase(it);
  if (stack.empty()) uncaptured_writes().clear();
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
  OAR_CHECK(seen == map_.end() ||
                !(seen->second.traced && seen->second.value && seen->second.value->is_block_argument()),
            Value, "[oar.ir.trace] input '", name,
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
  if (frames_.size() > 1) frames_.back().mapped.push_back(t.impl());
}

bool Tracer::alias_of(const Tensor& t, const char* user) {
  auto range = by_storage_.equal_range(&t.storage());
  bool aliases_traced = false;
  const Entry* closed = nullptr;
  for (auto it = range.first; it != range.second; ++it) {
    auto e = map_.find(it->second);
    if (e == map_.end()) continue;
    const Tensor& k = e->second.keep;
    if (same_geometry(k, t)) {
      // A closed region's tensor (a loop's argument, a branch result) may
      // share its storage with a tensor that is still visible: prefer that.
      if (e->second.closed) {
        closed = &e->second;
        continue;
      }
      Entry alias = e->second;
      alias.keep = t;
      map_[t.impl()] = alias;
      if (frames_.size() > 1) frames_.back().mapped.push_back(t.impl());
      return true;
    }
    aliases_traced = aliases_traced || e->second.traced;
  }
  if (closed) {
    Entry alias = *closed;  // value_of then reports the closed region
    alias.keep = t;
    map_[t.impl()] = alias;
    return true;
  }
  OAR_CHECK(!aliases_traced, NotImplemented, "[oar.ir.trace] '", user, "' reads a tensor that shares memory with "
            "a traced value but was not made by an op, so the trace cannot follow it; make views with the op "
            "API (reshape, slicing, transpose, ...)");
  return false;
}

const Value* Tracer::find(const Tensor& t) const {
  auto it = map_.find(t.impl());
  return it == map_.end() || it->second.closed ? nullptr : it->second.value;
}

std::optional<Type> traced_type(const Tensor& t) {
  auto& stack = tracer_stack();
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if (!(*it)->active()) continue;
    const Value* v = (*it)->find(t);
    if (v) return v->type();
    return std::nullopt;
  }
  return std::nullopt;
}

Value* Tracer::value_of(const Tensor& t, const char* user) {
  auto it = map_.find(t.impl());
  if (it == map_.end() && alias_of(t, user)) it = map_.find(t.impl());
  if (it != map_.end()) {
    OAR_CHECK(!it->second.closed, NotImplemented, "[oar.ir.trace] '", user, "' reads a tensor computed inside a "
              "control-flow region (a cond or switch_case branch, or a while_loop body) after the region ended; "
              "return it from the branch or body function and use the result instead. (Gradients through a "
              "captured control-flow op cannot be taken inside the trace: run the program and differentiate its "
              "outputs.)");
    // A tensor bound from outside (a parameter, or a view of one) that was
    // written outside the trace since it was mapped (an optimizer step between
    // static-mode runs) is still read through its binding at run time, so the
    // mapping stays valid: refresh its version. Traced values, bound data
    // whose storage the program itself updates, and storages written during
    // the trace by a write it did not capture (uncaptured_writes) hold data
    // that the write made stale, so those keep raising.
    if (it->second.version != t.storage().version() && !it->second.traced &&
        !uncaptured_writes().count(&t.storage())) {
      // record_inplace maps a bound tensor it updates to the update's (traced)
      // result and keeps its parameter: such an entry on the same storage
      // marks a pending state update.
      bool pending = false;
      auto range = by_storage_.equal_range(&t.storage());
      for (auto s = range.first; s != range.second && !pending; ++s) {
        auto e = map_.find(s->second);
        pending = e != map_.end() && e->second.param && e->second.traced;
      }
      if (!pending) it->second.version = t.storage().version();
    }
    OAR_CHECK(it->second.version == t.storage().version(), NotImplemented, "[oar.ir.trace] '", user,
              "' reads a tensor that was modified in place during the trace by a write the trace cannot follow "
              "into it (a write to another tensor sharing its memory); use the out-of-place form (x = x + y rather "
              "than x += y, or paddle.where rather than x[mask] = v)");
    return it->second.value;
  }
  // Produced outside the trace: bound to the tensor at run time.
  const std::string* pn = parameter_name(t);
  const bool constant = pn == nullptr;
  std::string name = constant ? "const_" + std::to_string(num_constants_++) : *pn;
  Value* v = program_->add_parameter(unique_name(name), Type::of(t), constant);
  bindings_.push_back(t);
  map_tensor(t, v, false);
  map_[t.impl()].param = v;
  return v;
}

namespace {
const Block* block_of(const Value* v) {
  return v->is_block_argument() ? v->owner_block() : v->defining_op()->parent();
}
}  // namespace

void Tracer::push_region(Block& region, std::span<const Tensor> args) {
  OAR_CHECK(region.parent_op() && region.parent_op()->parent() == &current_block(), Value,
            "[oar.ir.trace] push_region: the region must belong to an op of the block being recorded");
  OAR_CHECK(args.size() == region.num_arguments(), Value, "[oar.ir.trace] push_region: the region takes ",
            region.num_arguments(), " argument(s), got ", args.size());
  frames_.push_back(Frame{&region, {}});
  for (size_t i = 0; i < args.size(); ++i) map_tensor(args[i], region.argument(i), true);
}

void Tracer::pop_region() {
  OAR_CHECK(frames_.size() > 1, Value, "[oar.ir.trace] pop_region without an open region");
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  for (const TensorImpl* impl : f.mapped) {
    auto it = map_.find(impl);
    if (it == map_.end() || it->second.closed) continue;
    Entry& e = it->second;
    if (e.value && block_of(e.value) == f.block) {
      e.closed = true;
      e.value = nullptr;
      e.param = nullptr;
    } else if (frames_.size() > 1) {
      // Mapped in the region to an enclosing value: it stays visible, and
      // closes with the block that value belongs to.
      frames_.back().mapped.push_back(impl);
    }
  }
}

void Tracer::bind(const Tensor& t, Value* v) { map_tensor(t, v, true); }

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
  if (it == map_.end() && alias_of(self, op.name.c_str())) it = map_.find(self.impl());
  bool bound = false;
  if (it == map_.end()) {
    // Data from outside that the trace has not read yet. It becomes a
    // parameter unless it shares memory with something already mapped (a
    // view of bound data: the write is not captured).
    if (by_storage_.count(&self.storage())) return false;
    value_of(self, op.name.c_str());
    bound = true;
  } else if (it->second.closed) {
    value_of(self, op.name.c_str());  // raises: the region that computed it has ended
  } else if (it->second.param) {
    bound = true;
  } else if (!it->second.traced) {
    return false;  // a view of bound data
  }
  if (frames_.size() > 1) {
    OAR_CHECK(!bound, NotImplemented, "[oar.ir.trace] '", op.name, "_' writes in place to a parameter or buffer "
              "inside a control-flow region (cond, switch_case or while_loop); such state updates are captured "
              "only outside control flow. Move the update out of the branch, or return the new value from it");
    const Value* v = map_.at(self.impl()).value;
    OAR_CHECK(v && block_of(v) == &current_block(), NotImplemented, "[oar.ir.trace] '", op.name,
              "_' writes in place, inside a control-flow region, to a tensor defined outside it; return the new "
              "value from the branch or body function instead");
  }
  for (const Tensor& t : inputs) operands->push_back(t.defined() ? value_of(t, op.name.c_str()) : nullptr);
  return true;
}

void Tracer::record_inplace(const OpDef& op, const Tensor& self, const Attrs& attrs,
                            const std::vector<Value*>& operands) {
  auto it = map_.find(self.impl());
  Value* param = it != map_.end() ? it->second.param : nullptr;
  append(op, operands, attrs, std::span<const Tensor>(&self, 1), true);
  if (param) {
    Entry& e = map_.at(self.impl());
    e.param = param;
    program_->set_state_update(param, e.value);
  }
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
    // The data decides how many entries come out (nonzero's count, unique's
    // values): dim 0. The other dims follow the input's rank and shape.
    for (Type& t : types)
      if (!t.shape.empty()) t.shape[0] = kDynamic;
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
  Block& block = current_block();
  Operation* o = block.append(op, std::span<Value* const>(operands.data(), operands.size()), attrs,
                              std::span<const Type>(types.data(), types.size()));
  if (!note.empty()) {
    program_->notes().push_back(std::string(frames_.size() > 1 ? "region op #" : "op #") +
                                std::to_string(block.operations().size() - 1) + " '" + op.name + "': " + note);
    o->mark_example_shapes(note);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].defined()) map_tensor(outputs[i], o->result(i), traced);
}

std::unique_ptr<Program> Tracer::finish() {
  OAR_CHECK(active_, Runtime, "[oar.ir.trace] the trace already finished");
  OAR_CHECK(frames_.size() == 1, Runtime, "[oar.ir.trace] the trace finished inside a control-flow region");
  active_ = false;
  map_.clear();
  by_storage_.clear();
  frames_.clear();
  return std::move(program_);
}



// ---- control flow (Note [tracing control flow]) ------------------------------

namespace {

// The results of a captured control-flow op: their history leads to what ran
// eagerly, but a backward through them while tracing would record only that
// branch (or those iterations) into the program, silently specialised to the
// example, so it is refused.
struct ControlFlowResultNode final : Node {
  std::string op;
  size_t n = 0;
  std::string name() const override { return op + "_grad"; }
  int num_outputs() const override { return int(n); }
  Tensors apply(Tensors& grads) override {
    OAR_CHECK(!is_tracing(), NotImplemented, "[oar.ir.trace] gradients through a captured ", op,
              " cannot be taken while tracing (the backward of a control-flow op is not captured); run the "
              "captured program and differentiate its outputs instead");
    return grads;
  }
};

// New tensors sharing the data of `sources`, whose gradients flow to them.
Tensors fresh_results(const std::string& op, const Tensors& sources) {
  Tensors out;
  for (const Tensor& t : sources) out.push_back(detach(t));
  if (grad_enabled() && any_requires_grad(std::span<const Tensor>(sources.data(), sources.size()))) {
    auto node = std::make_shared<ControlFlowResultNode>();
    node->op = op;
    node->n = sources.size();
    for (const Tensor& t : sources) node->next.push_back(gradient_edge(t));
    for (size_t i = 0; i < out.size(); ++i) {
      AutogradMeta& m = out[i].autograd_meta();
      m.stop_gradient = false;
      m.grad_fn = node;
      m.output_nr = int(i);
    }
  }
  return out;
}

std::vector<Tracer*> active_tracers() {
  std::vector<Tracer*> ts;
  for (Tracer* t : tracer_stack())
    if (t->active()) ts.push_back(t);
  return ts;
}

// Dispatch stage 1 off and is_tracing() false: the remaining iterations of a
// while_loop run as plain eager code.
struct PauseTracing {
  TracingOff off;
  PauseTracing() { ++t_paused; }
  ~PauseTracing() { --t_paused; }
};

// One control-flow op being recorded into every active tracer. If recording
// fails (a branch raises), the destructor closes the open regions and removes
// the op, so the programs stay well formed.
struct Recording {
  std::vector<Tracer*> tracers;
  std::vector<Operation*> ops;
  std::vector<size_t> depth;  // each tracer's region depth at the op's block
  bool done = false;

  Recording(const OpDef& def, std::span<const Tensor> operands, const Attrs& attrs, size_t num_regions,
            const char* api)
      : tracers(active_tracers()) {
    // Operands first, in every tracer: a lookup may raise, and no op is appended before all succeed.
    std::vector<std::vector<Value*>> vs(tracers.size());
    for (size_t k = 0; k < tracers.size(); ++k)
      for (const Tensor& x : operands) vs[k].push_back(tracers[k]->lookup(x, api));
    for (size_t k = 0; k < tracers.size(); ++k) {
      Operation* op =
          tracers[k]->current_block().append(def, std::span<Value* const>(vs[k].data(), vs[k].size()), attrs, {});
      for (size_t r = 0; r < num_regions; ++r) op->add_region();
      ops.push_back(op);
      depth.push_back(tracers[k]->region_depth());
    }
  }
  ~Recording() {
    if (done) return;
    for (size_t k = 0; k < tracers.size(); ++k) {
      while (tracers[k]->region_depth() > depth[k]) tracers[k]->pop_region();
      ops[k]->parent()->erase(ops[k]);
    }
  }
  // Opens region r of the op in every tracer, mapping `args` to its arguments
  // of types `arg_types[k]` (per tracer).
  void open(size_t r, std::span<const Tensor> args, const std::vector<std::vector<Type>>& arg_types) {
    for (size_t k = 0; k < tracers.size(); ++k) {
      Block& b = ops[k]->region(r);
      b.clear();
      for (const Type& ty : arg_types.empty() ? std::vector<Type>{} : arg_types[k]) b.add_argument(ty);
      tracers[k]->push_region(b, args);
    }
  }
  // Yields `outs` from the open region and closes it; returns the yielded types per tracer.
  std::vector<std::vector<Type>> close(const Tensors& outs, const char* api) {
    std::vector<std::vector<Type>> types(tracers.size());
    for (size_t k = 0; k < tracers.size(); ++k) {
      Block& b = tracers[k]->current_block();
      for (const Tensor& t : outs) {
        Value* v = tracers[k]->lookup(t, api);
        b.add_yield(v);
        types[k].push_back(v->type());
      }
    }
    for (Tracer* t : tracers) t->pop_region();
    return types;
  }
  // Gives op k its results and maps the eager results to them.
  void finish(const std::vector<std::vector<Type>>& result_types, const Tensors& eager) {
    for (size_t k = 0; k < tracers.size(); ++k)
      for (size_t i = 0; i < result_types[k].size(); ++i) {
        Value* v = ops[k]->add_result(result_types[k][i]);
        tracers[k]->bind(eager[i], v);
      }
    done = true;
  }
};

void check_outputs(const Tensors& outs, const char* api, const std::string& who) {
  for (size_t i = 0; i < outs.size(); ++i)
    OAR_CHECK(outs[i].defined(), Type, "[", api, "] ", who, " must return Tensors, output ", i, " is None");
}

std::string dims_str(const Dims& d) { return ops::shape_str(d); }

// cond and switch_case: every branch recorded, the example's branch returned.
Tensors trace_branches(const OpDef& def, const Tensor& selector, const Attrs& attrs, std::span<const BranchFn> fns,
                       const std::vector<std::string>& names, size_t chosen, const char* api) {
  if (!is_tracing()) return fns[chosen]();  // plain eager control flow
  Recording rec(def, std::span<const Tensor>(&selector, 1), attrs, fns.size(), api);
  const bool index = &def == &kSwitchCase;
  for (size_t k = 0; k < rec.tracers.size(); ++k) {
    const Type& st = rec.ops[k]->operand(0)->type();
    std::string bad = check_selector(st.dtype, st.shape, index);
    OAR_CHECK(bad.empty(), Value, "[", api, "] ", index ? "branch_index " : "pred ", bad);
  }
  std::vector<std::vector<std::vector<Type>>> types;  // [region][tracer][result]
  Tensors chosen_out;
  size_t n = 0;
  for (size_t r = 0; r < fns.size(); ++r) {
    rec.open(r, {}, {});
    Tensors outs = fns[r]();
    check_outputs(outs, api, names[r]);
    if (r == 0) n = outs.size();
    OAR_CHECK(outs.size() == n, Value, "[", api, "] ", names[r], " returns ", outs.size(), " tensor(s) but ",
              names[0], " returns ", n, "; every branch must return the same structure");
    types.push_back(rec.close(outs, api));
    if (r == chosen) chosen_out = outs;
  }
  // Result types: the branches' dtypes and ranks must agree; a dim on which
  // they differ is dynamic.
  std::vector<std::vector<Type>> result(rec.tracers.size());
  for (size_t k = 0; k < rec.tracers.size(); ++k)
    for (size_t i = 0; i < n; ++i) {
      Type t = types[0][k][i];
      for (size_t r = 1; r < fns.size(); ++r) {
        const Type& o = types[r][k][i];
        OAR_CHECK(o.dtype == t.dtype && o.shape.size() == t.shape.size(), Value, "[", api, "] output ", i, " is ",
                  dtype_name(t.dtype), dims_str(t.shape), " in ", names[0], " but ", dtype_name(o.dtype),
                  dims_str(o.shape), " in ", names[r], "; branches must return the same dtypes and ranks");
        for (size_t d = 0; d < t.shape.size(); ++d)
          if (t.shape[d] != o.shape[d]) t.shape[d] = kDynamic;
      }
      result[k].push_back(std::move(t));
    }
  Tensors eager = fresh_results(def.name, chosen_out);
  rec.finish(result, eager);
  return eager;
}

int64_t example_selector(const Tensor& t, const char* api, bool index) {
  OAR_CHECK(t.defined(), Type, "[", api, "] ", index ? "branch_index" : "pred", " must be a Tensor");
  std::string bad = check_selector(t.dtype(), t.shape(), index);
  OAR_CHECK(bad.empty(), Value, "[", api, "] ", index ? "branch_index " : "pred ", bad);
  Tensor c = t;
  switch (t.dtype()) {
    case DType::Bool: return *c.data<bool>() ? 1 : 0;
    case DType::UInt8: return *c.data<uint8_t>();
    case DType::Int8: return *c.data<int8_t>();
    case DType::Int16: return *c.data<int16_t>();
    case DType::Int32: return *c.data<int32_t>();
    default: return *c.data<int64_t>();
  }
}

}  // namespace

Tensors trace_cond(const Tensor& pred, const BranchFn& then_fn, const BranchFn& else_fn, const char* api) {
  const size_t chosen = example_selector(pred, api, false) ? 0 : 1;
  const BranchFn fns[] = {then_fn, else_fn};
  return trace_branches(kCond, pred, no_attrs(), fns, {"true_fn", "false_fn"}, chosen, api);
}

Tensors trace_switch_case(const Tensor& index, const Dims& keys, std::span<const BranchFn> fns, const char* api) {
  OAR_CHECK(fns.size() == keys.size() + 1, Value, "[", api, "] expected one function per branch index (",
            keys.size(), ") and a default, got ", fns.size(), " function(s)");
  const int64_t s = example_selector(index, api, true);
  size_t chosen = keys.size();
  std::vector<std::string> names;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == s) chosen = i;
    names.push_back("branch " + std::to_string(keys[i]));
    for (size_t j = 0; j < i; ++j)
      OAR_CHECK(keys[j] != keys[i], Value, "[", api, "] branch index ", keys[i], " appears twice");
  }
  names.push_back("default");
  return trace_branches(kSwitchCase, index, Attrs{keys}, fns, names, chosen, api);
}

Tensors trace_while_loop(const LoopCondFn& cond, const LoopBodyFn& body, const Tensors& loop_vars, const char* api,
                         int64_t max_iterations) {
  const size_t n = loop_vars.size();
  OAR_CHECK(n > 0, Value, "[", api, "] loop_vars must not be empty");
  check_outputs(loop_vars, api, "loop_vars");
  const int64_t limit = max_iterations > 0 ? max_iterations : max_loop_iterations();
  // Runs the loop eagerly from `vals`, which `done` iterations produced.
  auto eager_loop = [&](Tensors vals, int64_t done) {
    for (int64_t it = done;; ++it) {
      Tensor q = cond(vals);
      OAR_CHECK(q.defined(), Type, "[", api, "] cond must return a Tensor");
      if (!example_selector(q, api, false)) return vals;
      OAR_CHECK(it < limit, Runtime, "[", api, "] the loop ran ", limit, " iterations and its condition is still "
                "true; if it is meant to run longer, raise the limit with oar.static.nn.set_max_loop_iterations(n)");
      Tensors next = body(vals);
      check_outputs(next, api, "body");
      OAR_CHECK(next.size() == n, Value, "[", api, "] body must return ", n, " loop value(s), got ", next.size());
      vals = std::move(next);
    }
  };
  if (!is_tracing()) return eager_loop(loop_vars, 0);
  Recording rec(kWhileLoop, std::span<const Tensor>(loop_vars.data(), loop_vars.size()), no_attrs(), 2, api);
  // Loop value types: the initial values' types, with the dims the body changes made dynamic.
  std::vector<std::vector<Type>> types(rec.tracers.size());
  for (size_t k = 0; k < rec.tracers.size(); ++k)
    for (size_t i = 0; i < n; ++i) types[k].push_back(rec.ops[k]->operand(i)->type());
  auto args = [&] { return fresh_results("while_loop", loop_vars); };
  Tensors first;  // the body's results on the initial values: the first iteration
  for (int pass = 0;; ++pass) {
    Tensors a = args();
    rec.open(1, std::span<const Tensor>(a.data(), a.size()), types);
    first = body(a);
    check_outputs(first, api, "body");
    OAR_CHECK(first.size() == n, Value, "[", api, "] body must return ", n, " loop value(s) (as many as loop_vars), "
              "got ", first.size());
    for (size_t i = 0; i < n; ++i)
      OAR_CHECK(first[i].dtype() == loop_vars[i].dtype() && first[i].dim() == loop_vars[i].dim(), Value, "[", api,
                "] body must keep the dtype and rank of each loop value: loop_vars[", i, "] is ",
                dtype_name(loop_vars[i].dtype()), dims_str(loop_vars[i].shape()), ", body returned ",
                dtype_name(first[i].dtype()), dims_str(first[i].shape()));
    std::vector<std::vector<Type>> got = rec.close(first, api);
    bool changed = false;
    for (size_t k = 0; k < rec.tracers.size(); ++k)
      for (size_t i = 0; i < n; ++i)
        for (size_t d = 0; d < types[k][i].shape.size(); ++d)
          if (types[k][i].shape[d] != kDynamic && got[k][i].shape[d] != types[k][i].shape[d]) {
            types[k][i].shape[d] = kDynamic;
            changed = true;
          }
    if (!changed) break;
    // Each pass makes at least one more dim dynamic, so this ends; the bound
    // only guards against a body whose result types keep changing.
    OAR_CHECK(pass < 16, Value, "[", api, "] the loop value types do not settle");
  }
  {
    Tensors a = args();
    rec.open(0, std::span<const Tensor>(a.data(), a.size()), types);
    Tensor p = cond(a);
    OAR_CHECK(p.defined(), Type, "[", api, "] cond must return a Tensor");
    Tensors ps{p};
    rec.close(ps, api);
    for (size_t k = 0; k < rec.tracers.size(); ++k) {
      const Type& t = rec.ops[k]->region(0).yield(0)->type();
      std::string bad = check_selector(t.dtype, t.shape, false);
      OAR_CHECK(bad.empty() && t.dtype == DType::Bool, Value, "[", api, "] cond must return a bool tensor with one "
                "element (shape [] or [1]), got ", dtype_name(t.dtype), dims_str(t.shape));
    }
    Tensors vals = loop_vars;
    if (example_selector(p, api, false)) {
      PauseTracing pause;
      vals = eager_loop(first, 1);
    }
    Tensors eager = fresh_results("while_loop", vals);
    rec.finish(types, eager);
    return eager;
  }
}

Tensors trace_py_layer(std::span<const Tensor> inputs, int64_t token, const LoopBodyFn& forward, const char* api) {
  OAR_CHECK(is_tracing(), Runtime, "[", api, "] records a py_layer op, which needs an active trace");
  Recording rec(kPyLayer, inputs, Attrs{token}, 1, api);
  std::vector<std::vector<Type>> types(rec.tracers.size());
  for (size_t k = 0; k < rec.tracers.size(); ++k)
    for (size_t i = 0; i < inputs.size(); ++i) types[k].push_back(rec.ops[k]->operand(i)->type());
  Tensors args;
  for (const Tensor& t : inputs) args.push_back(detach(t));
  rec.open(0, std::span<const Tensor>(args.data(), args.size()), types);
  Tensors outs = forward(args);
  check_outputs(outs, api, "forward");
  std::vector<std::vector<Type>> result_types = rec.close(outs, api);
  Tensors eager;
  for (const Tensor& t : outs) eager.push_back(detach(t));
  rec.finish(result_types, eager);
  return eager;
}

}  // namespace oar::ir

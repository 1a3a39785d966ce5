#include "ir/ir.h"

#include <algorithm>

#include "ops/ops.h"

namespace oar::ir {

bool Type::is_dynamic() const {
  return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d == kDynamic; });
}

std::string Type::str() const {
  std::string s = dtype_name(dtype);
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

// ---- Value -----------------------------------------------------------------

Value::~Value() {
  for (const Use& u : uses_) {
    if (u.op) u.op->operands_[size_t(u.index)] = nullptr;
    else u.block->yields_[size_t(u.index)] = nullptr;
  }
}

void Value::remove_use(const Use& u) {
  auto it = std::find(uses_.begin(), uses_.end(), u);
  if (it != uses_.end()) uses_.erase(it);
}

void Value::replace_all_uses_with(Value* v) {
  if (v == this) return;
  // Setting an operand edits uses_, so work on a copy.
  std::vector<Use> us = uses_;
  for (const Use& u : us) {
    if (u.op) u.op->set_operand(size_t(u.index), v);
    else u.block->set_yield(size_t(u.index), v);
  }
}

// ---- Operation -------------------------------------------------------------

Operation::Operation(const OpDef& def, std::span<Value* const> operands, Attrs attrs,
                     std::span<const Type> result_types, Block* parent)
    : def_(&def), attrs_(std::move(attrs)), operands_(operands.begin(), operands.end()), parent_(parent) {
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_[i]) operands_[i]->add_use(Use{this, nullptr, int(i)});
  results_.reserve(result_types.size());
  for (size_t i = 0; i < result_types.size(); ++i)
    results_.push_back(std::unique_ptr<Value>(new Value(result_types[i], this, nullptr, int(i), "")));
}

Operation::~Operation() { drop_all_references(); }

void Operation::set_operand(size_t i, Value* v) {
  OAR_CHECK(i < operands_.size(), Index, "[oar.ir] op '", name(), "' has ", operands_.size(),
            " operands, cannot set operand ", i);
  if (operands_[i]) operands_[i]->remove_use(Use{this, nullptr, int(i)});
  operands_[i] = v;
  if (v) v->add_use(Use{this, nullptr, int(i)});
}

Value* Operation::add_result(Type t) {
  results_.push_back(std::unique_ptr<Value>(new Value(std::move(t), this, nullptr, int(results_.size()), "")));
  return results_.back().get();
}

Block& Operation::add_region() {
  regions_.push_back(std::make_unique<Block>(this));
  return *regions_.back();
}

void Operation::drop_all_references() {
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_[i]) {
      operands_[i]->remove_use(Use{this, nullptr, int(i)});
      operands_[i] = nullptr;
    }
  for (auto& r : regions_) r->drop_all_references();
}

// ---- Block -----------------------------------------------------------------

Block::~Block() {
  // Uses may point at values defined anywhere in this block (even later ones
  // in a malformed program), so drop them all before anything is destroyed.
  drop_all_references();
  while (!ops_.empty()) ops_.pop_back();
}

void Block::drop_all_references() {
  for (size_t i = 0; i < yields_.size(); ++i)
    if (yields_[i]) {
      yields_[i]->remove_use(Use{nullptr, this, int(i)});
      yields_[i] = nullptr;
    }
  for (auto& op : ops_) op->drop_all_references();
}

void Block::clear() {
  drop_all_references();
  yields_.clear();
  while (!ops_.empty()) ops_.pop_back();
  args_.clear();
}

Value* Block::add_argument(Type t, std::string name) {
  args_.push_back(std::unique_ptr<Value>(new Value(std::move(t), nullptr, this, int(args_.size()), std::move(name))));
  return args_.back().get();
}

void Block::erase_argument(size_t i) {
  OAR_CHECK(i < args_.size(), Index, "[oar.ir] block has ", args_.size(), " arguments, cannot erase argument ", i);
  OAR_CHECK(!args_[i]->has_uses(), Value, "[oar.ir] erase_argument: argument ", i, " still has ",
            args_[i]->uses().size(), " use(s)");
  args_.erase(args_.begin() + std::ptrdiff_t(i));
  for (size_t k = i; k < args_.size(); ++k) args_[k]->index_ = int(k);
}

Operation* Block::append(const OpDef& def, std::span<Value* const> operands, Attrs attrs,
                         std::span<const Type> result_types) {
  return insert(ops_.end(), def, operands, std::move(attrs), result_types);
}

Operation* Block::insert(OpList::iterator pos, const OpDef& def, std::span<Value* const> operands, Attrs attrs,
                         std::span<const Type> result_types) {
  std::unique_ptr<Operation> op(new Operation(def, operands, std::move(attrs), result_types, this));
  Operation* raw = op.get();
  raw->self_ = ops_.insert(pos, std::move(op));
  return raw;
}

void Block::erase(Operation* op) {
  OAR_CHECK(op && op->parent_ == this, Value, "[oar.ir] erase: the op is not in this block");
  for (size_t i = 0; i < op->num_results(); ++i)
    OAR_CHECK(!op->result(i)->has_uses(), Value, "[oar.ir] erase: result ", i, " of op '", op->name(),
              "' still has ", op->result(i)->uses().size(), " use(s)");
  op->drop_all_references();
  ops_.erase(op->self_);
}

void Block::add_yield(Value* v) {
  yields_.push_back(v);
  if (v) v->add_use(Use{nullptr, this, int(yields_.size() - 1)});
}

void Block::set_yield(size_t i, Value* v) {
  OAR_CHECK(i < yields_.size(), Index, "[oar.ir] block has ", yields_.size(), " yields, cannot set yield ", i);
  if (yields_[i]) yields_[i]->remove_use(Use{nullptr, this, int(i)});
  yields_[i] = v;
  if (v) v->add_use(Use{nullptr, this, int(i)});
}

// ---- Program ---------------------------------------------------------------

Value* Program::add_input(std::string name, Type t) {
  Value* v = body_->add_argument(std::move(t), name);
  inputs_.push_back(NamedValue{std::move(name), v, false});
  return v;
}

Value* Program::add_parameter(std::string name, Type t, bool constant) {
  Value* v = body_->add_argument(std::move(t), name);
  params_.push_back(NamedValue{std::move(name), v, constant});
  return v;
}

void Program::erase_parameter(size_t i) {
  OAR_CHECK(i < params_.size(), Index, "[oar.ir] the program has ", params_.size(),
            " parameters, cannot erase parameter ", i);
  Value* v = params_[i].value;
  OAR_CHECK(std::find(update_params_.begin(), update_params_.end(), v) == update_params_.end(), Value,
            "[oar.ir] erase_parameter: parameter '", params_[i].name, "' is updated by the program");
  OAR_CHECK(!v->has_uses(), Value, "[oar.ir] erase_parameter: parameter '", params_[i].name, "' is still used");
  const size_t arg = size_t(v->index());
  params_.erase(params_.begin() + std::ptrdiff_t(i));
  body_->erase_argument(arg);
}

void Program::add_output(std::string name, Value* v) {
  output_names_.push_back(std::move(name));
  body_->add_yield(v);
}

int64_t Program::parameter_index(const Value* v) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].value == v) return int64_t(i);
  return -1;
}

void Program::set_state_update(Value* parameter, Value* value) {
  const int64_t i = parameter_index(parameter);
  OAR_CHECK(i >= 0, Value, "[oar.ir] set_state_update: the updated value is not a parameter of the program");
  OAR_CHECK(value, Value, "[oar.ir] set_state_update: the new value of parameter '", params_[size_t(i)].name,
            "' is missing");
  params_[size_t(i)].constant = false;
  for (size_t k = 0; k < update_params_.size(); ++k)
    if (update_params_[k] == parameter) {
      updates_->set_yield(k, value);
      return;
    }
  update_params_.push_back(parameter);
  updates_->add_yield(value);
}

std::vector<StateUpdate> Program::state_updates() const {
  std::vector<StateUpdate> out;
  for (size_t k = 0; k < update_params_.size(); ++k) out.push_back(StateUpdate{update_params_[k], updates_->yield(k)});
  return out;
}

void Program::clear_state_updates() {
  updates_->clear();
  update_params_.clear();
}

std::vector<NamedValue> Program::outputs() const {
  std::vector<NamedValue> out;
  for (size_t i = 0; i < output_names_.size() && i < body_->num_yields(); ++i)
    out.push_back(NamedValue{output_names_[i], body_->yield(i), false});
  return out;
}

// ---- result type inference (Note [dynamic dims]) ----------------------------

Tensor meta_tensor(const Type& t, int64_t probe) {
  Dims shape = t.shape;
  for (int64_t& d : shape)
    if (d == kDynamic) d = probe;
  checked_numel(shape, "oar.ir");
  // infer_meta reads metadata only; the storage holds no data, so a type of
  // any size costs nothing. The small zeroed buffer (rather than null) keeps
  // a stray read of a scalar harmless.
  alignas(16) static const unsigned char kZeros[64] = {};
  auto storage = make_ref<Storage>(const_cast<unsigned char*>(kZeros), 0, Device{}, [] {});
  return Tensor(make_ref<TensorImpl>(std::move(storage), shape, contiguous_strides(shape), 0, t.dtype));
}

namespace {

// Runs infer_meta on meta tensors; returns false with `error` on rejection.
bool run_meta(const OpDef& def, std::span<const Type* const> types, const Attrs& attrs, int64_t probe,
              Metas& out, std::string& error) {
  try {
    Tensors in;
    for (const Type* t : types) in.push_back(t ? meta_tensor(*t, probe) : Tensor());
    out = infer_metas(def, std::span<const Tensor>(in.data(), in.size()), attrs);
    return true;
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_variant_access&) {
    error = "an attribute has the wrong type";
  } catch (const std::out_of_range&) {
    error = "too few attributes or operands";
  }
  return false;
}

std::vector<Type> to_types(const Metas& m) {
  std::vector<Type> ts;
  for (const TensorMeta& x : m) ts.push_back(Type{x.dtype, x.shape});
  return ts;
}

}  // namespace

InferResult infer_result_types(const OpDef& def, std::span<const Type* const> operand_types, const Attrs& attrs) {
  InferResult r;
  if (!def.infer_meta) {
    r.error = "the op has no infer_meta";
    return r;
  }
  bool dyn = std::any_of(operand_types.begin(), operand_types.end(),
                         [](const Type* t) { return t && t->is_dynamic(); });
  Metas a, b;
  if (!run_meta(def, operand_types, attrs, kDynProbeA, a, r.error)) {
    r.dynamic_rejected = dyn;
    return r;
  }
  std::vector<Type> ta = to_types(a);
  if (dyn) {
    if (!run_meta(def, operand_types, attrs, kDynProbeB, b, r.error)) {
      r.dynamic_rejected = true;
      return r;
    }
    std::vector<Type> tb = to_types(b);
    bool same_ranks = ta.size() == tb.size();
    for (size_t i = 0; same_ranks && i < ta.size(); ++i)
      same_ranks = ta[i].dtype == tb[i].dtype && ta[i].shape.size() == tb[i].shape.size();
    if (!same_ranks) {
      r.error = "the result ranks or dtypes depend on the size of a dynamic dim";
      r.dynamic_rejected = true;
      return r;
    }
    for (size_t i = 0; i < ta.size(); ++i)
      for (size_t d = 0; d < ta[i].shape.size(); ++d)
        if (ta[i].shape[d] != tb[i].shape[d]) ta[i].shape[d] = kDynamic;
  }
  // Data-dependent output sizes are known only after the kernel ran.
  if (def.traits.dynamic_shape)
    for (Type& t : ta) std::fill(t.shape.begin(), t.shape.end(), kDynamic);
  r.types = std::move(ta);
  return r;
}

// ---- numbering -------------------------------------------------------------

namespace {
void number_block(const Block& b, std::unordered_map<const Value*, int>& m) {
  for (size_t i = 0; i < b.num_arguments(); ++i) m.emplace(b.argument(i), int(m.size()));
  for (const auto& op : b.operations()) {
    for (size_t i = 0; i < op->num_results(); ++i) m.emplace(op->result(i), int(m.size()));
    for (size_t i = 0; i < op->num_regions(); ++i) number_block(op->region(i), m);
  }
}
}  // namespace

std::unordered_map<const Value*, int> number_values(const Program& p) {
  std::unordered_map<const Value*, int> m;
  number_block(p.body(), m);
  return m;
}

}  // namespace oar::ir

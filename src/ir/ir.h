// The SSA IR (DESIGN.md §1-2): Program / Block / Operation / Value over the
// same OpDefs that eager dispatch runs. There is no second op registry: an
// Operation points at the OpDef object itself, and its attributes are the
// typed oar::Attrs that the op's infer_meta and kernels read.
//
// Ownership: a Program owns its top Block; a Block owns its arguments and its
// Operations; an Operation owns its results and its region Blocks. Everything
// is held by unique_ptr, so Value*, Operation* and Block* stay valid until the
// owner erases them.
//
// Note [dynamic dims]
// A Type's shape uses -1 for a dim whose size is only known at run time. The
// result types of an op over dynamic operands come from running infer_meta
// twice on data-less "meta" tensors, once with every -1 replaced by
// kDynProbeA and once by kDynProbeB: a result dim that is equal in both runs
// is static, one that differs is dynamic (-1). One probe value is not enough
// (with 1, broadcasting would hide the dynamic dim; with any value the output
// dim cannot be told from a static dim of the same size). If infer_meta
// rejects a probe (for example a reshape whose target shape holds the traced
// batch size), or its answer disagrees with the example (squeeze of a dim
// that happened to be 1), the result types cannot be derived from -1 dims:
// the tracer then keeps the concrete shapes of the example and marks the op
// (Operation::example_shapes), and the verifier checks only the result count
// and dtypes of such an op. Any other op whose operand types infer_meta
// rejects, with or without probes, fails verification. The probes are odd
// primes so that they rarely equal a static dim, and small so that products
// of many dynamic dims stay far from int64 overflow. Ops whose output sizes
// depend on the data (OpTraits::dynamic_shape, e.g. nonzero) get -1 for
// every result dim, and only their dtypes are checked.
#pragma once
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/op.h"

namespace oar::ir {

constexpr int64_t kDynamic = -1;
constexpr int64_t kDynProbeA = 97;
constexpr int64_t kDynProbeB = 101;

struct Type {
  DType dtype = DType::Float32;
  Dims shape;  // -1 marks a dynamic dim

  bool is_dynamic() const;
  bool operator==(const Type& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const Type& o) const { return !(*this == o); }
  std::string str() const;  // "float32[-1,128]"
  static Type of(const Tensor& t) { return Type{t.dtype(), t.shape()}; }
};

class Operation;
class Block;
class Program;

// One use of a Value: operand `index` of `op`, or (op == nullptr) the
// yielded value `index` of `block`.
struct Use {
  Operation* op = nullptr;
  Block* block = nullptr;
  int index = 0;
  bool operator==(const Use& o) const { return op == o.op && block == o.block && index == o.index; }
};

class Value {
 public:
  // Users that outlive the value (an op of another block that was wrongly
  // given it) are left with a null operand rather than a dangling pointer.
  ~Value();
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  const Type& type() const { return type_; }
  void set_type(Type t) { type_ = std::move(t); }
  // The defining op and result index, or null for a block argument.
  Operation* defining_op() const { return op_; }
  // The block this value is an argument of, or null for an op result.
  Block* owner_block() const { return block_; }
  bool is_block_argument() const { return block_ != nullptr; }
  int index() const { return index_; }  // result index or argument index
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  // Points every use of this value at `v` instead.
  void replace_all_uses_with(Value* v);

 private:
  friend class Operation;
  friend class Block;
  Value(Type t, Operation* op, Block* block, int index, std::string name)
      : type_(std::move(t)), op_(op), block_(block), index_(index), name_(std::move(name)) {}
  void add_use(const Use& u) { uses_.push_back(u); }
  void remove_use(const Use& u);

  Type type_;
  Operation* op_ = nullptr;
  Block* block_ = nullptr;
  int index_ = 0;
  std::string name_;
  std::vector<Use> uses_;
};

class Operation {
 public:
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const OpDef& def() const { return *def_; }
  const std::string& name() const { return def_->name; }
  const Attrs& attrs() const { return attrs_; }
  void set_attrs(Attrs a) { attrs_ = std::move(a); }

  // A null operand is an optional input left undefined (e.g. no bias).
  size_t num_operands() const { return operands_.size(); }
  Value* operand(size_t i) const { return operands_[i]; }
  const std::vector<Value*>& operands() const { return operands_; }
  void set_operand(size_t i, Value* v);

  size_t num_results() const { return results_.size(); }
  Value* result(size_t i) const { return results_[i].get(); }
  // Appends a result: control-flow ops learn their result types only after
  // their regions are recorded.
  Value* add_result(Type t);

  size_t num_regions() const { return regions_.size(); }
  Block& region(size_t i) const { return *regions_[i]; }
  Block& add_region();

  Block* parent() const { return parent_; }
  // Result shapes taken from the example run rather than derived from the
  // operand types (Note [dynamic dims]); note() says why. The verifier then
  // checks only the number and dtypes of the results.
  bool example_shapes() const { return example_shapes_; }
  void mark_example_shapes(std::string why) {
    example_shapes_ = true;
    note_ = std::move(why);
  }
  const std::string& note() const { return note_; }

  // Drops every operand and yield use held by this op and its regions, so
  // that the values they point at can be destroyed in any order.
  void drop_all_references();

 private:
  friend class Block;
  friend class Value;
  Operation(const OpDef& def, std::span<Value* const> operands, Attrs attrs, std::span<const Type> result_types,
            Block* parent);

  const OpDef* def_;
  Attrs attrs_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<std::unique_ptr<Block>> regions_;
  Block* parent_ = nullptr;
  std::list<std::unique_ptr<Operation>>::iterator self_;  // position in parent_'s list
  std::string note_;
  bool example_shapes_ = false;
};

class Block {
 public:
  using OpList = std::list<std::unique_ptr<Operation>>;

  explicit Block(Operation* parent_op = nullptr) : parent_op_(parent_op) {}
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Operation* parent_op() const { return parent_op_; }

  Value* add_argument(Type t, std::string name = "");
  size_t num_arguments() const { return args_.size(); }
  // Removes argument `i` (it must have no uses left); later arguments move down one index.
  void erase_argument(size_t i);
  Value* argument(size_t i) const { return args_[i].get(); }

  // Appends an op at the end, or inserts it before `pos`.
  Operation* append(const OpDef& def, std::span<Value* const> operands, Attrs attrs,
                    std::span<const Type> result_types);
  Operation* insert(OpList::iterator pos, const OpDef& def, std::span<Value* const> operands, Attrs attrs,
                    std::span<const Type> result_types);
  // Removes `op`; its results must have no uses left.
  void erase(Operation* op);
  const OpList& operations() const { return ops_; }
  OpList::iterator begin() { return ops_.begin(); }
  OpList::iterator end() { return ops_.end(); }

  // The values this block produces (a region's results, or a program's outputs).
  void add_yield(Value* v);
  void set_yield(size_t i, Value* v);
  size_t num_yields() const { return yields_.size(); }
  Value* yield(size_t i) const { return yields_[i]; }
  const std::vector<Value*>& yields() const { return yields_; }

  void drop_all_references();
  // Removes every op, argument and yield (a region recorded again from scratch).
  void clear();

 private:
  friend class Value;
  Operation* parent_op_;
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
  std::vector<Value*> yields_;
};

struct NamedValue {
  std::string name;
  Value* value = nullptr;
  bool constant = false;  // parameters only: a captured tensor that no caller named
};

// A write to a parameter: at the end of a run the executor stores `value`
// into the tensor bound to `parameter` (e.g. batch-norm running statistics).
struct StateUpdate {
  Value* parameter = nullptr;  // a program parameter
  Value* value = nullptr;      // its new value, defined in the program's body
};

// A program: its top block, whose arguments are the named inputs and the
// named parameters (values bound at run time to tensors held outside the
// program, e.g. layer weights), and whose yields are the named outputs.
//
// State updates (Note [state updates]): in-place writes to parameters are
// recorded as out-of-place ops whose results the program lists as the
// parameters' new values. Each value is held as a yield of a block that
// belongs to no op (updates_block()), so it counts as a use: passes keep its
// producer alive and repoint it like any other use. A parameter with an update
// is never a constant (folding must not read it as one).
class Program {
 public:
  Program() : body_(std::make_unique<Block>()), updates_(std::make_unique<Block>()) {}
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Block& body() const { return *body_; }

  Value* add_input(std::string name, Type t);
  Value* add_parameter(std::string name, Type t, bool constant = false);
  void add_output(std::string name, Value* v);
  // Removes parameter `i` (its value must have no uses left), for passes that
  // drop constants nothing reads; the caller drops its binding too.
  void erase_parameter(size_t i);

  const std::vector<NamedValue>& inputs() const { return inputs_; }
  const std::vector<NamedValue>& parameters() const { return params_; }
  // Output values are the body's yields; passes may repoint them.
  std::vector<NamedValue> outputs() const;
  const std::vector<std::string>& output_names() const { return output_names_; }

  // Records `value` as the new value of `parameter` (replacing an earlier
  // update of it) and marks the parameter non-constant.
  void set_state_update(Value* parameter, Value* value);
  std::vector<StateUpdate> state_updates() const;
  void clear_state_updates();
  // The index of `v` among parameters(), or -1.
  int64_t parameter_index(const Value* v) const;
  const Block& updates_block() const { return *updates_; }

  // Notes left by the tracer (one per op whose dynamic dims had to be kept concrete).
  std::vector<std::string>& notes() { return notes_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::unique_ptr<Block> body_;
  std::unique_ptr<Block> updates_;       // yields: the updated values
  std::vector<Value*> update_params_;  // the parameter of each yield of updates_
  std::vector<NamedValue> inputs_;
  std::vector<NamedValue> params_;
  std::vector<std::string> output_names_;
  std::vector<std::string> notes_;
};

// Result types of `def` over operands of the given types (null: an undefined
// optional operand), per Note [dynamic dims]. `error` is set and the result
// empty when infer_meta rejects the operands; `dynamic_rejected` tells that it
// accepted them with the probes' first value but not with -1 dims in general.
struct InferResult {
  std::optional<std::vector<Type>> types;
  std::string error;
  bool dynamic_rejected = false;
};
InferResult infer_result_types(const OpDef& def, std::span<const Type* const> operand_types, const Attrs& attrs);

// A tensor with the type's shape (dynamic dims replaced by `probe`) and no
// data, for calling infer_meta.
Tensor meta_tensor(const Type& t, int64_t probe = kDynProbeA);

// "%N" numbers in print order (block arguments, then op results, nested
// regions in place); shared by the printer and the verifier's messages.
std::unordered_map<const Value*, int> number_values(const Program& p);

// Throws ErrorKind::Value naming the op and what is wrong.
void verify(const Program& p);
std::string to_string(const Program& p);
std::string attr_str(const AttrValue& a);

}  // namespace oar::ir

// The op definition (DESIGN.md §1): signature, infer_meta, gradient rule,
// SPMD rule, traits and per-(device, dtype) kernels, defined once and run by
// every mode through dispatch().
#pragma once
#include <complex>
#include <span>
#include <string>
#include <variant>

#include "base/error.h"
#include "base/small_vector.h"
#include "tensor/tensor.h"

namespace oar {

using Tensors = SmallVector<Tensor, 4>;

// A typed attribute value.
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::complex<double>, DType,
                               std::string, Dims>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<AttrValue> il) : v_(il) {}
  size_t size() const { return v_.size(); }
  const AttrValue& operator[](size_t k) const { return v_[k]; }
  void push_back(AttrValue a) { v_.push_back(std::move(a)); }

  bool b(size_t k) const { return std::get<bool>(v_[k]); }
  int64_t i(size_t k) const { return std::get<int64_t>(v_[k]); }
  double f(size_t k) const { return std::get<double>(v_[k]); }
  std::complex<double> c(size_t k) const { return std::get<std::complex<double>>(v_[k]); }
  DType dtype(size_t k) const { return std::get<DType>(v_[k]); }
  const std::string& s(size_t k) const { return std::get<std::string>(v_[k]); }
  const Dims& ints(size_t k) const { return std::get<Dims>(v_[k]); }

 private:
  SmallVector<AttrValue, 4> v_;
};

// The empty attribute list, shared (building one per call is not free).
inline const Attrs& no_attrs() {
  static const Attrs a{};
  return a;
}

// Output metadata computed by infer_meta. View ops also give strides and offset.
struct TensorMeta {
  Dims shape;
  DType dtype = DType::Float32;
  Dims strides;        // views only
  int64_t offset = 0;  // views only
};
using Metas = SmallVector<TensorMeta, 2>;

// How autocast treats an op's floating inputs (ops/autocast.h): Promote
// (follow the inputs), Low (the autocast dtype: matmul, conv) or Float32.
enum class CastPolicy : uint8_t { Promote = 0, Low = 1, Float32 = 2 };

struct OpTraits {
  bool elementwise = false;
  bool broadcast = false;
  bool reduction = false;
  bool view = false;           // outputs alias input 0 (strides/offset from infer_meta)
  bool random = false;
  bool side_effect = false;
  bool dynamic_shape = false;  // output shape depends on data; the kernel allocates
};

class GradCtx;
struct OpDef;
// SPMD rule types (ops/spmd.h defines them; see Note [SPMD rule contract]).
struct ProcessMesh;
struct DistSpec;
struct SpmdInfo;

using MetaFn = Metas (*)(std::span<const Tensor> in, const Attrs& attrs);
using KernelFn = void (*)(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs);
// Returns one gradient per input (undefined where none). Written with ops, so
// it is itself differentiable.
using GradFn = Tensors (*)(const GradCtx& ctx);
// Forward SPMD rule: the global shapes and shardings of the inputs in, the
// shardings the op needs its inputs in and those its outputs come out in.
using SpmdFn = SpmdInfo (*)(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& attrs);
// Reverse SPMD rule: from the inputs' shapes and the wanted output shardings
// to the input shardings that produce them.
using SpmdReverseFn = SpmdInfo (*)(const ProcessMesh& mesh, std::span<const DistSpec> in,
                                   std::span<const DistSpec> out, const Attrs& attrs);

struct OpDef {
  std::string name;
  int id = -1;
  SmallVector<const char*, 4> attr_names;
  MetaFn infer_meta = nullptr;
  GradFn grad = nullptr;
  OpTraits traits;
  bool save_inputs = true;   // the gradient rule reads the inputs
  bool save_outputs = false; // the gradient rule reads the outputs
  // Bit i set: input i may be undefined (an optional tensor argument left out).
  // A loaded program may hold a null operand only at such a position:
  // infer_meta reads every other input unchecked.
  uint32_t optional_inputs = 0;
  bool input_optional(size_t i) const { return i < 32 && ((optional_inputs >> i) & 1u); }
  // Null where the op has no rule of its own (ops/spmd.h: spmd_rule_of gives
  // the elementwise default or replicate_all).
  SpmdFn spmd = nullptr;
  SpmdReverseFn spmd_reverse = nullptr;
  // The autocast category the op is defined with (custom lists may change
  // the policy in effect: ops/autocast.h).
  CastPolicy amp = CastPolicy::Promote;
  // Kernel table indexed by device type and by the dtype of input 0 (or of
  // output 0 for ops without tensor inputs).
  KernelFn kernels[kNumDeviceTypes][kNumDTypes] = {};
};

// op.infer_meta(in, attrs), with every output's rank checked against
// kMaxRank (Note [maximum rank]): what every mode calls.
Metas infer_metas(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs);

// The op registry: one OpDef per name, created on first use by whichever of
// the op file or the kernel file registers first.
OpDef& op_def(const std::string& name);
const OpDef* find_op(const std::string& name);
std::span<OpDef* const> all_ops();

struct OpBuilder {
  OpDef& op;
  explicit OpBuilder(const char* name) : op(op_def(name)) {}
  OpBuilder& attrs(std::initializer_list<const char*> names) { op.attr_names = names; return *this; }
  OpBuilder& meta(MetaFn f) { op.infer_meta = f; return *this; }
  OpBuilder& grad(GradFn f) { op.grad = f; return *this; }
  OpBuilder& traits(OpTraits t) { op.traits = t; return *this; }
  OpBuilder& saves(bool inputs, bool outputs) { op.save_inputs = inputs; op.save_outputs = outputs; return *this; }
  // The op's SPMD rule, by name (ops/spmd.cpp: "reduce_sum", "matmul", ...).
  OpBuilder& spmd(const char* rule);
  OpBuilder& amp(CastPolicy p) { op.amp = p; return *this; }
  OpBuilder& optional(std::initializer_list<int> inputs) {
    for (int i : inputs) op.optional_inputs |= 1u << i;
    return *this;
  }
  operator OpDef&() { return op; }
};

// Registers `fn` as the kernel of `op` for `device` and each listed dtype.
void register_kernel(const char* op, DeviceType device, std::initializer_list<DType> dtypes, KernelFn fn);

struct KernelRegistrar {
  KernelRegistrar(const char* op, DeviceType device, std::initializer_list<DType> dtypes, KernelFn fn) {
    register_kernel(op, device, dtypes, fn);
  }
};

}  // namespace oar

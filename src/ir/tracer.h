// Graph capture by tracing: stage 1 of dispatch (DESIGN.md §1).
//
// While a Tracer is alive on this thread, every op that goes through
// dispatch() is appended to its Program. The op still runs eagerly (stage 4
// only, run_eager) on the concrete example tensors, so Python code that reads
// shapes or values keeps working; the outputs are mapped to the new Values.
//   - A tensor produced inside the trace maps to its Value.
//   - A tensor that aliases a mapped one with the same shape, strides and
//     offset (detach() makes these without dispatch) maps to the same Value;
//     any other alias of traced data is an error, since it would be captured
//     as a constant holding the example's values.
//   - Any other tensor becomes a program parameter: named by the caller if it
//     was registered with name_parameter (a layer's named_parameters), else an
//     auto-named constant. bindings() lists the tensor bound to each one.
//   - Inputs may have dynamic dims; result types then follow Note [dynamic
//     dims] in ir.h.
// Autograd records as it does eagerly (stage 5), so gradients taken inside
// the trace are captured as ops of the program; the autocast and distributed
// stages are skipped. An in-place op on a traced
// value is recorded as its out-of-place form, the result becoming the
// tensor's new value; in-place writes to data bound from outside (parameters,
// buffers) are not captured.
//
// Tracers nest: each active tracer on the thread records every op dispatched
// while it is alive, and destroying one restores the previous state.
#pragma once
#include "ir/ir.h"

namespace oar::ir {

class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // A program input fed by `example`; `dynamic_dims` lists the axes whose
  // size may change between runs (negative axes count from the end).
  Value* add_input(const std::string& name, const Tensor& example, const Dims& dynamic_dims = {});
  // Names the parameter that `t` becomes if an op reads it.
  void name_parameter(const std::string& name, const Tensor& t);
  // Marks `t` (a traced value, an input, or a tensor from outside) as an output.
  void add_output(const std::string& name, const Tensor& t);

  Program& program() { return *program_; }
  // The tensor bound to each parameter, in program order.
  const std::vector<Tensor>& bindings() const { return bindings_; }
  // Hands the program over; the tracer stops recording.
  std::unique_ptr<Program> finish();

  // Called by the dispatch hook for each op.
  void record(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, const Tensors& outputs);
  // In-place ops, in two halves around the eager write. Before: the operands,
  // or false when `self` is not a value of this trace (data bound from
  // outside: the write is not captured, as before). After: appends the op as
  // an out-of-place one whose result becomes `self`'s value.
  bool inplace_operands(const OpDef& op, const Tensor& self, std::span<const Tensor> inputs,
                        std::vector<Value*>* operands);
  void record_inplace(const OpDef& op, const Tensor& self, const Attrs& attrs, const std::vector<Value*>& operands);

 private:
  struct Entry {
    Tensor keep;  // holds the TensorImpl alive so its address is not reused
    Value* value;
    uint32_t version;  // storage version when mapped: in-place writes are not captured
    bool traced;       // an input or an op result, not data bound from outside
  };
  Value* value_of(const Tensor& t, const char* user);
  void map_tensor(const Tensor& t, Value* v, bool traced);
  Value* alias_of(const Tensor& t, const char* user);
  void append(const OpDef& op, std::vector<Value*> operands, const Attrs& attrs, std::span<const Tensor> outputs,
              bool traced);
  const std::string* parameter_name(const Tensor& t) const;
  std::string unique_name(const std::string& base);

  std::unique_ptr<Program> program_;
  std::unordered_map<const TensorImpl*, Entry> map_;
  // Mapped tensors by storage, to recognise aliases made outside dispatch (detach).
  std::unordered_multimap<const Storage*, const TensorImpl*> by_storage_;
  // Named tensors by storage, so a same-geometry alias finds its name too.
  std::unordered_multimap<const Storage*, std::pair<Tensor, std::string>> param_names_;
  std::unordered_map<std::string, int> used_names_;
  std::vector<Tensor> bindings_;
  int num_constants_ = 0;
  bool active_ = true;
  bool prev_tracing_ = false;
};

// Installs the tracer as dispatch stage 1 (idempotent; also done when the
// library loads).
void install_tracer();
// Whether a Tracer is active on this thread.
bool is_tracing();

}  // namespace oar::ir

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
// tensor's new value.
//
// Note [state updates]
// An in-place write to data bound from outside (a parameter or buffer, e.g.
// the running statistics batch_norm updates in training mode) is recorded the
// same way, and the result is also listed as the parameter's new value
// (Program::set_state_update); the executor writes it into the bound tensor
// at the end of each run. Only writes to the bound tensor itself (or an alias
// with the same geometry) are captured; a write through a view of it is not
// (later reads of the view then raise), and neither is a write inside a
// control-flow region.
//
// Note [tracing control flow]
// trace_cond / trace_switch_case / trace_while_loop record a control-flow op
// (ops/control_flow.h) into every active tracer. Each branch function runs
// once, eagerly on the example data, while the tracers record its ops into a
// region of the op (push/pop of the current block): tensors read from
// outside map to the enclosing Values (implicit capture), and tensors
// computed inside are closed when the region ends, so reading one later
// raises instead of baking in example data. The eager result is the branch
// the example selector picks (every branch still runs once, so each must be
// valid on the example). A while_loop body is recorded with block arguments
// for the loop values, on the initial values; a dim that the body changes is
// made dynamic (-1) and the body recorded again. The remaining iterations run
// eagerly with tracing paused, to give the example outputs. The results are
// new tensors whose autograd history leads to the branch (or last
// iteration) that ran; backward through them is refused while tracing, since
// the backward of a control-flow op is not captured: gradients flow when the
// captured program runs.
//
// Note [PyLayer in programs]
// A PyLayer applied while tracing (oar.autograd.PyLayer) is recorded as one
// py_layer op whose region holds its forward's ops: the region's arguments
// are the PyLayer's tensor inputs, and it yields the outputs followed by the
// intermediates its forward saved for backward (so the backward, traced
// later, can read them). The attribute `token` names the call in a Python
// registry. When the executor meets the op in the process that traced it,
// it hands it back to Python (the runner, set_py_layer_runner), which applies
// the PyLayer: its forward runs, and when gradients are wanted its Python
// backward is recorded, so a captured program trains with the user's
// gradient, and a joint trace (oar/static/_split.py) captures that
// backward's ops. Anywhere else (a saved program in the C++ runtime, a token
// this process does not know) the executor runs the region: the forward,
// differentiated by its ops' own rules.
//
// Tracers nest: each active tracer on the thread records every op dispatched
// while it is alive, and destroying one restores the previous state.
#pragma once
#include <functional>
#include <optional>

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
  bool active() const { return active_; }
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

  // Control-flow recording (Note [tracing control flow]); trace_cond and the
  // others below drive these on every active tracer.
  // The Value `t` has in the block being recorded.
  Value* lookup(const Tensor& t, const char* user) { return value_of(t, user); }
  // The block ops are recorded into: the program's body or an open region.
  Block& current_block() { return *frames_.back().block; }
  size_t region_depth() const { return frames_.size() - 1; }
  // Records into `region` (a region of an op of the current block) until
  // pop_region; `args` are mapped to the region's arguments.
  void push_region(Block& region, std::span<const Tensor> args);
  // Ends the innermost region: tensors computed in it are closed.
  void pop_region();
  // Maps `t` (an eager result) to `v` in the current block.
  void bind(const Tensor& t, Value* v);
  // The Value `t` has in this trace, or null when it has none yet; unlike
  // lookup it never makes a parameter or checks anything.
  const Value* find(const Tensor& t) const;

 private:
  struct Entry {
    Tensor keep;  // holds the TensorImpl alive so its address is not reused
    Value* value;
    uint32_t version;  // storage version when mapped: in-place writes are not captured
    bool traced;       // an input or an op result, not data bound from outside
    bool closed = false;     // computed in a control-flow region that has ended (value is null)
    Value* param = nullptr;  // the parameter this tensor is bound to (Note [state updates])
  };
  struct Frame {
    Block* block;
    std::vector<const TensorImpl*> mapped;  // tensors mapped while this region was open
  };
  Value* value_of(const Tensor& t, const char* user);
  void map_tensor(const Tensor& t, Value* v, bool traced);
  // Maps `t` to the value of a mapped tensor with the same storage and
  // geometry; false when there is none.
  bool alias_of(const Tensor& t, const char* user);
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
  std::vector<Frame> frames_;  // frames_[0]: the program's body
  int num_constants_ = 0;
  bool active_ = true;
  bool prev_tracing_ = false;
};

// Installs the tracer as dispatch stage 1 (idempotent; also done when the
// library loads).
void install_tracer();
// Whether a Tracer is active on this thread (and not paused by a
// while_loop's eager iterations).
bool is_tracing();
// The type of `t` in the innermost active trace (dynamic dims as -1), or
// nullopt when nothing is tracing or `t` is not a value of that trace.
std::optional<Type> traced_type(const Tensor& t);

// Control-flow capture (Note [tracing control flow]). Each returns the eager
// results, mapped to the op's results in every active tracer; when nothing
// is tracing they simply run the selected branch or the loop eagerly.
using BranchFn = std::function<Tensors()>;
using LoopCondFn = std::function<Tensor(const Tensors&)>;
using LoopBodyFn = std::function<Tensors(const Tensors&)>;
// `api` names the caller in errors, e.g. "oar.static.nn.cond".
Tensors trace_cond(const Tensor& pred, const BranchFn& then_fn, const BranchFn& else_fn,
                   const char* api = "oar.static.nn.cond");
// `fns` holds one function per key and then the default.
Tensors trace_switch_case(const Tensor& index, const Dims& keys, std::span<const BranchFn> fns,
                          const char* api = "oar.static.nn.switch_case");
// `max_iterations` <= 0 uses the executor's limit (set_max_loop_iterations).
Tensors trace_while_loop(const LoopCondFn& cond, const LoopBodyFn& body, const Tensors& loop_vars,
                         const char* api = "oar.static.nn.while_loop", int64_t max_iterations = 0);
// Records a py_layer op (Note [PyLayer in programs]) into every active tracer
// (there must be one): `forward` runs on aliases of `inputs` while its ops
// are recorded into the op's region; returns the results as new tensors.
Tensors trace_py_layer(std::span<const Tensor> inputs, int64_t token, const LoopBodyFn& forward, const char* api);

}  // namespace oar::ir

// Eager autograd: per-tensor metadata, graph nodes and the engine.
//
// Note [saved outputs]
// A node never holds a strong reference to its own outputs (that would be a
// cycle: output -> grad_fn -> output). It saves a detached alias of the data,
// and on unpack re-attaches it to the node itself, so create_graph=True still
// differentiates through the saved output.
#pragma once
#include <functional>
#include <memory>
#include <span>

#include "ops/op.h"

namespace oar {

struct Node;
using Hook = std::function<Tensor(const Tensor&)>;  // returns a replacement grad or undefined

struct AutogradMeta {
  bool stop_gradient = true;
  std::shared_ptr<Node> grad_fn;  // null for a leaf
  int output_nr = 0;
  Tensor grad;
  // Set by clear_grad(set_to_zero=True): .grad reads as zeros, and the next
  // accumulation replaces it instead of adding to a buffer of zeros.
  bool grad_zeroed = false;
  std::weak_ptr<Node> grad_accumulator;  // leaves only, created on demand
  SmallVector<Hook, 1> hooks;            // leaves: run before accumulation
  // Leaves: run after Tensor.backward has updated .grad (data parallel starts
  // a bucket's all-reduce from here, while the backward pass goes on).
  SmallVector<std::function<void()>, 1> post_hooks;
  bool retain_grad = false;              // non-leaves: keep .grad
  std::shared_ptr<Tensor> retained;      // where a non-leaf's retained grad lands
  std::string name;
};

struct Edge {
  std::shared_ptr<Node> fn;
  int input_nr = 0;
  bool valid() const { return bool(fn); }
};

struct Node : std::enable_shared_from_this<Node> {
  virtual ~Node() = default;
  // grads: one per output of this node (undefined where no gradient arrived).
  // Returns one gradient per entry of `next`.
  virtual Tensors apply(Tensors& grads) = 0;
  virtual std::string name() const = 0;
  virtual void release() {}  // drop saved tensors after a non-retained backward
  virtual int num_outputs() const { return 1; }

  SmallVector<Edge, 2> next;
  SmallVector<std::pair<int, Hook>, 1> pre_hooks;  // (output_nr, hook) of non-leaf tensors
  uint64_t seq = 0;
};

// A tensor saved for backward, with the storage version at save time.
struct SavedTensor {
  Tensor data;
  bool is_output = false;
  int output_nr = 0;
  uint32_t version = 0;
  bool requires_grad = false;

  void save(const Tensor& t, bool as_output, int out_nr);
  // `self` is the node that saved it; `op` and `index` name it in errors.
  Tensor unpack(const std::shared_ptr<Node>& self, const char* op, int index) const;
};

class GradCtx {
 public:
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<Tensor> grads;            // w.r.t. outputs (undefined -> use grad(i))
  std::span<const TensorMeta> out_metas;
  const Attrs* attrs = nullptr;
  const bool* needs = nullptr;        // per input

  // A rule reading a tensor its op did not save is a bug in the op definition;
  // it raises instead of reading out of bounds.
  const Tensor& in(size_t i) const {
    if (i >= inputs.size()) fail(ErrorKind::Runtime, "[oar.autograd] internal: gradient rule reads input ", i, " that its op does not save");
    return inputs[i];
  }
  const Tensor& out(size_t i) const {
    if (i >= outputs.size()) fail(ErrorKind::Runtime, "[oar.autograd] internal: gradient rule reads output ", i, " that its op does not save");
    return outputs[i];
  }
  // Gradient w.r.t. output i; zeros when none arrived.
  Tensor grad(size_t i = 0) const;
  bool needs_grad(size_t i) const { return needs[i]; }
  const Attrs& attr() const { return *attrs; }
};

// Grad mode (thread-local).
bool grad_enabled();
void set_grad_enabled(bool on);
struct NoGradGuard {
  bool prev;
  NoGradGuard() : prev(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev); }
};
struct GradModeGuard {
  bool prev;
  explicit GradModeGuard(bool on) : prev(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev); }
};

// Stage 5 of dispatch: records a node for `op` when an input requires grad.
void record_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensors& outputs);
// Same for an in-place op whose output is `self` (input 0 for in-place elementwise ops).
void record_inplace(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensor& self,
                    std::span<const Tensor> saved_inputs);
// Raises if an in-place op would overwrite a leaf that requires grad.
void check_inplace(const Tensor& self, const char* op);
bool any_requires_grad(std::span<const Tensor> ts);

// The engine. With `inputs` empty, accumulates into the .grad of leaves and
// returns nothing (Tensor.backward); otherwise returns the gradients w.r.t.
// `inputs` without touching .grad (oar.grad).
Tensors run_backward(std::span<const Tensor> outputs, std::span<const Tensor> grad_outputs,
                     bool retain_graph, bool create_graph, std::span<const Tensor> inputs = {},
                     bool allow_unused = false);

// Runs `fn` once the backward pass in progress (Tensor.backward) has
// finished; outside one, runs it at once. Callbacks queued by a failed pass
// are dropped.
void queue_backward_callback(std::function<void()> fn);

// A tensor sharing data with `t` but with no autograd history.
Tensor detach(const Tensor& t);
// The edge that a gradient for `t` flows along (its grad_fn output or its accumulator).
Edge gradient_edge(const Tensor& t);

}  // namespace oar

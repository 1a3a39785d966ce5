// The autograd engine (library oar_autograd): graph nodes, recording (dispatch
// stage 5, installed as DispatchHooks::record when the library loads) and the
// backward pass. Per-tensor state and grad mode are in tensor/autograd_meta.h.
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

#include "ops/grad.h"
#include "tensor/autograd_meta.h"

namespace oar {

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

// Note [saved tensors hooks]
// While hooks are pushed on a thread (oar.autograd.saved_tensors_hooks), every
// tensor a node saves for backward goes through `pack` when it is saved, and
// the node keeps only what pack returned; backward gets the tensor back from
// `unpack`. The packed value's owner decides its lifetime (for Python hooks,
// a Python object released under the GIL). Version checks do not apply to a
// packed tensor: what unpack returns is whatever the hooks made of it.
struct SavedTensorHooks {
  std::function<std::shared_ptr<void>(const Tensor&)> pack;
  std::function<Tensor(const std::shared_ptr<void>&)> unpack;
};
void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks);
void pop_saved_tensor_hooks();

// A tensor saved for backward, with the storage version at save time.
struct SavedTensor {
  Tensor data;
  bool is_output = false;
  int output_nr = 0;
  uint32_t version = 0;
  bool requires_grad = false;
  std::shared_ptr<SavedTensorHooks> hooks;  // set when saved under hooks; `packed` holds the value
  std::shared_ptr<void> packed;

  void save(const Tensor& t, bool as_output, int out_nr);
  // `self` is the node that saved it; `op` and `index` name it in errors.
  Tensor unpack(const std::shared_ptr<Node>& self, const char* op, int index) const;
};

// Stage 5 of dispatch: records a node for `op` when an input requires grad.
void record_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensors& outputs);
// Same for an in-place op whose output is `self` (input 0 for in-place elementwise ops).
void record_inplace(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensor& self,
                    std::span<const Tensor> saved_inputs);

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

// The edge that a gradient for `t` flows along (its grad_fn output or its accumulator).
Edge gradient_edge(const Tensor& t);

}  // namespace oar

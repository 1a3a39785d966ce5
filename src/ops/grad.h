// What a gradient rule (OpDef::grad) sees: the op's saved inputs and outputs,
// the gradients w.r.t. its outputs and its attributes. Rules are written with
// ops, so they are part of the op definitions in the core; the engine that
// calls them is autograd/ (library oar_autograd).
#pragma once
#include <span>

#include "ops/op.h"
#include "tensor/autograd_meta.h"

namespace oar {

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

}  // namespace oar

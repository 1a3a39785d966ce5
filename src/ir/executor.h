// Runs a Program op by op through dispatch(), so the executed program gets
// autograd (a captured forward can be trained) and autocast exactly as eager
// code does. Control-flow regions are not executed yet.
#pragma once
#include "ir/ir.h"

namespace oar::ir {

// `inputs` and `parameters` in the program's order; returns its outputs.
// Inputs are checked against the input types (dtype, rank, static dims).
Tensors run(const Program& p, std::span<const Tensor> inputs, std::span<const Tensor> parameters);

}  // namespace oar::ir

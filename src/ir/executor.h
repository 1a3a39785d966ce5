// Runs a Program op by op through dispatch(), so the executed program gets
// autograd (a captured forward can be trained) and autocast exactly as eager
// code does.
//
// Control flow: cond and switch_case read their selector and run one region;
// while_loop runs its cond region and, while it yields true, its body. Region
// ops go through dispatch like any other, so autograd records the branch and
// the iterations that actually ran and gradients flow through them. When the
// executor itself runs under a trace (a captured program called from traced
// code), control-flow ops are recorded as control-flow ops of the enclosing
// trace instead of as the branch that ran.
//
// py_layer ops (Note [PyLayer in programs], ir/tracer.h) go to the runner
// when one is set and knows the op's token; otherwise their region runs.
//
// State updates (Program::state_updates) are written into the tensors bound
// to their parameters at the end of the run, in place and without autograd.
#pragma once
#include <functional>
#include <optional>

#include "ir/ir.h"

namespace oar::ir {

// The most iterations one while_loop may run before the executor gives up
// with an error (a guard against loops that never end); process-wide, and
// shared with the inference runtime, which runs loops too (defined in
// ir/loop_limit.cpp, part of the core library the runtime links).
constexpr int64_t kDefaultMaxLoopIterations = 1000000;
void set_max_loop_iterations(int64_t n);
int64_t max_loop_iterations();

// Applies the PyLayer call named by `token` to `inputs`, returning every
// result of its py_layer op; nullopt when the token is unknown.
using PyLayerRunner = std::function<std::optional<Tensors>(int64_t token, const Tensors& inputs)>;
void set_py_layer_runner(PyLayerRunner runner);

// `inputs` and `parameters` in the program's order; returns its outputs.
// Inputs are checked against the input types (dtype, rank, static dims).
Tensors run(const Program& p, std::span<const Tensor> inputs, std::span<const Tensor> parameters);

}  // namespace oar::ir

// Function transforms over captured programs: vmap (batching) and forward-mode
// differentiation (jvp). Python's oar.func traces a function into an
// ir::Program and runs it here, op by op, through dispatch(): every op these
// interpreters run is an ordinary op, so reverse-mode autograd records it and
// an enclosing trace captures it. That is what makes the transforms compose
// (grad of vmap, vmap of grad, vmap of vmap, jvp of grad, ...).
//
// Note [vmap]
// A batched value is a tensor whose dim 0 is the mapped axis; an unbatched one
// is the same for every example. Each op runs once for the whole batch through
// its batching rule, which rewrites the call to the physical tensors (move
// axes attributes by one, align ranks for broadcasting, fold the batch into a
// leading N for convolutions, pooling and losses, turn per-example weight
// gradients into grouped convolutions, ...). The rules live in
// autograd/batching.cpp, by op name, with a trait-based rule for elementwise
// ops. An op with no rule, or a call its rule does not cover (say an index
// tensor that differs per example), runs once per example on slices and the
// results are stacked: always correct, and slower. `fallbacks` counts those
// calls so tests and users can see which programs are not fully batched.
//
// Note [forward mode]
// jvp runs the program once, carrying a tangent beside each value. An op's
// tangent comes from its tangent rule: linear ops apply themselves to the
// tangents, bilinear ones (multiply, matmul, conv) use the product rule, and
// every other op derives its tangent from its composite gradient rule. A
// gradient rule is linear in the output cotangent u: it computes J^T u. So
// J t = d<J^T u, t>/du, one reverse pass through the few ops of that single
// rule, taken at u = 0 (the result does not depend on u). This needs no
// per-op tangent code for the whole op set, keeps the cost per op bounded (the
// program's tape is never kept), and because the rule is built from ops, the
// tangents are themselves differentiable: jvp of grad (Hessian-vector
// products) and grad of jvp work to any order.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace oar {

struct BatchedValue {
  Tensor t;
  bool batched = false;  // dim 0 of t is the mapped axis
};

struct BatchStats {
  int64_t ops = 0;        // ops run
  int64_t fallbacks = 0;  // ops run once per example
  std::vector<std::string> fallback_ops;  // their names, once each
};

// Runs `p` over a batch of `batch` examples. `randomness`: "error" refuses
// random ops; "different" lets them draw independently per example; "same"
// draws once for all examples (random ops must then read no batched input).
std::vector<BatchedValue> run_batched(const ir::Program& p, std::span<const BatchedValue> inputs,
                                      std::span<const Tensor> params, int64_t batch,
                                      const std::string& randomness, BatchStats* stats = nullptr);

// Runs `p` on `inputs` with tangents (undefined: zero) and returns the
// outputs followed by their tangents.
Tensors run_jvp(const ir::Program& p, std::span<const Tensor> inputs, std::span<const Tensor> tangents,
                std::span<const Tensor> params);

}  // namespace oar

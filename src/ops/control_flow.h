// Control-flow ops of the IR (DESIGN.md §2): cond, while_loop, switch_case,
// and py_layer (a region op, though not control flow: Note [PyLayer in programs]).
//
// They exist only inside a Program. Their bodies are regions (Blocks owned by
// the op) rather than tensors, so they have no kernel and cannot be
// dispatched: the executor (ir/executor.cpp) runs them by running a region,
// the tracer (ir/tracer.cpp) records them, and the verifier checks their
// regions (ir/verify.cpp). Region ops may read values of enclosing blocks
// directly (implicit capture), so the ops take as operands only what selects
// the region or seeds the loop:
//
//   cond(pred)                 regions: then, else; no block arguments. Both
//                              yield one value per result.
//   switch_case(index)         attrs: branch_indices (one key per branch);
//                              regions: one per key, then the default.
//   while_loop(init_0..n-1)    regions: cond (arguments: the n loop values;
//                              yields one bool predicate), body (arguments:
//                              the n loop values; yields the next n values).
//                              Results: the loop values after the last
//                              iteration, typed like the region arguments.
//   py_layer(x_0..n-1)         attrs: token; region: forward (arguments: the
//                              n inputs; yields one value per result).
//
// The traits mark them side_effect, so that DCE, CSE and constant folding
// (which also skip ops with regions) never move, merge or evaluate them.
#pragma once
#include <string>

#include "ops/op.h"

namespace oar {

extern OpDef& kCond;
extern OpDef& kWhileLoop;
extern OpDef& kSwitchCase;
extern OpDef& kPyLayer;

bool is_control_flow(const OpDef& op);

// Empty when (dtype, shape) can select a branch of `api` (a predicate of
// cond or of a while_loop's cond region, or a switch_case index): one
// element, static shape ([] or all dims 1), and a bool dtype (predicates)
// or an integer dtype (indices; predicates accept these too, nonzero is
// true). Otherwise what is wrong, for the caller's message.
std::string check_selector(DType dtype, const Dims& shape, bool index);

}  // namespace oar

// Graph passes over a Program (DESIGN.md §2): dead code elimination, common
// subexpression elimination and constant folding, and a pass manager that
// runs them to a fixed point. Each pass returns whether it changed anything.
//
// Random and side-effect ops (OpTraits::random / side_effect) are never
// removed, merged or folded: a random op advances the generator, so dropping
// or merging one changes every later draw.
#pragma once
#include <vector>

#include "ir/ir.h"

namespace oar::ir {

// Removes ops none of whose results are used (transitively), in every block.
// Program outputs and region yields are uses, so their producers stay.
bool dead_code_elimination(Program& p);

// Merges ops of one block with the same OpDef, the same operand Values and
// equal attributes into the first of them. No merging across blocks.
bool common_subexpression_elimination(Program& p);

// Parameters are bound to tensors held outside the Program (the tracer's
// bindings(), in program order), so folding takes those tensors with it:
// `bindings[i]` is the tensor of p.parameters()[i]. An op whose operands are
// all auto-named constants (NamedValue::constant; never named parameters,
// whose tensors are trainable and may change between runs) is run once and
// replaced by a new auto-named constant appended to both the program and
// `bindings`. Results of ops without tensor operands (full, arange; a traced
// Python scalar is a `full`) count as constants too, but are not folded on
// their own. Constants and such ops that nothing reads any more are then
// dropped. The folded value is computed from the constants' current data.
bool constant_folding(Program& p, std::vector<Tensor>& bindings);

struct PassOptions {
  bool dce = true;
  bool cse = true;
  bool fold = true;
};

// Which passes changed the program.
struct PassResult {
  bool dce = false;
  bool cse = false;
  bool fold = false;
};

// Runs the enabled passes in rounds until none changes the program (at most
// kMaxPassRounds rounds), then verifies it.
constexpr int kMaxPassRounds = 16;
PassResult run_passes(Program& p, std::vector<Tensor>& bindings, const PassOptions& options = {});

// Attribute equality as CSE needs it: same alternative and same value, with
// floating point compared by bit pattern (0.0 and -0.0 differ; a NaN equals
// the identical NaN).
bool attrs_equal(const Attrs& a, const Attrs& b);

}  // namespace oar::ir

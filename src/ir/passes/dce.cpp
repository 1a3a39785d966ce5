// Dead code elimination: a reverse sweep over each block erases ops whose
// results nothing reads; erasing one drops its operand uses, so a dead chain
// goes in the same sweep. Regions are cleaned first, so an op whose region
// became empty of effects can go too.
#include "ir/passes/passes.h"

namespace oar::ir {

namespace {

bool has_effects(const Operation& op) {
  if (op.def().traits.random || op.def().traits.side_effect) return true;
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto& inner : op.region(r).operations())
      if (has_effects(*inner)) return true;
  return false;
}

bool unused(const Operation& op) {
  for (size_t i = 0; i < op.num_results(); ++i)
    if (op.result(i)->has_uses()) return false;
  return true;
}

bool dce_block(Block& b) {
  bool changed = false;
  for (const auto& op : b.operations())
    for (size_t r = 0; r < op->num_regions(); ++r) changed = dce_block(op->region(r)) || changed;
  auto it = b.end();
  while (it != b.begin()) {
    --it;
    Operation* op = it->get();
    if (!unused(*op) || has_effects(*op)) continue;
    // erase() invalidates `it`; step to the op after it, which the loop
    // decrement then moves back past the erased position.
    auto next = std::next(it);
    b.erase(op);
    it = next;
    changed = true;
  }
  return changed;
}

}  // namespace

bool dead_code_elimination(Program& p) { return dce_block(p.body()); }

}  // namespace oar::ir

// The pass manager: the passes feed each other (folding leaves dead
// constants, CSE leaves dead duplicates, DCE can expose new duplicates), so
// they run in rounds until a round changes nothing.
#include "ir/passes/passes.h"

namespace oar::ir {

PassResult run_passes(Program& p, std::vector<Tensor>& bindings, const PassOptions& options) {
  PassResult r;
  for (int round = 0; round < kMaxPassRounds; ++round) {
    bool changed = false;
    // CSE before folding: duplicates folded first would become distinct
    // constants, and their users could no longer be merged.
    if (options.cse && common_subexpression_elimination(p)) changed = r.cse = true;
    if (options.fold && constant_folding(p, bindings)) changed = r.fold = true;
    if (options.dce && dead_code_elimination(p)) changed = r.dce = true;
    if (!changed) break;
  }
  verify(p);
  return r;
}

}  // namespace oar::ir

// Control flow in the inference runtime: cond, switch_case, while_loop and
// py_layer steps, whose regions are sub-models of the step.
//
// Note [control flow in the runtime]
// A region op becomes one Step of its block, with a ControlFlow part that
// holds each region as a Region: the slots of its block arguments, its own
// steps (numbered in the model's one slot table, so a value an inner op
// captures from an enclosing block is simply read from that slot), and the
// slots it yields. Running the step runs the chosen region (or the loop's
// cond and body regions in turn) op by op through run_eager, recursing into
// nested control flow; each region drops its values after their last reader
// and clears them when it ends, so a loop iteration starts clean.
//
// The memory plan covers the top-level steps only:
// - a control-flow step's results are unplanned, buffers of their own. A
//   region may yield a captured value unchanged (or a loop may run no
//   iteration and give back its initial values), so results that point into
//   the arena are copied out: the arena bytes are reused after the step;
// - every enclosing value a region reads (Step::captures, transitively through
//   nested regions) counts as read by the control-flow step, so it stays live
//   across the whole step;
// - values inside regions get buffers of their own, sized at run time: shapes
//   there may change from one iteration to the next (a loop that grows a
//   tensor has dims -1).
// Programs without region ops take exactly the path they took before: the
// only cost is one null test per step.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/model.h"

namespace oar::runtime {

struct Region {
  std::vector<int> args;                  // block arguments (loop values, py_layer inputs)
  std::vector<Step> steps;                // in order
  std::vector<int> yields;                // may name args or enclosing slots
  std::vector<std::vector<int>> release;  // per step: slots of this region whose last reader it is
  std::vector<int> defined;               // every result slot of `steps`, cleared when the region ends
};

struct ControlFlow {
  enum class Kind { Cond, SwitchCase, WhileLoop, PyLayer };
  Kind kind = Kind::Cond;
  std::vector<int64_t> keys;        // switch_case: the key of each region but the last (the default)
  std::vector<Region> regions;
  std::vector<ir::Type> result_types;
};

// Value numbering while a program is turned into steps.
struct SlotNumbering {
  std::unordered_map<const ir::Value*, int> slot;
  int count = 0;
  int number(const ir::Value* v) {
    slot[v] = count;
    return count++;
  }
};

// The step for `op`, numbering its results (and, for region ops, every value
// of its regions). Region ops the runtime does not know, and region ops
// whose regions do not have the shape of their kind, raise errors naming
// `api` and `file`.
Step make_step(const ir::Operation& op, SlotNumbering& n, const char* api, const std::string& file);

// Runs a control-flow step with the model's slot table `env`; returns its
// results, none of them in [arena_begin, arena_end).
Tensors run_control_flow(const Step& st, std::vector<Tensor>& env, const char* api, const char* arena_begin,
                         const char* arena_end);

}  // namespace oar::runtime

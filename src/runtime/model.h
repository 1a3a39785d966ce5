// A loaded model: the program (after graph passes and the bfloat16
// rewrite), its weights, and the schedule the executor walks (control flow
// included: its regions are sub-schedules of their step). Immutable
// after loading, so predictors and their clones share one Model; the only
// mutable part is the cache of memory plans, behind a mutex.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/planner.h"

namespace oar::runtime {

struct ModelOptions {
  bool ir_optim = true;
  bool bf16 = false;
  std::vector<std::string> deleted_passes;  // names from ir::pass_names()
};

struct ControlFlow;  // runtime/control_flow.h

// One op of the program in execution order, with its operands and results
// as slot numbers (-1: an undefined optional operand). Control-flow ops
// (cond, switch_case, while_loop, py_layer) carry their regions in
// `control`, and in `captures` the enclosing slots their regions read
// (Note [control flow in the runtime], runtime/control_flow.h).
struct Step {
  const OpDef* def = nullptr;
  const Attrs* attrs = nullptr;
  std::vector<int> in;
  std::vector<int> out;
  std::shared_ptr<const ControlFlow> control;  // null for every other op
  std::vector<int> captures;
};

// Where each slot's buffer lives for one set of input shapes.
struct SlotPlan {
  std::vector<int64_t> offset;           // per slot: arena offset, or -1 (own buffer / not a buffer)
  std::vector<int64_t> bytes;            // per slot: planned size in bytes (arena slots)
  std::vector<std::vector<int>> release; // per step: slots whose last reader is this step
  MemoryPlan memory;
};

struct Model {
  std::unique_ptr<ir::Program> program;
  std::vector<Tensor> params;  // bound to program->parameters(), in order
  std::string prog_file, params_file;
  int64_t weight_bytes = 0;

  int num_slots = 0;  // every value, region values included
  std::vector<int> input_slots, param_slots, output_slots;
  std::vector<ir::Type> input_types;
  std::vector<std::string> input_names, output_names;
  std::vector<Step> steps;

  // The plan for these input shapes, computed on first use and cached.
  std::shared_ptr<const SlotPlan> plan_for(const std::vector<Dims>& input_shapes) const;

 private:
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const SlotPlan>> plans_;  // by shapes_key()
};

// Reads and validates both files, applies the passes and the bfloat16
// rewrite, and numbers the values. Errors start with `api`.
std::shared_ptr<const Model> load_model(const std::string& prog_file, const std::string& params_file,
                                        const ModelOptions& options, const char* api);

// The same from memory: the program's JSON text and the whole safetensors
// file's bytes (copied, not shared); the names stand for the files in
// error messages. For callers that hold the model in memory, and for the
// model-loader fuzzer (tests/fuzz).
std::shared_ptr<const Model> load_model_from_memory(const std::string& prog_text, std::span<const char> params_bytes,
                                                    const ModelOptions& options, const char* api,
                                                    const std::string& prog_name = "<program>",
                                                    const std::string& params_name = "<weights>");

// Rewrites `p` so that ops with the autocast Low policy (matmul, linear,
// conv, ...) run in bfloat16: float32 parameters they read are replaced by
// bfloat16 copies made once (appended to `params`), other float32 operands
// get a cast before the op, and results are cast back to float32.
void rewrite_bf16(ir::Program& p, std::vector<Tensor>& params);

// The plan for the given input shapes (shape propagation with infer_meta on
// data-less tensors, liveness, then plan_memory). Slots whose size cannot be
// derived (data-dependent shapes) are left out of the arena.
SlotPlan make_plan(const Model& m, const std::vector<Dims>& input_shapes);

// "1x3x224x224;1x8" (the plan cache key).
std::string shapes_key(const std::vector<Dims>& shapes);

}  // namespace oar::runtime

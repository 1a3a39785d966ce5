// The inference executor: walks a Model's steps, running each op's kernel
// directly (infer_meta, then the kernel into outputs it is handed) without
// the dispatch stages, so nothing is traced, autocast or recorded for
// autograd whatever the calling thread's state. With memory optimisation on,
// intermediate results are placed in one arena by the Model's plan for the
// input shapes; without it every result gets its own buffer and all are kept
// until the run ends (the baseline the plan is measured against). Control
// flow (cond, switch_case, while_loop, py_layer) runs its regions as
// sub-schedules: Note [control flow in the runtime] (runtime/control_flow.h).
#pragma once
#include <memory>
#include <vector>

#include "runtime/model.h"

namespace oar::runtime {

struct LayoutHandoffs;  // executor.cpp

struct RunStats {
  int64_t intermediate_peak_bytes = 0;
  int64_t planned_bytes = 0;
  int64_t unplanned_bytes = 0;
  int64_t live_lower_bound_bytes = 0;
  int64_t output_bytes = 0;
};

class Executor {
 public:
  // `winograd`: Note [winograd convolution] (kernels/cpu/winograd.h).
  Executor(std::shared_ptr<const Model> model, bool memory_optim, int threads, bool winograd);

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const { return model_; }

  // Inputs in the program's order, each checked by the caller against its type.
  // Returns the outputs, contiguous and in buffers of their own.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const char* api);

  const RunStats& stats() const { return stats_; }
  // Drops the arena; the next run allocates it again.
  int64_t release_arena();

 private:
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const LayoutHandoffs> handoffs_;  // what each step may do with oneDNN layouts
  bool memory_optim_;
  int threads_;
  bool winograd_;
  std::shared_ptr<char> arena_;
  int64_t arena_bytes_ = 0;
  RunStats stats_;
};

}  // namespace oar::runtime

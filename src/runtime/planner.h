// The memory planner of the inference runtime: buffers of intermediate
// results share one arena, placed by liveness.
//
// Each buffer is live over an inclusive range of steps [first, last] (the op
// that writes it through the last op that reads it, or reads a view of it).
// Two buffers live at a common step get disjoint byte ranges; buffers whose
// lifetimes do not meet may share bytes. Placement is greedy by size, best
// fit (largest buffers first, each into the smallest gap between the
// already-placed buffers it is live with, else after them), which stays
// close to the lower bound `live_peak` for the feed-forward graphs of
// inference.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace oar::runtime {

struct BufferRequest {
  int64_t bytes = 0;
  int first = 0;  // step that writes the buffer
  int last = 0;   // last step that reads it (>= first)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per request, a multiple of the alignment
  int64_t arena_bytes = 0;       // bytes the arena needs
  int64_t total_bytes = 0;       // sum of all (aligned) requests: the bytes without reuse
  int64_t live_peak = 0;         // largest sum of buffers live at one step: no plan needs less
};

constexpr int64_t kArenaAlignment = 64;

// Throws ValueError for a negative size, an empty range or a non-positive alignment.
MemoryPlan plan_memory(std::span<const BufferRequest> requests, int64_t alignment = kArenaAlignment);

}  // namespace oar::runtime

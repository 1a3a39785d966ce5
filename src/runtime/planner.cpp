#include "runtime/planner.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "base/error.h"

namespace oar::runtime {

MemoryPlan plan_memory(std::span<const BufferRequest> requests, int64_t alignment) {
  OAR_CHECK(alignment > 0, Value, "[oar.inference.plan_memory] alignment must be positive, got ", alignment);
  const size_t n = requests.size();
  std::vector<int64_t> size(n);
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    OAR_CHECK(r.bytes >= 0 && r.first <= r.last, Value, "[oar.inference.plan_memory] request ", i,
              " must have bytes >= 0 and first <= last, got bytes=", r.bytes, " first=", r.first, " last=", r.last);
    OAR_CHECK(r.bytes <= INT64_MAX - alignment, Value, "[oar.inference.plan_memory] request ", i, " is too large");
    size[i] = (r.bytes + alignment - 1) / alignment * alignment;
    OAR_CHECK(!__builtin_add_overflow(plan.total_bytes, size[i], &plan.total_bytes), Value,
              "[oar.inference.plan_memory] the total size overflows int64");
  }
  // Lower bound: the most bytes live at one step (a sweep over range ends).
  std::map<int64_t, int64_t> delta;
  for (size_t i = 0; i < n; ++i) {
    delta[requests[i].first] += size[i];
    delta[int64_t(requests[i].last) + 1] -= size[i];
  }
  int64_t live = 0;
  for (const auto& [step, d] : delta) plan.live_peak = std::max(plan.live_peak, live += d);

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return size[a] != size[b] ? size[a] > size[b] : requests[a].first < requests[b].first;
  });
  std::vector<size_t> placed;  // kept sorted by offset
  placed.reserve(n);
  std::vector<size_t> overlapping;
  for (size_t i : order) {
    overlapping.clear();
    for (size_t j : placed)
      if (requests[j].first <= requests[i].last && requests[i].first <= requests[j].last) overlapping.push_back(j);
    // `placed` is sorted by offset, so `overlapping` is too: walk the gaps.
    int64_t best = -1, best_gap = INT64_MAX, end = 0;
    for (size_t j : overlapping) {
      int64_t gap = plan.offsets[j] - end;
      if (gap >= size[i] && gap < best_gap) {
        best = end;
        best_gap = gap;
      }
      end = std::max(end, plan.offsets[j] + size[j]);
    }
    plan.offsets[i] = best >= 0 ? best : end;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + size[i]);
    auto pos = std::upper_bound(placed.begin(), placed.end(), i,
                                [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    placed.insert(pos, i);
  }
  return plan;
}

}  // namespace oar::runtime

// Per-op time accounting: while enabled, every kernel run by run_eager
// (forward and backward alike) and every kernel step of the inference
// runtime's executor adds its wall time and one call to its op's row. Off by
// default; the check on the fast path is one relaxed load.
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace oar {
struct OpDef;
class Tensor;

namespace profiler {

extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
// With shapes on, rows are kept per op and input signature (dtypes, shapes).
void set_enabled(bool on, bool shapes = false);

int64_t now_ns();
// Adds one call of `op` on `inputs` that took `ns` and wrote `outputs` (their
// bytes are counted; undefined ones are skipped).
void record(const OpDef& op, std::span<const Tensor> inputs, int64_t ns, std::span<const Tensor> outputs);

struct OpStat {
  std::string name;
  std::string inputs;  // "float32[2,3], int64[2]" when shapes are recorded
  int64_t calls = 0;
  int64_t ns = 0;
  int64_t bytes = 0;
};
// The rows with at least one call since the last reset, then clears them.
std::vector<OpStat> take();

}  // namespace profiler
}  // namespace oar

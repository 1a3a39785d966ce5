// The while_loop iteration limit (ir/executor.h). It lives in the core
// library rather than beside the executor so that the inference runtime,
// which links the core without autograd and capture, reads the same limit.
#include <atomic>

#include "base/error.h"
#include "ir/executor.h"

namespace oar::ir {

namespace {
std::atomic<int64_t> g_max_loop_iterations{kDefaultMaxLoopIterations};
}  // namespace

void set_max_loop_iterations(int64_t n) {
  OAR_CHECK(n > 0, Value, "[oar.static.nn.set_max_loop_iterations] the limit must be positive, got ", n);
  g_max_loop_iterations.store(n);
}

int64_t max_loop_iterations() { return g_max_loop_iterations.load(); }

}  // namespace oar::ir

// Process groups when oar is built without MPI: every entry point says how to
// get a build that has them.
#include "dist/process_group.h"

namespace oar::dist {
namespace {
[[noreturn]] void no_mpi() {
  fail(ErrorKind::NotImplemented,
       "[oar.distributed] this build of oar has no MPI backend: install OpenMPI (Debian: libopenmpi-dev "
       "openmpi-bin) and rebuild");
}
}  // namespace

static ProcessGroupPtr g_self;

WorldInfo init_world(double timeout_s) {
  // A job of one process needs no MPI; more need it.
  if (launched_by_mpi()) no_mpi();
  if (!g_self) g_self = make_self_group(timeout_s);
  return WorldInfo{};
}
bool world_initialized() { return bool(g_self); }
WorldInfo world_info() { return WorldInfo{}; }
ProcessGroupPtr world_group() {
  OAR_CHECK(g_self, Runtime, "[oar.distributed] the parallel environment is not initialised: call "
            "oar.distributed.init_parallel_env() first");
  return g_self;
}
ProcessGroupPtr new_group(const std::vector<int>& ranks, double timeout_s) {
  OAR_CHECK(ranks.size() == 1 && ranks[0] == 0, Value,
            "[oar.distributed.new_group] a job of one process has only rank 0");
  return make_self_group(timeout_s);
}
void shutdown_world() {}
void release_finished() {}
const char* peer_lost(int) { return nullptr; }
bool built_with_mpi() { return false; }

}  // namespace oar::dist

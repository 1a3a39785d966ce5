// The kernel compiler's switches and counters (compiler/jit.h), for
// oar.compiler. No logic here.
#include "common.h"
#include "compiler/jit.h"

namespace oar::bind {
namespace {

void bind_compiler(nb::module_& m) {
  m.def("_compiler_enabled", &compiler::enabled);
  m.def("_compiler_set_enabled", &compiler::set_enabled, nb::arg("on"));
  m.def("_compiler_cache_dir", &compiler::cache_dir);
  m.def("_compiler_path", &compiler::compiler_path);
  m.def("_compiler_reset_memory_cache", &compiler::reset_memory_cache);
  m.def("_compiler_stats", [] {
    compiler::Stats s = compiler::stats();
    nb::dict d;
    d["compiled"] = s.compiled;
    d["disk_hits"] = s.disk_hits;
    d["memory_hits"] = s.memory_hits;
    d["failures"] = s.failures;
    d["compile_seconds"] = s.compile_seconds;
    d["load_seconds"] = s.load_seconds;
    return d;
  });
}

Binder b(bind_compiler);

}  // namespace
}  // namespace oar::bind

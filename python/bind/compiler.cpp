// The kernel compiler's switches and counters (compiler/jit.h), for
// oar.compiler. No logic here.
#include "common.h"
#include "compiler/codegen_cuda.h"
#include "compiler/jit.h"
#include "compiler/nvrtc.h"

namespace oar::bind {
namespace {

void bind_compiler(nb::module_& m) {
  m.def("_compiler_enabled", &compiler::enabled);
  m.def("_compiler_set_enabled", &compiler::set_enabled, nb::arg("on"));
  m.def("_compiler_cache_dir", &compiler::cache_dir);
  m.def("_compiler_path", &compiler::compiler_path);
  m.def("_compiler_reset_memory_cache", &compiler::reset_memory_cache);
  m.def("_compiler_nvrtc_available", &compiler::nvrtc_available);
  // The CUDA source of a fused_elementwise program, and NVRTC's verdict on it:
  // (ok, log, ptx).
  m.def("_compiler_cuda_source", [](const std::string& dtype, const Dims& program, int n_in) {
    return compiler::cuda_elementwise_source(dtype_from_name(dtype, "oar._C._compiler_cuda_source"), program, n_in);
  }, nb::arg("dtype"), nb::arg("program"), nb::arg("n_in"));
  m.def("_compiler_nvrtc_compile", [](const std::string& source, const std::string& arch) {
    compiler::NvrtcOutput r = compiler::nvrtc_compile(source, arch);
    return nb::make_tuple(r.ok, r.log, r.ptx);
  }, nb::arg("source"), nb::arg("arch") = "compute_80");
  m.def("_compiler_stats", [] {
    compiler::Stats s = compiler::stats();
    nb::dict d;
    d["compiled"] = s.compiled;
    d["disk_hits"] = s.disk_hits;
    d["memory_hits"] = s.memory_hits;
    d["failures"] = s.failures;
    d["compile_seconds"] = s.compile_seconds;
    d["load_seconds"] = s.load_seconds;
    d["runs"] = s.runs;
    return d;
  });
}

Binder b(bind_compiler);

}  // namespace
}  // namespace oar::bind

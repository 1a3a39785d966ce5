// NVRTC, CUDA's run-time compiler, loaded with dlopen when the process first
// needs it: oar does not link against the CUDA toolkit, and a machine without
// it simply has no NVRTC (available() is false).
#pragma once
#include <string>

namespace oar::compiler {

bool nvrtc_available();

struct NvrtcOutput {
  bool ok = false;
  std::string ptx;  // the PTX of the program when ok
  std::string log;  // the compiler's messages (the errors when not ok)
};
// Compiles CUDA C `source` to PTX for the virtual architecture `arch`
// (e.g. "compute_80"); no GPU is needed. Thread-safe.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& arch);

}  // namespace oar::compiler

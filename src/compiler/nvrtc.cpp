#include "compiler/nvrtc.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace oar::compiler {
namespace {

// The NVRTC entry points oar uses, as the C API declares them (nvrtcResult
// is an int enum, nvrtcProgram an opaque pointer).
using Program = void*;
struct Api {
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*ptx_size)(Program, size_t*) = nullptr;
  int (*ptx)(Program, char*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  bool loaded = false;
};

const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = nullptr;
    for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) return;
    auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(h, name)); };
    sym(a.create, "nvrtcCreateProgram");
    sym(a.compile, "nvrtcCompileProgram");
    sym(a.ptx_size, "nvrtcGetPTXSize");
    sym(a.ptx, "nvrtcGetPTX");
    sym(a.log_size, "nvrtcGetProgramLogSize");
    sym(a.log, "nvrtcGetProgramLog");
    sym(a.destroy, "nvrtcDestroyProgram");
    a.loaded = a.create && a.compile && a.ptx_size && a.ptx && a.log_size && a.log && a.destroy;
  });
  return a;
}

}  // namespace

bool nvrtc_available() { return api().loaded; }

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& arch) {
  NvrtcOutput out;
  const Api& a = api();
  if (!a.loaded) {
    out.log = "NVRTC is not installed (libnvrtc.so not found)";
    return out;
  }
  Program prog = nullptr;
  if (a.create(&prog, source.c_str(), "oar_kernel.cu", 0, nullptr, nullptr) != 0) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  const std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "--std=c++17"};
  const int rc = a.compile(prog, 2, opts);
  size_t n = 0;
  if (a.log_size(prog, &n) == 0 && n > 1) {
    std::vector<char> buf(n);
    if (a.log(prog, buf.data()) == 0) out.log.assign(buf.data(), n - 1);
  }
  if (rc == 0 && a.ptx_size(prog, &n) == 0) {
    std::vector<char> buf(n);
    if (a.ptx(prog, buf.data()) == 0) {
      out.ptx.assign(buf.data(), n ? n - 1 : 0);
      out.ok = true;
    }
  }
  a.destroy(&prog);
  return out;
}

}  // namespace oar::compiler

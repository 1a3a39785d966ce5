// Run-time compilation of generated C++ kernels (Note [kernel cache]).
//
// The code generators (codegen_cpu.h) produce self-contained C++ source;
// load_symbol compiles it with the system compiler into a shared library,
// caches the library on disk and in memory, and returns the address of one
// of its extern "C" functions. When no compiler can be run, or compiling
// fails, it returns null and the caller runs its op-by-op fallback.
#pragma once
#include <cstdint>
#include <string>

namespace oar::compiler {

// Whether generated kernels are used: OAR_COMPILER=0 in the environment at
// start-up turns them off; set_enabled changes it for the process.
bool enabled();
void set_enabled(bool on);

// The address of extern "C" `symbol` in the library built from `source`, or
// null (no compiler, a failed compile: both warned about once, on stderr).
// Thread-safe; concurrent processes sharing the disk cache are safe too.
void* load_symbol(const std::string& source, const std::string& symbol);

struct Stats {
  int64_t compiled = 0;     // libraries built by this process
  int64_t disk_hits = 0;    // libraries found in the disk cache
  int64_t memory_hits = 0;  // sources already loaded by this process
  int64_t failures = 0;     // loads that returned null
  double compile_seconds = 0;  // spent in the compiler
  double load_seconds = 0;     // spent loading cached libraries
  int64_t runs = 0;            // calls of generated kernels
};
Stats stats();
// Counts one call of a generated kernel (Stats::runs).
void count_run();

// The cache directory (OAR_COMPILER_CACHE, else $XDG_CACHE_HOME/oar/kernels,
// else ~/.cache/oar/kernels), and the compiler command (OAR_CXX, else c++ on
// PATH; empty when none is found).
std::string cache_dir();
std::string compiler_path();

// Forgets the libraries loaded by this process (they stay mapped: kernels in
// use stay valid), so that the next load_symbol reads the disk cache again.
// Also re-reads OAR_CXX and OAR_COMPILER_CACHE. For tests and benchmarks.
void reset_memory_cache();
// Bumped by reset_memory_cache: callers that keep their own table of loaded
// kernels drop it when the epoch they filled it in has passed.
int64_t cache_epoch();

}  // namespace oar::compiler

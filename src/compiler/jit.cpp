// Note [kernel cache]
// A generated kernel is compiled once per machine, not once per process:
//
// - The key is a 128-bit FNV-1a hash of the source, the compiler flags, the
//   compiler's identity (its resolved path, size and modification time: an
//   upgraded compiler gets new keys) and the CPU's identity (the model name
//   and feature flags of /proc/cpuinfo, as the code is built with
//   -march=native). A library is <cache>/<key>.so; its source is kept next
//   to it as <key>.cpp, and a failed compile leaves <key>.log.
// - Warm start: a library already on disk is dlopen'ed (well under a
//   millisecond for a small kernel); within a process, a source seen before
//   is found in memory without touching the disk.
// - Concurrency: a process compiles into a file named after its pid and a
//   counter and renames it to <key>.so when done. rename() is atomic, so a
//   reader sees no library or a whole one; two processes compiling the same
//   key both produce the same library, and the last rename wins. Threads of
//   one process are serialised by a mutex.
// - Safety: a library is code this process runs, so the cache directory must
//   belong to this user and be writable by no one else (it is created 0700);
//   otherwise nothing is loaded from it and groups run on the interpreter.
// - Failure: with no compiler (OAR_CXX unset and no c++ on PATH, or OAR_CXX
//   naming nothing runnable) or a failed compile, load_symbol returns null
//   after one line on stderr, and callers run their op-by-op fallback. A key
//   that failed is not retried by the same process.
#include "compiler/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern char** environ;

namespace oar::compiler {
namespace {

// Flags of every kernel build: libmvec gives vector forms of the math
// functions that the generated loops declare `omp declare simd`; no FMA
// contraction, so that a group's arithmetic rounds as the op-by-op kernels
// do (dense float32/float64 groups give eager's results to the bit).
constexpr const char* kFlags[] = {"-O3", "-march=native", "-ffp-contract=off", "-fopenmp-simd", "-fno-math-errno",
                                  "-fno-trapping-math",
                                  "-fPIC", "-shared", "-fvisibility=hidden", "-std=c++17", "-w"};
constexpr const char* kLibs[] = {"-lmvec", "-lm"};

std::atomic<int64_t> g_epoch{0};  // bumped by reset_memory_cache
std::atomic<int64_t> g_runs{0};   // generated kernels called

std::atomic<bool> g_enabled{[] {
  const char* v = std::getenv("OAR_COMPILER");
  return !(v && std::string(v) == "0");
}()};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

struct Hash128 {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  void add(const std::string& s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 0x100000001b3ull;
      b = (b ^ c) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
    a = (a ^ 0xff) * 0x100000001b3ull;  // a separator, so that ("ab", "c") and ("a", "bc") differ
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
  }
};

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  std::stringstream path(env_or("PATH", "/usr/bin:/bin"));
  for (std::string dir; std::getline(path, dir, ':');) {
    std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string file_identity(const std::string& path) {
  char real[4096];
  std::string r = realpath(path.c_str(), real) ? real : path;
  struct stat st {};
  if (stat(r.c_str(), &st) != 0) return r;
  return r + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

std::string cpu_identity() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(f, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
  }
  return model + "\n" + flags;
}

// Creates `dir` and its missing parents; the last level private to this user.
bool make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') {
      std::string part = dir.substr(0, i);
      if (mkdir(part.c_str(), i == dir.size() ? 0700 : 0755) != 0 && errno != EEXIST) return false;
    }
  return true;
}

// Whether libraries may be loaded from `dir`: a directory of this user that
// no one else can write to (a library planted there would run in this
// process).
bool private_dir(const std::string& dir) {
  struct stat st {};
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Runs argv, its output into `log`; true when it exits with status 0.
bool run(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class Cache {
 public:
  void* load(const std::string& source, const std::string& symbol) {
    std::lock_guard<std::mutex> lock(mu_);
    configure();
    Hash128 h;
    h.add(source);
    for (const char* f : kFlags) h.add(f);
    h.add(compiler_id_);
    h.add(cpu_id_);
    const std::string key = h.hex();
    if (failed_.count(key)) return fail();
    auto it = loaded_.find(key);
    void* lib = nullptr;
    if (it != loaded_.end()) {
      ++stats_.memory_hits;
      lib = it->second;
    } else {
      lib = open_or_build(key, source);
      if (!lib) {
        failed_.insert(key);
        return fail();
      }
      loaded_[key] = lib;
    }
    void* fn = dlsym(lib, symbol.c_str());
    if (!fn) {
      warn("generated kernel " + key + " lacks the symbol " + symbol);
      return fail();
    }
    return fn;
  }

  Stats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  std::string dir() {
    std::lock_guard<std::mutex> lock(mu_);
    configure();
    return dir_;
  }
  std::string cxx() {
    std::lock_guard<std::mutex> lock(mu_);
    configure();
    return cxx_;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mu_);
    loaded_.clear();  // the libraries stay open: function pointers handed out stay valid
    failed_.clear();
    configured_ = false;
    warned_missing_ = false;
    dir_state_ = 0;
  }

 private:
  void configure() {
    if (configured_) return;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    std::string base = xdg && *xdg ? std::string(xdg) + "/oar"
                       : home && *home ? std::string(home) + "/.cache/oar"
                                       : "/tmp/oar-cache-" + std::to_string(getuid());
    dir_ = env_or("OAR_COMPILER_CACHE", base + "/kernels");
    cxx_ = find_on_path(env_or("OAR_CXX", "c++"));
    compiler_id_ = cxx_.empty() ? "" : file_identity(cxx_);
    if (cpu_id_.empty()) cpu_id_ = cpu_identity();
    configured_ = true;
  }

  void* open_or_build(const std::string& key, const std::string& source) {
    const std::string lib = dir_ + "/" + key + ".so";
    auto t0 = std::chrono::steady_clock::now();
    if (!dir_ok()) return nullptr;
    if (access(lib.c_str(), R_OK) == 0) {
      if (void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        ++stats_.disk_hits;
        stats_.load_seconds += seconds_since(t0);
        return h;
      }
      // An unreadable library (a truncated copy, another CPU's build) is rebuilt.
    }
    if (cxx_.empty()) {
      if (!warned_missing_)
        warn("no C++ compiler found (set OAR_CXX, or install g++): fused groups run op by op");
      warned_missing_ = true;
      return nullptr;
    }
    const std::string tmp = dir_ + "/" + key + "." + std::to_string(getpid()) + "." + std::to_string(++counter_);
    {
      std::ofstream f(tmp + ".cpp");
      f << source;
      if (!f) return nullptr;
    }
    std::vector<std::string> argv{cxx_};
    for (const char* f : kFlags) argv.emplace_back(f);
    argv.insert(argv.end(), {tmp + ".cpp", "-o", tmp + ".so"});
    for (const char* l : kLibs) argv.emplace_back(l);
    const bool ok = run(argv, tmp + ".log");
    stats_.compile_seconds += seconds_since(t0);
    if (!ok) {
      std::rename((tmp + ".log").c_str(), (dir_ + "/" + key + ".log").c_str());
      std::rename((tmp + ".cpp").c_str(), (dir_ + "/" + key + ".cpp").c_str());
      warn("compiling a generated kernel failed (" + cxx_ + ", log: " + dir_ + "/" + key +
           ".log): that group runs op by op");
      return nullptr;
    }
    std::remove((tmp + ".log").c_str());
    std::rename((tmp + ".cpp").c_str(), (dir_ + "/" + key + ".cpp").c_str());
    if (std::rename((tmp + ".so").c_str(), lib.c_str()) != 0) return nullptr;
    ++stats_.compiled;
    return dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  }

  // The cache directory, created when missing; false, after one warning,
  // when it cannot be created or is not private to this user.
  bool dir_ok() {
    if (dir_state_ == 0) {
      dir_state_ = make_dirs(dir_) && private_dir(dir_) ? 1 : -1;
      if (dir_state_ < 0)
        warn("the kernel cache " + dir_ + " cannot be created, or is not a directory of this user that only it "
             "can write to (set OAR_COMPILER_CACHE): fused groups run op by op");
    }
    return dir_state_ > 0;
  }

  void* fail() {
    ++stats_.failures;
    return nullptr;
  }
  static void warn(const std::string& msg) { std::fprintf(stderr, "oar compiler: %s\n", msg.c_str()); }
  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  std::mutex mu_;
  bool configured_ = false, warned_missing_ = false;
  int dir_state_ = 0;  // 0 unchecked, 1 usable, -1 not
  std::string dir_, cxx_, compiler_id_, cpu_id_;
  std::unordered_map<std::string, void*> loaded_;
  std::unordered_set<std::string> failed_;
  Stats stats_;
  int64_t counter_ = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may run during exit
  return *c;
}

}  // namespace

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
void* load_symbol(const std::string& source, const std::string& symbol) { return cache().load(source, symbol); }
Stats stats() {
  Stats s = cache().stats();
  s.runs = g_runs.load(std::memory_order_relaxed);
  return s;
}
std::string cache_dir() { return cache().dir(); }
std::string compiler_path() { return cache().cxx(); }
void count_run() { g_runs.fetch_add(1, std::memory_order_relaxed); }
void reset_memory_cache() {
  cache().reset();
  ++g_epoch;
}
int64_t cache_epoch() { return g_epoch.load(); }

}  // namespace oar::compiler

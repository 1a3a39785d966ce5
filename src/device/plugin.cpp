// The device plugin loader.
//
// Note [plugin discovery]
// Plugins are shared libraries found in two places, in this order: the
// folder `plugins/` beside liboar.so (in an installed package,
// site-packages/oar/plugins/), and every entry of the environment variable
// OAR_PLUGIN_PATH (separated by ':'), each a plugin file or a folder whose
// files ending in ".so" are plugins. A file reached twice loads once. They
// are loaded on the first use of a custom device (any custom-device API, a
// place or device string naming one), not at import, so that a process that
// never uses one never runs plugin code.
//
// Note [plugin refusal]
// A plugin is refused, with an error naming its file and what is wrong,
// when it cannot be loaded, does not export oar_plugin_init, its init fails,
// its table is smaller than this oar's, it was built for another ABI major
// version, its device type name is missing, malformed or taken, a REQUIRED
// entry is null, an optional group is partly given, a kernel registration is
// refused, or its device init fails. A refused plugin leaves nothing behind:
// its kernels are dropped and no slot is taken. Plugins load one at a time
// under a lock; loading is never retried, so the errors reach the first
// caller only and later ones see the device types that were accepted (an
// unknown type's error lists the refusals again).
#include "device/plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "base/error.h"
#include "device/plugin_device.h"

namespace oar {
namespace {

struct Loaded {
  std::string path;
  OAR_DeviceInterface* table;
  PluginDevice* device;
};

struct Loader {
  std::mutex mu;
  bool done = false;
  std::vector<Loaded> loaded;
  std::vector<std::string> refusals;  // "'<file>': <reason>"
};
Loader& loader() {
  static Loader* l = new Loader;  // never destroyed: plugins outlive static destructors
  return *l;
}

// The refusal of the plugin being loaded: its reason, without the file.
struct Refusal {
  std::string reason;
};
template <typename... Args> [[noreturn]] void refuse(const Args&... args) { throw Refusal{str_cat(args...)}; }

std::string dir_of_core_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&load_plugins), &info) || !info.dli_fname) return "";
  std::string p = info.dli_fname;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// The plugin files of a folder, sorted by name.
std::vector<std::string> plugins_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0 && !is_dir(dir + "/" + n)) out.push_back(dir + "/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Note [plugin discovery]. Missing OAR_PLUGIN_PATH entries are refusals.
std::vector<std::string> plugin_files(std::vector<std::string>& refusals) {
  std::vector<std::string> files;
  const std::string pkg = dir_of_core_library();
  if (!pkg.empty()) files = plugins_in(pkg + "/plugins");
  if (const char* env = std::getenv("OAR_PLUGIN_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      std::string entry = s.substr(start, end - start);
      start = end + 1;
      if (entry.empty()) continue;
      if (is_dir(entry)) {
        for (std::string& f : plugins_in(entry)) files.push_back(std::move(f));
      } else if (exists(entry)) {
        files.push_back(entry);
      } else {
        refusals.push_back(str_cat("'", entry, "' (named in OAR_PLUGIN_PATH): no such file or folder"));
      }
    }
  }
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const std::string& f : files) {
    char* real = realpath(f.c_str(), nullptr);
    std::string key = real ? real : f;
    std::free(real);
    if (seen.insert(key).second) unique.push_back(f);
  }
  return unique;
}

const char* const kReservedNames[] = {"cpu", "gpu", "cuda", "custom"};

void check_type_name(const char* name) {
  if (!name) refuse("its table names no device type (device_type is null)");
  const size_t n = std::strlen(name);
  bool ok = n >= 1 && n <= OAR_MAX_DEVICE_TYPE_NAME && name[0] >= 'a' && name[0] <= 'z';
  for (size_t i = 0; ok && i < n; ++i)
    ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
  if (!ok)
    refuse("its device type name '", name, "' is malformed: expected lower-case letters, digits and '_', starting "
           "with a letter, at most ", OAR_MAX_DEVICE_TYPE_NAME, " characters");
  for (const char* r : kReservedNames)
    if (std::strcmp(name, r) == 0) refuse("its device type name '", name, "' is reserved by oar");
}

#define OAR_ENTRY(name) {#name, t.name != nullptr}

void check_entries(const OAR_DeviceInterface& t) {
  struct Entry {
    const char* name;
    bool given;
  };
  const Entry required[] = {
      OAR_ENTRY(init),          OAR_ENTRY(get_device_count), OAR_ENTRY(set_device), OAR_ENTRY(get_device),
      OAR_ENTRY(synchronize_device), OAR_ENTRY(allocate),    OAR_ENTRY(deallocate), OAR_ENTRY(memory_stats),
      OAR_ENTRY(memcpy_h2d),    OAR_ENTRY(memcpy_d2h),       OAR_ENTRY(memcpy_d2d)};
  std::string missing;
  for (const Entry& e : required)
    if (!e.given) missing += (missing.empty() ? "" : ", ") + std::string(e.name);
  if (!missing.empty()) refuse("REQUIRED entries are null: ", missing);
  // Optional groups: all of a group or none.
  const std::initializer_list<Entry> groups[] = {
      {OAR_ENTRY(create_stream), OAR_ENTRY(destroy_stream), OAR_ENTRY(query_stream), OAR_ENTRY(synchronize_stream)},
      {OAR_ENTRY(create_event), OAR_ENTRY(record_event), OAR_ENTRY(query_event), OAR_ENTRY(synchronize_event),
       OAR_ENTRY(destroy_event)},
      {OAR_ENTRY(get_unique_id), OAR_ENTRY(comm_init_rank), OAR_ENTRY(comm_destroy), OAR_ENTRY(all_reduce)},
      {OAR_ENTRY(profiler_start), OAR_ENTRY(profiler_stop), OAR_ENTRY(profiler_collect)},
      {OAR_ENTRY(host_allocate), OAR_ENTRY(host_deallocate)}};
  for (const auto& g : groups) {
    std::string given, null;
    for (const Entry& e : g) {
      std::string& list = e.given ? given : null;
      list += (list.empty() ? "" : ", ") + std::string(e.name);
    }
    if (!given.empty() && !null.empty())
      refuse("an optional group is given in part: ", given, " set but ", null, " null (give all of them or none)");
  }
}

#undef OAR_ENTRY

// Loads one plugin file; returns what was loaded or throws Refusal.
Loaded load_one(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    refuse("it could not be loaded: ", e ? e : "unknown error");
  }
  auto init_fn = reinterpret_cast<OAR_PluginInitFn>(dlsym(h, OAR_PLUGIN_INIT_SYMBOL));
  if (!init_fn) {
    dlclose(h);
    refuse("it does not export ", OAR_PLUGIN_INIT_SYMBOL, " (extern \"C\" OAR_Status oar_plugin_init(OAR_PluginParams*))");
  }
  // From here on the library stays loaded: its code may be referenced.
  auto* table = new OAR_DeviceInterface{};  // never freed, like the device
  OAR_PluginParams params{};
  params.size = sizeof(params);
  params.abi_major = OAR_DEVICE_ABI_MAJOR;
  params.abi_minor = OAR_DEVICE_ABI_MINOR;
  params.host = plugin_host_api();
  params.device = table;
  begin_plugin_kernels();
  bool committed = false;
  try {
    OAR_Status s = OAR_ERROR;
    try {
      s = init_fn(&params);
    } catch (...) {
      refuse("its oar_plugin_init threw a C++ exception (it must return a status)");
    }
    if (s != OAR_SUCCESS)
      refuse("its oar_plugin_init failed: ", params.error_message ? params.error_message : "status " + std::to_string(int(s)));
    if (table->size < sizeof(OAR_DeviceInterface))
      refuse("its device table is ", table->size, " bytes, smaller than the ", sizeof(OAR_DeviceInterface),
             " of this oar's device_ext.h (set size = sizeof(OAR_DeviceInterface))");
    if (table->abi_major != OAR_DEVICE_ABI_MAJOR)
      refuse("it was built for device ABI major version ", table->abi_major, ", this oar has ", OAR_DEVICE_ABI_MAJOR);
    check_type_name(table->device_type);
    const std::string name = table->device_type;
    if (find_device_type(name) >= 0) refuse("its device type '", name, "' is already taken by another plugin");
    check_entries(*table);
    std::string kerr = check_plugin_kernels(name);
    if (!kerr.empty()) refuse(kerr);
    OAR_Status is = table->init();
    if (is != OAR_SUCCESS) {
      const char* m = table->get_last_error_message ? table->get_last_error_message() : nullptr;
      refuse("its init entry failed: ", m && *m ? m : "status " + std::to_string(int(is)));
    }
    int count = 0;
    OAR_Status cs = table->get_device_count(&count);
    if (cs != OAR_SUCCESS || count < 0) {
      if (table->finalize) table->finalize();
      refuse("its get_device_count failed");
    }
    count = std::min(count, kMaxDevicesPerType);
    auto* dev = new PluginDevice(table, path, count);  // never freed, like the CPU device
    DeviceType t;
    try {
      t = register_custom_device(name, dev);
    } catch (const Error& e) {
      if (table->finalize) table->finalize();
      std::string why = e.what();
      refuse(why.rfind("[oar] ", 0) == 0 ? why.substr(6) : why);
    }
    dev->set_type(t);
    end_plugin_kernels(true, t);
    committed = true;
    return Loaded{path, table, dev};
  } catch (...) {
    if (!committed) end_plugin_kernels(false, DeviceType::Custom);
    throw;
  }
}

void finalize_plugins() {
  Loader& l = loader();
  std::lock_guard<std::mutex> g(l.mu);
  for (Loaded& p : l.loaded) {
    p.device->mark_finalized();
    if (p.table->finalize) p.table->finalize();
  }
}

}  // namespace

void load_plugins(const char* api) {
  Loader& l = loader();
  std::vector<std::string> refusals;
  {
    std::lock_guard<std::mutex> g(l.mu);
    if (l.done) return;
    l.done = true;
    for (const std::string& f : plugin_files(l.refusals)) {
      try {
        l.loaded.push_back(load_one(f));
      } catch (const Refusal& r) {
        l.refusals.push_back(str_cat("'", f, "': ", r.reason));
      }
    }
    if (!l.loaded.empty()) std::atexit(finalize_plugins);
    refusals = l.refusals;
  }
  if (refusals.empty()) return;
  std::string msg = str_cat("[", api, "] ", refusals.size() == 1 ? "a device plugin was" : "device plugins were",
                            " refused: ");
  for (size_t i = 0; i < refusals.size(); ++i) msg += (i ? "; " : "") + refusals[i];
  fail(ErrorKind::Runtime, msg);
}

DeviceType custom_device_type(const std::string& name, const char* api) {
  load_plugins(api);
  const int t = find_device_type(name);
  if (t >= int(DeviceType::Custom)) return DeviceType(t);
  std::vector<std::string> types = custom_device_types(api);
  std::string listed;
  for (const std::string& n : types) listed += (listed.empty() ? "'" : ", '") + n + "'";
  std::string msg = str_cat("[", api, "] no device type is named '", name, "': expected 'cpu', 'gpu'",
                            listed.empty() ? "" : " or a plugin device type (", listed, listed.empty() ? "" : ")",
                            "; plugins are found in ", dir_of_core_library(), "/plugins and in OAR_PLUGIN_PATH");
  Loader& l = loader();
  std::lock_guard<std::mutex> g(l.mu);
  for (const std::string& r : l.refusals) msg += "; refused: " + r;
  fail(ErrorKind::Value, msg);
}

std::vector<std::string> custom_device_types(const char* api) {
  load_plugins(api);
  std::vector<std::string> out;
  for (int t = int(DeviceType::Custom); t < kNumDeviceTypes; ++t)
    if (!device_type_name(DeviceType(t)).empty()) out.push_back(device_type_name(DeviceType(t)));
  return out;
}

void plugin_profilers(bool on) {
  Loader& l = loader();
  std::lock_guard<std::mutex> g(l.mu);
  for (Loaded& p : l.loaded)
    if (p.table->profiler_start) on ? p.table->profiler_start() : p.table->profiler_stop();
}

std::vector<DeviceRecord> take_plugin_records() {
  struct Sink {
    DeviceType type;
    std::vector<DeviceRecord>* out;
  };
  std::vector<DeviceRecord> out;
  Loader& l = loader();
  std::lock_guard<std::mutex> g(l.mu);
  for (Loaded& p : l.loaded) {
    if (!p.table->profiler_collect) continue;
    Sink sink{p.device->type(), &out};
    p.table->profiler_collect(
        [](void* user, const char* name, int device, int64_t start, int64_t end) {
          auto* s = static_cast<Sink*>(user);
          s->out->push_back(DeviceRecord{name ? name : "", Device{s->type, int16_t(device)}.str(), start, end});
        },
        &sink);
  }
  return out;
}

const OAR_DeviceInterface* plugin_table(DeviceType t) {
  if (!is_custom(t) || !has_device(t)) return nullptr;
  return &static_cast<PluginDevice&>(device_interface(t)).table();
}

}  // namespace oar

// custom_cpu's function table and entry point: device management, memory
// (its own allocator with a header per block and a capacity per device),
// counted copies, the profiler hooks and the registration lists.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "custom_cpu.h"

namespace custom_cpu {
namespace {

// ---- Registration lists -------------------------------------------------------

std::vector<KernelRegistration>& kernel_registrations() {
  static std::vector<KernelRegistration> v;
  return v;
}
std::vector<TableExtension>& table_extensions() {
  static std::vector<TableExtension> v;
  return v;
}

// ---- Errors -----------------------------------------------------------------------

thread_local std::string t_last_error;
const char* last_error() { return t_last_error.c_str(); }

// ---- Devices ------------------------------------------------------------------------

thread_local int t_current = 0;

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (*end || n < lo || n > hi) ? -1 : int(n);
}

int g_requested_count = 2;

OAR_Status init() {
  const int count = env_int("CUSTOM_CPU_DEVICE_COUNT", 2, 0, 16);
  if (count < 0) return set_error(OAR_ERROR_INVALID_ARGUMENT, "CUSTOM_CPU_DEVICE_COUNT must be an integer 0..16");
  g_requested_count = count;
  start_streams(count);
  return OAR_SUCCESS;
}

OAR_Status finalize() {
  stop_streams();
  return OAR_SUCCESS;
}

OAR_Status get_device_count(int* count) {
  *count = g_requested_count;
  return OAR_SUCCESS;
}

OAR_Status bad_device(int device) {
  return set_error(OAR_ERROR_INVALID_ARGUMENT, "custom_cpu:" + std::to_string(device) + " does not exist (" +
                                                   std::to_string(device_count()) + " devices)");
}

OAR_Status set_device(int device) {
  if (!valid_device(device)) return bad_device(device);
  t_current = device;
  return OAR_SUCCESS;
}

OAR_Status get_device(int* device) {
  *device = t_current;
  return OAR_SUCCESS;
}

OAR_Status synchronize_device_entry(int device) {
  if (!valid_device(device)) return bad_device(device);
  synchronize_device(device);
  return OAR_SUCCESS;
}

OAR_Status get_device_name(int device, char* buf, size_t n) {
  if (!valid_device(device)) return bad_device(device);
  std::snprintf(buf, n, "custom_cpu host-memory device %d", device);
  return OAR_SUCCESS;
}

// ---- Memory ---------------------------------------------------------------------------
// Each block starts with a header that names its device and size, so a block
// freed on the wrong device, twice, or with the wrong size is caught. Each
// device has a capacity (CUSTOM_CPU_MEMORY_MB, default 4096); allocations
// beyond it fail with OAR_ERROR_OUT_OF_MEMORY, as a real device's would.

constexpr size_t kHeader = 64;
constexpr uint64_t kLive = 0x0a7c0570b10c0001ull, kFreed = 0x0a7c0570f4eed000ull;
struct BlockHeader {
  uint64_t magic;
  int32_t device;
  uint64_t nbytes;
};
static_assert(sizeof(BlockHeader) <= kHeader);

constexpr int kMaxDevices = 16;
std::atomic<int64_t> g_used[kMaxDevices];

int64_t capacity() {
  static const int64_t c = int64_t(env_int("CUSTOM_CPU_MEMORY_MB", 4096, 1, 1 << 20)) << 20;
  return c;
}

OAR_Status allocate(int device, void** ptr, size_t nbytes) {
  if (!valid_device(device)) return bad_device(device);
  const int64_t before = g_used[device].fetch_add(int64_t(nbytes));
  if (capacity() <= 0 || before + int64_t(nbytes) > capacity()) {
    g_used[device].fetch_sub(int64_t(nbytes));
    return set_error(OAR_ERROR_OUT_OF_MEMORY, "custom_cpu:" + std::to_string(device) + " has " +
                                                  std::to_string(capacity() - before) + " of " +
                                                  std::to_string(capacity()) + " bytes free, " +
                                                  std::to_string(nbytes) + " were asked for");
  }
  const size_t rounded = (nbytes + kHeader - 1) / kHeader * kHeader;
  void* base = std::aligned_alloc(kHeader, kHeader + rounded);
  if (!base) {
    g_used[device].fetch_sub(int64_t(nbytes));
    return set_error(OAR_ERROR_OUT_OF_MEMORY, "the host is out of memory");
  }
  auto* h = static_cast<BlockHeader*>(base);
  *h = BlockHeader{kLive, device, nbytes};
  *ptr = static_cast<char*>(base) + kHeader;
  return OAR_SUCCESS;
}

OAR_Status deallocate(int device, void* ptr, size_t nbytes) {
  if (!ptr) return OAR_SUCCESS;
  auto* h = reinterpret_cast<BlockHeader*>(static_cast<char*>(ptr) - kHeader);
  if (h->magic != kLive)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, h->magic == kFreed ? "block freed twice" : "not a custom_cpu block");
  if (h->device != device || h->nbytes != nbytes)
    return set_error(OAR_ERROR_INVALID_ARGUMENT, "block of custom_cpu:" + std::to_string(h->device) + " and " +
                                                     std::to_string(h->nbytes) + " bytes freed as one of custom_cpu:" +
                                                     std::to_string(device) + " and " + std::to_string(nbytes));
  h->magic = kFreed;
  g_used[device].fetch_sub(int64_t(nbytes));
  std::free(h);
  return OAR_SUCCESS;
}

OAR_Status memory_stats(int device, size_t* total, size_t* free) {
  if (!valid_device(device)) return bad_device(device);
  *total = size_t(capacity());
  *free = size_t(capacity() - g_used[device].load());
  return OAR_SUCCESS;
}

OAR_Status host_allocate(int, void** ptr, size_t nbytes) {
  *ptr = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  return *ptr ? OAR_SUCCESS : set_error(OAR_ERROR_OUT_OF_MEMORY, "the host is out of memory");
}
OAR_Status host_deallocate(int, void* ptr, size_t) {
  std::free(ptr);
  return OAR_SUCCESS;
}

// ---- Copies -------------------------------------------------------------------------------
// Counted by direction (custom_cpu_copy_counts), synchronous ones after the
// device's queued work, asynchronous ones as tasks of their stream.

enum Direction { kH2D = 0, kD2H = 1, kD2D = 2 };
std::atomic<int64_t> g_copies[3], g_copy_bytes[3];
const char* const kCopyNames[3] = {"memcpy_h2d", "memcpy_d2h", "memcpy_d2d"};

void copy(Direction d, int device, void* dst, const void* src, size_t n) {
  const int64_t t0 = profiling() ? now_ns() : 0;
  std::memcpy(dst, src, n);
  g_copies[d].fetch_add(1);
  g_copy_bytes[d].fetch_add(int64_t(n));
  if (t0) record(kCopyNames[d], device, t0, now_ns());
}

template <Direction D>
OAR_Status memcpy_sync(int device, void* dst, const void* src, size_t n) {
  if (!valid_device(device)) return bad_device(device);
  synchronize_device(device);
  copy(D, device, dst, src, n);
  return OAR_SUCCESS;
}

template <Direction D>
OAR_Status memcpy_async(int device, OAR_Stream s, void* dst, const void* src, size_t n) {
  if (!valid_device(device)) return bad_device(device);
  enqueue(device, s, [=] { copy(D, device, dst, src, n); });
  return OAR_SUCCESS;
}

OAR_Status memset_entry(int device, void* ptr, int value, size_t n) {
  if (!valid_device(device)) return bad_device(device);
  synchronize_device(device);
  std::memset(ptr, value, n);
  return OAR_SUCCESS;
}

// ---- Profiler -------------------------------------------------------------------------------

struct Record {
  const char* name;
  int device;
  int64_t start, end;
};
std::atomic<bool> g_profiling{false};
std::mutex g_records_mu;
std::vector<Record> g_records;

OAR_Status profiler_start() {
  std::lock_guard<std::mutex> g(g_records_mu);
  g_records.clear();
  g_profiling.store(true);
  return OAR_SUCCESS;
}
OAR_Status profiler_stop() {
  g_profiling.store(false);
  return OAR_SUCCESS;
}
OAR_Status profiler_collect(OAR_ProfilerRecordFn fn, void* user) {
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> g(g_records_mu);
    records.swap(g_records);
  }
  for (const Record& r : records) fn(user, r.name, r.device, r.start, r.end);
  return OAR_SUCCESS;
}

// ---- Kernels -----------------------------------------------------------------------------------

// Runs a kernel after the work queued on its stream (custom_cpu.h).
OAR_Status run_kernel(OAR_KernelContext* ctx, void* fn) {
  const OAR_HostAPI* host = oar::ext::host_api();
  const int device = host->device_id(ctx);
  synchronize_stream(device, host->stream(ctx));
  const int64_t t0 = profiling() ? now_ns() : 0;
  OAR_Status s = oar::ext::detail::call_kernel(ctx, fn);
  if (t0) record(host->op_name(ctx), device, t0, now_ns());
  return s;
}

}  // namespace

RegisterKernels::RegisterKernels(KernelRegistration f) { kernel_registrations().push_back(f); }
ExtendTable::ExtendTable(TableExtension f) { table_extensions().push_back(f); }

void add_kernel(const char* op, std::initializer_list<oar::ext::DType> dtypes, oar::ext::KernelFunction fn) {
  std::vector<OAR_DataType> dts;
  for (oar::ext::DType d : dtypes) dts.push_back(OAR_DataType(d));
  // A refusal is reported by oar, which then refuses the plugin.
  oar::ext::host_api()->register_kernel(op, kDeviceType, dts.data(), dts.size(), run_kernel,
                                        reinterpret_cast<void*>(fn));
}

OAR_Status set_error(OAR_Status s, const std::string& message) {
  t_last_error = message;
  return s;
}

bool profiling() { return g_profiling.load(std::memory_order_relaxed); }

void record(const char* name, int device, int64_t start_ns, int64_t end_ns) {
  std::lock_guard<std::mutex> g(g_records_mu);
  g_records.push_back(Record{name, device, start_ns, end_ns});
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace custom_cpu

extern "C" {

__attribute__((visibility("default"))) OAR_Status oar_plugin_init(OAR_PluginParams* params) {
  using namespace custom_cpu;
  if (OAR_Status s = oar::ext::init(params); s != OAR_SUCCESS) return s;
  OAR_DeviceInterface& t = *params->device;
  t.size = sizeof(OAR_DeviceInterface);
  t.abi_major = OAR_DEVICE_ABI_MAJOR;
  t.abi_minor = OAR_DEVICE_ABI_MINOR;
  t.device_type = kDeviceType;
  t.init = init;
  t.finalize = finalize;
  t.get_device_count = get_device_count;
  t.set_device = set_device;
  t.get_device = get_device;
  t.synchronize_device = synchronize_device_entry;
  t.allocate = allocate;
  t.deallocate = deallocate;
  t.memset = memset_entry;
  t.host_allocate = host_allocate;
  t.host_deallocate = host_deallocate;
  t.memory_stats = memory_stats;
  t.memcpy_h2d = memcpy_sync<kH2D>;
  t.memcpy_d2h = memcpy_sync<kD2H>;
  t.memcpy_d2d = memcpy_sync<kD2D>;
  t.async_memcpy_h2d = memcpy_async<kH2D>;
  t.async_memcpy_d2h = memcpy_async<kD2H>;
  t.async_memcpy_d2d = memcpy_async<kD2D>;
  fill_stream_entries(t);
  t.profiler_start = profiler_start;
  t.profiler_stop = profiler_stop;
  t.profiler_collect = profiler_collect;
  t.get_last_error_message = last_error;
  t.get_device_name = get_device_name;
  for (TableExtension f : table_extensions()) f(t);
  for (KernelRegistration f : kernel_registrations()) f();
  return OAR_SUCCESS;
}

// Test hooks, read through ctypes: the copies made so far, per direction
// (host to device, device to host, device to device), as counts and bytes.
__attribute__((visibility("default"))) void custom_cpu_copy_counts(int64_t counts[3], int64_t bytes[3]) {
  for (int d = 0; d < 3; ++d) {
    counts[d] = custom_cpu::g_copies[d].load();
    bytes[d] = custom_cpu::g_copy_bytes[d].load();
  }
}

// Bytes allocated from the plugin's own allocator on `device` (what oar's
// caching allocator reserved there).
__attribute__((visibility("default"))) int64_t custom_cpu_bytes_in_use(int device) {
  return device >= 0 && device < custom_cpu::kMaxDevices ? custom_cpu::g_used[device].load() : -1;
}

}  // extern "C"

// The device registry (Note [device type slots]), device names, current
// streams and the host-clock events devices without their own use.
#include "tensor/device.h"

#include <atomic>
#include <chrono>
#include <mutex>

#include "base/error.h"

namespace oar {
namespace {

DeviceInterface* g_devices[kNumDeviceTypes] = {};
std::atomic<void*> g_current_streams[kNumDeviceTypes][kMaxDevicesPerType] = {};

std::mutex& names_mutex() {
  static std::mutex m;
  return m;
}
std::string* type_names() {
  static std::string names[kNumDeviceTypes] = {"cpu", "gpu"};
  return names;
}

// Note [device streams]: the default event of a device, a host timestamp.
struct HostEvent {
  int64_t ns = -1;  // -1: never recorded
};

int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

DeviceInterface& device_interface(DeviceType t) {
  DeviceInterface* d = int(t) < kNumDeviceTypes ? g_devices[int(t)] : nullptr;
  if (!d) fail(ErrorKind::Runtime, "[oar] device type ", int(t), " is not available in this build");
  return *d;
}

bool has_device(DeviceType t) { return int(t) < kNumDeviceTypes && g_devices[int(t)] != nullptr; }
void register_device(DeviceType t, DeviceInterface* iface) { g_devices[int(t)] = iface; }

DeviceType register_custom_device(const std::string& name, DeviceInterface* iface) {
  std::lock_guard<std::mutex> g(names_mutex());
  std::string* names = type_names();
  for (int t = 0; t < kNumDeviceTypes; ++t)
    OAR_CHECK(names[t] != name, Runtime, "[oar] the device type name '", name, "' is already taken");
  for (int t = int(DeviceType::Custom); t < kNumDeviceTypes; ++t)
    if (names[t].empty()) {
      names[t] = name;
      g_devices[t] = iface;
      return DeviceType(t);
    }
  fail(ErrorKind::Runtime, "[oar] no slot is left for device type '", name, "': at most ", kNumCustomDeviceTypes,
       " plugin device types can be loaded");
}

const std::string& device_type_name(DeviceType t) { return type_names()[int(t)]; }

int find_device_type(const std::string& name) {
  if (name.empty()) return -1;
  std::lock_guard<std::mutex> g(names_mutex());
  for (int t = 0; t < kNumDeviceTypes; ++t)
    if (type_names()[t] == name) return t;
  return -1;
}

std::string Device::str() const {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "gpu:" + std::to_string(index);
    default: {
      const std::string& n = device_type_name(type);
      return (n.empty() ? "custom" : n) + ":" + std::to_string(index);
    }
  }
}

void* current_stream(Device d) {
  if (d.index < 0 || d.index >= kMaxDevicesPerType) return nullptr;
  return g_current_streams[int(d.type)][d.index].load(std::memory_order_acquire);
}

void set_current_stream(Device d, void* stream) {
  OAR_CHECK(d.index >= 0 && d.index < kMaxDevicesPerType, Value, "[oar.device.set_stream] device ", d.str(),
            " is out of range: streams are kept for devices 0 to ", kMaxDevicesPerType - 1);
  g_current_streams[int(d.type)][d.index].store(stream, std::memory_order_release);
}

void* DeviceInterface::create_event(int, bool) { return new HostEvent; }
void DeviceInterface::destroy_event(int, void* event) { delete static_cast<HostEvent*>(event); }
void DeviceInterface::record_event(int index, void* event, void* stream) {
  synchronize_stream(index, stream);  // the time is taken once the queued work is done
  static_cast<HostEvent*>(event)->ns = host_now_ns();
}
double DeviceInterface::event_elapsed_ms(int, void* start, void* end) {
  const int64_t a = static_cast<HostEvent*>(start)->ns, b = static_cast<HostEvent*>(end)->ns;
  OAR_CHECK(a >= 0 && b >= 0, Value, "[oar.device.Event.elapsed_time] both events must have been recorded");
  return double(b - a) / 1e6;
}

size_t allocator_size_class(size_t n, size_t min_bytes, size_t pow2_until, int* cls) {
  const int pmin = __builtin_ctzll(min_bytes), pmax = __builtin_ctzll(pow2_until);
  if (n <= min_bytes) {
    *cls = 0;
    return min_bytes;
  }
  const int p = 64 - __builtin_clzll(n - 1);  // 2^p >= n
  if (p <= pmax) {
    *cls = p - pmin;
    return size_t(1) << p;
  }
  const size_t base = size_t(1) << (p - 1);  // base < n <= 2*base
  const size_t q = base / 4;
  const size_t k = (n - base + q - 1) / q;   // 1..4
  *cls = (pmax - pmin) + 1 + (p - pmax - 1) * 4 + int(k - 1);
  return base + k * q;
}

}  // namespace oar

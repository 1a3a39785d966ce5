// Devices. Everything the core needs from a device goes through
// DeviceInterface, so CUDA and plugin devices add an implementation and
// kernels without touching the tensor core.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace oar {

// Note [device type slots]
// A device type is an index into every per-device table (an op's kernels,
// the registered DeviceInterfaces, current streams): the CPU, CUDA, then
// kNumCustomDeviceTypes slots that plugins (device/plugin.cpp) take in the
// order they are loaded, each bound to the type name the plugin registers
// ("custom_cpu"). Dispatch does not know the difference: a plugin device is
// found, and its kernels picked, like CUDA's.
enum class DeviceType : uint8_t { CPU = 0, CUDA = 1, Custom = 2 /* the first plugin slot */ };
constexpr int kNumCustomDeviceTypes = 6;
constexpr int kNumDeviceTypes = 2 + kNumCustomDeviceTypes;
inline bool is_custom(DeviceType t) { return t >= DeviceType::Custom; }
// Devices of one type are numbered below this (current streams are kept per device).
constexpr int kMaxDevicesPerType = 64;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "gpu:0", "custom_cpu:1"
};

struct MemoryStats {
  int64_t allocated = 0;      // bytes in live tensors
  int64_t max_allocated = 0;  // peak of `allocated` since the last reset
  int64_t reserved = 0;       // bytes held from the system, cached blocks included
  int64_t max_reserved = 0;   // peak of `reserved` since the last reset
};

// Note [device streams]
// A stream is a device's queue of work, an event a point in one. Handles are
// opaque to the core (cudaStream_t, a plugin's OAR_Stream); a null stream is
// the device's default stream. The defaults below suit a device whose work
// is done when the call returns (the CPU): a stream is always complete, and an
// event is a host timestamp taken once its stream is synchronized. Devices
// that queue work override them. Which stream kernels and copies go to is the
// current stream of their device (set_current_stream), which Python's
// oar.device.stream_guard sets.
class DeviceInterface {
 public:
  virtual ~DeviceInterface() = default;
  virtual DeviceType type() const = 0;
  virtual void* allocate(size_t nbytes, int index) = 0;
  virtual void deallocate(void* ptr, size_t nbytes, int index) = 0;
  // Copies between this device and host memory, or within this device.
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_on_device(void* dst, const void* src, size_t nbytes, int index) = 0;
  // A copy from host memory queued on `stream`; `done` runs (on any thread)
  // once the stream has passed it, when `src` may be freed.
  virtual void copy_from_host_async(void* dst, const void* src, size_t nbytes, int index, void* stream,
                                    std::function<void()> done) {
    synchronize_stream(index, stream);
    copy_from_host(dst, src, nbytes, index);
    done();
  }
  virtual void synchronize(int index) {}
  virtual MemoryStats memory_stats(int index) const = 0;
  virtual void reset_peak_stats(int index) = 0;  // max_allocated = allocated
  virtual void reset_peak_reserved(int index) = 0;  // max_reserved = reserved
  virtual void empty_cache(int index) {}
  virtual int device_count() const { return 1; }
  // The device's memory in bytes, all and free now (0, 0 when unknown).
  virtual void memory_info(int index, size_t* total, size_t* free) {
    *total = 0;
    *free = 0;
  }
  // A human-readable name of the device ("NVIDIA H100", ...).
  virtual std::string device_name(int index) { return Device{type(), int16_t(index)}.str(); }

  // Streams (Note [device streams]).
  virtual void* create_stream(int index) { return nullptr; }
  virtual void destroy_stream(int index, void* stream) {}
  virtual bool query_stream(int index, void* stream) { return true; }  // true: all its work is done
  virtual void synchronize_stream(int index, void* stream) { synchronize(index); }
  // Later work on `stream` waits for `event`.
  virtual void stream_wait_event(int index, void* stream, void* event) { synchronize_event(index, event); }

  // Events (Note [device streams]).
  virtual void* create_event(int index, bool timing);
  virtual void destroy_event(int index, void* event);
  virtual void record_event(int index, void* event, void* stream);
  virtual bool query_event(int index, void* event) { return true; }
  virtual void synchronize_event(int index, void* event) {}
  // Milliseconds from `start` to `end`, both recorded and complete.
  virtual double event_elapsed_ms(int index, void* start, void* end);
};

// Rounds n up to a size class of a caching allocator: `min_bytes`, then the
// powers of two up to `pow2_until`, then four classes per power of two (x1,
// x1.25, x1.5, x1.75), so at most 25% is lost. *cls numbers the classes from
// 0. min_bytes and pow2_until are powers of two, min_bytes <= pow2_until.
size_t allocator_size_class(size_t n, size_t min_bytes, size_t pow2_until, int* cls);

// The interface for a device type; throws RuntimeError if none is registered.
DeviceInterface& device_interface(DeviceType t);
bool has_device(DeviceType t);
void register_device(DeviceType t, DeviceInterface* iface);

// Plugin device types (Note [device type slots]). register_custom_device
// takes the next free slot for `name` and returns it; it throws RuntimeError
// when the name is taken or no slot is left. The interface is never freed.
DeviceType register_custom_device(const std::string& name, DeviceInterface* iface);
// "cpu", "gpu", or the plugin's type name ("" for a free slot).
const std::string& device_type_name(DeviceType t);
// The slot of a registered type name, or -1; "cpu" and "gpu" name theirs.
int find_device_type(const std::string& name);

// The stream kernels and copies on `d` go to (null: the default stream).
void* current_stream(Device d);
void set_current_stream(Device d, void* stream);

}  // namespace oar

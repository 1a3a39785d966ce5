// Devices. Everything the core needs from a device goes through
// DeviceInterface, so CUDA and plugin devices add an implementation and
// kernels without touching the tensor core.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace oar {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1, Custom = 2 };
constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = 0;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "gpu:0", ...
};

struct MemoryStats {
  int64_t allocated = 0;      // bytes in live tensors
  int64_t max_allocated = 0;  // peak of `allocated` since the last reset
  int64_t reserved = 0;       // bytes held from the system, cached blocks included
  int64_t max_reserved = 0;   // peak of `reserved` since the last reset
};

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
  virtual void synchronize(int index) {}
  virtual MemoryStats memory_stats(int index) const = 0;
  virtual void reset_peak_stats(int index) = 0;  // max_allocated = allocated
  virtual void reset_peak_reserved(int index) = 0;  // max_reserved = reserved
  virtual void empty_cache(int index) {}
  virtual int device_count() const { return 1; }
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

}  // namespace oar

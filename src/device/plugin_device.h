// A plugin's device (include/oar/device_ext.h) behind DeviceInterface: the
// caching allocator over its allocate/deallocate, its copies, streams and
// events, with the documented fallbacks for the optional entries it leaves
// null.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "oar/device_ext.h"
#include "tensor/caching_allocator.h"

namespace oar {

class PluginDevice final : public DeviceInterface {
 public:
  // `table` is the plugin's validated table, initialised; it outlives this.
  PluginDevice(const OAR_DeviceInterface* table, std::string path, int count);

  // Called once the device has its slot.
  void set_type(DeviceType t);
  DeviceType type() const override { return type_; }
  const OAR_DeviceInterface& table() const { return *t_; }
  const std::string& path() const { return path_; }
  // After the plugin's finalize: no entry is called any more.
  void mark_finalized() { finalized_.store(true); }

  int device_count() const override { return count_; }
  void* allocate(size_t nbytes, int index) override;
  void deallocate(void* p, size_t nbytes, int index) override;
  void copy_to_host(void* dst, const void* src, size_t n, int index) override;
  void copy_from_host(void* dst, const void* src, size_t n, int index) override;
  void copy_on_device(void* dst, const void* src, size_t n, int index) override;
  void copy_from_host_async(void* dst, const void* src, size_t n, int index, void* stream,
                            std::function<void()> done) override;
  void synchronize(int index) override;
  MemoryStats memory_stats(int index) const override;
  void reset_peak_stats(int index) override;
  void reset_peak_reserved(int index) override;
  void empty_cache(int index) override;
  void memory_info(int index, size_t* total, size_t* free) override;
  std::string device_name(int index) override;

  void* create_stream(int index) override;
  void destroy_stream(int index, void* stream) override;
  bool query_stream(int index, void* stream) override;
  void synchronize_stream(int index, void* stream) override;
  void stream_wait_event(int index, void* stream, void* event) override;

  void* create_event(int index, bool timing) override;
  void destroy_event(int index, void* event) override;
  void record_event(int index, void* event, void* stream) override;
  bool query_event(int index, void* event) override;
  void synchronize_event(int index, void* event) override;
  double event_elapsed_ms(int index, void* start, void* end) override;

  // Raises the error of a failed entry: "[api] the <type> plugin's <entry>
  // failed on <device>: <its last error message, or the status>".
  void check(OAR_Status s, const char* api, const char* entry, int index) const;

 private:
  struct Memory final : CachingAllocator::Backend {
    PluginDevice* dev = nullptr;
    int index = 0;
    void* raw_allocate(size_t nbytes) override;
    void raw_free(void* p, size_t nbytes) override;
    void before_release() override;
  };
  struct PerDevice {
    Memory memory;
    std::unique_ptr<CachingAllocator> alloc;
  };
  PerDevice& dev(int index) const;
  Device device(int index) const { return Device{type_, int16_t(index)}; }
  bool has_streams() const { return t_->create_stream != nullptr; }
  bool has_events() const { return t_->create_event != nullptr; }

  const OAR_DeviceInterface* t_;
  std::string path_;
  int count_;
  DeviceType type_ = DeviceType::Custom;
  std::atomic<bool> finalized_{false};
  std::vector<std::unique_ptr<PerDevice>> devices_;
};

}  // namespace oar

#include "device/plugin_device.h"

#include <vector>

#include "base/error.h"
#include "device/plugin.h"

namespace oar {

const char* plugin_status_name(OAR_Status s) {
  switch (s) {
    case OAR_SUCCESS: return "OAR_SUCCESS";
    case OAR_ERROR: return "OAR_ERROR";
    case OAR_ERROR_OUT_OF_MEMORY: return "OAR_ERROR_OUT_OF_MEMORY";
    case OAR_ERROR_INVALID_ARGUMENT: return "OAR_ERROR_INVALID_ARGUMENT";
    case OAR_ERROR_UNSUPPORTED: return "OAR_ERROR_UNSUPPORTED";
    case OAR_NOT_READY: return "OAR_NOT_READY";
  }
  return "an unknown status";
}

ErrorKind plugin_error_kind(OAR_Status s) {
  switch (s) {
    case OAR_ERROR_OUT_OF_MEMORY: return ErrorKind::Memory;
    case OAR_ERROR_INVALID_ARGUMENT: return ErrorKind::Value;
    case OAR_ERROR_UNSUPPORTED: return ErrorKind::NotImplemented;
    default: return ErrorKind::Runtime;
  }
}

namespace {

// A plugin's event, with whether it was ever recorded (an event never
// recorded counts as complete).
struct PluginEvent {
  OAR_Event ev = nullptr;
  bool recorded = false;
};

OAR_Stream as_stream(void* s) { return static_cast<OAR_Stream>(s); }

// Runs `done` once; the trampoline a plugin's stream callback calls.
void run_done(void* user, OAR_Status) {
  auto* f = static_cast<std::function<void()>*>(user);
  (*f)();
  delete f;
}

}  // namespace

PluginDevice::PluginDevice(const OAR_DeviceInterface* table, std::string path, int count)
    : t_(table), path_(std::move(path)), count_(count) {}

void PluginDevice::set_type(DeviceType t) {
  type_ = t;
  for (int i = 0; i < count_; ++i) {
    auto d = std::make_unique<PerDevice>();
    d->memory.dev = this;
    d->memory.index = i;
    // Size classes from 256 B; powers of two up to 4 KiB as on the CPU
    // (Note [CPU block sizes]).
    d->alloc = std::make_unique<CachingAllocator>(device(i), &d->memory, 256, 4096);
    devices_.push_back(std::move(d));
  }
}

void PluginDevice::check(OAR_Status s, const char* api, const char* entry, int index) const {
  if (s == OAR_SUCCESS) return;
  const char* msg = t_->get_last_error_message ? t_->get_last_error_message() : nullptr;
  fail(plugin_error_kind(s), "[", api, "] the ", device_type_name(type_), " plugin's ", entry, " failed on ",
       device(index).str(), ": ", msg && *msg ? msg : plugin_status_name(s));
}

PluginDevice::PerDevice& PluginDevice::dev(int index) const {
  OAR_CHECK(index >= 0 && index < count_, Value, "[oar] ", device(index).str(), " does not exist: ", count_, " ",
            device_type_name(type_), " device(s) are present");
  return *devices_[size_t(index)];
}

void* PluginDevice::Memory::raw_allocate(size_t nbytes) {
  void* p = nullptr;
  OAR_Status s = dev->t_->allocate(index, &p, nbytes);
  if (s == OAR_ERROR_OUT_OF_MEMORY) return nullptr;
  dev->check(s, "oar", "allocate", index);
  OAR_CHECK(p, Runtime, "[oar] the ", device_type_name(dev->type_), " plugin's allocate returned no memory on ",
            dev->device(index).str());
  return p;
}

void PluginDevice::Memory::raw_free(void* p, size_t nbytes) {
  if (!dev->finalized_.load()) dev->t_->deallocate(index, p, nbytes);
}

void PluginDevice::Memory::before_release() {
  if (!dev->finalized_.load()) dev->check(dev->t_->synchronize_device(index), "oar.device.empty_cache",
                                          "synchronize_device", index);
}

void* PluginDevice::allocate(size_t nbytes, int index) { return dev(index).alloc->allocate(nbytes); }
void PluginDevice::deallocate(void* p, size_t nbytes, int index) { dev(index).alloc->deallocate(p, nbytes); }
MemoryStats PluginDevice::memory_stats(int index) const { return dev(index).alloc->stats(); }
void PluginDevice::reset_peak_stats(int index) { dev(index).alloc->reset_peak_allocated(); }
void PluginDevice::reset_peak_reserved(int index) { dev(index).alloc->reset_peak_reserved(); }
void PluginDevice::empty_cache(int index) { dev(index).alloc->empty_cache(); }

void PluginDevice::memory_info(int index, size_t* total, size_t* free) {
  dev(index);
  check(t_->memory_stats(index, total, free), "oar.device.memory_info", "memory_stats", index);
}

std::string PluginDevice::device_name(int index) {
  dev(index);
  if (!t_->get_device_name) return device_type_name(type_);
  char buf[256] = {};
  check(t_->get_device_name(index, buf, sizeof(buf) - 1), "oar.device.get_device_name", "get_device_name", index);
  return buf;
}

void PluginDevice::copy_to_host(void* dst, const void* src, size_t n, int index) {
  check(t_->memcpy_d2h(index, dst, src, n), "oar.Tensor.cpu", "memcpy_d2h", index);
}
void PluginDevice::copy_from_host(void* dst, const void* src, size_t n, int index) {
  check(t_->memcpy_h2d(index, dst, src, n), "oar.Tensor.to", "memcpy_h2d", index);
}
void PluginDevice::copy_on_device(void* dst, const void* src, size_t n, int index) {
  check(t_->memcpy_d2d(index, dst, src, n), "oar.Tensor.copy_", "memcpy_d2d", index);
}

void PluginDevice::copy_from_host_async(void* dst, const void* src, size_t n, int index, void* stream,
                                        std::function<void()> done) {
  if (!t_->async_memcpy_h2d) {
    DeviceInterface::copy_from_host_async(dst, src, n, index, stream, std::move(done));
    return;
  }
  if (OAR_Status s = t_->async_memcpy_h2d(index, as_stream(stream), dst, src, n); s != OAR_SUCCESS) {
    done();
    check(s, "oar.Tensor.to", "async_memcpy_h2d", index);
  }
  if (t_->stream_add_callback) {
    auto* f = new std::function<void()>(std::move(done));
    OAR_Status s = t_->stream_add_callback(index, as_stream(stream), run_done, f);
    if (s == OAR_SUCCESS) return;
    // The callback will not run: keep the source alive until the copy is done.
    done = std::move(*f);
    delete f;
  }
  synchronize_stream(index, stream);
  done();
}

void PluginDevice::synchronize(int index) {
  dev(index);
  check(t_->synchronize_device(index), "oar.device.synchronize", "synchronize_device", index);
}

// Streams: without the plugin's, one implicit stream (the null handle).

void* PluginDevice::create_stream(int index) {
  dev(index);
  if (!has_streams()) return nullptr;
  OAR_Stream s = nullptr;
  check(t_->create_stream(index, &s), "oar.device.Stream", "create_stream", index);
  return s;
}

void PluginDevice::destroy_stream(int index, void* stream) {
  if (stream && has_streams() && !finalized_.load()) t_->destroy_stream(index, as_stream(stream));
}

bool PluginDevice::query_stream(int index, void* stream) {
  dev(index);
  if (!has_streams()) {
    synchronize(index);
    return true;
  }
  OAR_Status s = t_->query_stream(index, as_stream(stream));
  if (s == OAR_NOT_READY) return false;
  check(s, "oar.device.Stream.query", "query_stream", index);
  return true;
}

void PluginDevice::synchronize_stream(int index, void* stream) {
  dev(index);
  if (!has_streams()) return synchronize(index);
  check(t_->synchronize_stream(index, as_stream(stream)), "oar.device.Stream.synchronize", "synchronize_stream",
        index);
}

void PluginDevice::stream_wait_event(int index, void* stream, void* event) {
  if (!has_events()) return DeviceInterface::stream_wait_event(index, stream, event);
  auto* e = static_cast<PluginEvent*>(event);
  if (!e->recorded) return;
  if (!t_->stream_wait_event || !has_streams()) return synchronize_event(index, event);
  check(t_->stream_wait_event(index, as_stream(stream), e->ev), "oar.device.Stream.wait_event", "stream_wait_event",
        index);
}

// Events: without the plugin's, host timestamps taken after synchronizing
// the stream (DeviceInterface's defaults).

void* PluginDevice::create_event(int index, bool timing) {
  dev(index);
  if (!has_events()) return DeviceInterface::create_event(index, timing);
  auto e = std::make_unique<PluginEvent>();
  check(t_->create_event(index, &e->ev), "oar.device.Event", "create_event", index);
  return e.release();
}

void PluginDevice::destroy_event(int index, void* event) {
  if (!has_events()) return DeviceInterface::destroy_event(index, event);
  auto* e = static_cast<PluginEvent*>(event);
  if (!finalized_.load()) t_->destroy_event(index, e->ev);
  delete e;
}

void PluginDevice::record_event(int index, void* event, void* stream) {
  if (!has_events()) return DeviceInterface::record_event(index, event, stream);
  auto* e = static_cast<PluginEvent*>(event);
  check(t_->record_event(index, as_stream(stream), e->ev), "oar.device.Event.record", "record_event", index);
  e->recorded = true;
}

bool PluginDevice::query_event(int index, void* event) {
  if (!has_events()) return true;
  auto* e = static_cast<PluginEvent*>(event);
  if (!e->recorded) return true;
  OAR_Status s = t_->query_event(index, e->ev);
  if (s == OAR_NOT_READY) return false;
  check(s, "oar.device.Event.query", "query_event", index);
  return true;
}

void PluginDevice::synchronize_event(int index, void* event) {
  if (!has_events()) return;
  auto* e = static_cast<PluginEvent*>(event);
  if (!e->recorded) return;
  check(t_->synchronize_event(index, e->ev), "oar.device.Event.synchronize", "synchronize_event", index);
}

double PluginDevice::event_elapsed_ms(int index, void* start, void* end) {
  if (!has_events()) return DeviceInterface::event_elapsed_ms(index, start, end);
  const char* api = "oar.device.Event.elapsed_time";
  OAR_CHECK(t_->event_elapsed_time, NotImplemented, "[", api, "] the ", device_type_name(type_),
            " plugin does not time its events (its event_elapsed_time entry is null)");
  auto *a = static_cast<PluginEvent*>(start), *b = static_cast<PluginEvent*>(end);
  OAR_CHECK(a->recorded && b->recorded, Value, "[", api, "] both events must have been recorded");
  float ms = 0;
  check(t_->event_elapsed_time(index, a->ev, b->ev, &ms), api, "event_elapsed_time", index);
  return ms;
}

}  // namespace oar

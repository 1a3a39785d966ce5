// Devices other than the CPU (src/tensor/device.h): loading device libraries
// and plugins, device queries, streams and events, moving tensors between
// devices, device process groups.
#include <dlfcn.h>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "device/plugin.h"
#include "dist/process_group.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::bind {
namespace {

Device device_of(int type, int index) {
  OAR_CHECK(type >= 0 && type < kNumDeviceTypes && has_device(DeviceType(type)), Value,
            "[oar.device] unknown device type ", type);
  return Device{DeviceType(type), int16_t(index)};
}

// A stream of one device (Note [device streams]): the device's default
// stream, or one created for this object and destroyed with it.
class StreamHandle {
 public:
  StreamHandle(int type, int index, bool create) : dev_(device_of(type, index)) {
    if (create) handle_ = device_interface(dev_.type).create_stream(index);
    owned_ = create;
  }
  ~StreamHandle() {
    if (owned_ && handle_) device_interface(dev_.type).destroy_stream(dev_.index, handle_);
  }
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;

  Device device() const { return dev_; }
  void* handle() const { return handle_; }
  bool query() const { return device_interface(dev_.type).query_stream(dev_.index, handle_); }
  void synchronize() const { device_interface(dev_.type).synchronize_stream(dev_.index, handle_); }

 private:
  Device dev_;
  void* handle_ = nullptr;
  bool owned_ = false;
};

class EventHandle {
 public:
  EventHandle(int type, int index, bool timing) : dev_(device_of(type, index)) {
    handle_ = device_interface(dev_.type).create_event(index, timing);
  }
  ~EventHandle() { device_interface(dev_.type).destroy_event(dev_.index, handle_); }
  EventHandle(const EventHandle&) = delete;
  EventHandle& operator=(const EventHandle&) = delete;

  void record(const StreamHandle& s) {
    OAR_CHECK(s.device() == dev_, Value, "[oar.device.Event.record] the event belongs to ", dev_.str(),
              ", the stream to ", s.device().str(), "; expected a stream of ", dev_.str());
    device_interface(dev_.type).record_event(dev_.index, handle_, s.handle());
  }
  bool query() const { return device_interface(dev_.type).query_event(dev_.index, handle_); }
  void synchronize() const { device_interface(dev_.type).synchronize_event(dev_.index, handle_); }
  void wait_on(const StreamHandle& s) const {
    OAR_CHECK(s.device() == dev_, Value, "[oar.device.Stream.wait_event] the event belongs to ", dev_.str(),
              ", the stream to ", s.device().str(), "; expected a stream of ", dev_.str());
    device_interface(dev_.type).stream_wait_event(dev_.index, s.handle(), handle_);
  }
  double elapsed_ms(const EventHandle& end) const {
    OAR_CHECK(end.dev_ == dev_, Value, "[oar.device.Event.elapsed_time] the events belong to ", dev_.str(), " and ",
              end.dev_.str(), "; expected two events of one device");
    return device_interface(dev_.type).event_elapsed_ms(dev_.index, handle_, end.handle_);
  }

 private:
  Device dev_;
  void* handle_ = nullptr;
};

void bind_device(nb::module_& m) {
  // Loads a device library (liboar_cuda.so); its initialisers register the
  // device, its kernels and its process groups. Loading twice is harmless.
  m.def("_load_library", [](const std::string& path) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      const char* e = dlerror();
      fail(ErrorKind::Runtime, "[oar.device] could not load ", path, ": ", e ? e : "unknown error");
    }
  });
  m.attr("_num_device_types") = kNumDeviceTypes;
  // Plugin devices (device/plugin.h); `api` names the caller in errors.
  m.def("_load_plugins", [](const std::string& api) { load_plugins(api.c_str()); });
  m.def("_custom_device_type", [](const std::string& name, const std::string& api) {
    return int(custom_device_type(name, api.c_str()));
  });
  m.def("_custom_device_types", [](const std::string& api) { return custom_device_types(api.c_str()); });
  m.def("_plugin_profilers", [](bool on) { plugin_profilers(on); });
  m.def("_plugin_profiler_take", []() {
    nb::list out;
    for (const DeviceRecord& r : take_plugin_records()) out.append(nb::make_tuple(r.name, r.start_ns, r.end_ns, r.device));
    return out;
  });
  m.def("_device_type_name", [](int type) {
    OAR_CHECK(type >= 0 && type < kNumDeviceTypes, Value, "[oar.device] unknown device type ", type);
    return device_type_name(DeviceType(type));
  });
  m.def("_has_device", [](int type) { return type >= 0 && type < kNumDeviceTypes && has_device(DeviceType(type)); });
  m.def("_device_count", [](int type) {
    return type >= 0 && type < kNumDeviceTypes && has_device(DeviceType(type))
               ? device_interface(DeviceType(type)).device_count()
               : 0;
  });
  m.def("_device_synchronize", [](int type, int index) {
    Device d = device_of(type, index);
    device_interface(d.type).synchronize(d.index);
  }, nb::call_guard<nb::gil_scoped_release>());
  m.def("_device_memory", [](int type, int index) {
    Device d = device_of(type, index);
    MemoryStats s = device_interface(d.type).memory_stats(d.index);
    return nb::make_tuple(s.allocated, s.max_allocated, s.reserved, s.max_reserved);
  });
  m.def("_device_memory_info", [](int type, int index) {
    Device d = device_of(type, index);
    size_t total = 0, free = 0;
    device_interface(d.type).memory_info(d.index, &total, &free);
    return nb::make_tuple(total, free);
  });
  m.def("_device_name", [](int type, int index) {
    Device d = device_of(type, index);
    return device_interface(d.type).device_name(d.index);
  });
  m.def("_device_reset_peak", [](int type, int index, bool reserved) {
    Device d = device_of(type, index);
    if (reserved) device_interface(d.type).reset_peak_reserved(d.index);
    else device_interface(d.type).reset_peak_stats(d.index);
  });
  m.def("_device_empty_cache", [](int type, int index) {
    Device d = device_of(type, index);
    device_interface(d.type).empty_cache(d.index);
  }, nb::call_guard<nb::gil_scoped_release>());
  m.def("_to_device", [](TensorImpl& t, int type, int index, bool blocking) {
    return ops::to_device(Tensor(&t), device_of(type, index), blocking);
  }, nb::arg("t"), nb::arg("type"), nb::arg("index"), nb::arg("blocking") = true);
  m.def("_set_default_device", [](int type, int index) { set_default_device(device_of(type, index)); });
  // The Python half of Note [device scope]: oar._api's boundary opens the
  // scope of its call's arguments; -1 when they open none.
  m.def("_enter_device_scope", [](nb::args args, nb::kwargs kwargs) -> int64_t {
    // The device of the first tensor argument not on the CPU, else the CPU
    // when there is a tensor argument (as ArgScope in module.cpp).
    int found = 0;  // 1: a CPU tensor, 2: another device
    Device dev{};
    auto look = [&](nb::handle a) {
      if (nb::isinstance<nb::list>(a) || nb::isinstance<nb::tuple>(a)) {
        if (nb::len(a) == 0) return;
        a = a[0];
      }
      if (!nb::isinstance<TensorImpl>(a)) return;
      const Device d = nb::cast<TensorImpl&>(a).storage->device();
      if (d.type != DeviceType::CPU) {
        dev = d;
        found = 2;
      } else if (found == 0) {
        found = 1;
      }
    };
    for (nb::handle a : args)
      if (found < 2) look(a);
    for (auto [k, v] : kwargs)
      if (found < 2) look(v);
    uint32_t token = 0;
    return found != 0 && enter_device_scope_if_needed(dev, &token) ? int64_t(token) : -1;
  });
  m.def("_exit_device_scope", [](int64_t token) { exit_device_scope(uint32_t(token)); });
  m.def("_default_device", []() {
    Device d = default_device();
    return nb::make_tuple(int(d.type), int(d.index));
  });
  m.def("_device_index", [](TensorImpl& t) {
    Device d = t.storage->device();
    return nb::make_tuple(int(d.type), int(d.index));
  });
  // The attribute names of an op, in order, and the dtypes each device type
  // has a kernel for (for plugin authors: oar.device.kernel_signature).
  m.def("_op_kernels", [](const std::string& name) {
    const OpDef* op = find_op(name);
    OAR_CHECK(op && op->infer_meta, Value, "[oar.device.kernel_signature] no op is named '", name, "'");
    std::vector<std::string> attrs(op->attr_names.begin(), op->attr_names.end());
    nb::dict kernels;
    for (int t = 0; t < kNumDeviceTypes; ++t) {
      if (!has_device(DeviceType(t)) && t != int(DeviceType::CUDA)) continue;
      nb::list dts;
      for (int d = 0; d < kNumDTypes; ++d)
        if (op->kernels[t][d]) dts.append(std::string(dtype_name(DType(d))));
      if (nb::len(dts)) kernels[nb::str(device_type_name(DeviceType(t)).c_str())] = dts;
    }
    return nb::make_tuple(attrs, kernels);
  });

  nb::class_<StreamHandle>(m, "_Stream")
      .def(nb::init<int, int, bool>())
      .def("query", &StreamHandle::query, nb::call_guard<nb::gil_scoped_release>())
      .def("synchronize", &StreamHandle::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("handle", [](const StreamHandle& s) { return reinterpret_cast<uintptr_t>(s.handle()); });
  nb::class_<EventHandle>(m, "_Event")
      .def(nb::init<int, int, bool>())
      .def("record", &EventHandle::record, nb::call_guard<nb::gil_scoped_release>())
      .def("query", &EventHandle::query, nb::call_guard<nb::gil_scoped_release>())
      .def("synchronize", &EventHandle::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("wait_on", &EventHandle::wait_on, nb::call_guard<nb::gil_scoped_release>())
      .def("elapsed_ms", &EventHandle::elapsed_ms);
  // Makes `stream` (None: the default stream) the current stream of its
  // device, where kernels and copies go.
  m.def("_set_current_stream", [](int type, int index, const StreamHandle* s) {
    Device d = device_of(type, index);
    set_current_stream(d, s ? s->handle() : nullptr);
  }, nb::arg("type"), nb::arg("index"), nb::arg("stream").none());

  m.def("_dist_device_group", [](const dist::ProcessGroupPtr& cpu, int type, int index) {
    return dist::make_device_group(cpu, device_of(type, index));
  });
}

Binder b(bind_device);

}  // namespace
}  // namespace oar::bind

// Devices other than the CPU (src/tensor/device.h): loading a device library,
// device queries, moving tensors between devices, device process groups.
#include <dlfcn.h>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "common.h"
#include "dist/process_group.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::bind {
namespace {

Device device_of(int type, int index) {
  OAR_CHECK(type >= 0 && type < kNumDeviceTypes, Value, "[oar.device] unknown device type ", type);
  return Device{DeviceType(type), int16_t(index)};
}

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
  m.def("_has_device", [](int type) { return has_device(device_of(type, 0).type); });
  m.def("_device_count", [](int type) {
    Device d = device_of(type, 0);
    return has_device(d.type) ? device_interface(d.type).device_count() : 0;
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
  m.def("_device_reset_peak", [](int type, int index, bool reserved) {
    Device d = device_of(type, index);
    if (reserved) device_interface(d.type).reset_peak_reserved(d.index);
    else device_interface(d.type).reset_peak_stats(d.index);
  });
  m.def("_device_empty_cache", [](int type, int index) {
    Device d = device_of(type, index);
    device_interface(d.type).empty_cache(d.index);
  });
  m.def("_to_device", [](TensorImpl& t, int type, int index) {
    return ops::to_device(Tensor(&t), device_of(type, index));
  });
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
    return found == 0 ? -1 : int64_t(enter_device_scope(dev));
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
  m.def("_dist_device_group", [](const dist::ProcessGroupPtr& cpu, int type, int index) {
    return dist::make_device_group(cpu, device_of(type, index));
  });
}

Binder b(bind_device);

}  // namespace
}  // namespace oar::bind

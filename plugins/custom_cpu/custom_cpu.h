// custom_cpu: a device plugin whose memory is host memory behind a real
// device boundary (its own allocator, counted copies, stream threads). It is
// built against include/oar only, as a vendor's plugin would be, and proves
// the device ABI (include/oar/device_ext.h) end to end. docs/devices.md walks
// through it.
//
// Layout. device.cpp fills the function table and exports oar_plugin_init;
// streams.cpp runs the streams and events; each kernels_*.cpp file registers
// its kernels, and each collective*.cpp file fills the collective entries,
// through the two registration lists below, so adding a file needs no edit
// elsewhere.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include "oar/device_ext.h"
#include "oar/kernel_ext.h"

namespace custom_cpu {

inline constexpr const char* kDeviceType = "custom_cpu";

// ---- Registration lists --------------------------------------------------
// A kernels_*.cpp file declares, at namespace scope,
//   static const custom_cpu::RegisterKernels reg([] { ... add_kernel(...) ...; });
// and a collective*.cpp file
//   static const custom_cpu::ExtendTable ext([](OAR_DeviceInterface& t) { t.all_reduce = ...; });
// oar_plugin_init runs every table extension after filling the table, then
// every kernel registration (the library's static initialisers have built
// both lists by then).
using KernelRegistration = void (*)();
using TableExtension = void (*)(OAR_DeviceInterface& table);
struct RegisterKernels {
  explicit RegisterKernels(KernelRegistration f);
};
struct ExtendTable {
  explicit ExtendTable(TableExtension f);
};

// Registers a kernel for custom_cpu devices. The kernel computes on the
// calling thread, after the work already queued on the call's stream, so it
// sees the results of earlier asynchronous copies (device.cpp). A failed
// registration is reported by oar when it refuses the plugin.
void add_kernel(const char* op, std::initializer_list<oar::ext::DType> dtypes, oar::ext::KernelFunction fn);

// ---- Streams (streams.cpp) ------------------------------------------------
// Every stream, the default one of each device included, is a queue served
// by a thread of its own that runs the queued tasks in order.

// Queues `task` on stream `s` of `device` (null: its default stream).
void enqueue(int device, OAR_Stream s, std::function<void()> task);
// Waits for the work queued on stream `s` of `device`.
void synchronize_stream(int device, OAR_Stream s);
// Waits for the work queued on every stream of `device`.
void synchronize_device(int device);
// The number of devices (init reads CUSTOM_CPU_DEVICE_COUNT, default 2).
int device_count();
bool valid_device(int device);

// The calling thread's last error (get_last_error_message); returns `s`.
OAR_Status set_error(OAR_Status s, const std::string& message);

// Stream and event entries of the function table.
void fill_stream_entries(OAR_DeviceInterface& t);
void start_streams(int count);
void stop_streams();

// ---- Profiler (device.cpp) ------------------------------------------------
// While oar's profiler runs, kernels and copies are recorded.
bool profiling();
void record(const char* name, int device, int64_t start_ns, int64_t end_ns);
int64_t now_ns();

}  // namespace custom_cpu

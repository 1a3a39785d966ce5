// Device plugins (include/oar/device_ext.h): finding and loading them, and
// the core's side of their kernels. See docs/devices.md.
#pragma once
#include <string>
#include <vector>

#include "base/error.h"
#include "oar/device_ext.h"
#include "tensor/device.h"

namespace oar {

// Loads every plugin once per process, on the first call (Note [plugin
// discovery]). Plugins it refuses raise RuntimeError "[api] ..." naming
// each file and what is wrong, from this first call only; the others are
// registered all the same.
void load_plugins(const char* api);

// The device type of a plugin named `name` ("custom_cpu"), loading plugins
// first; ValueError "[api] ..." listing the types there are when none has
// that name.
DeviceType custom_device_type(const std::string& name, const char* api);
// The type names plugins registered, in slot order (loads plugins first).
std::vector<std::string> custom_device_types(const char* api);
// The function table of a plugin device type (null for the CPU and CUDA),
// for the layers that use its collectives and profiler hooks.
const OAR_DeviceInterface* plugin_table(DeviceType t);

// The profilers of the loaded plugins that have them: started or stopped
// with oar's (loads no plugin), and the records they collected since,
// timed on CLOCK_MONOTONIC.
struct DeviceRecord {
  std::string name;
  std::string device;  // "custom_cpu:0"
  int64_t start_ns, end_ns;
};
void plugin_profilers(bool on);
std::vector<DeviceRecord> take_plugin_records();

// "OAR_ERROR_INVALID_ARGUMENT", ...; and the error kind a failed entry or
// kernel raises (out of memory: Memory, invalid argument: Value,
// unsupported: NotImplemented, otherwise Runtime).
const char* plugin_status_name(OAR_Status s);
ErrorKind plugin_error_kind(OAR_Status s);

// The host API handed to plugins (device/plugin_kernels.cpp), and what the
// loader does with the kernels a plugin registers during its init: they wait
// in a pending list until the plugin is accepted. The loader calls these
// under its lock, one plugin at a time.
const OAR_HostAPI* plugin_host_api();
// Starts collecting the kernels registered by the plugin being initialised.
void begin_plugin_kernels();
// Why the collected kernels cannot be registered for the plugin's device
// type `name` ("" if they can): the first refused registration, or one for
// another type.
std::string check_plugin_kernels(const std::string& name);
// Registers the collected kernels for `t`, or drops them (commit false),
// and ends the collection.
void end_plugin_kernels(bool commit, DeviceType t);

}  // namespace oar

/* A device plugin in plain C with the REQUIRED entries only (no streams,
 * events, kernels or collectives), built as the device type "minimal_c";
 * the tests load it to check oar's fallbacks for the optional entries. Built
 * with one of the REFUSE_* macros defined, it is a broken plugin that oar
 * must refuse (tests/python/test_custom_device_loader.py). */
#include <stdlib.h>
#include <string.h>

#include "oar/device_ext.h"

static OAR_Status init(void) {
#ifdef REFUSE_DEVICE_INIT
  return OAR_ERROR;
#else
  return OAR_SUCCESS;
#endif
}
static OAR_Status get_device_count(int* count) {
  *count = 1;
  return OAR_SUCCESS;
}
static int current = 0;
static OAR_Status set_device(int device) {
  if (device != 0) return OAR_ERROR_INVALID_ARGUMENT;
  current = device;
  return OAR_SUCCESS;
}
static OAR_Status get_device(int* device) {
  *device = current;
  return OAR_SUCCESS;
}
static OAR_Status synchronize_device(int device) {
  (void)device;
  return OAR_SUCCESS;
}
static OAR_Status allocate(int device, void** ptr, size_t nbytes) {
  (void)device;
  *ptr = malloc(nbytes);
  return *ptr ? OAR_SUCCESS : OAR_ERROR_OUT_OF_MEMORY;
}
static OAR_Status deallocate(int device, void* ptr, size_t nbytes) {
  (void)device;
  (void)nbytes;
  free(ptr);
  return OAR_SUCCESS;
}
static OAR_Status memory_stats(int device, size_t* total, size_t* free_bytes) {
  (void)device;
  *total = (size_t)1 << 30;
  *free_bytes = (size_t)1 << 29;
  return OAR_SUCCESS;
}
static OAR_Status copy(int device, void* dst, const void* src, size_t nbytes) {
  (void)device;
  memcpy(dst, src, nbytes);
  return OAR_SUCCESS;
}

#ifdef REFUSE_UNKNOWN_OP
static OAR_Status kernel(OAR_KernelContext* ctx, void* user_data) {
  (void)ctx;
  (void)user_data;
  return OAR_SUCCESS;
}
#endif
#ifdef REFUSE_PARTIAL_GROUP
static OAR_Status create_stream(int device, OAR_Stream* stream) {
  (void)device;
  *stream = NULL;
  return OAR_SUCCESS;
}
#endif

#ifndef REFUSE_NO_ENTRY_POINT
__attribute__((visibility("default"))) OAR_Status oar_plugin_init(OAR_PluginParams* params) {
  OAR_DeviceInterface* t = params->device;
#ifdef REFUSE_INIT_FAILS
  params->error_message = "no minimal_c device is attached";
  return OAR_ERROR;
#endif
  t->size = sizeof(OAR_DeviceInterface);
#ifdef REFUSE_SMALL_TABLE
  t->size = offsetof(OAR_DeviceInterface, reserved) - 8 * sizeof(void*);
#endif
  t->abi_major = OAR_DEVICE_ABI_MAJOR;
#ifdef REFUSE_ABI_MAJOR
  t->abi_major = OAR_DEVICE_ABI_MAJOR + 1;
#endif
  t->abi_minor = OAR_DEVICE_ABI_MINOR;
#ifdef DEVICE_TYPE
  t->device_type = DEVICE_TYPE;
#else
  t->device_type = "minimal_c";
#endif
  t->init = init;
  t->get_device_count = get_device_count;
  t->set_device = set_device;
  t->get_device = get_device;
  t->synchronize_device = synchronize_device;
  t->allocate = allocate;
  t->deallocate = deallocate;
  t->memory_stats = memory_stats;
  t->memcpy_h2d = copy;
  t->memcpy_d2h = copy;
#ifndef REFUSE_REQUIRED_NULL
  t->memcpy_d2d = copy;
#endif
#ifdef REFUSE_PARTIAL_GROUP
  t->create_stream = create_stream;
#endif
#ifdef REFUSE_UNKNOWN_OP
  {
    const OAR_DataType f32 = OAR_DTYPE_FLOAT32;
    params->host->register_kernel("no_such_op", "minimal_c", &f32, 1, kernel, NULL);
  }
#endif
  return OAR_SUCCESS;
}
#else
__attribute__((visibility("default"))) int not_the_entry_point(void) { return 0; }
#endif

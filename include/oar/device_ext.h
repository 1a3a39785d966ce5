/* The oar device plugin ABI: how a library adds a device to oar without
 * being built with it.
 *
 * A plugin is a shared library that exports one C function,
 *
 *     OAR_Status oar_plugin_init(OAR_PluginParams* params);
 *
 * oar calls it once, on the first use of custom devices, with a zeroed
 * OAR_DeviceInterface to fill (params->device) and a table of functions the
 * plugin may call back (params->host: registering kernels, reading a kernel's
 * tensors and attributes). The plugin links against nothing of oar: this
 * header and kernel_ext.h (a small C++ layer over params->host) are all it
 * includes. docs/devices.md walks through a plugin, plugins/custom_cpu is
 * one.
 *
 * Versioning. OAR_DEVICE_ABI_MAJOR changes when an existing entry changes
 * meaning or position; oar refuses a plugin built for another major version.
 * A minor version only appends: new entries take reserved slots, so the
 * tables keep their size, and a plugin built for an older minor version
 * leaves them null (each new entry is optional). Every table starts with its
 * size as the plugin was compiled, so oar never reads past what the plugin
 * wrote.
 *
 * Conventions. Every function returns an OAR_Status. Functions that take
 * `int device` act on that device (0 <= device < count), whatever the
 * calling thread's current device is. A null OAR_Stream is the device's
 * default stream. Entries are marked REQUIRED (oar refuses a plugin that
 * leaves one null) or OPTIONAL (null is allowed; the fallback oar uses
 * instead is given). Unless said otherwise, oar may call any entry from any
 * thread.
 *
 * This header is C and C++ compatible and has no dependency beyond the C
 * standard headers.
 */
#ifndef OAR_DEVICE_EXT_H_
#define OAR_DEVICE_EXT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OAR_DEVICE_ABI_MAJOR 1
#define OAR_DEVICE_ABI_MINOR 0

/* The name the plugin exports its entry point under. */
#define OAR_PLUGIN_INIT_SYMBOL "oar_plugin_init"

/* A device type name: lower-case letters, digits and '_', starting with a
 * letter, at most this many characters ("custom_cpu", "npu"). */
#define OAR_MAX_DEVICE_TYPE_NAME 31

typedef enum OAR_Status {
  OAR_SUCCESS = 0,
  OAR_ERROR = 1,                  /* any other failure */
  OAR_ERROR_OUT_OF_MEMORY = 2,    /* oar frees cached blocks and retries once */
  OAR_ERROR_INVALID_ARGUMENT = 3,
  OAR_ERROR_UNSUPPORTED = 4,      /* the entry exists but cannot do this */
  OAR_NOT_READY = 5               /* query_stream / query_event: work still pending */
} OAR_Status;

/* Element types, numbered as in oar. */
typedef enum OAR_DataType {
  OAR_DTYPE_BOOL = 0,
  OAR_DTYPE_UINT8 = 1,
  OAR_DTYPE_INT8 = 2,
  OAR_DTYPE_INT16 = 3,
  OAR_DTYPE_INT32 = 4,
  OAR_DTYPE_INT64 = 5,
  OAR_DTYPE_FLOAT16 = 6,
  OAR_DTYPE_BFLOAT16 = 7,
  OAR_DTYPE_FLOAT32 = 8,
  OAR_DTYPE_FLOAT64 = 9,
  OAR_DTYPE_COMPLEX64 = 10,
  OAR_DTYPE_COMPLEX128 = 11
} OAR_DataType;
#define OAR_NUM_DTYPES 12

typedef enum OAR_ReduceOp {
  OAR_REDUCE_SUM = 0,
  OAR_REDUCE_AVG = 1,
  OAR_REDUCE_MAX = 2,
  OAR_REDUCE_MIN = 3,
  OAR_REDUCE_PROD = 4
} OAR_ReduceOp;

/* Opaque handles, defined by the plugin. */
typedef struct OAR_Stream_st* OAR_Stream;
typedef struct OAR_Event_st* OAR_Event;
typedef struct OAR_Comm_st* OAR_Comm;

/* What get_unique_id makes on one rank and oar hands to every rank of a
 * communicator (through its own process group) before comm_init_rank. */
#define OAR_UNIQUE_ID_BYTES 128
typedef struct OAR_UniqueId {
  uint8_t bytes[OAR_UNIQUE_ID_BYTES];
} OAR_UniqueId;

/* Runs after the work queued on a stream before it; `status` is OAR_SUCCESS
 * unless that work failed. It may run on any thread and must not wait for the
 * stream it was added to. */
typedef void (*OAR_StreamCallback)(void* user_data, OAR_Status status);

/* One profiler record: what ran, on which device, from when to when
 * (nanoseconds of a monotonic clock; CLOCK_MONOTONIC on Linux, as oar's
 * profiler reads). */
typedef void (*OAR_ProfilerRecordFn)(void* user_data, const char* name, int device, int64_t start_ns,
                                     int64_t end_ns);

typedef struct OAR_DeviceInterface {
  size_t size;          /* sizeof(OAR_DeviceInterface) as the plugin was compiled */
  uint32_t abi_major;   /* OAR_DEVICE_ABI_MAJOR the plugin was compiled with */
  uint32_t abi_minor;   /* OAR_DEVICE_ABI_MINOR the plugin was compiled with */
  const char* device_type;  /* REQUIRED: the type name (see OAR_MAX_DEVICE_TYPE_NAME); a string
                               that lives as long as the library */

  /* ---- Device management ---------------------------------------------- */

  /* REQUIRED. Called once after oar_plugin_init, before any other entry. A
   * failure refuses the plugin. */
  OAR_Status (*init)(void);
  /* OPTIONAL (null: nothing to do). Called once at process exit, when no
   * other entry runs any more. */
  OAR_Status (*finalize)(void);
  /* REQUIRED. The number of devices; 0 is allowed (none present). */
  OAR_Status (*get_device_count)(int* count);
  /* REQUIRED. The calling thread's current device, for the plugin's own
   * kernels that rely on one. */
  OAR_Status (*set_device)(int device);
  /* REQUIRED. */
  OAR_Status (*get_device)(int* device);
  /* REQUIRED. Returns once all work queued on every stream of the device is
   * done. */
  OAR_Status (*synchronize_device)(int device);

  /* ---- Memory ---------------------------------------------------------- */

  /* REQUIRED. nbytes > 0. oar caches freed blocks (its caching allocator),
   * so this is called for new blocks only; OAR_ERROR_OUT_OF_MEMORY makes oar
   * return its cached blocks and try once more. */
  OAR_Status (*allocate)(int device, void** ptr, size_t nbytes);
  /* REQUIRED. ptr and nbytes as returned by / given to allocate. Called with
   * no work left on the device that uses the block. */
  OAR_Status (*deallocate)(int device, void* ptr, size_t nbytes);
  /* OPTIONAL. Sets nbytes bytes to (unsigned char)value, ordered like a
   * synchronous copy. (This version of oar fills device memory with kernels,
   * or on the host and copies: it does not call it yet.) */
  OAR_Status (*memset)(int device, void* ptr, int value, size_t nbytes);
  /* OPTIONAL, as a pair. Host memory the device copies from and to fastest
   * (page-locked). (This version of oar stages its copies in ordinary host
   * memory: it does not call them yet.) */
  OAR_Status (*host_allocate)(int device, void** ptr, size_t nbytes);
  OAR_Status (*host_deallocate)(int device, void* ptr, size_t nbytes);
  /* REQUIRED. The device's memory in bytes: all of it, and what is free now. */
  OAR_Status (*memory_stats)(int device, size_t* total, size_t* free);

  /* ---- Copies ------------------------------------------------------------
   * Synchronous copies return once the bytes are in place and are ordered
   * after all work queued on the device (as if preceded by
   * synchronize_device). Asynchronous copies are queued on `stream`; the
   * caller keeps both buffers alive until the stream has passed the copy. */

  OAR_Status (*memcpy_h2d)(int device, void* dst, const void* src, size_t nbytes); /* REQUIRED */
  OAR_Status (*memcpy_d2h)(int device, void* dst, const void* src, size_t nbytes); /* REQUIRED */
  OAR_Status (*memcpy_d2d)(int device, void* dst, const void* src, size_t nbytes); /* REQUIRED */
  /* OPTIONAL, each (null: oar synchronizes the stream and copies
   * synchronously). Tensor.to(device, blocking=False) queues an
   * async_memcpy_h2d on the device's current stream. */
  OAR_Status (*async_memcpy_h2d)(int device, OAR_Stream stream, void* dst, const void* src, size_t nbytes);
  OAR_Status (*async_memcpy_d2h)(int device, OAR_Stream stream, void* dst, const void* src, size_t nbytes);
  OAR_Status (*async_memcpy_d2d)(int device, OAR_Stream stream, void* dst, const void* src, size_t nbytes);

  /* ---- Streams -----------------------------------------------------------
   * OPTIONAL, as a group: create_stream, destroy_stream, query_stream and
   * synchronize_stream are given together or not at all. Without them the
   * device has one implicit stream: oar.device.Stream objects all stand for
   * it, and synchronizing or querying one synchronizes the device. */

  OAR_Status (*create_stream)(int device, OAR_Stream* stream);
  /* The work queued on the stream still completes. */
  OAR_Status (*destroy_stream)(int device, OAR_Stream stream);
  /* OAR_SUCCESS when all work queued on the stream is done, OAR_NOT_READY
   * when some is pending. */
  OAR_Status (*query_stream)(int device, OAR_Stream stream);
  OAR_Status (*synchronize_stream)(int device, OAR_Stream stream);
  /* OPTIONAL (null: oar synchronizes the event on the host, which orders the
   * stream's later work after it too). Work queued on `stream` later waits
   * for `event`. */
  OAR_Status (*stream_wait_event)(int device, OAR_Stream stream, OAR_Event event);
  /* OPTIONAL (null: oar synchronizes the stream and calls the callback
   * itself). */
  OAR_Status (*stream_add_callback)(int device, OAR_Stream stream, OAR_StreamCallback callback, void* user_data);

  /* ---- Events ------------------------------------------------------------
   * OPTIONAL, as a group: create_event, record_event, query_event,
   * synchronize_event and destroy_event together or not at all. Without them
   * recording an event synchronizes its stream, so a recorded event is
   * always complete. */

  OAR_Status (*create_event)(int device, OAR_Event* event);
  /* The event completes when the work queued on `stream` before it is done.
   * Recording again moves it. */
  OAR_Status (*record_event)(int device, OAR_Stream stream, OAR_Event event);
  /* OAR_SUCCESS when complete (or never recorded), OAR_NOT_READY otherwise. */
  OAR_Status (*query_event)(int device, OAR_Event event);
  OAR_Status (*synchronize_event)(int device, OAR_Event event);
  /* May be called while queued work still refers to the event (a record, a
   * stream_wait_event): that work must still run correctly. */
  OAR_Status (*destroy_event)(int device, OAR_Event event);
  /* OPTIONAL (null: Event.elapsed_time raises NotImplementedError).
   * Milliseconds between two completed events. */
  OAR_Status (*event_elapsed_time)(int device, OAR_Event start, OAR_Event end, float* ms);

  /* ---- Collectives ---------------------------------------------------------
   * OPTIONAL, as a group (get_unique_id, comm_init_rank, comm_destroy and
   * all_reduce at least): without them oar.distributed refuses tensors on
   * this device with an error naming it. Semantics follow NCCL: counts are
   * in elements, buffers are device memory, work is queued on `stream`,
   * `root` and `peer` are ranks of the communicator. Entries of the group
   * left null raise NotImplementedError when used. */

  OAR_Status (*get_unique_id)(OAR_UniqueId* id);
  OAR_Status (*comm_init_rank)(int device, int nranks, const OAR_UniqueId* id, int rank, OAR_Comm* comm);
  OAR_Status (*comm_destroy)(OAR_Comm comm);
  OAR_Status (*all_reduce)(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_ReduceOp op,
                           OAR_Comm comm, OAR_Stream stream);
  /* root's send is copied to every rank's recv (send may equal recv). */
  OAR_Status (*broadcast)(const void* send, void* recv, size_t count, OAR_DataType dtype, int root, OAR_Comm comm,
                          OAR_Stream stream);
  /* The reduction lands in root's recv only. */
  OAR_Status (*reduce)(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_ReduceOp op, int root,
                       OAR_Comm comm, OAR_Stream stream);
  /* recv holds nranks * send_count elements, rank r's at r * send_count. */
  OAR_Status (*all_gather)(const void* send, void* recv, size_t send_count, OAR_DataType dtype, OAR_Comm comm,
                           OAR_Stream stream);
  /* send holds nranks * recv_count elements; rank r receives the reduction of
   * block r. */
  OAR_Status (*reduce_scatter)(const void* send, void* recv, size_t recv_count, OAR_DataType dtype, OAR_ReduceOp op,
                               OAR_Comm comm, OAR_Stream stream);
  /* Block r (count elements) of send goes to rank r, which stores it at
   * block `this rank` of its recv. */
  OAR_Status (*all_to_all)(const void* send, void* recv, size_t count, OAR_DataType dtype, OAR_Comm comm,
                           OAR_Stream stream);
  OAR_Status (*send)(const void* buf, size_t count, OAR_DataType dtype, int peer, OAR_Comm comm, OAR_Stream stream);
  OAR_Status (*recv)(void* buf, size_t count, OAR_DataType dtype, int peer, OAR_Comm comm, OAR_Stream stream);
  /* Collectives and point-to-point calls between group_start and group_end
   * are issued together (no deadlock between a send and the matching recv). */
  OAR_Status (*group_start)(void);
  OAR_Status (*group_end)(void);

  /* ---- Profiler ------------------------------------------------------------
   * OPTIONAL, as a group. oar's profiler starts and stops the plugin's with
   * its own and collects the records when it stops. */

  OAR_Status (*profiler_start)(void);
  OAR_Status (*profiler_stop)(void);
  OAR_Status (*profiler_collect)(OAR_ProfilerRecordFn record, void* user_data);

  /* ---- Diagnostics ------------------------------------------------------ */

  /* OPTIONAL. A description of the calling thread's last failed call, added
   * to oar's error message; the string stays valid until the thread's next
   * call into the plugin. */
  const char* (*get_last_error_message)(void);
  /* OPTIONAL (null: the device type name). A human-readable device name
   * ("Example NPU 910"), written NUL-terminated into buf. */
  OAR_Status (*get_device_name)(int device, char* buf, size_t buf_size);

  /* Room for the entries of later minor versions; leave them null. */
  void* reserved[32];
} OAR_DeviceInterface;

/* ---- The host API: what oar offers the plugin ---------------------------- */

/* The state of one kernel call; only valid during the call. */
typedef struct OAR_KernelContext OAR_KernelContext;

/* A kernel. It reads its inputs and attributes and writes its outputs, which
 * oar has allocated on the device with the shapes and dtypes the op's
 * infer_meta computed; oar has validated the arguments already. It may queue
 * its work on host->stream(ctx) and return before the work is done. On
 * failure it calls host->set_error(ctx, message) and returns the status:
 * oar raises the matching Python error (OAR_ERROR_INVALID_ARGUMENT:
 * ValueError, OAR_ERROR_UNSUPPORTED: NotImplementedError,
 * OAR_ERROR_OUT_OF_MEMORY: MemoryError, otherwise RuntimeError). */
typedef OAR_Status (*OAR_KernelFn)(OAR_KernelContext* ctx, void* user_data);

/* A tensor as a kernel sees it. */
typedef struct OAR_TensorView {
  size_t size;          /* set by the caller of host->input/output to sizeof(OAR_TensorView) */
  void* data;           /* the first element (the tensor's offset applied); NULL if the tensor
                           is empty or, with ndim == -1, an optional input left out */
  OAR_DataType dtype;
  int32_t ndim;         /* -1: an optional input that was not given */
  const int64_t* shape;    /* ndim sizes */
  const int64_t* strides;  /* ndim strides, in elements (not bytes): an input may be
                              a view (0 along an expanded dim); outputs are contiguous */
  int64_t numel;
} OAR_TensorView;

/* The type of an attribute value. */
typedef enum OAR_AttrType {
  OAR_ATTR_NONE = 0,   /* an optional attribute left out */
  OAR_ATTR_BOOL = 1,
  OAR_ATTR_INT = 2,
  OAR_ATTR_FLOAT = 3,
  OAR_ATTR_COMPLEX = 4,
  OAR_ATTR_DTYPE = 5,
  OAR_ATTR_STRING = 6,
  OAR_ATTR_INTS = 7
} OAR_AttrType;

typedef struct OAR_HostAPI {
  size_t size;           /* sizeof(OAR_HostAPI) as oar was compiled */
  uint32_t abi_major;
  uint32_t abi_minor;

  /* Registers `fn` as the kernel of op `op` on devices of type
   * `device_type` (the plugin's own) for each listed dtype, the dtype being
   * that of the op's first input (of its first output for ops without
   * tensor inputs). `user_data` is passed to every call. Call it from
   * oar_plugin_init (the kernels become usable once the plugin is accepted)
   * or later. An unknown op, a dtype out of range, another plugin's device
   * type or a second kernel for the same (op, dtype) returns
   * OAR_ERROR_INVALID_ARGUMENT; during oar_plugin_init it also refuses the
   * plugin, with the reason. The op names and their attributes, in order,
   * are listed by oar.device.kernel_signature(op) and docs/devices.md. */
  OAR_Status (*register_kernel)(const char* op, const char* device_type, const OAR_DataType* dtypes,
                                size_t num_dtypes, OAR_KernelFn fn, void* user_data);

  /* The kernel call's operands. input/output fill *view (view->size set by the
   * caller); an index out of range returns OAR_ERROR_INVALID_ARGUMENT. */
  size_t (*num_inputs)(const OAR_KernelContext* ctx);
  size_t (*num_outputs)(const OAR_KernelContext* ctx);
  OAR_Status (*input)(const OAR_KernelContext* ctx, size_t i, OAR_TensorView* view);
  OAR_Status (*output)(const OAR_KernelContext* ctx, size_t i, OAR_TensorView* view);

  /* The op's attributes, by position. Reading one as another type returns
   * OAR_ERROR_INVALID_ARGUMENT. Strings and int lists stay valid during the
   * call. */
  size_t (*num_attrs)(const OAR_KernelContext* ctx);
  const char* (*attr_name)(const OAR_KernelContext* ctx, size_t k);  /* NULL when out of range */
  OAR_AttrType (*attr_type)(const OAR_KernelContext* ctx, size_t k);  /* OAR_ATTR_NONE when out of range */
  OAR_Status (*attr_bool)(const OAR_KernelContext* ctx, size_t k, int* value);
  OAR_Status (*attr_int)(const OAR_KernelContext* ctx, size_t k, int64_t* value);
  OAR_Status (*attr_float)(const OAR_KernelContext* ctx, size_t k, double* value);
  OAR_Status (*attr_complex)(const OAR_KernelContext* ctx, size_t k, double* real, double* imag);
  OAR_Status (*attr_dtype)(const OAR_KernelContext* ctx, size_t k, OAR_DataType* value);
  OAR_Status (*attr_string)(const OAR_KernelContext* ctx, size_t k, const char** data, size_t* len);
  OAR_Status (*attr_ints)(const OAR_KernelContext* ctx, size_t k, const int64_t** data, size_t* len);

  /* Where to run: the op's name, the device index and the current stream of
   * that device (oar.device.stream_guard). */
  const char* (*op_name)(const OAR_KernelContext* ctx);
  int (*device_id)(const OAR_KernelContext* ctx);
  OAR_Stream (*stream)(const OAR_KernelContext* ctx);

  /* The message of a failing kernel (copied); oar prefixes it with the op's
   * name and the device. */
  void (*set_error)(OAR_KernelContext* ctx, const char* message);

  void* reserved[32];
} OAR_HostAPI;

/* ---- The entry point ------------------------------------------------------- */

typedef struct OAR_PluginParams {
  size_t size;           /* sizeof(OAR_PluginParams) as oar was compiled */
  uint32_t abi_major;    /* oar's OAR_DEVICE_ABI_MAJOR */
  uint32_t abi_minor;    /* oar's OAR_DEVICE_ABI_MINOR */
  const OAR_HostAPI* host;       /* valid for the life of the process */
  OAR_DeviceInterface* device;   /* zeroed by oar; the plugin fills it, size and version first */
  /* Set by the plugin when it returns an error: why, as a string that lives
   * as long as the library. */
  const char* error_message;
  void* reserved[8];
} OAR_PluginParams;

/* What the plugin exports (extern "C", default visibility). A failure
 * refuses the plugin: oar reports error_message, or the status. */
typedef OAR_Status (*OAR_PluginInitFn)(OAR_PluginParams* params);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* OAR_DEVICE_EXT_H_ */

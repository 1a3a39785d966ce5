// The core's side of plugin kernels: the host API plugins call
// (OAR_HostAPI) and the adapter from the core's KernelFn to a plugin's
// OAR_KernelFn.
//
// Note [plugin kernel slots]
// An op's kernel table holds plain function pointers (KernelFn), which carry
// no state, while a plugin kernel is a C function plus its user data. Each
// registration of a plugin kernel therefore takes a slot: slot i holds the
// op, the C function and its user data, and adapter<i>, one of
// kMaxPluginKernels instances of one template, runs slot i. The adapter goes
// into the op's table like any kernel, so dispatch stays one path (DESIGN.md
// §1) and costs one indirect call more for a plugin. A registration for
// several dtypes with one function takes one slot.
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "base/error.h"
#include "device/plugin.h"
#include "ops/op.h"

// The state of one kernel call (opaque to plugins).
struct OAR_KernelContext {
  const oar::OpDef* op;
  std::span<const oar::Tensor> in;
  std::span<oar::Tensor> out;
  const oar::Attrs* attrs;
  int device;
  void* stream;
  std::string error;
};

namespace oar {
namespace {

constexpr size_t kMaxPluginKernels = 2048;

struct KernelSlot {
  const OpDef* op = nullptr;
  OAR_KernelFn fn = nullptr;
  void* user_data = nullptr;
};

KernelSlot g_slots[kMaxPluginKernels];
size_t g_num_slots = 0;  // under g_mu

std::mutex g_mu;

// Kernels registered during a plugin's init, kept until it is accepted.
struct Pending {
  const OpDef* op;
  std::string device_type;
  std::vector<DType> dtypes;
  OAR_KernelFn fn;
  void* user_data;
};
bool g_collecting = false;
std::vector<Pending> g_pending;
std::string g_pending_error;

void run_slot(const KernelSlot& slot, std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  Device dev;
  for (const Tensor& t : in)
    if (t.defined()) {
      dev = t.device();
      break;
    }
  if (in.empty() || dev.type == DeviceType::CPU)
    for (const Tensor& t : out)
      if (t.defined()) {
        dev = t.device();
        break;
      }
  // The plugin's kernels may rely on the thread's current device.
  thread_local std::array<int, kNumDeviceTypes> current = [] {
    std::array<int, kNumDeviceTypes> a;
    a.fill(-1);
    return a;
  }();
  if (current[int(dev.type)] != dev.index) {
    const OAR_DeviceInterface* table = plugin_table(dev.type);
    if (table && table->set_device(dev.index) == OAR_SUCCESS) current[int(dev.type)] = dev.index;
  }
  OAR_KernelContext ctx{slot.op, in, out, &attrs, dev.index, current_stream(dev), {}};
  OAR_Status s = slot.fn(&ctx, slot.user_data);
  if (s != OAR_SUCCESS)
    fail(plugin_error_kind(s), "[oar.", slot.op->name, "] the ", device_type_name(dev.type), " kernel failed on ", dev.str(),
         ": ", ctx.error.empty() ? plugin_status_name(s) : ctx.error);
}

template <size_t I>
void adapter(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& attrs) {
  run_slot(g_slots[I], in, out, attrs);
}
template <size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> make_adapters(std::index_sequence<I...>) {
  return {&adapter<I>...};
}
constexpr std::array<KernelFn, kMaxPluginKernels> kAdapters =
    make_adapters(std::make_index_sequence<kMaxPluginKernels>());

// Under g_mu. Installs the kernels of `p` for `t`; an existing kernel for
// one of its dtypes makes it an error, naming it, with nothing installed.
std::string install(const Pending& p, DeviceType t) {
  OpDef& op = const_cast<OpDef&>(*p.op);
  for (DType d : p.dtypes)
    if (op.kernels[int(t)][int(d)])
      return str_cat("register_kernel('", op.name, "', '", p.device_type, "'): a ", dtype_name(d),
                     " kernel is registered already");
  if (g_num_slots == kMaxPluginKernels)
    return str_cat("register_kernel('", op.name, "', '", p.device_type, "'): all ", kMaxPluginKernels,
                   " plugin kernel slots are taken");
  const size_t i = g_num_slots++;
  g_slots[i] = KernelSlot{p.op, p.fn, p.user_data};
  for (DType d : p.dtypes) op.kernels[int(t)][int(d)] = kAdapters[i];
  return "";
}

// The "cast" kernel of a plugin device for the dtypes the plugin registers
// none for: a copy of a dense tensor to one of the same dtype, with the
// plugin's memcpy_d2d.
void device_copy_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  Tensor& y = out[0];
  OAR_CHECK(x.dtype() == y.dtype(), NotImplemented, "[oar.cast] casting ", dtype_name(x.dtype()), " to ",
            dtype_name(y.dtype()), " on ", y.device().str(), " is not supported: the ",
            device_type_name(y.device().type), " plugin registers no cast kernel for it");
  OAR_CHECK(x.is_contiguous() && y.is_contiguous(), NotImplemented, "[oar.cast] a copy of a non-contiguous ",
            dtype_name(x.dtype()), " tensor on ", y.device().str(), " is not supported: the ",
            device_type_name(y.device().type), " plugin registers no cast kernel for it");
  const size_t n = size_t(y.numel()) * y.itemsize();
  if (n && x.raw_data() != y.raw_data())
    device_interface(y.device().type).copy_on_device(y.raw_data(), x.raw_data(), n, y.device().index);
}

// --- The host API ----------------------------------------------------------

OAR_Status host_register_kernel(const char* op_name, const char* device_type, const OAR_DataType* dtypes,
                                size_t num_dtypes, OAR_KernelFn fn, void* user_data) {
  std::lock_guard<std::mutex> g(g_mu);
  auto refuse = [&](const std::string& why) {
    if (g_collecting && g_pending_error.empty()) g_pending_error = why;
    return OAR_ERROR_INVALID_ARGUMENT;
  };
  const std::string op_s = op_name ? op_name : "", type_s = device_type ? device_type : "";
  const std::string what = str_cat("register_kernel('", op_s, "', '", type_s, "')");
  if (!fn) return refuse(what + ": the kernel function is null");
  if (!dtypes || num_dtypes == 0) return refuse(what + ": no dtype is listed");
  const OpDef* op = find_op(op_s);
  if (!op || !op->infer_meta) return refuse(what + ": oar has no op named '" + op_s + "'");
  if (op->traits.dynamic_shape)
    return refuse(what + ": the op's kernel computes its output shape, which plugin kernels cannot do");
  if (op->traits.view) return refuse(what + ": the op is a view, which runs no kernel");
  Pending p{op, type_s, {}, fn, user_data};
  for (size_t i = 0; i < num_dtypes; ++i) {
    if (int(dtypes[i]) < 0 || int(dtypes[i]) >= kNumDTypes)
      return refuse(str_cat(what, ": dtype ", int(dtypes[i]), " is not an OAR_DataType"));
    p.dtypes.push_back(DType(dtypes[i]));
  }
  if (g_collecting) {
    for (const Pending& q : g_pending)
      if (q.op == op && q.device_type == type_s)
        for (DType d : p.dtypes)
          if (std::find(q.dtypes.begin(), q.dtypes.end(), d) != q.dtypes.end())
            return refuse(str_cat(what, ": a ", dtype_name(d), " kernel is registered already"));
    g_pending.push_back(std::move(p));
    return OAR_SUCCESS;
  }
  // After init: the device type must be a loaded plugin's.
  const int t = find_device_type(type_s);
  if (t < int(DeviceType::Custom)) return refuse(what + ": no plugin device type is named '" + type_s + "'");
  const std::string err = install(p, DeviceType(t));
  return err.empty() ? OAR_SUCCESS : refuse(err);
}

size_t host_num_inputs(const OAR_KernelContext* c) { return c->in.size(); }
size_t host_num_outputs(const OAR_KernelContext* c) { return c->out.size(); }

OAR_Status fill_view(const Tensor& t, OAR_TensorView* view) {
  if (!view || view->size < sizeof(size_t)) return OAR_ERROR_INVALID_ARGUMENT;
  OAR_TensorView v{};
  v.size = view->size;
  if (!t.defined()) {
    v.ndim = -1;
  } else {
    v.data = t.numel() == 0 ? nullptr : t.raw_data();
    v.dtype = OAR_DataType(t.dtype());
    v.ndim = int32_t(t.dim());
    v.shape = t.shape().data();
    v.strides = t.strides().data();
    v.numel = t.numel();
  }
  std::memcpy(view, &v, std::min(view->size, sizeof(v)));
  return OAR_SUCCESS;
}

OAR_Status host_input(const OAR_KernelContext* c, size_t i, OAR_TensorView* view) {
  return i < c->in.size() ? fill_view(c->in[i], view) : OAR_ERROR_INVALID_ARGUMENT;
}
OAR_Status host_output(const OAR_KernelContext* c, size_t i, OAR_TensorView* view) {
  return i < c->out.size() ? fill_view(c->out[i], view) : OAR_ERROR_INVALID_ARGUMENT;
}

size_t host_num_attrs(const OAR_KernelContext* c) { return c->attrs->size(); }
const char* host_attr_name(const OAR_KernelContext* c, size_t k) {
  return k < c->op->attr_names.size() ? c->op->attr_names[k] : nullptr;
}
OAR_AttrType host_attr_type(const OAR_KernelContext* c, size_t k) {
  if (k >= c->attrs->size()) return OAR_ATTR_NONE;
  static_assert(std::variant_size_v<AttrValue> == 8, "one OAR_AttrType per alternative, in order");
  return OAR_AttrType((*c->attrs)[k].index());  // the alternatives are in OAR_AttrType's order
}

template <typename T>
const T* attr_of(const OAR_KernelContext* c, size_t k) {
  return k < c->attrs->size() ? std::get_if<T>(&(*c->attrs)[k]) : nullptr;
}

OAR_Status host_attr_bool(const OAR_KernelContext* c, size_t k, int* v) {
  const bool* a = attr_of<bool>(c, k);
  if (!a || !v) return OAR_ERROR_INVALID_ARGUMENT;
  *v = *a;
  return OAR_SUCCESS;
}
OAR_Status host_attr_int(const OAR_KernelContext* c, size_t k, int64_t* v) {
  const int64_t* a = attr_of<int64_t>(c, k);
  if (!a || !v) return OAR_ERROR_INVALID_ARGUMENT;
  *v = *a;
  return OAR_SUCCESS;
}
OAR_Status host_attr_float(const OAR_KernelContext* c, size_t k, double* v) {
  const double* a = attr_of<double>(c, k);
  if (!a || !v) return OAR_ERROR_INVALID_ARGUMENT;
  *v = *a;
  return OAR_SUCCESS;
}
OAR_Status host_attr_complex(const OAR_KernelContext* c, size_t k, double* re, double* im) {
  const std::complex<double>* a = attr_of<std::complex<double>>(c, k);
  if (!a || !re || !im) return OAR_ERROR_INVALID_ARGUMENT;
  *re = a->real();
  *im = a->imag();
  return OAR_SUCCESS;
}
OAR_Status host_attr_dtype(const OAR_KernelContext* c, size_t k, OAR_DataType* v) {
  const DType* a = attr_of<DType>(c, k);
  if (!a || !v) return OAR_ERROR_INVALID_ARGUMENT;
  *v = OAR_DataType(*a);
  return OAR_SUCCESS;
}
OAR_Status host_attr_string(const OAR_KernelContext* c, size_t k, const char** data, size_t* len) {
  const std::string* a = attr_of<std::string>(c, k);
  if (!a || !data || !len) return OAR_ERROR_INVALID_ARGUMENT;
  *data = a->c_str();
  *len = a->size();
  return OAR_SUCCESS;
}
OAR_Status host_attr_ints(const OAR_KernelContext* c, size_t k, const int64_t** data, size_t* len) {
  const Dims* a = attr_of<Dims>(c, k);
  if (!a || !data || !len) return OAR_ERROR_INVALID_ARGUMENT;
  *data = a->data();
  *len = a->size();
  return OAR_SUCCESS;
}

const char* host_op_name(const OAR_KernelContext* c) { return c->op->name.c_str(); }
int host_device_id(const OAR_KernelContext* c) { return c->device; }
OAR_Stream host_stream(const OAR_KernelContext* c) { return static_cast<OAR_Stream>(c->stream); }
void host_set_error(OAR_KernelContext* c, const char* message) { c->error = message ? message : ""; }

const OAR_HostAPI kHostApi = {
    sizeof(OAR_HostAPI), OAR_DEVICE_ABI_MAJOR, OAR_DEVICE_ABI_MINOR, host_register_kernel,
    host_num_inputs, host_num_outputs, host_input, host_output,
    host_num_attrs, host_attr_name, host_attr_type, host_attr_bool, host_attr_int, host_attr_float,
    host_attr_complex, host_attr_dtype, host_attr_string, host_attr_ints,
    host_op_name, host_device_id, host_stream, host_set_error, {}};

}  // namespace

const OAR_HostAPI* plugin_host_api() { return &kHostApi; }

void begin_plugin_kernels() {
  std::lock_guard<std::mutex> g(g_mu);
  g_collecting = true;
  g_pending.clear();
  g_pending_error.clear();
}

std::string check_plugin_kernels(const std::string& name) {
  std::lock_guard<std::mutex> g(g_mu);
  if (!g_pending_error.empty()) return g_pending_error;
  std::set<std::pair<int, DType>> seen;
  size_t slots = g_num_slots;
  for (const Pending& p : g_pending) {
    const std::string what = str_cat("register_kernel('", p.op->name, "', '", p.device_type, "')");
    if (p.device_type != name) return str_cat(what, ": '", p.device_type, "' is not the plugin's device type '", name, "'");
    for (DType d : p.dtypes)
      if (!seen.emplace(p.op->id, d).second) return str_cat(what, ": a ", dtype_name(d), " kernel is registered already");
    if (++slots > kMaxPluginKernels) return str_cat(what, ": all ", kMaxPluginKernels, " plugin kernel slots are taken");
  }
  return "";
}

void end_plugin_kernels(bool commit, DeviceType t) {
  std::lock_guard<std::mutex> g(g_mu);
  if (commit) {
    for (const Pending& p : g_pending) {
      const std::string err = install(p, t);
      OAR_CHECK(err.empty(), Runtime, "[oar] ", err);
    }
    // Dense copies within the device (clone, contiguous of a dense tensor,
    // copy_) work without a cast kernel of the plugin's.
    OpDef& cast = op_def("cast");
    for (int d = 0; d < kNumDTypes; ++d)
      if (!cast.kernels[int(t)][d]) cast.kernels[int(t)][d] = device_copy_kernel;
  }
  g_collecting = false;
  g_pending.clear();
  g_pending_error.clear();
}

}  // namespace oar

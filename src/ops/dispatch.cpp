#include "ops/dispatch.h"

#include <algorithm>
#include <atomic>

#include "ops/profiler.h"

#include "ops/grad.h"
#include "ops/ops.h"
#include "ops/random.h"

namespace oar {

DispatchHooks& dispatch_hooks() {
  static DispatchHooks h;
  return h;
}

DispatchState& dispatch_state() {
  thread_local DispatchState s;
  return s;
}

namespace {
// Devices encoded as type << 16 | index; kNoScope: no scope open.
constexpr uint32_t kNoScope = 0xffffffffu;
std::atomic<uint32_t> g_default_device{0};
thread_local uint32_t t_scope = kNoScope;
uint32_t encode(Device d) { return uint32_t(d.type) << 16 | uint32_t(uint16_t(d.index)); }
}  // namespace

Device default_device() {
  const uint32_t v = t_scope != kNoScope ? t_scope : g_default_device.load(std::memory_order_relaxed);
  return Device{DeviceType(v >> 16), int16_t(v & 0xffff)};
}
void set_default_device(Device d) { g_default_device.store(encode(d), std::memory_order_relaxed); }
uint32_t enter_device_scope(Device d) {
  const uint32_t prev = t_scope;
  t_scope = encode(d);
  return prev;
}
void exit_device_scope(uint32_t token) { t_scope = token; }
bool enter_device_scope_if_needed(Device d, uint32_t* token) {
  const uint32_t v = encode(d);
  const uint32_t cur = t_scope != kNoScope ? t_scope : g_default_device.load(std::memory_order_relaxed);
  if (cur == v) return false;
  *token = t_scope;
  t_scope = v;
  return true;
}

namespace {

KernelFn find_kernel(const OpDef& op, Device dev, DType dt) {
  KernelFn k = op.kernels[int(dev.type)][int(dt)];
  if (!k) {
    bool any = false;
    for (int t = 0; t < kNumDTypes; ++t) any = any || op.kernels[int(dev.type)][t];
    if (!any)
      fail(ErrorKind::NotImplemented, "[oar.", op.name, "] has no kernel for device ", dev.str(), " (dtype ",
           dtype_name(dt), "); move the tensors to a device that has one with .to()");
    fail(ErrorKind::NotImplemented, "[oar.", op.name, "] does not support dtype ", dtype_name(dt), " on ",
         dev.str(), "; cast the tensors with .astype() or move them with .to()");
  }
  return k;
}

// A 0-D CPU tensor that needs no gradient (a Python number made a tensor,
// a reduced value) may meet tensors of another device: it is copied there,
// as PyTorch treats CPU scalars. Every other input must be on one device.
bool movable_scalar(const Tensor& t) {
  return t.defined() && t.device().type == DeviceType::CPU && t.dim() == 0 && !t.requires_grad();
}

// The device of the first defined input that is not a movable scalar (of the
// first defined input if all are); every other input must be there too (a
// kernel reads all its operands' memory directly).
Device pick_device(const OpDef& op, std::span<const Tensor> inputs) {
  size_t i = 0;
  while (i < inputs.size() && !(inputs[i].defined() && !movable_scalar(inputs[i]))) ++i;
  if (i == inputs.size()) {
    i = 0;
    while (i < inputs.size() && !inputs[i].defined()) ++i;
    if (i == inputs.size()) return default_device();
  }
  const Device d = inputs[i].device();
  for (size_t j = 0; j < inputs.size(); ++j)
    if (j != i && inputs[j].defined() && inputs[j].device() != d && !movable_scalar(inputs[j]))
      fail(ErrorKind::Value, "[oar.", op.name, "] expected all tensors on one device, got ", d.str(), " (input ", i,
           ") and ", inputs[j].device().str(), " (input ", j, "); move them with .to(), .cuda() or .cpu()");
  return d;
}

// The inputs with the movable scalars that are not on `dev` copied there;
// empty when there are none.
Tensors move_scalars(std::span<const Tensor> inputs, Device dev) {
  Tensors moved;
  if (dev.type == DeviceType::CPU) return moved;
  for (const Tensor& t : inputs)
    if (t.defined() && t.device() != dev) {
      for (const Tensor& u : inputs) moved.push_back(u.defined() && u.device() != dev ? ops::to_device(u, dev) : u);
      break;
    }
  return moved;
}

// A new output tensor; running out of memory is an error naming the op
// (the allocators raise ErrorKind::Memory, or std::bad_alloc).
Tensor allocate_output(const OpDef& op, const TensorMeta& m, Device dev) {
  auto out_of_memory = [&]() {
    int64_t bytes = 0;
    __builtin_mul_overflow(checked_numel(m.shape, op.name.c_str()), int64_t(itemsize(m.dtype)), &bytes);
    fail(ErrorKind::Memory, "[oar.", op.name, "] out of memory allocating an output of shape ",
         ops::shape_str(m.shape), " (", bytes, " bytes of ", dtype_name(m.dtype), " on ", dev.str(), ")");
  };
  try {
    return empty_tensor(m.shape, m.dtype, dev);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Memory) throw;
    out_of_memory();
  } catch (const std::bad_alloc&) {
    out_of_memory();
  }
  __builtin_unreachable();
}

}  // namespace

Metas infer_metas(const OpDef& op, std::span<const Tensor> in, const Attrs& attrs) {
  Metas metas = op.infer_meta(in, attrs);
  for (const TensorMeta& m : metas)
    OAR_CHECK(m.shape.size() <= size_t(kMaxRank), Value, "[oar.", op.name, "] the result would have ",
              m.shape.size(), " dimensions; tensors have at most ", kMaxRank);
  return metas;
}

namespace {
Tensors run_kernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);
}  // namespace

Tensors run_eager(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  if (op.traits.random && draws_at_run_time(op, attrs)) {
    // After the trace stage, which records (0, 0): Note [random state at run time].
    // (The drawn seed may itself be 0: the kernel takes it as it is.)
    return run_kernel(op, inputs, with_drawn_state(op, inputs, attrs));
  }
  return run_kernel(op, inputs, attrs);
}

namespace {
Tensors run_kernel(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  Metas metas = infer_metas(op, inputs, attrs);
  Tensors outs;
  if (op.traits.view) {
    const Tensor& base = inputs[0];
    for (TensorMeta& m : metas) {
      outs.push_back(make_view(base, std::move(m.shape), std::move(m.strides), m.offset));
      outs.back().impl()->is_view = true;
    }
    return outs;
  }
  Device dev = pick_device(op, inputs);
  Tensors moved = move_scalars(inputs, dev);
  if (!moved.empty()) inputs = std::span<const Tensor>(moved.data(), moved.size());
  DType key = !inputs.empty() && inputs[0].defined() ? inputs[0].dtype() : metas[0].dtype;
  if (is_custom(dev.type) && !op.kernels[int(dev.type)][int(key)] &&
      std::none_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); })) {
    // Note [creation on the current device]
    // An op without tensor inputs (full, arange, the random draws) makes its
    // outputs on the current device (Note [device scope]). Where a plugin
    // device has no kernel for it, the op runs on the CPU and its outputs are
    // copied there: so a plugin need not implement creation ops, and its
    // random draws are the CPU generator's. Ops with tensor inputs never fall
    // back: they run where their inputs are, or raise NotImplementedError.
    DeviceScope on_cpu(Device{});
    outs = run_kernel(op, inputs, attrs);
    for (Tensor& o : outs) o = ops::to_device(o, dev);
    return outs;
  }
  KernelFn k = find_kernel(op, dev, key);
  outs.resize(metas.size());
  const int64_t t0 = profiler::enabled() ? profiler::now_ns() : 0;
  if (!op.traits.dynamic_shape)
    for (size_t i = 0; i < metas.size(); ++i) outs[i] = allocate_output(op, metas[i], dev);
  try {
    k(inputs, std::span<Tensor>(outs.data(), outs.size()), attrs);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    fail(ErrorKind::Memory, "[oar.", op.name, "] out of memory in the ", dtype_name(key), " kernel");
  } catch (const std::exception& e) {
    // A kernel's standard-library exception is a bug (infer_meta should have
    // refused the input); the user still learns which op failed.
    fail(ErrorKind::Runtime, "[oar.", op.name, "] internal error in the ", dtype_name(key), " kernel (",
         e.what(), ")");
  }
  if (t0) profiler::record(op, inputs, profiler::now_ns() - t0, outs);
  return outs;
}
}  // namespace

Tensors dispatch(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  DispatchState& st = dispatch_state();
  Tensors outs;
  // 1. trace
  if (st.tracing && dispatch_hooks().trace && dispatch_hooks().trace(op, inputs, attrs, outs)) return outs;
  // 2. distributed
  for (const Tensor& t : inputs)
    if (t.defined() && t.is_dist()) {
      OAR_CHECK(dispatch_hooks().distributed, NotImplemented, "[oar.", op.name,
                "] distributed tensors need the oar.distributed module");
      if (dispatch_hooks().distributed(op, inputs, attrs, outs)) return outs;
      break;
    }
  // 3. autocast
  Tensors cast_inputs;
  if (st.autocast && dispatch_hooks().autocast && dispatch_hooks().autocast(op, inputs, cast_inputs))
    inputs = std::span<const Tensor>(cast_inputs.data(), cast_inputs.size());
  // 4. eager
  bool track = op.grad && dispatch_hooks().record && grad_enabled() && any_requires_grad(inputs);
  if (track) {
    // Kernels and infer_meta never see autograd state.
    NoGradGuard ng;
    outs = run_eager(op, inputs, attrs);
  } else {
    outs = run_eager(op, inputs, attrs);
  }
  // 5. autograd
  if (track) dispatch_hooks().record(op, inputs, attrs, outs);
  return outs;
}

Tensor GradCtx::grad(size_t i) const {
  if (grads[i].defined()) return grads[i];
  const TensorMeta& m = out_metas[i];
  // On the device of the gradients that did arrive (or of the op's tensors).
  auto device_of = [&]() {
    for (auto list : {std::span<const Tensor>(grads.data(), grads.size()), inputs, outputs})
      for (const Tensor& t : list)
        if (t.defined()) return t.device();
    return default_device();
  };
  DeviceScope on(device_of());
  return ops::zeros(m.shape, m.dtype);
}

Tensor dispatch1(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  Tensors o = dispatch(op, inputs, attrs);
  return std::move(o[0]);
}

Tensor& dispatch_inplace(const OpDef& op, Tensor& self, std::span<const Tensor> inputs, const Attrs& attrs) {
  check_inplace(self, op.name.c_str());
  OAR_CHECK(!self.storage().read_only(), Value, "[oar.", op.name,
            "_] the tensor is read-only (weights held by an inference predictor); copy it to modify it");
  // 1. trace
  if (dispatch_state().tracing && dispatch_hooks().trace_inplace &&
      dispatch_hooks().trace_inplace(op, self, inputs, attrs))
    return self;
  // 2. distributed
  bool any_dist = self.is_dist();
  for (const Tensor& t : inputs) any_dist = any_dist || (t.defined() && t.is_dist());
  if (any_dist) {
    OAR_CHECK(dispatch_hooks().distributed_inplace, NotImplemented, "[oar.", op.name,
              "_] distributed tensors need the oar.distributed module");
    dispatch_hooks().distributed_inplace(op, self, inputs, attrs);
    return self;
  }
  // Writing through a view would have to rewrite the base's history as well;
  // until autograd does that, refuse rather than produce wrong gradients.
  OAR_CHECK(!(self.impl()->is_view && grad_enabled() && (self.requires_grad() || any_requires_grad(inputs))),
            NotImplemented, "[oar.", op.name, "_] in-place modification of a view (slice, reshape, transpose, ...) "
            "while gradients are recorded is not supported; use the out-of-place op, or write through "
            "indexing assignment (x[...] = v) on the base tensor");
  for (const Tensor& t : inputs)
    if (t.defined() && t.device() != self.device() && !movable_scalar(t))
      fail(ErrorKind::Value, "[oar.", op.name, "_] the tensor modified in place is on ", self.device().str(),
           ", an input is on ", t.device().str(), "; move it with .to(), .cuda() or .cpu()");
  Tensors moved = move_scalars(inputs, self.device());
  if (!moved.empty()) inputs = std::span<const Tensor>(moved.data(), moved.size());
  Metas metas = infer_metas(op, inputs, attrs);
  OAR_CHECK(metas.size() == 1 && metas[0].shape == self.shape(), Value, "[oar.", op.name,
            "_] the result shape ", ops::shape_str(metas[0].shape),
            " must equal the shape of the tensor modified in place ", ops::shape_str(self.shape()));
  bool track = op.grad && dispatch_hooks().record_inplace && grad_enabled() && any_requires_grad(inputs);
  // The gradient rule may need the inputs as they were before the write.
  Tensors saved;
  if (track && op.save_inputs) {
    NoGradGuard ng;
    for (const Tensor& t : inputs) saved.push_back(t.defined() && t.same(self) ? detach(ops::clone(t)) : t);
  }
  {
    NoGradGuard ng;
    const int64_t t0 = profiler::enabled() ? profiler::now_ns() : 0;
    DType key = inputs[0].dtype();
    KernelFn k = find_kernel(op, self.device(), key);
    Tensor out = self;
    if (metas[0].dtype != self.dtype()) {
      Tensor tmp = empty_tensor(metas[0].shape, metas[0].dtype, self.device());
      k(inputs, std::span<Tensor>(&tmp, 1), attrs);
      ops::copy_(out, tmp);
    } else {
      k(inputs, std::span<Tensor>(&out, 1), attrs);
    }
    if (t0) profiler::record(op, inputs, profiler::now_ns() - t0, std::span<const Tensor>(&self, 1));
  }
  self.storage().bump_version();
  if (track) dispatch_hooks().record_inplace(op, inputs, attrs, self, std::span<const Tensor>(saved.data(), saved.size()));
  return self;
}

}  // namespace oar

// The one dispatch entry with fixed stages (DESIGN.md §1):
//   1 trace, 2 distributed, 3 autocast, 4 eager, 5 autograd.
#pragma once
#include "ops/op.h"

namespace oar {

Tensors dispatch(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs = no_attrs());
Tensor dispatch1(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs = no_attrs());
// Runs `op` writing its single output into `self` (which is also input 0 for
// unary/binary in-place ops). Bumps the storage version.
Tensor& dispatch_inplace(const OpDef& op, Tensor& self, std::span<const Tensor> inputs,
                         const Attrs& attrs = no_attrs());

inline Tensor dispatch1(const OpDef& op, std::initializer_list<Tensor> in, const Attrs& attrs = no_attrs()) {
  return dispatch1(op, std::span<const Tensor>(in.begin(), in.size()), attrs);
}

// Hooks for the stages that other layers provide. Each is null until the
// layer that implements it installs it (ir/ installs the tracer, dist/ the
// SPMD stage, amp the autocast stage).
struct DispatchHooks {
  // Returns true and fills `out` if it handled the call.
  bool (*trace)(const OpDef&, std::span<const Tensor>, const Attrs&, Tensors& out) = nullptr;
  // In-place ops (dispatch_inplace): returns true if it performed and
  // recorded the write to `self`.
  bool (*trace_inplace)(const OpDef&, Tensor& self, std::span<const Tensor>, const Attrs&) = nullptr;
  bool (*distributed)(const OpDef&, std::span<const Tensor>, const Attrs&, Tensors& out) = nullptr;
  // In-place ops on distributed tensors: performs the write on the pieces.
  void (*distributed_inplace)(const OpDef&, Tensor& self, std::span<const Tensor>, const Attrs&) = nullptr;
  // May replace the inputs with cast copies.
  bool (*autocast)(const OpDef&, std::span<const Tensor>, Tensors& cast_inputs) = nullptr;
  // Stage 5, installed by the autograd engine (autograd/autograd.cpp) when
  // its library is loaded; without it (the inference runtime) nothing is
  // recorded. `record` gives the outputs their gradient node; for in-place
  // ops, `saved` holds what the rule reads, taken before the write.
  void (*record)(const OpDef&, std::span<const Tensor>, const Attrs&, Tensors& out) = nullptr;
  void (*record_inplace)(const OpDef&, std::span<const Tensor>, const Attrs&, Tensor& self,
                         std::span<const Tensor> saved) = nullptr;
};
DispatchHooks& dispatch_hooks();
// Thread-local switches the hooks read, so the fast path tests one word.
struct DispatchState {
  bool tracing = false;
  bool autocast = false;
};
DispatchState& dispatch_state();

// The device that ops without tensor inputs (creation, sampling) make their
// outputs on: inside a device scope its device, else oar.set_device's choice
// (process-wide, the CPU by default).
//
// Note [device scope]
// An API called with tensor arguments runs in a scope of their device (the
// first one not on the CPU, else the CPU; the Python bindings and the Python
// error boundary open it: python/bind/module.cpp, oar/_api.py), so that the
// helper tensors a composite makes (index ranges, masks, constants) are made
// beside its inputs rather than on oar.set_device's device.
Device default_device();
void set_default_device(Device d);
// Opens a scope of device d on this thread; returns the token that
// exit_device_scope takes to restore the previous one.
uint32_t enter_device_scope(Device d);
void exit_device_scope(uint32_t token);
// Opens a scope of device d unless new tensors already go to d (the common
// case: a CPU call with nothing else selected); true, with the token for
// exit_device_scope, when it opened one.
bool enter_device_scope_if_needed(Device d, uint32_t* token);
// A device scope for the lifetime of the object.
class DeviceScope {
 public:
  explicit DeviceScope(Device d) : token_(enter_device_scope(d)) {}
  ~DeviceScope() { exit_device_scope(token_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  uint32_t token_;
};

// Stage 4 only: infer_meta, allocate, run the kernel. No autograd.
Tensors run_eager(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);

}  // namespace oar

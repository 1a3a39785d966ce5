// Bindings of the autocast stage (ops/autocast.h) for oar.amp.
#include "common.h"
#include "dtype_arg.h"
#include "autograd/autograd.h"
#include "ops/autocast.h"

namespace oar::bind {
namespace {

void bind_amp(nb::module_& m) {
  m.def("_set_autocast", [](bool enabled, nb::handle dtype, int level) {
    set_autocast_config(AutocastConfig{enabled, to_dtype(dtype, "oar.amp.auto_cast"), level});
  });
  m.def("_get_autocast", []() {
    AutocastConfig c = autocast_config();
    return nb::make_tuple(c.enabled, c.dtype, c.level);
  });
  // Gives a leaf tensor another tensor's data, dtype and shape while keeping its
  // identity (amp.decorate changes parameters' dtype under the optimizers and
  // layers that hold them). The old gradient no longer fits and is dropped.
  m.def("_set_data_", [](TensorImpl& self, const TensorImpl& src) {
    OAR_CHECK(!(self.autograd && self.autograd->grad_fn), Value,
              "[oar.amp.decorate] only leaf tensors (parameters) can change their data in place");
    self.storage = src.storage;
    self.shape = src.shape;
    self.strides = src.strides;
    self.offset = src.offset;
    self.dtype = src.dtype;
    self.refresh();
    if (self.autograd) self.autograd->grad = Tensor();
  });
  m.def("_amp_op_policy", [](const std::string& op) {
    static const char* kNames[] = {"promote", "low", "float32"};
    return std::string(kNames[int(cast_policy(op))]);
  });
  m.def("_set_amp_op_policy", [](const std::string& op, const std::string& policy) {
    CastPolicy p = policy == "low" ? CastPolicy::Low : policy == "float32" ? CastPolicy::Float32 : CastPolicy::Promote;
    OAR_CHECK(policy == "low" || policy == "float32" || policy == "promote", Value,
              "[oar.amp] policy must be 'low', 'float32' or 'promote', got '", policy, "'");
    set_cast_policy(op, p);
  });
}

Binder b(bind_amp);

}  // namespace
}  // namespace oar::bind

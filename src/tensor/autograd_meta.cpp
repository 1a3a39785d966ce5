#include "tensor/autograd_meta.h"

#include "base/error.h"

namespace oar {

namespace {
thread_local bool t_grad_enabled = true;
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool on) { t_grad_enabled = on; }

Tensor detach(const Tensor& t) {
  if (!t.defined()) return t;
  Tensor d = make_view(t, t.shape(), t.strides(), t.offset());
  d.impl()->dist = t.impl()->dist;  // still the same (distributed) value
  return d;
}

bool any_requires_grad(std::span<const Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void check_inplace(const Tensor& self, const char* op) {
  if (grad_enabled() && self.requires_grad() && !self.impl()->autograd->grad_fn)
    fail(ErrorKind::Value, "[oar.", op, "] a leaf Tensor that requires grad (stop_gradient=False) "
         "cannot be modified in place; use the out-of-place op or wrap it in oar.no_grad()");
}

}  // namespace oar

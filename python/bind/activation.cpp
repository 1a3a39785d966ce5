// Activations of oar.nn.functional (Note [function declarations],
// tools/gen_ops.py): the bindings are generated from src/ops/activation.toml
// into gen/bind/functions_activation.inc; the glue here serves the calls that
// need more than one C++ API call.
#include "args.h"
#include "ops/activation.h"

namespace oar::bind {
namespace {

using nb::arg;

// gelu's approximate: a bool, or Paddle's 'tanh' / 'none'.
bool gelu_approximate(nb::handle a, const char* api) {
  if (nb::isinstance<nb::str>(a)) {
    std::string s = nb::cast<std::string>(a);
    OAR_CHECK(s == "tanh" || s == "none", Value, "[", api, "] approximate must be 'tanh' or 'none', got '", s, "'");
    return s == "tanh";
  }
  int v = PyObject_IsTrue(a.ptr());
  if (v < 0) throw nb::python_error();
  return v == 1;
}

#include "gen/bind/functions_activation.inc"

void bind_activation(nb::module_& m) {
  bind_activation_functions(m, tensor_class(m));
  m.def("relu_", [](const Tensor& x) { Tensor t = x; return ops::relu_(t); }, arg("x"));
}

Binder b(bind_activation);

}  // namespace
}  // namespace oar::bind

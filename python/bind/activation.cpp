// Activation functions (ops/activation.h); Python signatures live in
// python/oar/nn/functional.py.
#include "common.h"
#include "dtype_arg.h"
#include "ops/activation.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_activation(nb::module_& m) {
  m.def("relu", [](const Tensor& x) { return ops::relu(x); }, arg("x"));
  m.def("relu_", [](const Tensor& x) { Tensor t = x; return ops::relu_(t); }, arg("x"));
  m.def("relu6", [](const Tensor& x) { return ops::relu6(x); }, arg("x"));
  m.def("leaky_relu", [](const Tensor& x, double s) { return ops::leaky_relu(x, s); }, arg("x"),
        arg("negative_slope") = 0.01);
  m.def("elu", [](const Tensor& x, double a) { return ops::elu(x, a); }, arg("x"), arg("alpha") = 1.0);
  m.def("selu", [](const Tensor& x, double s, double a) { return ops::selu(x, s, a); }, arg("x"),
        arg("scale") = 1.0507009873554804934193349852946, arg("alpha") = 1.6732632423543772848170429916717);
  m.def("gelu", [](const Tensor& x, bool approx) { return ops::gelu(x, approx); }, arg("x"),
        arg("approximate") = false);
  m.def("silu", [](const Tensor& x) { return ops::silu(x); }, arg("x"));
  m.def("softplus", [](const Tensor& x, double b, double t) { return ops::softplus(x, b, t); }, arg("x"),
        arg("beta") = 1.0, arg("threshold") = 20.0);
  m.def("softsign", [](const Tensor& x) { return ops::softsign(x); }, arg("x"));
  m.def("log_sigmoid", [](const Tensor& x) { return ops::log_sigmoid(x); }, arg("x"));
  m.def("hardswish", [](const Tensor& x) { return ops::hardswish(x); }, arg("x"));
  m.def("hardsigmoid", [](const Tensor& x, double s, double o) { return ops::hardsigmoid(x, s, o); }, arg("x"),
        arg("slope") = 0.1666667, arg("offset") = 0.5);
  m.def("mish", [](const Tensor& x) { return ops::mish(x); }, arg("x"));
  m.def("softmax", [](const Tensor& x, int64_t axis, nb::handle dtype) {
    return ops::softmax(x, axis, opt_dtype(dtype, "oar.nn.functional.softmax"));
  }, arg("x"), arg("axis") = -1, arg("dtype") = nb::none());
  m.def("log_softmax", [](const Tensor& x, int64_t axis, nb::handle dtype) {
    return ops::log_softmax(x, axis, opt_dtype(dtype, "oar.nn.functional.log_softmax"));
  }, arg("x"), arg("axis") = -1, arg("dtype") = nb::none());
}

Binder b(bind_activation);

}  // namespace
}  // namespace oar::bind

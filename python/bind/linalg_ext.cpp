// Bindings for ops/linalg_ext.h. The Python wrappers with Paddle signatures
// and docstrings are in python/oar/_linalg_ext.py.
#include "common.h"
#include "dtype_arg.h"
#include "ops/linalg_ext.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_linalg_ext(nb::module_& m) {
  m.def("_bmm", &ops::bmm, arg("x"), arg("y"));
  m.def("_mm", &ops::mm, arg("input"), arg("mat2"));
  m.def("_dot", &ops::dot, arg("x"), arg("y"));
  m.def("_outer", &ops::outer, arg("x"), arg("y"));
  m.def("_t", &ops::t, arg("input"));
  m.def("_kron", &ops::kron, arg("x"), arg("y"));
  m.def("_cross", &ops::cross, arg("x"), arg("y"), arg("axis") = 9);
  m.def("_einsum", &ops::einsum, arg("equation"), arg("operands"));
  m.def("_lerp", &ops::lerp, arg("x"), arg("y"), arg("weight"));
  m.def("_nan_to_num", &ops::nan_to_num, arg("x"), arg("nan") = 0.0, arg("posinf") = nb::none(),
        arg("neginf") = nb::none());
  m.def("_logspace", [](double start, double stop, int64_t num, double base, nb::handle dtype) {
    return ops::logspace(start, stop, num, base,
                         opt_dtype(dtype, "oar.logspace").value_or(default_float_dtype()));
  }, arg("start"), arg("stop"), arg("num"), arg("base") = 10.0, arg("dtype") = nb::none());
}

Binder b(bind_linalg_ext);

}  // namespace
}  // namespace oar::bind

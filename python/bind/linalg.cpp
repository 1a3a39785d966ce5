// Linear algebra (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/linalg.toml into gen/bind/functions_linalg.inc;
// the glue here turns the number arguments (Python numbers, NumPy scalars or
// one-element Tensors) into the C++ API's.
#include "args.h"
#include "ops/linalg_ext.h"

namespace oar::bind {
namespace {

using nb::arg;

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::str(h.type().attr("__name__"))); }

// The Python number held by h: h itself, or the value of a one-element Tensor.
nb::object number_in(nb::handle h, const char* api, const char* what) {
  if (!nb::isinstance<TensorImpl>(h)) return nb::borrow(h);
  Tensor t = nb::cast<Tensor>(h);
  OAR_CHECK(t.numel() == 1, Value, "[", api, "] ", what, " must be a number or a one-element Tensor, got shape ",
            ops::shape_str(t.shape()));
  return h.attr("item")();
}

// A real number, or a one-element Tensor holding one.
double real_of(nb::handle h, const char* api, const char* what) {
  nb::object v = number_in(h, api, what);
  OAR_CHECK(PyNumber_Check(v.ptr()) && !PyComplex_Check(v.ptr()) && !nb::isinstance<nb::str>(v), Type, "[", api,
            "] ", what, " must be a real number, got ", py_type_name(v));
  double d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(ErrorKind::Type, "[", api, "] ", what, " must be a real number, got ", py_type_name(v));
  }
  return d;
}

std::optional<double> opt_real(nb::handle h, const char* api, const char* what) {
  if (h.is_none()) return std::nullopt;
  return real_of(h, api, what);
}

// A count: an int, a float with an integral value, or a one-element Tensor holding one.
int64_t count_of(nb::handle h, const char* api, const char* what) {
  nb::object v = number_in(h, api, what);
  if (PyFloat_Check(v.ptr())) {
    const double d = PyFloat_AS_DOUBLE(v.ptr());
    OAR_CHECK(d == static_cast<double>(static_cast<int64_t>(d)), Type, "[", api, "] ", what,
              " must be an int, got ", py_type_name(v));
    return static_cast<int64_t>(d);
  }
  OAR_CHECK(!PyBool_Check(v.ptr()) && PyIndex_Check(v.ptr()), Type, "[", api, "] ", what, " must be an int, got ",
            py_type_name(v));
  return arg_axis(v, api, what);
}

// lerp's weight: a Tensor, or a number taken as a 0-D tensor of x's dtype.
Tensor weight_of(const Tensor& x, nb::handle w, const char* api) {
  if (nb::isinstance<TensorImpl>(w)) return nb::cast<Tensor>(w);
  Scalar s;
  OAR_CHECK(nb::try_cast<Scalar>(w, s), Type, "[", api, "] weight must be a Tensor or a number, got ",
            py_type_name(w));
  return ops::full({}, s, x.dtype());
}

#include "gen/bind/functions_linalg.inc"

void bind_linalg(nb::module_& m) {
  bind_linalg_functions(m, tensor_class(m));
}

Binder b(bind_linalg);

}  // namespace
}  // namespace oar::bind

// The declared functions (Note [function declarations], tools/gen_ops.py):
// their bindings are generated into gen/bind/functions.inc; the few calls
// that need more than one C++ API call use the glue here.
#include <nanobind/stl/pair.h>

#include "args.h"
#include "ops/reduce_ext.h"

namespace oar::bind {
namespace {

using nb::arg;

// median: the values, and with mode 'min' along an axis also the indices.
nb::object one_or_pair(const std::pair<Tensor, Tensor>& r) {
  if (!r.second.defined()) return nb::cast(r.first);
  return nb::make_tuple(r.first, r.second);
}

// norm: p is None, a number (inf and -inf included), 'fro' or 'nuc'; None
// means the Frobenius norm over two axes, else the 2-norm; 'nuc' of a matrix
// needs no axis (Paddle's rule).
Tensor norm_of(const Tensor& x, nb::handle p, nb::handle axis_h, bool keepdim, const char* api) {
  std::optional<Dims> axis;
  if (!axis_h.is_none()) axis = arg_axes(axis_h, api, "axis");
  if (p.is_none()) {
    bool matrix = axis && axis->size() == 2;
    return matrix ? ops::norm(x, std::string("fro"), axis, keepdim) : ops::norm(x, 2.0, axis, keepdim);
  }
  if (nb::isinstance<nb::str>(p)) {
    std::string s = nb::cast<std::string>(p);
    if (s == "nuc" && !axis && x.dim() == 2) axis = Dims{0, 1};
    return ops::norm(x, s, axis, keepdim);
  }
  OAR_CHECK(!PyBool_Check(p.ptr()) && PyNumber_Check(p.ptr()) && !nb::isinstance<TensorImpl>(p), Type, "[", api,
            "] p must be a number, 'fro' or 'nuc', got ", nb::cast<std::string>(nb::str(p.type().attr("__name__"))));
  double v = PyFloat_AsDouble(p.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(ErrorKind::Type, "[", api, "] p must be a real number, got ", nb::cast<std::string>(nb::repr(p)));
  }
  return ops::norm(x, v, axis, keepdim);
}

// reshape: Paddle's 0 copies x's dim at that position; -1 infers one dim.
Tensor reshape_paddle(const Tensor& x, Dims shape, const char* api) {
  for (int64_t& d : shape) {
    OAR_CHECK(d >= -1, Value, "[", api, "] shape dims must be >= -1, got ", ops::shape_str(shape));
    if (d == 0) d = ops::kReshapeCopyDim;
  }
  return ops::reshape(x, shape);
}

// where: x and y are Tensors or Python numbers; a number takes the dtype the
// other operand gives it (as in binary ops).
Tensor where_of(const Tensor& c, nb::handle x, nb::handle y, const char* api) {
  const bool xt = nb::isinstance<TensorImpl>(x), yt = nb::isinstance<TensorImpl>(y);
  Scalar xs, ys;
  OAR_CHECK((xt || nb::try_cast<Scalar>(x, xs)) && (yt || nb::try_cast<Scalar>(y, ys)) && (xt || yt), Type, "[", api,
            "] x and y must be Tensors or numbers, at least one a Tensor; got ",
            nb::cast<std::string>(nb::str(x.type().attr("__name__"))), " and ",
            nb::cast<std::string>(nb::str(y.type().attr("__name__"))));
  Tensor X = xt ? nb::cast<Tensor>(x) : Tensor(), Y = yt ? nb::cast<Tensor>(y) : Tensor();
  if (!xt) X = ops::scalar_tensor(xs, ops::result_type(Y, xs));
  if (!yt) Y = ops::scalar_tensor(ys, ops::result_type(X, ys));
  return ops::where(c, X, Y);
}

#include "gen/bind/functions.inc"

void bind_declared(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<TensorImpl>>(m.attr("Tensor"));
  bind_declared_functions(m, cls);
  // The same normalisation for the functions still written in Python.
  m.def("_arg_axes", [](nb::handle h, const std::string& api, const std::string& what) {
    Dims d = arg_axes(h, api.c_str(), what.c_str());
    return h.is_none() ? nb::none() : nb::cast(d);
  }, arg("axis").none(), arg("api"), arg("what") = "axis");
  m.def("_arg_opt_axis", [](nb::handle h, const std::string& api, const std::string& what) {
    return arg_opt_axis(h, api.c_str(), what.c_str());
  }, arg("axis").none(), arg("api"), arg("what") = "axis");
}

Binder b(bind_declared);

}  // namespace
}  // namespace oar::bind

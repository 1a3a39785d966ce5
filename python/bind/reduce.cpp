// Reductions and scans (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/reduce.toml into gen/bind/functions_reduce.inc;
// the glue here serves the calls that need more than one C++ API call.
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
  OAR_CHECK(!PyBool_Check(p.ptr()) && !nb::isinstance<TensorImpl>(p), Type, "[", api,
            "] p must be a number, 'fro' or 'nuc', got ", py_type_name(p));
  return ops::norm(x, arg_real(p, api, "p"), axis, keepdim);
}

#include "gen/bind/functions_reduce.inc"

void bind_reduce(nb::module_& m) {
  bind_reduce_functions(m, tensor_class(m));
  // The same normalisation for the functions written in Python.
  m.def("_arg_axes", [](nb::handle h, const std::string& api, const std::string& what) {
    Dims d = arg_axes(h, api.c_str(), what.c_str());
    return h.is_none() ? nb::none() : nb::cast(d);
  }, arg("axis").none(), arg("api"), arg("what") = "axis");
  m.def("_arg_opt_axis", [](nb::handle h, const std::string& api, const std::string& what) {
    return arg_opt_axis(h, api.c_str(), what.c_str());
  }, arg("axis").none(), arg("api"), arg("what") = "axis");
}

Binder b(bind_reduce);

}  // namespace
}  // namespace oar::bind

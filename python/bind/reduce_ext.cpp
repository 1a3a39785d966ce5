// Reductions and scans of ops/reduce_ext.h. The Python wrappers with Paddle
// signatures and the Tensor methods are in python/oar/_reduce_ext.py.
#include <cmath>

#include "common.h"
#include "dtype_arg.h"
#include "ops/reduce_ext.h"

namespace oar::bind {
namespace {

using nb::arg;
const auto kNone = nb::none();

Dims axes_of(const std::optional<Dims>& a) { return a ? *a : Dims{}; }

DType index_dtype(nb::handle h, const char* api) {
  auto dt = opt_dtype(h, api);
  return dt ? *dt : DType::Int64;
}

nb::object pair_or_one(const std::pair<Tensor, Tensor>& r) {
  if (!r.second.defined()) return nb::cast(r.first);
  return nb::make_tuple(r.first, r.second);
}

void bind_reduce_ext(nb::module_& m) {
  m.def("max", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::max(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  m.def("min", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::min(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  m.def("argmax", [](const Tensor& x, std::optional<int64_t> axis, bool keepdim, nb::handle dtype) {
    return ops::argmax(x, axis, keepdim, index_dtype(dtype, "oar.argmax"));
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false, arg("dtype") = kNone);
  m.def("argmin", [](const Tensor& x, std::optional<int64_t> axis, bool keepdim, nb::handle dtype) {
    return ops::argmin(x, axis, keepdim, index_dtype(dtype, "oar.argmin"));
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false, arg("dtype") = kNone);
  m.def("all", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::all(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  m.def("any", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::any(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  m.def("count_nonzero", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::count_nonzero(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  m.def("var", [](const Tensor& x, std::optional<Dims> axis, bool unbiased, bool keepdim) {
    return ops::var(x, axes_of(axis), unbiased, keepdim);
  }, arg("x"), arg("axis") = kNone, arg("unbiased") = true, arg("keepdim") = false);
  m.def("std", [](const Tensor& x, std::optional<Dims> axis, bool unbiased, bool keepdim) {
    return ops::stddev(x, axes_of(axis), unbiased, keepdim);
  }, arg("x"), arg("axis") = kNone, arg("unbiased") = true, arg("keepdim") = false);
  m.def("median", [](const Tensor& x, std::optional<int64_t> axis, bool keepdim, const std::string& mode) {
    return pair_or_one(ops::median(x, axis, keepdim, mode));
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false, arg("mode") = "avg");
  m.def("logsumexp", [](const Tensor& x, std::optional<Dims> axis, bool keepdim) {
    return ops::logsumexp(x, axes_of(axis), keepdim);
  }, arg("x"), arg("axis") = kNone, arg("keepdim") = false);
  // p: None, 'fro', 'nuc' or a number (inf and -inf included).
  m.def("norm", [](const Tensor& x, nb::handle p, std::optional<Dims> axis, bool keepdim) {
    if (p.is_none()) {
      bool matrix = axis && axis->size() == 2;
      return matrix ? ops::norm(x, std::string("fro"), axis, keepdim) : ops::norm(x, 2.0, axis, keepdim);
    }
    if (nb::isinstance<nb::str>(p)) return ops::norm(x, nb::cast<std::string>(p), axis, keepdim);
    OAR_CHECK(!PyBool_Check(p.ptr()) && PyNumber_Check(p.ptr()), Type,
              "[oar.norm] p must be a number, 'fro' or 'nuc', got ", nb::cast<std::string>(nb::str(p.type())));
    double v = PyFloat_AsDouble(p.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      fail(ErrorKind::Type, "[oar.norm] p must be a real number, got ", nb::cast<std::string>(nb::repr(p)));
    }
    return ops::norm(x, v, axis, keepdim);
  }, arg("x"), arg("p") = kNone, arg("axis") = kNone, arg("keepdim") = false);
  m.def("cumsum", [](const Tensor& x, std::optional<int64_t> axis, nb::handle dtype) {
    return ops::cumsum(x, axis, opt_dtype(dtype, "oar.cumsum"));
  }, arg("x"), arg("axis") = kNone, arg("dtype") = kNone);
  m.def("cumprod", [](const Tensor& x, std::optional<int64_t> dim, nb::handle dtype) {
    return ops::cumprod(x, dim, opt_dtype(dtype, "oar.cumprod"));
  }, arg("x"), arg("dim") = kNone, arg("dtype") = kNone);
  m.def("cummax", [](const Tensor& x, std::optional<int64_t> axis, nb::handle dtype) {
    auto r = ops::cummax(x, axis, index_dtype(dtype, "oar.cummax"));
    return nb::make_tuple(r.first, r.second);
  }, arg("x"), arg("axis") = kNone, arg("dtype") = kNone);
  m.def("cummin", [](const Tensor& x, std::optional<int64_t> axis, nb::handle dtype) {
    auto r = ops::cummin(x, axis, index_dtype(dtype, "oar.cummin"));
    return nb::make_tuple(r.first, r.second);
  }, arg("x"), arg("axis") = kNone, arg("dtype") = kNone);
}

Binder b(bind_reduce_ext);

}  // namespace
}  // namespace oar::bind

// Argument normalisation shared by the declared functions' bindings (args.h).
#include "args.h"

#include "autograd/autograd.h"

namespace oar::bind {
namespace {

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::str(h.type().attr("__name__"))); }

bool is_int(PyObject* o) { return !PyBool_Check(o) && PyIndex_Check(o) && !nb::isinstance<TensorImpl>(o); }

int64_t as_int(PyObject* o, const char* api, const char* what) {
  PyObject* i = PyNumber_Index(o);
  long long v = i ? PyLong_AsLongLong(i) : -1;
  Py_XDECREF(i);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(ErrorKind::Value, "[", api, "] ", what, " is out of the int64 range");
  }
  return v;
}

// One int from an int or a one-element integer tensor; nullopt for other types.
std::optional<int64_t> one_int(nb::handle h, const char* api, const char* what) {
  if (is_int(h.ptr())) return as_int(h.ptr(), api, what);
  if (nb::isinstance<TensorImpl>(h)) {
    Tensor t = nb::cast<Tensor>(h);
    OAR_CHECK(t.numel() == 1, Type, "[", api, "] ", what, " must be a single int, got a Tensor of shape ",
              ops::shape_str(t.shape()));
    return tensor_ints(t, api, what)[0];
  }
  return std::nullopt;
}

// A list or tuple of ints (or one-element integer tensors).
Dims int_list(nb::handle h, const char* api, const char* what) {
  Dims out;
  for (nb::handle it : h) {
    auto v = one_int(it, api, what);
    OAR_CHECK(v.has_value(), Type, "[", api, "] ", what, " entries must be ints, got ", py_type_name(it));
    out.push_back(*v);
  }
  return out;
}

}  // namespace

Dims tensor_ints(const Tensor& t, const char* api, const char* what) {
  OAR_CHECK(is_integral(t.dtype()) && t.dtype() != DType::Bool, Type, "[", api, "] ", what,
            " must hold integers, got a ", dtype_name(t.dtype()), " tensor");
  NoGradGuard ng;
  Tensor c = t.device().type == DeviceType::CPU ? t : ops::to_device(t, Device{});
  c = ops::contiguous(ops::cast(c, DType::Int64));
  const int64_t* p = c.data<int64_t>();
  return Dims(p, p + c.numel());
}

Dims arg_axes(nb::handle h, const char* api, const char* what) {
  if (h.is_none()) return {};
  if (nb::isinstance<TensorImpl>(h)) return tensor_ints(nb::cast<Tensor>(h), api, what);
  if (is_int(h.ptr())) return {as_int(h.ptr(), api, what)};
  OAR_CHECK(nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h), Type, "[", api, "] ", what,
            " must be None, an int, a list or a tuple of ints, got ", py_type_name(h));
  return int_list(h, api, what);
}

std::optional<int64_t> arg_opt_axis(nb::handle h, const char* api, const char* what) {
  if (h.is_none()) return std::nullopt;
  auto v = one_int(h, api, what);
  OAR_CHECK(v.has_value(), Type, "[", api, "] ", what, " must be None or an int, got ", py_type_name(h));
  return v;
}

int64_t arg_axis(nb::handle h, const char* api, const char* what) {
  auto v = one_int(h, api, what);
  OAR_CHECK(v.has_value(), Type, "[", api, "] ", what, " must be an int, got ", py_type_name(h));
  return *v;
}

Dims arg_shape(nb::handle h, const char* api, const char* what) {
  if (nb::isinstance<TensorImpl>(h)) return tensor_ints(nb::cast<Tensor>(h), api, what);
  OAR_CHECK(nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h), Type, "[", api, "] ", what,
            " must be a list or a tuple of ints, or an integer Tensor, got ", py_type_name(h));
  return int_list(h, api, what);
}

}  // namespace oar::bind

#pragma once
#include "common.h"

namespace oar::bind {

// A dtype given as oar.float32, 'float32', a NumPy dtype or a Python type.
inline DType to_dtype(nb::handle h, const char* api) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  if (nb::isinstance<nb::str>(h)) return dtype_from_name(nb::cast<std::string>(h), api);
  if (h.is(reinterpret_cast<PyObject*>(&PyFloat_Type))) return default_float_dtype();
  if (h.is(reinterpret_cast<PyObject*>(&PyLong_Type))) return DType::Int64;
  if (h.is(reinterpret_cast<PyObject*>(&PyBool_Type))) return DType::Bool;
  if (h.is(reinterpret_cast<PyObject*>(&PyComplex_Type))) return to_complex(default_float_dtype());
  if (nb::hasattr(h, "dtype") && !nb::hasattr(h, "shape")) h = h.attr("dtype");  // NumPy scalar types
  if (nb::hasattr(h, "name") && nb::hasattr(h, "itemsize"))
    return dtype_from_name(nb::cast<std::string>(h.attr("name")), api);
  if (nb::hasattr(h, "__name__")) return dtype_from_name(nb::cast<std::string>(h.attr("__name__")), api);
  fail(ErrorKind::Type, "[", api, "] dtype must be a dtype or its name, got a ",
       nb::cast<std::string>(nb::str(h.type().attr("__name__"))));
}

inline std::optional<DType> opt_dtype(nb::handle h, const char* api) {
  if (!h.is_valid() || h.is_none()) return std::nullopt;
  return to_dtype(h, api);
}

}  // namespace oar::bind

// Shared by the binding files: type casters for Tensor, Dims and Scalar, and
// the registry through which each file adds its functions to the module.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ops/ops.h"

namespace nb = nanobind;

namespace nanobind::detail {

template <> struct type_caster<oar::Tensor> {
  using Base = type_caster_base<oar::TensorImpl>;
  NB_TYPE_CASTER(oar::Tensor, const_name("Tensor"))

  bool from_python(handle src, uint32_t flags, cleanup_list* cl) noexcept {
    Base b;
    if (src.is_none() || !b.from_python(src, flags, cl)) return false;
    value = oar::Tensor(static_cast<oar::TensorImpl*>(b));
    return true;
  }
  static handle from_cpp(const oar::Tensor& t, rv_policy, cleanup_list* cl) noexcept {
    if (!t.defined()) return none().release();
    if (void* o = t.impl()->self_py()) return handle(static_cast<PyObject*>(o)).inc_ref();
    return Base::from_cpp(t.impl(), rv_policy::take_ownership, cl);
  }
};

// Dims from a list/tuple of ints (or one int).
template <> struct type_caster<oar::Dims> {
  NB_TYPE_CASTER(oar::Dims, const_name("Sequence[int]"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    value.clear();
    PyObject* o = src.ptr();
    if (PyLong_Check(o) && !PyBool_Check(o)) {
      long long v = PyLong_AsLongLong(o);
      if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return false; }
      value.push_back(v);
      return true;
    }
    if (!PyList_Check(o) && !PyTuple_Check(o)) return false;
    // A snapshot: an item's __index__ may run Python code that changes the list.
    object seq = steal(PySequence_Tuple(o));
    if (!seq.is_valid()) { PyErr_Clear(); return false; }
    Py_ssize_t n = PyTuple_GET_SIZE(seq.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* it = PyTuple_GET_ITEM(seq.ptr(), i);
      if (PyBool_Check(it)) return false;
      PyObject* idx = PyNumber_Index(it);
      if (!idx) { PyErr_Clear(); return false; }
      long long v = PyLong_AsLongLong(idx);
      Py_DECREF(idx);
      if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return false; }
      value.push_back(v);
    }
    return true;
  }
  static handle from_cpp(const oar::Dims& d, rv_policy, cleanup_list*) noexcept {
    PyObject* l = PyList_New(Py_ssize_t(d.size()));
    for (size_t i = 0; i < d.size(); ++i) PyList_SET_ITEM(l, Py_ssize_t(i), PyLong_FromLongLong(d[i]));
    return l;
  }
};

// A Python number (bool, int, float, complex, or a NumPy scalar of those).
template <> struct type_caster<oar::Scalar> {
  NB_TYPE_CASTER(oar::Scalar, const_name("complex | float | int | bool"))
  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (PyBool_Check(o)) { value = oar::Scalar(o == Py_True); return true; }
    if (PyLong_Check(o)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow) { value = oar::Scalar(PyLong_AsDouble(o)); PyErr_Clear(); return true; }
      value = oar::Scalar(int64_t(v));
      return true;
    }
    if (PyFloat_Check(o)) { value = oar::Scalar(PyFloat_AS_DOUBLE(o)); return true; }
    if (PyComplex_Check(o)) {
      value = oar::Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
      return true;
    }
    if (PyIndex_Check(o)) {
      PyObject* i = PyNumber_Index(o);
      if (!i) { PyErr_Clear(); return false; }
      long long v = PyLong_AsLongLong(i);
      Py_DECREF(i);
      if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return false; }
      value = oar::Scalar(int64_t(v));
      return true;
    }
    if (PyObject_HasAttrString(o, "__float__") && !PyObject_HasAttrString(o, "__len__")) {
      if (PyObject_HasAttrString(o, "imag")) {
        PyObject* im = PyObject_GetAttrString(o, "imag");
        double iv = im ? PyFloat_AsDouble(im) : 0;
        Py_XDECREF(im);
        double rv = PyFloat_AsDouble(o);
        if (PyErr_Occurred()) { PyErr_Clear(); return false; }
        if (iv != 0) { value = oar::Scalar(std::complex<double>(rv, iv)); return true; }
        value = oar::Scalar(rv);
        return true;
      }
      double v = PyFloat_AsDouble(o);
      if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return false; }
      value = oar::Scalar(v);
      return true;
    }
    return false;
  }
  static handle from_cpp(const oar::Scalar& s, rv_policy, cleanup_list*) noexcept {
    switch (s.kind) {
      case oar::Scalar::Kind::Bool: return PyBool_FromLong(long(s.i));
      case oar::Scalar::Kind::Int: return PyLong_FromLongLong(s.i);
      case oar::Scalar::Kind::Float: return PyFloat_FromDouble(s.d);
      default: return PyComplex_FromDoubles(s.c.real(), s.c.imag());
    }
  }
};

}  // namespace nanobind::detail

namespace oar::bind {

// The extension's submodule `name` (made on first use), where the functions of
// a public module other than oar itself are bound (_nn_functional).
inline nb::module_ submodule(nb::module_& m, const char* name) {
  if (nb::hasattr(m, name)) return nb::borrow<nb::module_>(m.attr(name));
  return m.def_submodule(name);
}

using BindFn = void (*)(nb::module_&);
// (order, binder): lower orders run first (the Tensor class before its methods).
std::vector<std::pair<int, BindFn>>& binders();
struct Binder {
  explicit Binder(BindFn f, int order = 10) { binders().emplace_back(order, f); }
};

}  // namespace oar::bind

// Argument normalisation shared by the declared functions' bindings (args.h).
#include "args.h"

#include <nanobind/ndarray.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "autograd/autograd.h"
#include "ir/tracer.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::bind {

Tensor wrap_ndarray(const nb::ndarray<nb::ro>& a, const char* api);  // tensor.cpp

std::string py_type_name(nb::handle h) { return nb::cast<std::string>(nb::str(h.type().attr("__name__"))); }

bool is_int(nb::handle h) {
  return !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()) && !nb::isinstance<TensorImpl>(h);
}

nb::object arg_number(nb::handle h, const char* api, const char* what) {
  if (!nb::isinstance<TensorImpl>(h)) return nb::borrow(h);
  const Tensor t = nb::cast<Tensor>(h);
  OAR_CHECK(t.numel() == 1, Value, "[", api, "] ", what,
            " must be a number or a one-element Tensor, got a Tensor of shape ", ops::shape_str(t.shape()));
  return h.attr("item")();
}

Scalar arg_scalar(nb::handle h, const char* api, const char* what) {
  nb::object v = arg_number(h, api, what);
  Scalar s;
  OAR_CHECK(nb::try_cast<Scalar>(v, s), Type, "[", api, "] ", what,
            " must be a number or a one-element Tensor, got ", py_type_name(h));
  return s;
}

double arg_real(nb::handle h, const char* api, const char* what) {
  nb::object v = arg_number(h, api, what);
  OAR_CHECK(PyNumber_Check(v.ptr()) && !PyComplex_Check(v.ptr()) && !nb::isinstance<nb::str>(v), Type, "[", api,
            "] ", what, " must be a real number, got ", py_type_name(v));
  double d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(ErrorKind::Type, "[", api, "] ", what, " must be a real number, got ", py_type_name(v));
  }
  return d;
}

std::optional<double> arg_opt_real(nb::handle h, const char* api, const char* what) {
  if (h.is_none()) return std::nullopt;
  return arg_real(h, api, what);
}

int64_t arg_count(nb::handle h, const char* api, const char* what) {
  nb::object v = arg_number(h, api, what);
  if (PyFloat_Check(v.ptr())) {
    const double d = PyFloat_AS_DOUBLE(v.ptr());
    OAR_CHECK(std::isfinite(d) && std::trunc(d) == d && d >= -0x1p63 && d < 0x1p63, Type, "[", api, "] ", what,
              " must be an int, got ", py_type_name(v), " ", d);
    return static_cast<int64_t>(d);
  }
  OAR_CHECK(is_int(v), Type, "[", api, "] ", what, " must be an int, got ", py_type_name(v));
  return arg_axis(v, api, what);
}

namespace {

int64_t as_int(PyObject* o, const char* api, const char* what) {
  nb::object i = nb::steal(PyNumber_Index(o));
  if (!i.is_valid()) {
    // Not an integer (a NumPy array of several values, ...); other errors
    // (KeyboardInterrupt, one raised by __index__ itself) propagate.
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw nb::python_error();
    PyErr_Clear();
    fail(ErrorKind::Type, "[", api, "] ", what, " must be an int, got ", py_type_name(o));
  }
  long long v = PyLong_AsLongLong(i.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    fail(ErrorKind::Value, "[", api, "] ", what, " is out of the int64 range");
  }
  return v;
}

// One int from an int or a one-element integer tensor; nullopt for other types.
std::optional<int64_t> one_int(nb::handle h, const char* api, const char* what) {
  if (is_int(h)) return as_int(h.ptr(), api, what);
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

// ---- nested lists of numbers -> tensors

enum class Leaf { Bool, Int, Float, Complex };

struct Flat {
  Dims shape;
  Leaf kind = Leaf::Bool;
  bool any = false;
  std::vector<std::complex<double>> c;
  std::vector<double> d;
  std::vector<int64_t> i;
};

// Reads one number; false if `o` is not one.
bool read_leaf(PyObject* o, Flat& f, bool index_only) {
  Leaf k;
  int64_t iv = 0;
  double dv = 0;
  std::complex<double> cv;
  if (PyBool_Check(o) || (is_numpy(o) && std::strncmp(type_name(o), "numpy.bool", 10) == 0)) {
    int b = PyObject_IsTrue(o);
    if (b < 0) throw nb::python_error();
    k = Leaf::Bool, iv = b;
  } else if (PyLong_Check(o)) {
    bool of = false;
    iv = clamped(o, &of);
    if (of && index_only) return false;
    if (of) k = Leaf::Float, dv = PyLong_AsDouble(o);
    else k = Leaf::Int;
  } else if (TensorImpl* t = as_tensor(o); t && t->numel == 1 && is_integer_dtype(t->dtype)) {
    k = Leaf::Int, iv = int_value(Tensor(t));
  } else if (!as_tensor(o) && PyIndex_Check(o)) {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) { PyErr_Clear(); return false; }
    k = Leaf::Int, iv = clamped(i.ptr());
  } else if (index_only) {
    return false;
  } else if (PyComplex_Check(o) || (is_numpy(o) && std::strstr(type_name(o), "complex"))) {
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return false; }
    k = Leaf::Complex, cv = {c.real, c.imag};
  } else {
    dv = PyFloat_AsDouble(o);  // floats and anything with __float__
    if (dv == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return false; }
    k = Leaf::Float;
  }
  if (!f.any) {
    f.kind = k, f.any = true;
  } else if (k > f.kind) {  // widen what was read so far
    if (k >= Leaf::Float && f.kind < Leaf::Float) {
      for (int64_t v : f.i) f.d.push_back(double(v));
      f.i.clear();
    }
    if (k == Leaf::Complex) {
      for (double v : f.d) f.c.emplace_back(v);
      f.d.clear();
    }
    f.kind = k;
  }
  switch (f.kind) {
    case Leaf::Bool:
    case Leaf::Int: f.i.push_back(iv); break;
    case Leaf::Float: f.d.push_back(k == Leaf::Float ? dv : double(iv)); break;
    case Leaf::Complex:
      f.c.push_back(k == Leaf::Complex ? cv : std::complex<double>(k == Leaf::Float ? dv : double(iv)));
      break;
  }
  return true;
}

bool fill_flat(PyObject* o, size_t depth, Flat& f, bool index_only) {
  if (depth == f.shape.size()) return !is_seq(o) && read_leaf(o, f, index_only);
  if (!is_seq(o) || PySequence_Fast_GET_SIZE(o) != f.shape[depth]) return false;
  // A snapshot of this level: reading a leaf may run Python code (__float__,
  // __index__) that changes the lists.
  nb::object items = nb::steal(PySequence_Tuple(o));
  if (!items.is_valid()) throw nb::python_error();
  for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(items.ptr()); ++j)
    if (!fill_flat(PyTuple_GET_ITEM(items.ptr(), j), depth + 1, f, index_only)) return false;
  return true;
}

template <typename T, typename S> Tensor host_tensor(const Dims& shape, DType dt, const std::vector<S>& v) {
  Tensor t = empty_tensor(shape, dt);
  OAR_CHECK(int64_t(v.size()) == t.numel(), Value, "[oar] a list changed while it was read");
  T* p = t.data<T>();
  for (size_t j = 0; j < v.size(); ++j) p[j] = T(v[j]);
  return t;
}

}  // namespace

void refuse_traced(const Tensor& t, const char* api, const char* what) {
  // A value of the program being captured holds the traced example's number
  // now and other numbers when the program runs: reading it here would fix
  // the example's in the program.
  OAR_CHECK(!ir::traced_type(t), Type, "[", api, "] ", what,
            " is a Tensor computed in the program being captured (such as len(x) or the size of a dynamic dim, "
            "or a value read from data), used where Python ints are needed; its value would stay fixed at the "
            "traced example's for every call. Use -1 in reshape (or oar.flatten), oar.zeros_like / oar.full_like "
            "for a shape that follows another tensor, tensor indexing instead of slice bounds, or "
            "oar.jit.to_static(..., full_graph=False)");
}

Dims tensor_ints(const Tensor& t, const char* api, const char* what) {
  refuse_traced(t, api, what);
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
  if (is_int(h)) return {as_int(h.ptr(), api, what)};
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

Tensor arg_index(nb::handle h, const char* api, const char* what) {
  PyObject* o = h.ptr();
  if (TensorImpl* p = as_tensor(o)) {
    OAR_CHECK(p->dtype == DType::Int32 || p->dtype == DType::Int64, Type, "[", api, "] ", what,
              " must be an int32 or int64 tensor, got ", dtype_name(p->dtype));
    return Tensor(p);
  }
  const bool wrapped = is_numpy(o);  // shares the array's memory
  Tensor t = wrapped ? numpy_tensor(o, api) : list_tensor(o, false);
  OAR_CHECK(t.defined(), Type, "[", api, "] ", what,
            " must be an int32 or int64 tensor, or an int, a list or a NumPy array of ints, got ", type_name(o));
  const DType dt = t.dtype();
  OAR_CHECK(is_integer_dtype(dt) || (t.numel() == 0 && dt == DType::Float64), Type, "[", api, "] ", what,
            " must be an int32 or int64 tensor, got ", dtype_name(dt));
  return placed(wrapped && dt == DType::Int64 ? ops::clone(t) : ops::cast(t, DType::Int64));
}

Tensor arg_values(nb::handle h, const char* api, const char* what) {
  PyObject* o = h.ptr();
  if (TensorImpl* p = as_tensor(o)) return Tensor(p);
  const bool wrapped = is_numpy(o);
  Tensor t = wrapped ? numpy_tensor(o, api) : list_tensor(o, false);
  OAR_CHECK(t.defined(), Type, "[", api, "] ", what,
            " must be a Tensor, a number, or a list or NumPy array of numbers, got ", type_name(o));
  return placed(wrapped ? ops::clone(t) : t);
}

Tensor placed(const Tensor& t) {
  const Device d = default_device();
  return t.defined() && t.device() != d ? ops::to_device(t, d) : t;
}

// ---- Python objects as tensors

const char* type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

bool is_numpy(PyObject* o) { return std::strncmp(type_name(o), "numpy.", 6) == 0; }

bool is_integer_dtype(DType t) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

TensorImpl* as_tensor(PyObject* o) {
  nb::handle h(o);
  return nb::isinstance<TensorImpl>(h) ? nb::inst_ptr<TensorImpl>(h) : nullptr;
}

int64_t int_value(Tensor t) {
  refuse_traced(t, "oar.jit.to_static", "a Tensor");
  if (t.device().type != DeviceType::CPU) t = ops::to_device(t, Device{});
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case DType::UInt8: return *static_cast<const uint8_t*>(p);
    case DType::Int8: return *static_cast<const int8_t*>(p);
    case DType::Int16: return *static_cast<const int16_t*>(p);
    case DType::Int32: return *static_cast<const int32_t*>(p);
    default: return *static_cast<const int64_t*>(p);
  }
}

int64_t clamped(PyObject* o, bool* overflowed) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflowed) *overflowed = overflow != 0;
  if (overflow) return overflow > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

bool is_seq(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

Tensor list_tensor(PyObject* o, bool index_only) {
  constexpr size_t kMaxDims = 64;  // NumPy's limit; also stops a list that contains itself
  Flat f;
  for (PyObject* p = o; is_seq(p); p = PySequence_Fast_ITEMS(p)[0]) {
    if (f.shape.size() == kMaxDims) return Tensor();
    f.shape.push_back(PySequence_Fast_GET_SIZE(p));
    if (PySequence_Fast_GET_SIZE(p) == 0) break;
  }
  if (!fill_flat(o, 0, f, index_only)) return Tensor();
  if (!f.any) return host_tensor<int64_t>(f.shape, index_only ? DType::Int64 : DType::Float64, f.i);
  switch (f.kind) {
    case Leaf::Bool: return host_tensor<bool>(f.shape, DType::Bool, f.i);
    case Leaf::Int: return host_tensor<int64_t>(f.shape, DType::Int64, f.i);
    case Leaf::Float: return host_tensor<double>(f.shape, DType::Float64, f.d);
    default: return host_tensor<std::complex<double>>(f.shape, DType::Complex128, f.c);
  }
}

Tensor numpy_tensor(PyObject* o, const char* api) {
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(nb::handle(o), a)) {
    // Non-native byte order has no DLPack view: read a native-order copy.
    nb::handle h(o);
    if (!nb::hasattr(h, "dtype") || !nb::hasattr(h, "astype")) return Tensor();
    nb::object native = h.attr("astype")(h.attr("dtype").attr("newbyteorder")("="));
    if (!nb::try_cast(native, a)) return Tensor();
    return numpy_tensor(native.ptr(), api);
  }
  if (a.dtype().code == uint8_t(nb::dlpack::dtype_code::UInt) && a.dtype().bits > 8) {
    // uint16/32/64 have no oar dtype: read as int64, as oar.to_tensor does
    // (values beyond int64 would wrap to negative ones: refused).
    if (a.dtype().bits == 64 && a.size() > 0) {
      nb::object big = nb::handle(o).attr("max")();
      OAR_CHECK(nb::cast<uint64_t>(big) <= uint64_t(std::numeric_limits<int64_t>::max()), Index, "[", api,
                "] uint64 values beyond int64 cannot be indices or int64 values");
    }
    nb::object wide = nb::handle(o).attr("astype")("int64");
    if (!nb::try_cast(wide, a)) return Tensor();
  }
  return wrap_ndarray(a, api);
}

}  // namespace oar::bind

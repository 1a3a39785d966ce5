// Argument normalisation for the declared functions (Note [function
// declarations], tools/gen_ops.py): each Paddle argument form is turned into
// the C++ API's type here, once, with errors that name the API and the
// argument. The generated bindings (gen/bind/functions.inc) call these.
#pragma once
#include "common.h"
#include "dtype_arg.h"

namespace oar::bind {

// The Tensor class of the module, for binding methods.
inline nb::class_<TensorImpl> tensor_class(nb::module_& m) {
  return nb::borrow<nb::class_<TensorImpl>>(m.attr("Tensor"));
}

// The integers held by an integer tensor (any shape), read on the host.
Dims tensor_ints(const Tensor& t, const char* api, const char* what);
// TypeError "[api] what is a Tensor computed in the program being captured..."
// when t is a value of the active trace: its number is not known until the program runs.
void refuse_traced(const Tensor& t, const char* api, const char* what);

// None -> {} (every axis); an int; a list or tuple of ints or one-element
// integer tensors; an integer tensor (its values).
Dims arg_axes(nb::handle h, const char* api, const char* what);
// None -> nullopt; an int or a one-element integer tensor.
std::optional<int64_t> arg_opt_axis(nb::handle h, const char* api, const char* what);
// An int or a one-element integer tensor.
int64_t arg_axis(nb::handle h, const char* api, const char* what);
// A shape: a list or tuple of ints or one-element integer tensors, or an
// integer tensor of the dims.
Dims arg_shape(nb::handle h, const char* api, const char* what);
// An index: an int32 or int64 Tensor as is; an int, a (nested) list or a
// NumPy array of ints as an int64 tensor (an empty float list or array too).
Tensor arg_index(nb::handle h, const char* api, const char* what);
// Values: a Tensor as is; a number, a (nested) list or a NumPy array as a new
// tensor of NumPy's dtype for it (Python floats are float64).
Tensor arg_values(nb::handle h, const char* api, const char* what);

// ---- numbers

// The Python number h is, or the one a one-element Tensor holds (ValueError
// for a Tensor of more elements).
nb::object arg_number(nb::handle h, const char* api, const char* what);
// A number of any kind (bool, int, float, complex, NumPy scalar) or a
// one-element Tensor, as a Scalar.
Scalar arg_scalar(nb::handle h, const char* api, const char* what);
// A real number (not complex) or a one-element Tensor holding one.
double arg_real(nb::handle h, const char* api, const char* what);
std::optional<double> arg_opt_real(nb::handle h, const char* api, const char* what);
// A count: an int, a float with an integral value, or a one-element Tensor holding one.
int64_t arg_count(nb::handle h, const char* api, const char* what);

// ---- Python objects

// The name of h's type, for messages.
std::string py_type_name(nb::handle h);
// A Python int or an object with __index__ (NumPy integers), not a bool or a Tensor.
bool is_int(nb::handle h);

// ---- Python objects as tensors (also Tensor.__getitem__ and __setitem__)

const char* type_name(PyObject* o);
bool is_numpy(PyObject* o);
bool is_seq(PyObject* o);  // a list or a tuple
bool is_integer_dtype(DType t);
// The TensorImpl of a Tensor object, else nullptr.
TensorImpl* as_tensor(PyObject* o);
// The value of a one-element integer tensor (read on the host).
int64_t int_value(Tensor t);
// A Python int clamped to int64 (NumPy and Python clamp slice bounds alike).
int64_t clamped(PyObject* o, bool* overflowed = nullptr);
// A number or a (nested) list or tuple of numbers as a host tensor: bool,
// int64, float64 or complex128 as NumPy would make it; index_only accepts
// only ints and bools. Undefined when `o` is not a number or a rectangular
// nest of them.
Tensor list_tensor(PyObject* o, bool index_only);
// t on the device that tensors made now go to (oar.set_device's, or the
// device scope of the call: Note [device scope]); t itself when it is there.
Tensor placed(const Tensor& t);
// A NumPy array or scalar, wrapped without a copy (undefined if it has no
// DLPack/buffer view); uint16/32/64 are read as int64.
Tensor numpy_tensor(PyObject* o, const char* api);

}  // namespace oar::bind

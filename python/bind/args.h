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

}  // namespace oar::bind

// Tensor creation (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/creation.toml into gen/bind/functions_creation.inc;
// the glue here normalises the argument forms that the declared types do not
// cover (a bare int as a shape, numbers given as one-element Tensors).
#include "args.h"

namespace oar::bind {

// A shape as Paddle takes it (a list or tuple of ints or one-element integer
// Tensors, or an integer Tensor of the dims) or a single int; every dim
// non-negative. Also read by the random functions (python/bind/random.cpp).
Dims creation_shape(nb::handle h, const char* api) {
  const bool tensor = nb::isinstance<TensorImpl>(h);
  // An int or a NumPy integer; not a NumPy array, which also converts to an index.
  const bool one = !tensor && !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr());
  OAR_CHECK(one || tensor || nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h), Type, "[", api,
            "] shape must be an int, a list or a tuple of ints, or an integer Tensor, got ", py_type_name(h));
  Dims shape = one ? Dims{arg_axis(h, api, "shape")} : arg_shape(h, api, "shape");
  checked_numel(shape, api);
  return shape;
}

namespace {

// full: with no dtype the fill value gives it (bool, int64, the default float
// dtype, or its complex counterpart).
Tensor full_of(nb::handle shape, nb::handle fill_value, std::optional<DType> dtype, const char* api) {
  const Scalar v = arg_scalar(fill_value, api, "fill_value");
  return ops::full(creation_shape(shape, api), v, dtype.value_or(v.natural_dtype()));
}

// arange: with end None, start is the end and 0 the start (Paddle's rule).
Tensor arange_of(nb::handle start, nb::handle end, nb::handle step, std::optional<DType> dtype, const char* api) {
  const Scalar s = arg_scalar(start, api, "start"), st = arg_scalar(step, api, "step");
  if (end.is_none()) return ops::arange(Scalar(int64_t(0)), s, st, dtype);
  return ops::arange(s, arg_scalar(end, api, "end"), st, dtype);
}

// linspace: start and stop are real numbers, num a count (numbers or one-element Tensors).
Tensor linspace_of(nb::handle start, nb::handle stop, nb::handle num, std::optional<DType> dtype, const char* api) {
  const double a = arg_real(start, api, "start"), b = arg_real(stop, api, "stop");
  const int64_t count = arg_count(num, api, "num");
  return ops::linspace(a, b, count, dtype.value_or(default_float_dtype()));
}

#include "gen/bind/functions_creation.inc"

void bind_creation(nb::module_& m) {
  bind_creation_functions(m, tensor_class(m));
}

Binder b(bind_creation);

}  // namespace
}  // namespace oar::bind

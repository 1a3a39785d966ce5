// Random creation ops and the global generator state (ops/random.h). The
// Paddle-facing functions (rand, randn, uniform, randint, ...) are generated
// from src/ops/random.toml into gen/bind/functions_random.inc (Note [function
// declarations], tools/gen_ops.py); the glue here holds their dtype defaults
// and the reading of integer bounds and seeds. gaussian (with mean and std)
// serves the Python samplers built on it.
#include <nanobind/stl/pair.h>

#include "args.h"
#include "ops/random.h"

namespace oar::bind {

// python/bind/creation.cpp: a shape given as an int, a list or tuple, or an integer Tensor.
Dims creation_shape(nb::handle h, const char* api);

namespace {

using nb::arg;

// A floating-point dtype; none means the default float dtype.
DType float_dtype(std::optional<DType> dtype, const char* api) {
  const DType dt = dtype.value_or(default_float_dtype());
  OAR_CHECK(is_floating(dt), Type, "[", api, "] dtype must be a floating-point dtype, got paddle.", dtype_name(dt));
  return dt;
}

// An integer as Python's int() reads it (a number, a NumPy scalar or a
// one-element Tensor; floats are truncated), within int64.
int64_t int_of(nb::handle h, const char* api, const char* what) {
  nb::object v = arg_number(h, api, what);
  OAR_CHECK(!nb::isinstance<nb::str>(v) && PyNumber_Check(v.ptr()) && !PyComplex_Check(v.ptr()), Type, "[", api,
            "] ", what, " must be an int, got ", py_type_name(h));
  nb::object i = nb::steal(PyNumber_Long(v.ptr()));
  if (!i.is_valid()) throw nb::python_error();  // int(nan), int(inf): Python's own error
  int overflow = 0;
  const long long r = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  OAR_CHECK(!overflow, Value, "[", api, "] ", what, " must fit int64, got ", nb::cast<std::string>(nb::str(i)));
  return r;
}

// A truth value as Python's bool() reads it.
bool truth(nb::handle h) {
  const int r = PyObject_IsTrue(h.ptr());
  if (r < 0) throw nb::python_error();
  return r == 1;
}

// A seed: an int (or what int() reads), kept modulo 2**64; 0 means the global generator.
uint64_t seed_of(nb::handle h, const char* api) {
  nb::object v = arg_number(h, api, "seed");
  OAR_CHECK(!nb::isinstance<nb::str>(v) && PyNumber_Check(v.ptr()) && !PyComplex_Check(v.ptr()), Type, "[", api,
            "] seed must be an int, got ", py_type_name(h));
  nb::object i = nb::steal(PyNumber_Long(v.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  const unsigned long long r = PyLong_AsUnsignedLongLongMask(i.ptr());
  if (r == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw nb::python_error();
  return r;
}

// uniform: min <= max, read as real numbers.
Tensor uniform_of(nb::handle shape, std::optional<DType> dtype, nb::handle min, nb::handle max, nb::handle seed,
                  const char* api) {
  const Dims s = creation_shape(shape, api);
  const DType dt = float_dtype(dtype, api);
  const double lo = arg_real(min, api, "min"), hi = arg_real(max, api, "max");
  OAR_CHECK(!(lo > hi), Value, "[", api, "] min must be <= max, got min=", nb::cast<std::string>(nb::str(min)),
            " max=", nb::cast<std::string>(nb::str(max)));
  return ops::uniform(s, dt, lo, hi, seed_of(seed, api));
}

// randint: with high None, low is the end and 0 the start (Paddle's rule);
// low < high; the dtype is int32 or int64 (the default).
Tensor randint_of(nb::handle low, nb::handle high, const Dims& shape, std::optional<DType> dtype, const char* api) {
  int64_t lo = 0, hi = 0;
  if (high.is_none()) {
    hi = int_of(low, api, "low");
  } else {
    lo = int_of(low, api, "low");
    hi = int_of(high, api, "high");
  }
  OAR_CHECK(lo < hi, Value, "[", api, "] low must be less than high, got low=", lo, " high=", hi);
  const DType dt = dtype.value_or(DType::Int64);
  OAR_CHECK(dt == DType::Int32 || dt == DType::Int64, Type, "[", api, "] dtype must be int32 or int64, got paddle.",
            dtype_name(dt));
  return ops::randint(lo, hi, shape, dt);
}

Tensor randint_of(nb::handle low, nb::handle high, nb::handle shape, std::optional<DType> dtype, const char* api) {
  return randint_of(low, high, creation_shape(shape, api), dtype, api);
}

#include "gen/bind/functions_random.inc"

void bind_random(nb::module_& m) {
  m.def("seed", [](uint64_t s) { manual_seed(s); }, arg("seed"));
  m.def("get_rng_state", []() { return rng_state(); });
  m.def("set_rng_state", [](uint64_t s, uint64_t off) { set_rng_state(s, off); }, arg("seed"), arg("offset"));
  m.def("gaussian", [](const Dims& shape, nb::handle dtype, double mean, double sd, uint64_t seed) {
    return ops::gaussian(shape, to_dtype(dtype, "oar.normal"), mean, sd, seed);
  }, arg("shape"), arg("dtype"), arg("mean") = 0.0, arg("std") = 1.0, arg("seed") = 0);
  bind_random_functions(m, tensor_class(m));
}

Binder b(bind_random);

}  // namespace
}  // namespace oar::bind

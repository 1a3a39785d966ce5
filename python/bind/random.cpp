// Random creation ops and the global generator state (ops/random.h).
#include <nanobind/stl/pair.h>

#include "common.h"
#include "dtype_arg.h"
#include "ops/random.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_random(nb::module_& m) {
  m.def("seed", [](uint64_t s) { manual_seed(s); }, arg("seed"));
  m.def("get_rng_state", []() { return rng_state(); });
  m.def("set_rng_state", [](uint64_t s, uint64_t off) { set_rng_state(s, off); }, arg("seed"), arg("offset"));
  m.def("uniform", [](const Dims& shape, nb::handle dtype, double lo, double hi, uint64_t seed) {
    return ops::uniform(shape, to_dtype(dtype, "oar.uniform"), lo, hi, seed);
  }, arg("shape"), arg("dtype"), arg("min") = 0.0, arg("max") = 1.0, arg("seed") = 0);
  m.def("gaussian", [](const Dims& shape, nb::handle dtype, double mean, double sd, uint64_t seed) {
    return ops::gaussian(shape, to_dtype(dtype, "oar.normal"), mean, sd, seed);
  }, arg("shape"), arg("dtype"), arg("mean") = 0.0, arg("std") = 1.0, arg("seed") = 0);
  m.def("randint", [](int64_t low, int64_t high, const Dims& shape, nb::handle dtype) {
    return ops::randint(low, high, shape, to_dtype(dtype, "oar.randint"));
  }, arg("low"), arg("high"), arg("shape"), arg("dtype"));
  m.def("bernoulli", [](const Tensor& x) { return ops::bernoulli(x); }, arg("x"));
  m.def("multinomial", [](const Tensor& x, int64_t n, bool repl) { return ops::multinomial(x, n, repl); },
        arg("x"), arg("num_samples") = 1, arg("replacement") = false);
  m.def("randperm", [](int64_t n, nb::handle dtype) { return ops::randperm(n, to_dtype(dtype, "oar.randperm")); },
        arg("n"), arg("dtype"));
}

Binder b(bind_random);

}  // namespace
}  // namespace oar::bind

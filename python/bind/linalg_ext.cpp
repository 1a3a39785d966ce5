// The C++ API of einsum (ops/linalg_ext.h), for its wrapper in
// python/oar/_linalg_ext.py, whose variadic operands a declaration cannot
// express. The other linear-algebra extras are declared in src/ops/linalg.toml.
#include "common.h"
#include "ops/linalg_ext.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_linalg_ext(nb::module_& m) {
  m.def("_einsum", &ops::einsum, arg("equation"), arg("operands"));
}

Binder b(bind_linalg_ext);

}  // namespace
}  // namespace oar::bind

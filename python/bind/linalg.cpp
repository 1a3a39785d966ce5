// Linear algebra (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/linalg.toml into gen/bind/functions_linalg.inc;
// the glue here turns the number arguments (Python numbers, NumPy scalars or
// one-element Tensors) into the C++ API's.
#include "args.h"
#include "ops/linalg_ext.h"

namespace oar::bind {
namespace {

using nb::arg;

// lerp's weight: a Tensor, or a number taken as a 0-D tensor of x's dtype.
Tensor weight_of(const Tensor& x, nb::handle w, const char* api) {
  if (nb::isinstance<TensorImpl>(w)) return nb::cast<Tensor>(w);
  Scalar s;
  OAR_CHECK(nb::try_cast<Scalar>(w, s), Type, "[", api, "] weight must be a Tensor or a number, got ",
            py_type_name(w));
  return ops::full({}, s, x.dtype());
}

#include "gen/bind/functions_linalg.inc"

void bind_linalg(nb::module_& m) {
  bind_linalg_functions(m, tensor_class(m));
}

Binder b(bind_linalg);

}  // namespace
}  // namespace oar::bind

// Shape and view functions (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/shape.toml into gen/bind/functions_shape.inc;
// the glue here serves the calls that need more than one C++ API call.
#include "args.h"

namespace oar::bind {
namespace {

using nb::arg;

// reshape: Paddle's 0 copies x's dim at that position; -1 infers one dim.
Tensor reshape_paddle(const Tensor& x, Dims shape, const char* api) {
  for (int64_t& d : shape) {
    OAR_CHECK(d >= -1, Value, "[", api, "] shape dims must be >= -1, got ", ops::shape_str(shape));
    if (d == 0) d = ops::kReshapeCopyDim;
  }
  return ops::reshape(x, shape);
}

#include "gen/bind/functions_shape.inc"

void bind_shape(nb::module_& m) {
  bind_shape_functions(m, tensor_class(m));
}

Binder b(bind_shape);

}  // namespace
}  // namespace oar::bind

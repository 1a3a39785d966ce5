// Linear algebra (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/linalg.toml into gen/bind/functions_linalg.inc;
// the glue here serves the calls that need more than one C++ API call.
#include "args.h"

namespace oar::bind {
namespace {

using nb::arg;

#include "gen/bind/functions_linalg.inc"

void bind_linalg(nb::module_& m) {
  bind_linalg_functions(m, tensor_class(m));
}

Binder b(bind_linalg);

}  // namespace
}  // namespace oar::bind

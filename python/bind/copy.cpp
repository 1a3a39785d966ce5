// Casts, copies and selections (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/copy.toml into gen/bind/functions_copy.inc;
// the glue here serves the calls that need more than one C++ API call.
#include "args.h"

namespace oar::bind {
namespace {

using nb::arg;

// where: x and y are Tensors or Python numbers; a number takes the dtype the
// other operand gives it (as in binary ops).
Tensor where_of(const Tensor& c, nb::handle x, nb::handle y, const char* api) {
  const bool xt = nb::isinstance<TensorImpl>(x), yt = nb::isinstance<TensorImpl>(y);
  Scalar xs, ys;
  OAR_CHECK((xt || nb::try_cast<Scalar>(x, xs)) && (yt || nb::try_cast<Scalar>(y, ys)) && (xt || yt), Type, "[", api,
            "] x and y must be Tensors or numbers, at least one a Tensor; got ", py_type_name(x), " and ",
            py_type_name(y));
  Tensor X = xt ? nb::cast<Tensor>(x) : Tensor(), Y = yt ? nb::cast<Tensor>(y) : Tensor();
  if (!xt) X = ops::scalar_tensor(xs, ops::result_type(Y, xs));
  if (!yt) Y = ops::scalar_tensor(ys, ops::result_type(X, ys));
  return ops::where(c, X, Y);
}

#include "gen/bind/functions_copy.inc"

void bind_copy(nb::module_& m) {
  bind_copy_functions(m, tensor_class(m));
}

Binder b(bind_copy);

}  // namespace
}  // namespace oar::bind

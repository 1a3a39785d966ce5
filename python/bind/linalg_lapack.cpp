// Bindings for ops/linalg_lapack.h. The Python wrappers with Paddle signatures
// and docstrings are in python/oar/linalg.py.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "common.h"
#include "ops/linalg_lapack.h"

namespace oar::bind {
namespace {

using nb::arg;
namespace la = ops::linalg;

void bind_linalg_lapack(nb::module_& m) {
  m.def("_linalg_svd", &la::svd, arg("x"), arg("full_matrices") = false);
  m.def("_linalg_svdvals", &la::svdvals, arg("x"));
  m.def("_linalg_eigh", &la::eigh, arg("x"), arg("UPLO") = "L");
  m.def("_linalg_eigvalsh", &la::eigvalsh, arg("x"), arg("UPLO") = "L");
  m.def("_linalg_qr", [](const Tensor& x, const std::string& mode) -> nb::object {
    auto [a, b] = la::qr(x, mode);
    if (!b.defined()) return nb::cast(a);
    return nb::make_tuple(a, b);
  }, arg("x"), arg("mode") = "reduced");
  m.def("_linalg_inv", &la::inv, arg("x"));
  m.def("_linalg_det", &la::det, arg("x"));
  m.def("_linalg_slogdet", &la::slogdet, arg("x"));
  m.def("_linalg_solve", &la::solve, arg("x"), arg("y"));
  m.def("_linalg_cholesky", &la::cholesky, arg("x"), arg("upper") = false);
  m.def("_linalg_eig", &la::eig, arg("x"));
  m.def("_linalg_lu", &la::lu, arg("x"));
  m.def("_linalg_triangular_solve", &la::triangular_solve, arg("x"), arg("y"), arg("upper") = true,
        arg("transpose") = false, arg("unitriangular") = false);
  m.def("_linalg_matrix_power", &la::matrix_power, arg("x"), arg("n"));
}

Binder b(bind_linalg_lapack);

}  // namespace
}  // namespace oar::bind

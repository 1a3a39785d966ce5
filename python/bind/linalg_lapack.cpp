// The LAPACK-backed functions of oar.linalg (Note [function declarations],
// tools/gen_ops.py): the bindings are generated from src/ops/linalg_lapack.toml
// into gen/bind/functions_linalg_lapack.inc; the glue here reads Paddle's
// argument forms and picks the results each call returns. The composites
// built on these functions are in python/oar/linalg.py.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "args.h"
#include "ops/linalg_lapack.h"

namespace oar::bind {
namespace {

namespace la = ops::linalg;

// A flag read as Python's bool() reads it (Paddle's wrappers take any truthy value).
bool truth(nb::handle h) {
  const int v = PyObject_IsTrue(h.ptr());
  if (v < 0) throw nb::python_error();
  return v == 1;
}

std::string py_repr(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

// A string argument that must be one of `choices`.
std::string choice(nb::handle h, std::initializer_list<const char*> choices, const char* api, const char* what,
                   const char* expected) {
  if (nb::isinstance<nb::str>(h)) {
    std::string s = nb::cast<std::string>(h);
    for (const char* c : choices)
      if (s == c) return s;
  }
  fail(ErrorKind::Value, "[", api, "] ", what, " must be ", expected, ", got ", py_repr(h));
}

// eigh's and eigvalsh's UPLO: the triangle read, 'L' or 'U'.
std::string uplo(nb::handle h, const char* api) { return choice(h, {"L", "U"}, api, "UPLO", "'L' or 'U'"); }

// x, checked to be a (batch of) matrices: at least 2 dims.
const Tensor& check_matrix(const Tensor& x, const char* api) {
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] x must have at least 2 dims [..., M, N], got shape ",
            ops::shape_str(x.shape()));
  return x;
}

// matrix_power's n: an int (not a bool).
int64_t exponent(nb::handle n, const char* api) {
  OAR_CHECK(is_int(n), Type, "[", api, "] n must be an int, got ", py_type_name(n));
  return arg_axis(n, api, "n");
}

// eigvalsh, whose errors name it: the checks of eigh, which it calls, are
// relabelled here "[oar.linalg.eigvalsh] linalg.eigh: ...", as the error
// boundary would (which cannot tell it from oar.eigvalsh, the same function).
Tensor eigvalsh_named(const Tensor& x, nb::handle UPLO, const char* api) {
  const std::string u = uplo(UPLO, api);
  try {
    return la::eigvalsh(x, u);
  } catch (const Error& e) {
    const std::string msg = e.what(), tag = "[oar.linalg.eigh] ";
    if (msg.rfind(tag, 0) != 0) throw;
    throw Error(e.kind(), str_cat("[", api, "] linalg.eigh: ", msg.substr(tag.size())));
  }
}

// qr: (Q, R), or only R for mode 'r'.
nb::object qr_result(const Tensor& x, nb::handle mode, const char* api) {
  const std::string m = choice(mode, {"reduced", "complete", "r"}, api, "mode", "'reduced', 'complete' or 'r'");
  auto [a, b] = la::qr(x, m);
  if (!b.defined()) return nb::cast(a);
  return nb::make_tuple(a, b);
}

// lu: (LU, pivots), or with get_infos (LU, pivots, infos).
nb::object lu_result(const Tensor& x, nb::handle pivot, nb::handle get_infos, const char* api) {
  check_matrix(x, api);
  if (!truth(pivot))
    fail(ErrorKind::Value, "[", api, "] LU without pivoting is not supported on the CPU, got pivot=", py_repr(pivot));
  auto [lu, piv, infos] = la::lu(x);
  if (truth(get_infos)) return nb::make_tuple(lu, piv, infos);
  return nb::make_tuple(lu, piv);
}

Tensor triangular_solve_checked(const Tensor& x, const Tensor& y, bool upper, bool transpose, bool unitriangular,
                                const char* api) {
  check_matrix(x, api);
  OAR_CHECK(y.dim() >= 2, Value, "[", api, "] y must have at least 2 dims [..., N, K], got shape ",
            ops::shape_str(y.shape()));
  return la::triangular_solve(x, y, upper, transpose, unitriangular);
}

#include "gen/bind/functions_linalg_lapack.inc"

void bind_linalg_lapack(nb::module_& m) { bind_linalg_lapack_functions(m, tensor_class(m)); }

Binder b(bind_linalg_lapack);

}  // namespace
}  // namespace oar::bind

// Indexing, gathering, scattering, sorting and searching (Note [function
// declarations], tools/gen_ops.py): the bindings are generated from
// src/ops/index.toml into gen/bind/functions_index.inc; the glue here serves
// the calls that need more than one C++ API call.
#include <nanobind/stl/tuple.h>

#include "args.h"
#include "ops/index.h"

namespace oar::bind {
namespace {

using nb::arg;

// put_along_axis_: writes into arr's own storage and returns arr.
Tensor put_along_axis_into(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                           const std::string& reduce, bool include_self, bool broadcast) {
  Tensor t = arr;
  ops::put_along_axis_(t, indices, values, axis, reduce, include_self, broadcast);
  return arr;
}

// nonzero: the [count, x.ndim] coordinates, or with as_tuple one [count, 1] column per dim.
nb::object nonzero_of(const Tensor& x, bool as_tuple) {
  Tensor out = ops::nonzero(x);
  if (!as_tuple) return nb::cast(out);
  const int64_t n = out.shape()[1];
  nb::list cols;
  for (int64_t i = 0; i < n; ++i) cols.append(ops::strided_slice(out, Dims{1}, Dims{i}, Dims{i + 1}, Dims{1}));
  return nb::tuple(cols);
}

// unique: the values, then the first indices, the inverse and the counts that were asked for.
nb::object unique_of(const Tensor& x, bool return_index, bool return_inverse, bool return_counts,
                     std::optional<int64_t> axis, DType dtype) {
  auto [out, index, inverse, counts] = ops::unique(x, axis.has_value(), axis.value_or(0), dtype);
  if (!return_index && !return_inverse && !return_counts) return nb::cast(out);
  nb::list res;
  res.append(out);
  if (return_index) res.append(index);
  if (return_inverse) res.append(inverse);
  if (return_counts) res.append(counts);
  return nb::tuple(res);
}

// searchsorted: values given as Python floats (a number or a list) are read in
// the default float dtype, as oar.to_tensor reads them.
Tensor searchsorted_of(const Tensor& sorted_sequence, nb::handle values, bool out_int32, bool right, const char* api) {
  Tensor v = arg_values(values, api, "values");
  if (!nb::isinstance<TensorImpl>(values) && !is_numpy(values.ptr()) && v.dtype() == DType::Float64)
    v = ops::cast(v, default_float_dtype());
  return ops::searchsorted(sorted_sequence, v, right, out_int32);
}

#include "gen/bind/functions_index.inc"

void bind_index(nb::module_& m) {
  bind_index_functions(m, tensor_class(m));
  // The ops without argument normalisation, for the functions of other modules that call them directly.
  m.def("_index_select", &ops::index_select, arg("x"), arg("index"), arg("axis"));
  m.def("_gather", &ops::gather, arg("x"), arg("index"), arg("axis"));
  m.def("_gather_nd", &ops::gather_nd, arg("x"), arg("index"));
  m.def("_scatter_nd_add", &ops::scatter_nd_add, arg("x"), arg("index"), arg("updates"));
  m.def("_take_along_axis", &ops::take_along_axis, arg("arr"), arg("indices"), arg("axis"), arg("broadcast"));
  m.def("_put_along_axis",
        nb::overload_cast<const Tensor&, const Tensor&, const Tensor&, int64_t, const std::string&, bool, bool>(
            &ops::put_along_axis),
        arg("arr"), arg("indices"), arg("values"), arg("axis"), arg("reduce"), arg("include_self"), arg("broadcast"));
  m.def("_sort", &ops::sort, arg("x"), arg("axis"), arg("descending"), arg("stable"));
  m.def("_argsort", &ops::argsort, arg("x"), arg("axis"), arg("descending"), arg("stable"));
  m.def("_searchsorted", &ops::searchsorted, arg("sorted_sequence"), arg("values"), arg("right"), arg("out_int32"));
}

Binder b(bind_index);

}  // namespace
}  // namespace oar::bind

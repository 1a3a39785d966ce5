// Indexing, gathering, scattering and sorting functions (the Paddle-signature
// wrappers with defaults live in python/oar/_index.py).
#include "common.h"
#include "dtype_arg.h"
#include "ops/index.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_index(nb::module_& m) {
  m.def("_index_select", &ops::index_select, arg("x"), arg("index"), arg("axis"));
  m.def("_index_add", &ops::index_add, arg("x"), arg("index"), arg("axis"), arg("value"));
  m.def("_gather", &ops::gather, arg("x"), arg("index"), arg("axis"));
  m.def("_gather_nd", &ops::gather_nd, arg("x"), arg("index"));
  m.def("_scatter", &ops::scatter, arg("x"), arg("index"), arg("updates"), arg("overwrite"));
  m.def("_scatter_nd_add", &ops::scatter_nd_add, arg("x"), arg("index"), arg("updates"));
  m.def("_scatter_nd_", [](const Tensor& x, const Tensor& index, const Tensor& updates) {
    Tensor t = x;
    ops::scatter_nd_(t, index, updates);
  }, arg("x"), arg("index"), arg("updates"));
  m.def("_take_along_axis", &ops::take_along_axis, arg("arr"), arg("indices"), arg("axis"), arg("broadcast"));
  m.def("_put_along_axis",
        nb::overload_cast<const Tensor&, const Tensor&, const Tensor&, int64_t, const std::string&, bool, bool>(
            &ops::put_along_axis),
        arg("arr"), arg("indices"), arg("values"), arg("axis"), arg("reduce"), arg("include_self"), arg("broadcast"));
  m.def("_put_along_axis_", [](const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                               const std::string& reduce, bool include_self, bool broadcast) {
    Tensor t = arr;
    ops::put_along_axis_(t, indices, values, axis, reduce, include_self, broadcast);
  }, arg("arr"), arg("indices"), arg("values"), arg("axis"), arg("reduce"), arg("include_self"), arg("broadcast"));
  m.def("_masked_fill", &ops::masked_fill, arg("x"), arg("mask"), arg("value"));
  m.def("_masked_select", &ops::masked_select, arg("x"), arg("mask"));
  m.def("_nonzero", &ops::nonzero, arg("x"));
  m.def("_sort", &ops::sort, arg("x"), arg("axis"), arg("descending"), arg("stable"));
  m.def("_argsort", &ops::argsort, arg("x"), arg("axis"), arg("descending"), arg("stable"));
  m.def("_topk", [](const Tensor& x, int64_t k, int64_t axis, bool largest, bool sorted) {
    auto [v, i] = ops::topk(x, k, axis, largest, sorted);
    return std::vector<Tensor>{v, i};
  }, arg("x"), arg("k"), arg("axis"), arg("largest"), arg("sorted"));
  m.def("_unique", [](const Tensor& x, std::optional<int64_t> axis, nb::handle dtype) {
    auto [o, i, inv, c] = ops::unique(x, axis.has_value(), axis.value_or(0), to_dtype(dtype, "oar.unique"));
    return std::vector<Tensor>{o, i, inv, c};
  }, arg("x"), arg("axis").none(), arg("dtype"));
  m.def("_searchsorted", &ops::searchsorted, arg("sorted_sequence"), arg("values"), arg("right"), arg("out_int32"));
}

Binder b(bind_index);

}  // namespace
}  // namespace oar::bind

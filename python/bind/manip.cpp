// Shape-manipulation functions (ops/manip.h). The Paddle signatures, Tensor
// arguments for counts and the docstrings live in python/oar/_manip.py.
#include "common.h"
#include "ops/manip.h"

namespace oar::bind {
namespace {

using nb::arg;

std::vector<Tensor> to_vec(const Tensors& t) { return std::vector<Tensor>(t.begin(), t.end()); }

void bind_manip(nb::module_& m) {
  m.def("_concat", [](std::vector<Tensor> xs, int64_t axis) { return ops::concat(xs, axis); }, arg("x"), arg("axis"));
  m.def("_stack", [](std::vector<Tensor> xs, int64_t axis) { return ops::stack(xs, axis); }, arg("x"), arg("axis"));
  m.def("_split", [](const Tensor& x, const Dims& sections, int64_t axis) {
    return to_vec(ops::split(x, sections, axis));
  });
  m.def("_split_equal", [](const Tensor& x, int64_t num, int64_t axis) {
    return to_vec(ops::split_equal(x, num, axis));
  });
  m.def("_chunk", [](const Tensor& x, int64_t chunks, int64_t axis) { return to_vec(ops::chunk(x, chunks, axis)); });
  m.def("_unbind", [](const Tensor& x, int64_t axis) { return to_vec(ops::unbind(x, axis)); });
  m.def("_tile", [](const Tensor& x, const Dims& reps) { return ops::tile(x, reps); });
  m.def("_repeat_interleave", [](const Tensor& x, const Dims& repeats, int64_t axis, bool flatten) {
    return ops::repeat_interleave(x, repeats, axis, flatten);
  });
  m.def("_flip", [](const Tensor& x, const Dims& axes) { return ops::flip(x, axes); });
  m.def("_roll", [](const Tensor& x, const Dims& shifts, const Dims& axes) { return ops::roll(x, shifts, axes); });
  m.def("_pad", [](const Tensor& x, const Dims& axes, const Dims& before, const Dims& after, const std::string& mode,
                   double value) { return ops::pad(x, axes, before, after, mode, value); });
  m.def("_diagonal", [](const Tensor& x, int64_t offset, int64_t a1, int64_t a2) {
    return ops::diagonal(x, offset, a1, a2);
  });
  m.def("_tril", [](const Tensor& x, int64_t k) { return ops::tril(x, k); });
  m.def("_triu", [](const Tensor& x, int64_t k) { return ops::triu(x, k); });
  m.def("_diag", [](const Tensor& x, int64_t offset, double pv) { return ops::diag(x, offset, pv); });
  m.def("_diagflat", [](const Tensor& x, int64_t offset) { return ops::diagflat(x, offset); });
  m.def("_meshgrid", [](std::vector<Tensor> xs) { return to_vec(ops::meshgrid(xs)); });
}

Binder b(bind_manip);

}  // namespace
}  // namespace oar::bind

// Shape manipulation (Note [function declarations], tools/gen_ops.py): the bindings
// are generated from src/ops/manip.toml into gen/bind/functions_manip.inc;
// the glue here turns the argument forms the declared types do not cover
// (lists of Tensors, an int or a list of counts, pad's spec) into the C++ API's.
#include "args.h"
#include "ops/manip.h"

namespace oar::bind {
namespace {

using nb::arg;

std::vector<Tensor> to_vec(const Tensors& t) { return std::vector<Tensor>(t.begin(), t.end()); }

// A list or tuple of Tensors (a Tensor itself is refused, not iterated).
std::vector<Tensor> tensor_list(nb::handle h, const char* api) {
  OAR_CHECK(nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h), Type, "[", api,
            "] x must be a list or tuple of Tensors, got ", py_type_name(h));
  std::vector<Tensor> out;
  for (nb::handle t : h) {
    OAR_CHECK(nb::isinstance<TensorImpl>(t), Type, "[", api, "] x[", out.size(), "] must be a Tensor, got ",
              py_type_name(t));
    out.push_back(nb::cast<Tensor>(t));
  }
  return out;
}

// An int, a list or tuple of ints (or one-element integer Tensors), or an
// integer Tensor of the values; None is refused.
Dims int_or_ints(nb::handle h, const char* api, const char* what) {
  OAR_CHECK(is_int(h) || nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h) || nb::isinstance<TensorImpl>(h),
            Type, "[", api, "] ", what, " must be an int, a list of ints or a Tensor, got ", py_type_name(h));
  if (nb::isinstance<TensorImpl>(h)) {
    const DType dt = nb::cast<Tensor>(h).dtype();
    OAR_CHECK(is_integral(dt) && dt != DType::Bool, Type, "[", api, "] ", what, " must be an integer Tensor, got a ",
              dtype_name(dt), " Tensor");
  }
  return arg_axes(h, api, what);
}

// split: an int is the number of equal parts; a list or a Tensor the sizes.
std::vector<Tensor> split_of(const Tensor& x, nb::handle sections, int64_t axis, const char* api) {
  // An int (or a 0-D integer Tensor, as ints are taken elsewhere) is the count.
  const bool count = is_int(sections) || (nb::isinstance<TensorImpl>(sections) && nb::cast<Tensor>(sections).dim() == 0);
  if (count) return to_vec(ops::split_equal(x, arg_axis(sections, api, "num_or_sections"), axis));
  return to_vec(ops::split(x, int_or_ints(sections, api, "num_or_sections"), axis));
}

// pad: (before, after) pairs from the first axis to the last when a
// constant pad covers every axis, else from the last (spatial) axis
// backwards, skipping the channels of a channel-last data_format.
Tensor pad_of(const Tensor& x, nb::handle pad, const std::string& mode, nb::handle value, nb::handle data_format,
              bool from_left, const char* api) {
  const Dims p = int_or_ints(pad, api, "pad");
  OAR_CHECK(p.size() % 2 == 0, Value, "[", api, "] pad must have an even length, got ", p.size());
  const double v = arg_real(value, api, "value");
  const int64_t nd = x.dim(), k = static_cast<int64_t>(p.size() / 2);
  Dims axes, before, after;
  for (int64_t i = 0; i < k; ++i) {
    before.push_back(p[2 * i]);
    after.push_back(p[2 * i + 1]);
  }
  if (mode == "constant" && k == nd && from_left) {
    for (int64_t i = 0; i < nd; ++i) axes.push_back(i);
  } else {
    std::string df = nb::isinstance<nb::str>(data_format) ? nb::cast<std::string>(data_format) : "";
    const int64_t last = (df == "NLC" || df == "NHWC" || df == "NDHWC") ? nd - 2 : nd - 1;
    OAR_CHECK(k <= last + 1, Value, "[", api, "] pad has ", k, " (before, after) pairs but x of shape ",
              ops::shape_str(x.shape()), " has only ", last + 1, " axes to pad");
    for (int64_t i = 0; i < k; ++i) axes.push_back(last - i);
  }
  return ops::pad(x, axes, before, after, mode, v);
}

#include "gen/bind/functions_manip.inc"

void bind_manip(nb::module_& m) {
  bind_manip_functions(m, tensor_class(m));
  // The C++ API for the functions written in Python.
  m.def("_concat", [](std::vector<Tensor> xs, int64_t axis) { return ops::concat(xs, axis); }, arg("x"), arg("axis"));
  m.def("_stack", [](std::vector<Tensor> xs, int64_t axis) { return ops::stack(xs, axis); }, arg("x"), arg("axis"));
  m.def("_flip", [](const Tensor& x, const Dims& axes) { return ops::flip(x, axes); });
  m.def("_pad", [](const Tensor& x, const Dims& axes, const Dims& before, const Dims& after, const std::string& mode,
                   double value) { return ops::pad(x, axes, before, after, mode, value); });
  m.def("_diagonal", [](const Tensor& x, int64_t offset, int64_t a1, int64_t a2) {
    return ops::diagonal(x, offset, a1, a2);
  });
  m.def("_meshgrid", [](std::vector<Tensor> xs) { return to_vec(ops::meshgrid(xs)); });
}

Binder b(bind_manip);

}  // namespace
}  // namespace oar::bind

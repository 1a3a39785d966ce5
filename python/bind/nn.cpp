// Convolution, pooling and normalisation of oar.nn.functional: the functions
// are declared in src/ops/nn.toml (Note [function declarations],
// tools/gen_ops.py) and bound from gen/bind/functions_nn.inc; the glue here
// reads Paddle's argument forms (data formats, kernel sizes, strides, padding)
// for them. nn_max_pool and nn_avg_pool serve the pooling composites still
// written in Python, which pass the name of the public API that the C++
// checks put at the start of their errors.
#include <algorithm>
#include <string>
#include <vector>

#include "args.h"
#include "ops/conv.h"
#include "ops/norm.h"
#include "ops/pool.h"

namespace oar::bind {
namespace {

using nb::arg;
using OptT = std::optional<Tensor>;

Tensor opt(const OptT& t) { return t ? *t : Tensor(); }

// ---- Paddle's argument forms

// bool(h), as Python reads a flag.
bool flag(nb::handle h) {
  int v = PyObject_IsTrue(h.ptr());
  if (v < 0) throw nb::python_error();
  return v == 1;
}

std::string py_repr(nb::handle h) { return nb::cast<std::string>(nb::repr(h)); }

bool is_list(nb::handle h) { return nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h); }

// The position of data_format among `names`; ValueError listing them otherwise.
size_t format_index(nb::handle data_format, const std::vector<const char*>& names, const char* api) {
  if (nb::isinstance<nb::str>(data_format)) {
    const std::string s = nb::cast<std::string>(data_format);
    for (size_t i = 0; i < names.size(); ++i)
      if (s == names[i]) return i;
  }
  std::string all = "(";
  for (size_t i = 0; i < names.size(); ++i) all += (i ? ", '" : "'") + std::string(names[i]) + "'";
  fail(ErrorKind::Value, "[", api, "] data_format must be one of ", all, "), got ", py_repr(data_format));
}

// (N, C, *spatial) <-> (N, *spatial, C) for nd spatial dims.
Tensor to_channel_first(const Tensor& x, int64_t nd) {
  Dims perm{0, nd + 1};
  for (int64_t i = 1; i <= nd; ++i) perm.push_back(i);
  return ops::transpose(x, perm);
}

Tensor to_channel_last(const Tensor& x, int64_t nd) {
  Dims perm{0};
  for (int64_t i = 2; i <= nd + 1; ++i) perm.push_back(i);
  perm.push_back(1);
  return ops::transpose(x, perm);
}

// ---- normalisation

// batch_norm: x's channel axis is 1, or -1 for a channel-last format.
int64_t batch_norm_axis(nb::handle data_format, const char* api) {
  return format_index(data_format, {"NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"}, api) < 4 ? 1 : -1;
}

// Batch statistics normalise in training (unless use_global_stats) and, in
// training only, update the running tensors; otherwise the running statistics
// normalise.
Tensor batch_norm_of(const Tensor& x, const OptT& running_mean, const OptT& running_var, const OptT& weight,
                     const OptT& bias, nb::handle training, double momentum, double eps, nb::handle data_format,
                     nb::handle use_global_stats, const char* api) {
  const int64_t axis = batch_norm_axis(data_format, api);
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] expects an input with at least 2 dims, got shape ",
            ops::shape_str(x.shape()));
  const bool use_batch = use_global_stats.is_none() ? flag(training) : !flag(use_global_stats);
  const bool update = flag(training) && use_batch;
  const bool running = update || !use_batch;
  return ops::batch_norm(x, running ? opt(running_mean) : Tensor(), running ? opt(running_var) : Tensor(),
                         opt(weight), opt(bias), use_batch, momentum, eps, axis, api);
}

// layer_norm's and rms_norm's normalized_shape, an int or a list of ints that
// are x's trailing dims: the first normalised axis.
int64_t norm_begin(const Tensor& x, nb::handle normalized_shape, const char* api) {
  Dims ns;
  if (PyBool_Check(normalized_shape.ptr()) || is_int(normalized_shape)) {
    ns.push_back(arg_axis(nb::int_(normalized_shape), api, "normalized_shape"));
  } else if (is_list(normalized_shape)) {
    nb::object items = nb::steal(PySequence_Tuple(normalized_shape.ptr()));
    if (!items.is_valid()) throw nb::python_error();
    for (nb::handle e : items) {
      nb::object v = nb::steal(PyNumber_Long(e.ptr()));  // int(e)
      if (!v.is_valid()) {
        const bool type_error = PyErr_ExceptionMatches(PyExc_TypeError);
        if (!type_error && !PyErr_ExceptionMatches(PyExc_ValueError)) throw nb::python_error();
        PyErr_Clear();
        fail(type_error ? ErrorKind::Type : ErrorKind::Value, "[", api,
             "] normalized_shape entries must be ints, got ", py_repr(e));
      }
      ns.push_back(arg_axis(v, api, "normalized_shape"));
    }
  } else {
    fail(ErrorKind::Value, "[", api, "] normalized_shape must be an int or a list of ints, got ",
         py_repr(normalized_shape));
  }
  const int64_t n = int64_t(ns.size()), nd = x.dim();
  OAR_CHECK(n > 0 && n <= nd && Dims(x.shape().end() - n, x.shape().end()) == ns, Value, "[", api,
            "] normalized_shape ", ops::shape_str(ns), " must be non-empty and match the trailing dims of the input shape ",
            ops::shape_str(x.shape()));
  return nd - n;
}

Tensor group_norm_of(const Tensor& x, nb::handle num_groups, double eps, const OptT& weight, const OptT& bias,
                     nb::handle data_format, const char* api) {
  const size_t f = format_index(data_format, {"NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC", "NC"}, api);
  OAR_CHECK(is_int(num_groups), Value, "[", api, "] num_groups must be an int, got ", py_repr(num_groups));
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] expects an input with at least 2 dims, got shape ",
            ops::shape_str(x.shape()));
  const int64_t nd = x.dim() - 2;
  const bool last = f >= 3 && f <= 5 && nd > 0;
  Tensor y = ops::group_norm(last ? to_channel_first(x, nd) : x, arg_axis(num_groups, api, "num_groups"),
                             opt(weight), opt(bias), eps, api);
  return last ? to_channel_last(y, nd) : y;
}

// A running statistic of instance_norm: a Tensor (read only without use_input_stats).
Tensor running_stat(nb::handle h, const char* api, const char* what) {
  OAR_CHECK(nb::isinstance<TensorImpl>(h), Type, "[", api, "] ", what, " must be a Tensor, got ", py_type_name(h));
  return nb::cast<Tensor>(h);
}

// Statistics per (sample, channel); without use_input_stats the running
// statistics normalise, as batch_norm outside training.
Tensor instance_norm_of(const Tensor& x, nb::handle running_mean, nb::handle running_var, const OptT& weight,
                        const OptT& bias, nb::handle use_input_stats, double eps, nb::handle data_format,
                        const char* api) {
  const bool last = format_index(data_format, {"NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"}, api) >= 3;
  OAR_CHECK(x.dim() >= 3, Value, "[", api, "] expects an input with at least 3 dims (N, C, *), got shape ",
            ops::shape_str(x.shape()));
  if (!flag(use_input_stats)) {
    OAR_CHECK(!running_mean.is_none() && !running_var.is_none(), Value, "[", api,
              "] running_mean and running_var are required when use_input_stats is False");
    Tensor mean = running_stat(running_mean, api, "running_mean");
    Tensor var = running_stat(running_var, api, "running_var");
    return ops::batch_norm(x, mean, var, opt(weight), opt(bias), false, 0.9, eps, last ? -1 : 1, api);
  }
  const int64_t nd = x.dim() - 2;
  Tensor y = ops::instance_norm(last ? to_channel_first(x, nd) : x, opt(weight), opt(bias), eps, api);
  return last ? to_channel_last(y, nd) : y;
}

// x / (k + alpha / size * the sum of x ** 2 over `size` neighbouring channels) ** beta.
Tensor local_response_norm_of(const Tensor& x, nb::handle size, double alpha, double beta, double k,
                              nb::handle data_format, const char* api) {
  OAR_CHECK(x.dim() >= 3, Value, "[", api, "] expects an input with at least 3 dims, got shape ",
            ops::shape_str(x.shape()));
  OAR_CHECK(is_int(size) && arg_axis(size, api, "size") > 0, Value, "[", api, "] size must be a positive int, got ",
            py_repr(size));
  const int64_t window = arg_axis(size, api, "size");
  const bool last = format_index(data_format, {"NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"}, api) >= 3;
  const int64_t nd = x.dim() - 2;
  Tensor xc = last ? to_channel_first(x, nd) : x;
  // The sum of squares over a channel window: average-pool the squares along
  // C (not exclusive, so the divisor is always `size`), as a 2-D pool over (C, rest).
  Tensor sq = ops::reshape(ops::square(xc), {xc.shape()[0], 1, xc.shape()[1], -1});
  const ops::PoolParams p{{window, 1}, {1, 1}, {(window - 1) / 2, 0}, {window / 2, 0}, false, false, false};
  Tensor avg = ops::reshape(ops::avg_pool(sq, p, api), xc.shape());
  Tensor div = ops::binary_scalar("add", ops::binary_scalar("multiply", avg, Scalar(alpha), false), Scalar(k), false);
  Tensor y = ops::divide(xc, ops::binary_scalar("pow", div, Scalar(beta), false));
  return last ? to_channel_last(y, nd) : y;
}

// ---- pooling

// The data formats of nd spatial dims: channel first, channel last.
const std::vector<const char*>& pool_formats(int64_t nd) {
  static const std::vector<const char*> f[3] = {{"NCL", "NLC"}, {"NCHW", "NHWC"}, {"NCDHW", "NDHWC"}};
  return f[nd - 1];
}

void check_rank(const Tensor& x, int64_t nd, const char* api) {
  OAR_CHECK(x.dim() == nd + 2, Value, "[", api, "] expects a ", nd + 2, "-D input (batch, channels and ", nd,
            " spatial dims), got shape ", ops::shape_str(x.shape()));
}

// An int or a sequence of nd ints (a Tensor: its values) -> nd ints, positive
// (non-negative with allow_zero).
Dims ntuple(nb::handle h, int64_t nd, const char* what, const char* api, bool allow_zero = false) {
  nb::object v = nb::borrow(h);
  if (nb::isinstance<TensorImpl>(h)) v = h.attr("numpy")().attr("reshape")(-1).attr("tolist")();
  Dims out;
  if (is_int(v)) {
    out.assign(nd, arg_axis(v, api, what));
  } else if (is_list(v) && int64_t(nb::len(v)) == nd) {
    nb::object items = nb::steal(PySequence_Tuple(v.ptr()));
    if (!items.is_valid()) throw nb::python_error();
    for (nb::handle e : items) {
      if (!is_int(e)) break;
      out.push_back(arg_axis(e, api, what));
    }
  }
  OAR_CHECK(int64_t(out.size()) == nd, Value, "[", api, "] ", what, " must be an int or ", nd, " ints, got ", py_repr(v));
  for (int64_t e : out)
    OAR_CHECK(e >= (allow_zero ? 0 : 1), Value, "[", api, "] ", what, " must be ",
              allow_zero ? "non-negative" : "positive", ", got ", py_repr(v));
  return out;
}

struct Padding {
  bool same = false;  // Paddle's 'same': computed from the input, kernel and strides
  Dims l, r;
};

// Paddle's padding forms: 'same' or 'valid', an int, nd ints, 2 * nd ints
// (before and after each dim), or nd + 2 [before, after] pairs including the
// batch and channel dims (which must be [0, 0]).
Padding padding_of(nb::handle p, int64_t nd, bool last, const char* api) {
  Padding out{false, Dims(nd, 0), Dims(nd, 0)};
  if (nb::isinstance<nb::str>(p)) {
    const std::string alg = nb::cast<std::string>(p.attr("lower")());
    OAR_CHECK(alg == "same" || alg == "valid", Value, "[", api,
              "] padding must be 'same', 'valid', an int or a list, got ", py_repr(p));
    out.same = alg == "same";
    return out;
  }
  if (is_int(p)) {
    const int64_t v = arg_axis(p, api, "padding");
    OAR_CHECK(v >= 0, Value, "[", api, "] padding must be non-negative, got ", v);
    out.l = out.r = Dims(nd, v);
    return out;
  }
  OAR_CHECK(is_list(p), Value, "[", api, "] padding must be 'same', 'valid', an int or a list, got ", py_repr(p));
  nb::list items = nb::steal<nb::list>(PySequence_List(p.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  const int64_t n = int64_t(nb::len(items));
  bool pairs = true, ints = true;
  for (nb::handle e : items) pairs &= is_list(e), ints &= is_int(e);
  if (n == nd + 2 && pairs) {
    const nb::object zero = nb::int_(0);
    for (int64_t i : {int64_t(0), last ? n - 1 : int64_t(1)}) {
      nb::object e = items[i];
      bool ok = nb::len(e) == 2;
      for (Py_ssize_t j = 0; ok && j < 2; ++j) {
        nb::object v = nb::steal(PySequence_GetItem(e.ptr(), j));
        if (!v.is_valid()) throw nb::python_error();
        int eq = PyObject_RichCompareBool(v.ptr(), zero.ptr(), Py_EQ);
        if (eq < 0) throw nb::python_error();
        ok = eq == 1;
      }
      OAR_CHECK(ok, Value, "[", api, "] padding of the batch and channel dims must be [0, 0], got ", py_repr(items));
    }
    for (int64_t d = 0; d < nd; ++d) {
      nb::object e = nb::steal(PySequence_Tuple(nb::object(items[last ? d + 1 : d + 2]).ptr()));
      if (!e.is_valid()) throw nb::python_error();
      const bool two = nb::len(e) == 2;
      nb::handle a = two ? PyTuple_GET_ITEM(e.ptr(), 0) : nullptr, b = two ? PyTuple_GET_ITEM(e.ptr(), 1) : nullptr;
      OAR_CHECK(two && is_int(a) && is_int(b), Value, "[", api, "] padding pairs must hold two ints each, got ",
                py_repr(items));
      out.l[d] = arg_axis(a, api, "padding");
      out.r[d] = arg_axis(b, api, "padding");
    }
  } else if (n == nd && ints) {
    for (int64_t d = 0; d < nd; ++d) out.l[d] = out.r[d] = arg_axis(nb::object(items[d]), api, "padding");
  } else if (n == 2 * nd && ints) {
    for (int64_t d = 0; d < nd; ++d) {
      out.l[d] = arg_axis(nb::object(items[2 * d]), api, "padding");
      out.r[d] = arg_axis(nb::object(items[2 * d + 1]), api, "padding");
    }
  } else {
    fail(ErrorKind::Value, "[", api, "] padding must be an int, ", nd, " ints, ", 2 * nd, " ints or ", nd + 2,
         " pairs, got ", py_repr(items));
  }
  for (int64_t d = 0; d < nd; ++d)
    OAR_CHECK(out.l[d] >= 0 && out.r[d] >= 0, Value, "[", api, "] padding must be non-negative, got ", py_repr(items));
  return out;
}

// Paddle's 'same' for the channel-first x: output ceil(in / stride), the
// extra padding on the right.
void same_pads(const Tensor& xc, const Dims& kernel, const Dims& strides, Padding& pad) {
  for (size_t d = 0; d < kernel.size(); ++d) {
    const int64_t in = xc.shape()[2 + d], s = strides[d];
    const int64_t total = std::max<int64_t>(((in + s - 1) / s - 1) * s + kernel[d] - in, 0);
    pad.l[d] = total / 2;
    pad.r[d] = total - total / 2;
  }
}

// The channel-first input and the windows of a pooling call.
struct PoolArgs {
  Tensor x;
  bool last;
  ops::PoolParams p;
};

PoolArgs pool_args(const Tensor& x, nb::handle kernel_size, nb::handle stride, nb::handle padding,
                   nb::handle ceil_mode, nb::handle data_format, int64_t nd, const char* api) {
  const bool last = format_index(data_format, pool_formats(nd), api) == 1;
  check_rank(x, nd, api);
  Dims kernel = ntuple(kernel_size, nd, "kernel_size", api);
  Dims strides = stride.is_none() ? kernel : ntuple(stride, nd, "stride", api);
  Tensor xc = last ? to_channel_first(x, nd) : x;
  Padding pad = padding_of(padding, nd, last, api);
  if (pad.same) same_pads(xc, kernel, strides, pad);
  return {xc, last, ops::PoolParams{kernel, strides, pad.l, pad.r, flag(ceil_mode), false, true}};
}

nb::object max_pool_of(const Tensor& x, nb::handle kernel_size, nb::handle stride, nb::handle padding,
                       nb::handle return_mask, nb::handle ceil_mode, nb::handle data_format, int64_t nd,
                       const char* api) {
  PoolArgs a = pool_args(x, kernel_size, stride, padding, ceil_mode, data_format, nd, api);
  auto [y, mask] = ops::max_pool(a.x, a.p, api);
  if (a.last) y = to_channel_last(y, nd), mask = to_channel_last(mask, nd);
  return flag(return_mask) ? nb::object(nb::make_tuple(y, mask)) : nb::cast(y);
}

// Average pooling divides by the count of non-padding elements (exclusive),
// the kernel size, or divisor_override.
Tensor avg_pool_of(const Tensor& x, nb::handle kernel_size, nb::handle stride, nb::handle padding,
                   nb::handle ceil_mode, nb::handle exclusive, nb::handle divisor_override, nb::handle data_format,
                   int64_t nd, const char* api) {
  PoolArgs a = pool_args(x, kernel_size, stride, padding, ceil_mode, data_format, nd, api);
  Tensor y;
  if (!divisor_override.is_none()) {
    OAR_CHECK(is_int(divisor_override) && arg_axis(divisor_override, api, "divisor_override") > 0, Value, "[", api,
              "] divisor_override must be a positive int, got ", py_repr(divisor_override));
    a.p.exclusive = false;
    int64_t ksize = 1;
    for (int64_t k : a.p.kernel) ksize *= k;
    const double d = double(arg_axis(divisor_override, api, "divisor_override"));
    y = ops::binary_scalar("multiply", ops::avg_pool(a.x, a.p, api), Scalar(double(ksize) / d), false);
  } else {
    a.p.exclusive = flag(exclusive);
    y = ops::avg_pool(a.x, a.p, api);
  }
  return a.last ? to_channel_last(y, nd) : y;
}

// Adaptive pooling's output_size: an int or nd entries, None keeping the input's size.
Dims output_size_of(const Tensor& x, nb::handle output_size, int64_t nd, bool last, const char* api) {
  Dims out;
  if (is_int(output_size)) {
    out.assign(nd, arg_axis(output_size, api, "output_size"));
  } else if (is_list(output_size) && int64_t(nb::len(output_size)) == nd) {
    nb::object items = nb::steal(PySequence_Tuple(output_size.ptr()));
    if (!items.is_valid()) throw nb::python_error();
    int64_t d = 0;
    for (nb::handle e : items) {
      OAR_CHECK(e.is_none() || is_int(e), Value, "[", api, "] output_size entries must be ints or None, got ",
                py_repr(output_size));
      out.push_back(e.is_none() ? x.shape()[(last ? 1 : 2) + d] : arg_axis(e, api, "output_size"));
      ++d;
    }
  } else {
    fail(ErrorKind::Value, "[", api, "] output_size must be an int or ", nd, " entries, got ", py_repr(output_size));
  }
  for (int64_t o : out)
    OAR_CHECK(o > 0, Value, "[", api, "] output_size must be positive, got ", py_repr(output_size));
  return out;
}

// Windows [floor(i * in / out), ceil((i + 1) * in / out)) per output index.
nb::object adaptive_pool_of(const Tensor& x, nb::handle output_size, nb::handle data_format, int64_t nd, bool is_max,
                            nb::handle return_mask, const char* api) {
  const bool last = format_index(data_format, pool_formats(nd), api) == 1;
  check_rank(x, nd, api);
  const Dims out = output_size_of(x, output_size, nd, last, api);
  Tensor xc = last ? to_channel_first(x, nd) : x;
  const ops::PoolParams p{out, Dims(nd, 1), Dims(nd, 0), Dims(nd, 0), false, true, true};
  if (is_max) {
    auto [y, mask] = ops::max_pool(xc, p, api);
    if (last) y = to_channel_last(y, nd), mask = to_channel_last(mask, nd);
    return flag(return_mask) ? nb::object(nb::make_tuple(y, mask)) : nb::cast(y);
  }
  Tensor y = ops::avg_pool(xc, p, api);
  return nb::cast(last ? to_channel_last(y, nd) : y);
}

// ---- convolution

int64_t conv_groups(nb::handle groups, const char* api) {
  OAR_CHECK(is_int(groups) && arg_axis(groups, api, "groups") > 0, Value, "[", api,
            "] groups must be a positive int, got ", py_repr(groups));
  return arg_axis(groups, api, "groups");
}

void check_weight(const Tensor& weight, int64_t nd, const char* layout, const char* api) {
  OAR_CHECK(weight.dim() == nd + 2, Value, "[", api, "] weight must be ", nd + 2, "-D (", layout, "), got shape ",
            ops::shape_str(weight.shape()));
}

// y + bias (one value per output channel of the channel-first y).
Tensor add_bias(const Tensor& y, const OptT& bias, const char* api) {
  if (!bias) return y;
  OAR_CHECK(bias->dim() == 1 && bias->shape()[0] == y.shape()[1], Value, "[", api, "] bias must have shape [",
            y.shape()[1], "], got ", ops::shape_str(bias->shape()));
  Dims shape(size_t(y.dim()), 1);
  shape[1] = y.shape()[1];
  return ops::add(y, ops::reshape(*bias, shape));
}

// What a convolution and a transposed one read alike: the layout, the input
// channel-first, groups, strides, dilations, padding (resolved for 'same')
// and the kernel.
struct ConvArgs {
  bool last;
  Tensor xc;
  int64_t groups;
  Dims strides, dilations, kernel;
  Padding pad;
};

ConvArgs conv_args(const Tensor& x, const Tensor& weight, nb::handle stride, nb::handle padding, nb::handle dilation,
                   nb::handle groups, nb::handle data_format, int64_t nd, const char* weight_dims, const char* api) {
  ConvArgs c;
  c.last = format_index(data_format, pool_formats(nd), api) == 1;
  check_rank(x, nd, api);
  check_weight(weight, nd, weight_dims, api);
  c.groups = conv_groups(groups, api);
  c.strides = ntuple(stride, nd, "stride", api);
  c.dilations = ntuple(dilation, nd, "dilation", api);
  c.xc = c.last ? to_channel_first(x, nd) : x;
  c.pad = padding_of(padding, nd, c.last, api);
  c.kernel = Dims(weight.shape().begin() + 2, weight.shape().end());
  return c;
}

// 'same' padding (Paddle's ignores dilation).
void resolve_same(ConvArgs& c, int64_t nd) {
  if (!c.pad.same) return;
  c.dilations = Dims(nd, 1);
  same_pads(c.xc, c.kernel, c.strides, c.pad);
}

Tensor conv_of(const Tensor& x, const Tensor& weight, const OptT& bias, nb::handle stride, nb::handle padding,
               nb::handle dilation, nb::handle groups, nb::handle data_format, int64_t nd, const char* api) {
  ConvArgs c = conv_args(x, weight, stride, padding, dilation, groups, data_format, nd,
                         "out_channels, in_channels / groups, *kernel", api);
  resolve_same(c, nd);
  const bool last = c.last;
  Tensor y = ops::conv(c.xc, weight, ops::ConvParams{c.strides, c.pad.l, c.pad.r, c.dilations, c.groups}, api);
  y = add_bias(y, bias, api);
  return last ? to_channel_last(y, nd) : y;
}

// The output size is (in - 1) * stride - pads + dilation * (kernel - 1) + 1,
// plus output_padding, or output_size within [that, that + stride).
Tensor conv_transpose_of(const Tensor& x, const Tensor& weight, const OptT& bias, nb::handle stride,
                         nb::handle padding, nb::handle output_padding, nb::handle dilation, nb::handle groups,
                         nb::handle output_size, nb::handle data_format, int64_t nd, const char* api) {
  ConvArgs c = conv_args(x, weight, stride, padding, dilation, groups, data_format, nd,
                         "in_channels, out_channels / groups, *kernel", api);
  const Dims out_pad = ntuple(output_padding, nd, "output_padding", api, true);
  OAR_CHECK(c.xc.shape()[1] == weight.shape()[0], Value, "[", api, "] input has ", c.xc.shape()[1],
            " channels but weight.shape[0] is ", weight.shape()[0]);
  resolve_same(c, nd);
  const bool last = c.last;
  const Tensor& xc = c.xc;
  const Dims &strides = c.strides, &dilations = c.dilations, &kernel = c.kernel;
  const Padding& pad = c.pad;
  const int64_t g = c.groups;
  for (int64_t d = 0; d < nd; ++d)
    OAR_CHECK(out_pad[d] < std::max(strides[d], dilations[d]), Value, "[", api,
              "] output_padding must be smaller than stride or dilation, got output_padding=", ops::shape_str(out_pad),
              ", stride=", ops::shape_str(strides), ", dilation=", ops::shape_str(dilations));
  Dims base(nd), top(nd), out(nd);
  for (int64_t d = 0; d < nd; ++d) {
    base[d] = (xc.shape()[2 + d] - 1) * strides[d] - pad.l[d] - pad.r[d] + dilations[d] * (kernel[d] - 1) + 1;
    top[d] = base[d] + strides[d];
    out[d] = base[d] + out_pad[d];
  }
  if (!output_size.is_none()) {
    OAR_CHECK(std::all_of(out_pad.begin(), out_pad.end(), [](int64_t v) { return v == 0; }), Value, "[", api,
              "] give output_size or output_padding, not both");
    out = ntuple(output_size, nd, "output_size", api);
    for (int64_t d = 0; d < nd; ++d)
      OAR_CHECK(base[d] <= out[d] && out[d] < top[d], Value, "[", api, "] output_size ", ops::shape_str(out),
                " must lie in [", ops::shape_str(base), ", ", ops::shape_str(top), ")");
  }
  for (int64_t o : out)
    OAR_CHECK(o > 0, Value, "[", api, "] the output size ", ops::shape_str(out), " must be positive");
  Tensor y = ops::conv_transpose(xc, weight, out, ops::ConvParams{strides, pad.l, pad.r, dilations, g}, api);
  y = add_bias(y, bias, api);
  return last ? to_channel_last(y, nd) : y;
}

#include "gen/bind/functions_nn.inc"

void bind_nn(nb::module_& m) {
  bind_nn_functions(m, tensor_class(m));
  // The pooling ops for the composites written in Python (lp_pool1d, lp_pool2d).
  m.def("nn_max_pool", [](const Tensor& x, const Dims& kernel, const Dims& strides, const Dims& pads_l,
                          const Dims& pads_r, bool ceil_mode, bool adaptive, const std::string& api) {
    auto r = ops::max_pool(x, ops::PoolParams{kernel, strides, pads_l, pads_r, ceil_mode, adaptive, true}, api.c_str());
    return nb::make_tuple(r.first, r.second);
  }, arg("x"), arg("kernel"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("ceil_mode"), arg("adaptive"),
     arg("api"));
  m.def("nn_avg_pool", [](const Tensor& x, const Dims& kernel, const Dims& strides, const Dims& pads_l,
                          const Dims& pads_r, bool ceil_mode, bool adaptive, bool exclusive, const std::string& api) {
    return ops::avg_pool(x, ops::PoolParams{kernel, strides, pads_l, pads_r, ceil_mode, adaptive, exclusive},
                         api.c_str());
  }, arg("x"), arg("kernel"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("ceil_mode"), arg("adaptive"),
     arg("exclusive"), arg("api"));
}

Binder b(bind_nn);

}  // namespace
}  // namespace oar::bind

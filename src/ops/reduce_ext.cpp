// Reductions and scans beyond reduce.cpp (see reduce_ext.h). Kernels:
// kernels/cpu/reduce_ext.cpp.
#include "ops/reduce_ext.h"

#include <cmath>
#include <limits>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/linalg_lapack.h"

namespace oar {
namespace {

using namespace ops;

int64_t checked_axis(const Tensor& x, int64_t axis, const char* api) {
  OAR_CHECK(axis >= 0 && axis < std::max<int64_t>(x.dim(), 1), Index, "[", api, "] axis ", axis,
            " is out of range for a ", x.dim(), "-D tensor");
  return axis;
}

Dims keep_axis_shape(const Dims& s, int64_t axis, int64_t size) {
  Dims out = s;
  out[axis] = size;
  return out;
}

Dims drop_axis_shape(const Dims& s, int64_t axis) {
  Dims out;
  for (int64_t d = 0; d < int64_t(s.size()); ++d)
    if (d != axis) out.push_back(s[d]);
  return out;
}

// ---- argmax / argmin. attrs: axis, keepdim, dtype
Metas arg_meta(std::span<const Tensor> in, const Attrs& a, const char* api) {
  const Tensor& x = in[0];
  OAR_CHECK(x.dim() >= 1, Value, "[", api, "] expects a tensor with at least one dim");
  int64_t ax = checked_axis(x, a.i(0), api);
  OAR_CHECK(x.shape()[ax] > 0, Value, "[", api, "] cannot reduce over the zero-size axis ", ax, " of shape ",
            shape_str(x.shape()));
  OAR_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type, "[", api, "] does not support ",
            dtype_name(x.dtype()), " input");
  DType dt = a.dtype(2);
  OAR_CHECK(dt == DType::Int32 || dt == DType::Int64, Type, "[", api, "] dtype must be int32 or int64, got ",
            dtype_name(dt));
  return {TensorMeta{a.b(1) ? keep_axis_shape(x.shape(), ax, 1) : drop_axis_shape(x.shape(), ax), dt}};
}
Metas argmax_meta(std::span<const Tensor> in, const Attrs& a) { return arg_meta(in, a, "oar.argmax"); }
Metas argmin_meta(std::span<const Tensor> in, const Attrs& a) { return arg_meta(in, a, "oar.argmin"); }

constexpr OpTraits kReduce{.reduction = true};
OpDef& kArgmax = OpBuilder("argmax").attrs({"axis", "keepdim", "dtype"}).meta(argmax_meta).traits(kReduce);
OpDef& kArgmin = OpBuilder("argmin").attrs({"axis", "keepdim", "dtype"}).meta(argmin_meta).traits(kReduce);

// ---- cumsum / cumprod. attrs: axis, reverse
Metas scan_meta(std::span<const Tensor> in, const Attrs& a, const char* api) {
  const Tensor& x = in[0];
  OAR_CHECK(x.dim() >= 1, Value, "[", api, "] expects a tensor with at least one dim");
  checked_axis(x, a.i(0), api);
  OAR_CHECK(x.dtype() != DType::Bool, Type, "[", api, "] does not support bool input");
  return {TensorMeta{x.shape(), x.dtype()}};
}
Metas cumsum_meta(std::span<const Tensor> in, const Attrs& a) { return scan_meta(in, a, "oar.cumsum"); }
Metas cumprod_meta(std::span<const Tensor> in, const Attrs& a) { return scan_meta(in, a, "oar.cumprod"); }

OpDef& cumsum_op();
Tensor scan(OpDef& op, const Tensor& x, int64_t axis, bool reverse) {
  Tensor in[1] = {x};
  return dispatch1(op, in, Attrs{axis, reverse});
}

// The gradient of a running sum is the running sum taken the other way.
Tensors cumsum_grad(const GradCtx& c) {
  return {scan(cumsum_op(), c.grad(), c.attr().i(0), !c.attr().b(1))};
}

// Note [cumprod gradient]
// d y_j / d x_i = prod_{k <= j, k != i} x_k for j >= i. Before the first zero
// of a line this is y_j / x_i, so the gradient is a reversed running sum of
// g * y divided by x. At the first zero z it is the reversed running sum of
// g * y' where y' is the running product with x_z replaced by 1. After z every
// term holds x_z = 0. Complex inputs use the conjugates (Wirtinger convention).
Tensor cumprod_op_call(const Tensor& x, int64_t axis);
Tensors cumprod_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  const Tensor& y = c.out(0);
  int64_t axis = c.attr().i(0);
  Tensor g = c.grad();
  Tensor is_zero = equal(x, zeros_like(x));
  Tensor zeros_seen = scan(cumsum_op(), cast(is_zero, DType::Int64), axis, false);
  Tensor before = equal(zeros_seen, zeros_like(zeros_seen));
  Tensor first_zero = logical_and(is_zero, equal(zeros_seen, ones_like(zeros_seen)));
  Tensor one = ones_like(x);
  Tensor safe = where(is_zero, one, x);
  Tensor t_before = divide(scan(cumsum_op(), multiply(g, conj(y)), axis, true), conj(safe));
  Tensor y1 = cumprod_op_call(where(first_zero, one, x), axis);
  Tensor t_zero = scan(cumsum_op(), multiply(g, conj(y1)), axis, true);
  return {where(before, t_before, where(first_zero, t_zero, zeros_like(t_zero)))};
}

OpDef& kCumsum = OpBuilder("cumsum").attrs({"axis", "reverse"}).meta(cumsum_meta).grad(cumsum_grad).amp(CastPolicy::Float32);
OpDef& kCumprod = OpBuilder("cumprod").attrs({"axis", "reverse"}).meta(cumprod_meta).grad(cumprod_grad)
                      .saves(true, true).amp(CastPolicy::Float32);
OpDef& cumsum_op() { return kCumsum; }
Tensor cumprod_op_call(const Tensor& x, int64_t axis) { return scan(kCumprod, x, axis, false); }

// ---- cummax / cummin. attrs: axis; outputs values, int64 indices
Metas cumext_meta(std::span<const Tensor> in, const Attrs& a, const char* api) {
  const Tensor& x = in[0];
  OAR_CHECK(x.dim() >= 1, Value, "[", api, "] expects a tensor with at least one dim");
  checked_axis(x, a.i(0), api);
  OAR_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type, "[", api, "] does not support ",
            dtype_name(x.dtype()), " input");
  return {TensorMeta{x.shape(), x.dtype()}, TensorMeta{x.shape(), DType::Int64}};
}
Metas cummax_meta(std::span<const Tensor> in, const Attrs& a) { return cumext_meta(in, a, "oar.cummax"); }
Metas cummin_meta(std::span<const Tensor> in, const Attrs& a) { return cumext_meta(in, a, "oar.cummin"); }
// Each output took its value from one input element: route the gradient back there.
Tensors cumext_grad(const GradCtx& c) {
  return {put_add_along_axis(c.grad(0), c.out(1), c.attr().i(0), c.out(0).shape())};
}
OpDef& kCummax = OpBuilder("cummax").attrs({"axis"}).meta(cummax_meta).grad(cumext_grad).saves(false, true);
OpDef& kCummin = OpBuilder("cummin").attrs({"axis"}).meta(cummin_meta).grad(cumext_grad).saves(false, true);

// ---- median_index. attrs: axis; outputs the lower and upper middle positions
Metas median_index_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  OAR_CHECK(x.dim() >= 1, Value, "[oar.median] expects a tensor with at least one dim");
  int64_t ax = checked_axis(x, a.i(0), "oar.median");
  OAR_CHECK(x.shape()[ax] > 0, Value, "[oar.median] cannot reduce over the zero-size axis ", ax, " of shape ",
            shape_str(x.shape()));
  OAR_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type, "[oar.median] does not support ",
            dtype_name(x.dtype()), " input");
  Dims s = keep_axis_shape(x.shape(), ax, 1);
  return {TensorMeta{s, DType::Int64}, TensorMeta{s, DType::Int64}};
}
OpDef& kMedianIndex = OpBuilder("median_index").attrs({"axis"}).meta(median_index_meta).traits(kReduce);

// ---- pick_along_axis (attrs: axis) and put_add_along_axis (attrs: axis, shape)
void check_index_shape(const Dims& base, const Tensor& idx, int64_t axis, const char* api) {
  OAR_CHECK(idx.dtype() == DType::Int64, Type, "[", api, "] indices must be int64, got ", dtype_name(idx.dtype()));
  OAR_CHECK(idx.dim() == int64_t(base.size()) && axis >= 0 && axis < idx.dim(), Value, "[", api,
            "] indices of shape ", shape_str(idx.shape()), " do not match shape ", shape_str(base), " at axis ", axis);
  for (int64_t d = 0; d < idx.dim(); ++d)
    OAR_CHECK(d == axis || idx.shape()[d] == base[d], Value, "[", api, "] indices of shape ", shape_str(idx.shape()),
              " do not match shape ", shape_str(base), " outside axis ", axis);
}
Metas pick_meta(std::span<const Tensor> in, const Attrs& a) {
  check_index_shape(in[0].shape(), in[1], a.i(0), "oar.pick_along_axis");
  OAR_CHECK(in[0].shape()[a.i(0)] > 0 || in[1].shape()[a.i(0)] == 0, Index,
            "[oar.pick_along_axis] cannot pick from the zero-size axis ", a.i(0));
  return {TensorMeta{in[1].shape(), in[0].dtype()}};
}
Metas put_add_meta(std::span<const Tensor> in, const Attrs& a) {
  check_index_shape(a.ints(1), in[1], a.i(0), "oar.put_add_along_axis");
  OAR_CHECK(in[0].shape() == in[1].shape(), Value, "[oar.put_add_along_axis] values of shape ",
            shape_str(in[0].shape()), " must have the indices' shape ", shape_str(in[1].shape()));
  OAR_CHECK(in[0].dtype() != DType::Bool, Type, "[oar.put_add_along_axis] does not support bool values");
  return {TensorMeta{a.ints(1), in[0].dtype()}};
}
Tensors pick_grad(const GradCtx& c) {
  return {put_add_along_axis(c.grad(), c.in(1), c.attr().i(0), c.in(0).shape()), Tensor()};
}
Tensors put_add_grad(const GradCtx& c) { return {pick_along_axis(c.grad(), c.in(1), c.attr().i(0)), Tensor()}; }
OpDef& kPick = OpBuilder("pick_along_axis").attrs({"axis"}).meta(pick_meta).grad(pick_grad);
OpDef& kPutAdd = OpBuilder("put_add_along_axis").attrs({"axis", "shape"}).meta(put_add_meta).grad(put_add_grad);

// ---- helpers for the API functions

// Reduction axes for the composites: normalised with the API's name, and a
// zero-size reduced axis rejected where the reduction has no identity.
Dims reduce_axes(const Tensor& x, const Dims& axes, const char* api, bool need_nonempty) {
  Dims ax = normalize_axes(axes, x.dim(), api);
  if (need_nonempty)
    for (int64_t a : ax)
      OAR_CHECK(x.shape()[a] > 0, Value, "[", api, "] cannot reduce over the zero-size axis ", a, " of shape ",
                shape_str(x.shape()));
  return ax;
}


int64_t reduced_count(const Tensor& x, const Dims& ax) {
  int64_t n = 1;
  for (int64_t a : ax) n *= x.shape()[a];
  return n;
}

Tensor as_float(const Tensor& x) { return is_inexact(x.dtype()) ? x : cast(x, default_float_dtype()); }

// x != 0 as bool.
Tensor nonzero_mask(const Tensor& x) {
  if (x.dtype() == DType::Bool) return x;
  return not_equal(x, zeros_like(x));
}

Tensor extreme(const Tensor& x, const Dims& axes, bool keepdim, bool is_max) {
  const char* api = is_max ? "oar.max" : "oar.min";
  OAR_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type, "[", api, "] does not support ",
            dtype_name(x.dtype()), " input");
  Dims ax = reduce_axes(x, axes, api, true);
  if (x.dim() == 0) return clone(x);
  return is_max ? amax(x, ax, keepdim) : amin(x, ax, keepdim);
}

Tensor arg_extreme(OpDef& op, const Tensor& x, std::optional<int64_t> axis, bool keepdim, DType dtype,
                   const char* api) {
  if (!axis || x.dim() <= 1) {
    if (axis) normalize_axis(*axis, x.dim(), api);
    OAR_CHECK(x.numel() > 0, Value, "[", api, "] cannot reduce a zero-size tensor of shape ", shape_str(x.shape()));
    Tensor flat = reshape(x, Dims{x.numel()});
    Tensor in[1] = {flat};
    Tensor r = dispatch1(op, in, Attrs{int64_t(0), false, dtype});
    return keepdim ? reshape(r, Dims(size_t(x.dim()), 1)) : r;
  }
  int64_t ax = normalize_axis(*axis, x.dim(), api);
  Tensor in[1] = {x};
  return dispatch1(op, in, Attrs{ax, keepdim, dtype});
}

// A scan over `axis`, with no axis meaning the flattened tensor; 0-D inputs
// scan as one element and keep their shape.
template <typename F>
auto scan_over(const Tensor& x, std::optional<int64_t> axis, const char* api, F&& f) {
  if (!axis) return f(reshape(x, Dims{x.numel()}), int64_t(0), Dims{x.numel()});
  int64_t ax = normalize_axis(*axis, x.dim(), api);
  if (x.dim() == 0) return f(reshape(x, Dims{1}), int64_t(0), Dims{});
  return f(x, ax, x.shape());
}

Tensor vector_norm(const Tensor& x, double p, const Dims& ax, bool keepdim) {
  if (std::isinf(p)) return (p > 0 ? amax : amin)(abs(x), ax, keepdim);
  if (p == 0) return sum(cast(nonzero_mask(x), to_real(x.dtype())), ax, keepdim);
  if (p == 1) return sum(abs(x), ax, keepdim);
  if (p == 2) {
    Tensor sq = is_complex(x.dtype()) ? square(abs(x)) : square(x);
    return sqrt(sum(sq, ax, keepdim));
  }
  Tensor s = sum(binary_scalar("pow", abs(x), Scalar(p), false), ax, keepdim);
  return binary_scalar("pow", s, Scalar(1.0 / p), false);
}

Tensor norm_impl(const Tensor& x0, bool fro, bool nuc, double p, std::optional<Dims> axes, bool keepdim) {
  const char* api = "oar.norm";
  OAR_CHECK(x0.dtype() != DType::Bool, Type, "[oar.norm] does not support bool input");
  Tensor x = as_float(x0);
  if (!axes || axes->size() <= 1) {
    OAR_CHECK(!nuc, Value, "[oar.norm] p='nuc' needs two axes, got ", axes ? axes->size() : 0);
    if (fro) p = 2;
    Dims ax = axes ? normalize_axes(*axes, x.dim(), api) : normalize_axes(Dims{}, x.dim(), api);
    if (std::isinf(p))
      for (int64_t a : ax)
        OAR_CHECK(x.shape()[a] > 0, Value, "[oar.norm] cannot take the inf-norm over the zero-size axis ", a);
    if (x.dim() == 0) ax = {};
    if (ax.empty() && x.dim() == 0) return vector_norm(reshape(x, Dims{1}), p, Dims{0}, false);
    return vector_norm(x, p, ax, keepdim);
  }
  OAR_CHECK(axes->size() == 2, Value, "[oar.norm] axis must be None, an int or a list of at most 2 ints, got ",
            axes->size(), " axes");
  int64_t a0 = normalize_axis((*axes)[0], x.dim(), api), a1 = normalize_axis((*axes)[1], x.dim(), api);
  OAR_CHECK(a0 != a1, Value, "[oar.norm] the two axes must differ, got ", a0, " twice");
  OAR_CHECK(x.dim() >= 2, Value, "[oar.norm] a matrix norm needs a tensor with at least 2 dims");
  if (fro) return sqrt(sum(square(abs(x)), Dims{a0, a1}, keepdim));
  // 'nuc', 2 and -2 come from the singular values.
  if (nuc || std::fabs(p) == 2) return linalg::svd_matrix_norm(x, a0, a1, nuc, p, keepdim, api);
  OAR_CHECK(std::fabs(p) == 1 || std::isinf(p), Value,
            "[oar.norm] a matrix norm supports p in 'fro', 'nuc', 1, -1, 2, -2, inf, -inf, got ", p);
  // p = +-1: extreme column sum (sum over axis 0 first); p = +-inf: extreme row sum.
  int64_t sum_ax = std::fabs(p) == 1 ? a0 : a1, ext_ax = std::fabs(p) == 1 ? a1 : a0;
  OAR_CHECK(x.shape()[ext_ax] > 0, Value, "[oar.norm] cannot take a matrix norm over the zero-size axis ", ext_ax);
  Tensor s = sum(abs(x), Dims{sum_ax}, true);
  Tensor r = p > 0 ? amax(s, Dims{ext_ax}, true) : amin(s, Dims{ext_ax}, true);
  return keepdim ? r : reshape(r, reduced_shape(x.shape(), normalize_axes(Dims{a0, a1}, x.dim(), api), false));
}

std::pair<Tensor, Tensor> cum_extreme(OpDef& op, const Tensor& x, std::optional<int64_t> axis, DType dtype,
                                      const char* api) {
  OAR_CHECK(dtype == DType::Int32 || dtype == DType::Int64, Type, "[", api,
            "] dtype must be int32 or int64, got ", dtype_name(dtype));
  return scan_over(x, axis, api, [&](const Tensor& xx, int64_t ax, const Dims& shape) {
    Tensor in[1] = {xx};
    Tensors r = dispatch(op, in, Attrs{ax});
    Tensor idx = dtype == DType::Int64 ? r[1] : cast(r[1], dtype);
    return std::pair<Tensor, Tensor>(reshape(r[0], shape), reshape(idx, shape));
  });
}

}  // namespace

namespace ops {

Tensor max(const Tensor& x, const Dims& axes, bool keepdim) { return extreme(x, axes, keepdim, true); }
Tensor min(const Tensor& x, const Dims& axes, bool keepdim) { return extreme(x, axes, keepdim, false); }

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdim, DType dtype) {
  return arg_extreme(kArgmax, x, axis, keepdim, dtype, "oar.argmax");
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdim, DType dtype) {
  return arg_extreme(kArgmin, x, axis, keepdim, dtype, "oar.argmin");
}

Tensor all(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims ax = reduce_axes(x, axes, "oar.all", false);
  Tensor zeros_in = sum(logical_not(nonzero_mask(x)), ax, keepdim);
  return equal(zeros_in, zeros_like(zeros_in));
}

Tensor any(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims ax = reduce_axes(x, axes, "oar.any", false);
  Tensor n = sum(nonzero_mask(x), ax, keepdim);
  return not_equal(n, zeros_like(n));
}

Tensor count_nonzero(const Tensor& x, const Dims& axes, bool keepdim) {
  Dims ax = reduce_axes(x, axes, "oar.count_nonzero", false);
  return sum(cast(nonzero_mask(x), DType::Int64), ax, keepdim);
}

Tensor var(const Tensor& x0, const Dims& axes, bool unbiased, bool keepdim) {
  OAR_CHECK(x0.dtype() != DType::Bool, Type, "[oar.var] does not support bool input");
  Tensor x = as_float(x0);
  Dims ax = reduce_axes(x, axes, "oar.var", false);
  int64_t n = reduced_count(x, ax);
  Tensor d = subtract(x, mean(x, ax, true));
  Tensor sq = is_complex(x.dtype()) ? square(abs(d)) : square(d);
  double denom = double(n) - (unbiased ? 1.0 : 0.0);
  // No degrees of freedom left: NaN (0 * inf), as NumPy and Paddle give.
  double inv = denom > 0 ? 1.0 / denom : std::numeric_limits<double>::infinity();
  return scale(sum(sq, ax, keepdim), inv);
}

Tensor stddev(const Tensor& x, const Dims& axes, bool unbiased, bool keepdim) {
  OAR_CHECK(x.dtype() != DType::Bool, Type, "[oar.std] does not support bool input");
  normalize_axes(axes, x.dim(), "oar.std");
  return sqrt(var(x, axes, unbiased, keepdim));
}

std::pair<Tensor, Tensor> median(const Tensor& x, std::optional<int64_t> axis, bool keepdim, const std::string& mode) {
  OAR_CHECK(mode == "avg" || mode == "min", Value, "[oar.median] mode must be 'avg' or 'min', got '", mode, "'");
  OAR_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, Type, "[oar.median] does not support ",
            dtype_name(x.dtype()), " input");
  Tensor xx = x;
  int64_t ax = 0;
  Dims out_shape;
  if (!axis || x.dim() == 0) {
    if (axis) normalize_axis(*axis, x.dim(), "oar.median");
    OAR_CHECK(x.numel() > 0, Value, "[oar.median] cannot take the median of a zero-size tensor of shape ",
              shape_str(x.shape()));
    xx = reshape(x, Dims{x.numel()});
    out_shape = keepdim ? Dims(size_t(x.dim()), 1) : Dims{};
  } else {
    ax = normalize_axis(*axis, x.dim(), "oar.median");
    out_shape = keepdim ? keep_axis_shape(x.shape(), ax, 1) : drop_axis_shape(x.shape(), ax);
  }
  Tensor in[1] = {xx};
  Tensors idx = dispatch(kMedianIndex, in, Attrs{ax});
  Tensor lo = pick_along_axis(xx, idx[0], ax);
  if (mode == "min") {
    Tensor ind = axis ? reshape(idx[0], out_shape) : Tensor();
    return {reshape(lo, out_shape), ind};
  }
  DType ft = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor hi = pick_along_axis(xx, idx[1], ax);
  Tensor avg = scale(add(cast(lo, ft), cast(hi, ft)), 0.5);
  return {reshape(avg, out_shape), Tensor()};
}

Tensor logsumexp(const Tensor& x0, const Dims& axes, bool keepdim) {
  OAR_CHECK(!is_complex(x0.dtype()) && x0.dtype() != DType::Bool, Type, "[oar.logsumexp] does not support ",
            dtype_name(x0.dtype()), " input");
  Tensor x = as_float(x0);
  Dims ax = reduce_axes(x, axes, "oar.logsumexp", false);
  if (x.numel() == 0 || x.dim() == 0) return log(sum(exp(x), ax, keepdim));
  // Shift by the (constant) maximum so exp never overflows; infinite maxima
  // are not shifted, so all -inf stays -inf and +inf stays +inf.
  Tensor m = detach(amax(x, ax, true));
  m = where(unary("isinf", m), zeros_like(m), m);
  Tensor r = add(log(sum(exp(subtract(x, m)), ax, true)), m);
  return keepdim ? r : reshape(r, reduced_shape(x.shape(), ax, false));
}

Tensor norm(const Tensor& x, double p, std::optional<Dims> axes, bool keepdim) {
  return norm_impl(x, false, false, p, axes, keepdim);
}

Tensor norm(const Tensor& x, const std::string& p, std::optional<Dims> axes, bool keepdim) {
  OAR_CHECK(p == "fro" || p == "nuc", Value, "[oar.norm] p must be a number, 'fro' or 'nuc', got '", p, "'");
  return norm_impl(x, p == "fro", p == "nuc", 0, axes, keepdim);
}

Tensor cumsum(const Tensor& x0, std::optional<int64_t> axis, std::optional<DType> dtype, bool reverse) {
  Tensor x = dtype ? cast(x0, *dtype) : x0;
  if (x.dtype() == DType::Bool) x = cast(x, DType::Int64);
  return scan_over(x, axis, "oar.cumsum", [&](const Tensor& xx, int64_t ax, const Dims& shape) {
    return reshape(scan(kCumsum, xx, ax, reverse), shape);
  });
}

Tensor cumprod(const Tensor& x0, std::optional<int64_t> axis, std::optional<DType> dtype) {
  Tensor x = dtype ? cast(x0, *dtype) : x0;
  if (x.dtype() == DType::Bool) x = cast(x, DType::Int64);
  return scan_over(x, axis, "oar.cumprod", [&](const Tensor& xx, int64_t ax, const Dims& shape) {
    return reshape(scan(kCumprod, xx, ax, false), shape);
  });
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, std::optional<int64_t> axis, DType dtype) {
  return cum_extreme(kCummax, x, axis, dtype, "oar.cummax");
}
std::pair<Tensor, Tensor> cummin(const Tensor& x, std::optional<int64_t> axis, DType dtype) {
  return cum_extreme(kCummin, x, axis, dtype, "oar.cummin");
}

Tensor pick_along_axis(const Tensor& x, const Tensor& idx, int64_t axis) {
  Tensor in[2] = {x, idx};
  return dispatch1(kPick, in, Attrs{axis});
}

Tensor put_add_along_axis(const Tensor& src, const Tensor& idx, int64_t axis, const Dims& shape) {
  Tensor in[2] = {src, idx};
  return dispatch1(kPutAdd, in, Attrs{axis, shape});
}

}  // namespace ops
}  // namespace oar

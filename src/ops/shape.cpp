// Shape ops. reshape/transpose/expand/squeeze/unsqueeze/strided_slice are
// views (traits.view): infer_meta computes the strides and no data moves.
#include <algorithm>
#include <limits>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

// reshape: attrs shape, where -1 is inferred, ops::kReshapeCopyDim (-2) copies
// the input's dim at that position, and 0 is a literal zero-size dim. Paddle's
// "0 copies the input dim" is mapped to kReshapeCopyDim by the Python-facing
// binding, so that gradient rules can reshape to shapes that really contain 0,
// and a copied dim stays dynamic in a captured program.
Dims resolve_shape(const Dims& req, const Dims& in, int64_t numel, const char* api) {
  Dims out(req.size());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == kReshapeCopyDim) {
      OAR_CHECK(i < in.size(), Value, "[", api, "] shape[", i, "] is 0 (copy the input dim) but the input has only ",
                in.size(), " dims");
      d = in[i];
    }
    if (d == -1) {
      OAR_CHECK(infer < 0, Value, "[", api, "] only one dim may be -1, got shape ", shape_str(req));
      infer = int64_t(i);
      out[i] = 1;
      continue;
    }
    OAR_CHECK(d >= 0, Value, "[", api, "] shape dims must be >= -1, got ", shape_str(req));
    out[i] = d;
    OAR_CHECK(!__builtin_mul_overflow(known, d, &known), Value, "[", api, "] shape ", shape_str(req),
              " overflows int64");
  }
  if (infer >= 0) {
    OAR_CHECK(known != 0 && numel % known == 0, Value, "[", api, "] cannot reshape a tensor of ", numel,
              " elements (shape ", shape_str(in), ") to ", shape_str(req));
    out[infer] = numel / known;
  } else {
    OAR_CHECK(known == numel, Value, "[", api, "] cannot reshape a tensor of ", numel, " elements (shape ",
              shape_str(in), ") to ", shape_str(req), " (", known, " elements)");
  }
  return out;
}

// Strides that let `shape` view the elements of a tensor with `old_shape` and
// `old_strides` in row-major order without a copy: each run of old dims that
// maps onto a run of new dims (equal products) must itself be contiguous.
// False when no such strides exist (the caller copies first).
bool view_strides(const Dims& old_shape, const Dims& old_strides, const Dims& shape, Dims* out) {
  Dims os, ost;
  for (size_t d = 0; d < old_shape.size(); ++d)
    if (old_shape[d] != 1) {
      os.push_back(old_shape[d]);
      ost.push_back(old_strides[d]);
    }
  for (int64_t v : os)
    if (v == 0) return false;
  out->assign(shape.size(), 1);
  size_t ni = 0, oi = 0;
  while (ni < shape.size() && oi < os.size()) {
    int64_t np = shape[ni], op = os[oi];
    size_t nj = ni + 1, oj = oi + 1;
    while (np != op) {
      if (np < op) {
        if (nj >= shape.size()) return false;
        np *= shape[nj++];
      } else {
        if (oj >= os.size()) return false;
        op *= os[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != os[k + 1] * ost[k + 1]) return false;
    (*out)[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) (*out)[k - 1] = (*out)[k] * shape[k];
    ni = nj;
    oi = oj;
  }
  return oi == os.size();  // trailing new dims are all 1: stride 1 is fine
}

Metas reshape_meta(std::span<const Tensor> in, const Attrs& a) {
  Dims s = resolve_shape(a.ints(0), in[0].shape(), in[0].numel(), "oar.reshape");
  Dims st = contiguous_strides(s);
  if (!in[0].is_contiguous())
    OAR_CHECK(view_strides(in[0].shape(), in[0].strides(), s, &st), Runtime,
              "[oar.reshape] internal: the input's strides do not allow a view");
  return {TensorMeta{s, in[0].dtype(), st, in[0].offset()}};
}
Tensors reshape_grad(const GradCtx& c) { return {reshape(c.grad(), c.in(0).shape())}; }

Metas transpose_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  const Dims& perm = a.ints(0);
  OAR_CHECK(int64_t(perm.size()) == x.dim(), Value, "[oar.transpose] perm ", shape_str(perm), " must have ",
            x.dim(), " entries for a ", x.dim(), "-D tensor");
  Dims shape(perm.size()), strides(perm.size());
  SmallVector<bool, 8> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = normalize_axis(perm[i], x.dim(), "oar.transpose");
    OAR_CHECK(!seen[p], Value, "[oar.transpose] perm ", shape_str(perm), " repeats axis ", p);
    seen[p] = true;
    shape[i] = x.shape()[p];
    strides[i] = x.strides()[p];
  }
  return {TensorMeta{shape, x.dtype(), strides, x.offset()}};
}
Tensors transpose_grad(const GradCtx& c) {
  const Dims& perm = c.attr().ints(0);
  Dims inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i] < 0 ? perm[i] + perm.size() : perm[i]] = int64_t(i);
  return {transpose(c.grad(), inv)};
}

Metas expand_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  const Dims& req = a.ints(0);
  OAR_CHECK(int64_t(req.size()) >= x.dim(), Value, "[oar.expand] the target shape ", shape_str(req),
            " has fewer dims than the input shape ", shape_str(x.shape()));
  size_t lead = req.size() - size_t(x.dim());
  Dims shape(req.size()), strides(req.size());
  for (size_t i = 0; i < req.size(); ++i) {
    if (i < lead) {
      OAR_CHECK(req[i] >= 0, Value, "[oar.expand] new leading dims must be non-negative, got ", shape_str(req));
      shape[i] = req[i];
      strides[i] = 0;
      continue;
    }
    int64_t xd = x.shape()[i - lead];
    int64_t d = req[i] == -1 ? xd : req[i];
    OAR_CHECK(d == xd || xd == 1, Value, "[oar.expand] cannot expand shape ", shape_str(x.shape()), " to ",
              shape_str(req), ": dim ", i, " is ", xd, ", which is not 1");
    OAR_CHECK(d >= 0, Value, "[oar.expand] target dims must be >= -1, got ", shape_str(req));
    shape[i] = d;
    strides[i] = (xd == 1 && d != 1) ? 0 : x.strides()[i - lead];
  }
  checked_numel(shape, "oar.expand");
  return {TensorMeta{shape, x.dtype(), strides, x.offset()}};
}
Tensors expand_grad(const GradCtx& c) { return {sum_to(c.grad(), c.in(0).shape())}; }

// squeeze/unsqueeze: attrs axes (normalised by the front end).
Metas squeeze_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  const Dims& axes = a.ints(0);
  Dims shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    bool drop = x.shape()[d] == 1 && (axes.empty() || std::find(axes.begin(), axes.end(), d) != axes.end());
    if (!drop) { shape.push_back(x.shape()[d]); strides.push_back(x.strides()[d]); }
  }
  return {TensorMeta{shape, x.dtype(), strides, x.offset()}};
}
Metas unsqueeze_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  const Dims& axes = a.ints(0);  // positions in the output, sorted
  int64_t nd = x.dim() + int64_t(axes.size());
  Dims shape, strides;
  size_t k = 0;
  int64_t src = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (k < axes.size() && axes[k] == d) {
      ++k;
      shape.push_back(1);
      strides.push_back(src < x.dim() ? x.strides()[src] * x.shape()[src] : 1);
    } else {
      shape.push_back(x.shape()[src]);
      strides.push_back(x.strides()[src]);
      ++src;
    }
  }
  return {TensorMeta{shape, x.dtype(), strides, x.offset()}};
}

// Note [slice bounds]: strided_slice and slice_scatter store the bounds as the
// user wrote them, with Python slice semantics: negative starts/ends count from
// the end of the dim, out-of-range values clamp, and INT64_MAX / INT64_MIN mean
// "to the end" in the step's direction (an omitted bound). They are resolved
// against the actual size here, in infer_meta, not by the front ends: a traced
// program then keeps x[-1:] or x[::-1] on a dynamic dim correct for every size
// instead of baking in the example's.
int64_t resolve_bound(int64_t v, int64_t n, int64_t step) {
  if (v < 0) v += n;  // n >= 0, so INT64_MIN + n cannot overflow
  return step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
}

TensorMeta slice_view(const Tensor& x, const Attrs& a, const char* api) {
  Dims shape = x.shape(), strides = x.strides();
  int64_t off = x.offset();
  const Dims &axes = a.ints(0), &starts = a.ints(1), &ends = a.ints(2), &steps = a.ints(3);
  OAR_CHECK(axes.size() == starts.size() && axes.size() == ends.size() && axes.size() == steps.size(), Value, "[",
            api, "] axes, starts, ends and strides must have the same length, got ", axes.size(), ", ",
            starts.size(), ", ", ends.size(), " and ", steps.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = normalize_axis(axes[i], x.dim(), api), sp = steps[i];
    OAR_CHECK(sp != 0, Value, "[", api, "] slice step cannot be zero");
    OAR_CHECK(sp != std::numeric_limits<int64_t>::min(), Value, "[", api, "] slice step ", sp, " is out of range");
    const int64_t dim = x.shape()[ax];
    const int64_t st = resolve_bound(starts[i], dim, sp), en = resolve_bound(ends[i], dim, sp);
    // Counted without adding the step to a difference, which could overflow.
    const int64_t n = sp > 0 ? (en > st ? 1 + (en - st - 1) / sp : 0) : (st > en ? 1 + (st - en - 1) / -sp : 0);
    if (n > 0) off += st * x.strides()[ax];
    shape[ax] = n;
    // A step beyond the dim leaves at most one element, whose stride is unused:
    // keep the product from overflowing then.
    int64_t stride = 0;
    strides[ax] = __builtin_mul_overflow(x.strides()[ax], sp, &stride) ? x.strides()[ax] : stride;
  }
  return TensorMeta{shape, x.dtype(), strides, off};
}

Metas slice_meta(std::span<const Tensor> in, const Attrs& a) { return {slice_view(in[0], a, "oar.strided_slice")}; }
// The gradient rules reuse the stored attrs (resolved again against the same
// shapes, Note [slice bounds]); they call the ops directly because the front
// ends check and normalise arguments the attrs already satisfy.
Tensors slice_grad(const GradCtx& c) {
  Tensor in[2] = {zeros_like(c.in(0)), c.grad()};
  return {dispatch1(op_def("slice_scatter"), in, c.attr())};
}

Metas slice_scatter_meta(std::span<const Tensor> in, const Attrs& a) {
  TensorMeta m = slice_view(in[0], a, "oar.slice_scatter");
  OAR_CHECK(in[1].dtype() == in[0].dtype(), Type, "[oar.slice_scatter] value dtype ", dtype_name(in[1].dtype()),
            " must equal the tensor's dtype ", dtype_name(in[0].dtype()));
  broadcast_shapes(in[1].shape(), m.shape, "oar.slice_scatter");
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}
Tensors slice_scatter_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  Tensor g = c.grad();
  Tensor gsrc;
  if (c.needs_grad(1))
    gsrc = sum_to(dispatch1(op_def("strided_slice"), {g}, a), c.in(1).shape());
  Tensor gbase;
  if (c.needs_grad(0)) {
    Tensor in[2] = {g, zeros(Dims{}, g.dtype())};
    gbase = dispatch1(op_def("slice_scatter"), in, a);
  }
  return {gbase, gsrc};
}

constexpr OpTraits kView{.view = true};
OpDef& kReshape = OpBuilder("reshape").attrs({"shape"}).meta(reshape_meta).grad(reshape_grad).traits(kView)
                      .spmd("reshape");
OpDef& kTranspose = OpBuilder("transpose").attrs({"perm"}).meta(transpose_meta).grad(transpose_grad).traits(kView)
                        .spmd("transpose");
OpDef& kExpand = OpBuilder("expand").attrs({"shape"}).meta(expand_meta).grad(expand_grad).traits(kView).spmd("expand");
OpDef& kSqueeze = OpBuilder("squeeze").attrs({"axis"}).meta(squeeze_meta).grad(reshape_grad).traits(kView)
                      .spmd("squeeze");
OpDef& kUnsqueeze = OpBuilder("unsqueeze").attrs({"axis"}).meta(unsqueeze_meta).grad(reshape_grad).traits(kView)
                        .spmd("unsqueeze");
OpDef& kSlice = OpBuilder("strided_slice").attrs({"axes", "starts", "ends", "strides"}).meta(slice_meta)
                    .grad(slice_grad).traits(kView).spmd("strided_slice");
OpDef& kSliceScatter = OpBuilder("slice_scatter").attrs({"axes", "starts", "ends", "strides"})
                           .meta(slice_scatter_meta).grad(slice_scatter_grad).spmd("slice_scatter");

}  // namespace

namespace ops {

Tensor reshape(const Tensor& x, const Dims& shape) {
  if (shape == x.shape()) return x;
  if (std::find(shape.begin(), shape.end(), kReshapeCopyDim) != shape.end() &&
      resolve_shape(shape, x.shape(), x.numel(), "oar.reshape") == x.shape())
    return x;
  // A strided input is viewed when its layout allows (splitting or merging
  // dims that are laid out contiguously), copied otherwise.
  bool view = x.is_contiguous();
  if (!view && x.numel() > 0) {
    Dims st;
    view = view_strides(x.shape(), x.strides(), resolve_shape(shape, x.shape(), x.numel(), "oar.reshape"), &st);
  }
  Tensor in[1] = {view ? x : contiguous(x)};
  return dispatch1(kReshape, in, Attrs{shape});
}

Tensor transpose(const Tensor& x, const Dims& perm) {
  Tensor in[1] = {x};
  return dispatch1(kTranspose, in, Attrs{perm});
}

Tensor swapaxes(const Tensor& x, int64_t a, int64_t b) {
  int64_t nd = x.dim();
  a = normalize_axis(a, nd, "oar.swapaxes");
  b = normalize_axis(b, nd, "oar.swapaxes");
  Dims perm(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < nd; ++i) perm[i] = i;
  std::swap(perm[a], perm[b]);
  return transpose(x, perm);
}

Tensor expand(const Tensor& x, const Dims& shape) {
  if (shape == x.shape()) return x;
  Tensor in[1] = {x};
  return dispatch1(kExpand, in, Attrs{shape});
}

Tensor squeeze(const Tensor& x, const Dims& axes) {
  Dims ax = normalize_axes(axes, x.dim(), "oar.squeeze", false);
  Tensor in[1] = {x};
  return dispatch1(kSqueeze, in, Attrs{ax});
}

Tensor unsqueeze(const Tensor& x, const Dims& axes) {
  int64_t nd = x.dim() + int64_t(axes.size());
  Dims ax;
  for (int64_t a : axes) {
    OAR_CHECK(a >= -nd && a < nd, Index, "[oar.unsqueeze] axis ", a, " is out of range for a result of ", nd,
              " dims; expected -", nd, " <= axis < ", nd);
    ax.push_back(a < 0 ? a + nd : a);
  }
  std::sort(ax.begin(), ax.end());
  for (size_t i = 1; i < ax.size(); ++i)
    OAR_CHECK(ax[i] != ax[i - 1], Value, "[oar.unsqueeze] axis ", ax[i], " appears more than once");
  Tensor in[1] = {x};
  return dispatch1(kUnsqueeze, in, Attrs{ax});
}

// Checks the slice arguments and normalises negative axes (the rank is static);
// the bounds stay as given and are resolved by infer_meta (Note [slice bounds]).
static void check_slice(const Tensor& x, Dims& axes, const Dims& starts, const Dims& ends, const Dims& steps,
                        const char* api) {
  OAR_CHECK(axes.size() == starts.size() && axes.size() == ends.size() && axes.size() == steps.size(), Value, "[",
            api, "] axes, starts, ends and strides must have the same length");
  for (size_t i = 0; i < axes.size(); ++i) {
    axes[i] = normalize_axis(axes[i], x.dim(), api);
    OAR_CHECK(steps[i] != 0, Value, "[", api, "] slice step cannot be zero");
  }
}

Tensor strided_slice(const Tensor& x, const Dims& axes_in, const Dims& starts_in, const Dims& ends_in,
                     const Dims& steps) {
  Dims axes = axes_in, starts = starts_in, ends = ends_in;
  check_slice(x, axes, starts, ends, steps, "oar.strided_slice");
  Tensor in[1] = {x};
  return dispatch1(kSlice, in, Attrs{axes, starts, ends, steps});
}

Tensor slice_scatter(const Tensor& base, const Tensor& src, const Dims& axes_in, const Dims& starts_in,
                     const Dims& ends_in, const Dims& steps) {
  Dims axes = axes_in, starts = starts_in, ends = ends_in;
  check_slice(base, axes, starts, ends, steps, "oar.slice_scatter");
  Tensor in[2] = {base, cast(src, base.dtype())};
  return dispatch1(kSliceScatter, in, Attrs{axes, starts, ends, steps});
}

Tensor& slice_scatter_(Tensor& x, const Tensor& src, const Dims& axes_in, const Dims& starts_in,
                       const Dims& ends_in, const Dims& steps) {
  Dims axes = axes_in, starts = starts_in, ends = ends_in;
  check_slice(x, axes, starts, ends, steps, "Tensor.__setitem__");
  Tensor in[2] = {x, cast(src, x.dtype())};
  return dispatch_inplace(kSliceScatter, x, in, Attrs{axes, starts, ends, steps});
}

Tensor flatten(const Tensor& x, int64_t start_axis, int64_t stop_axis) {
  if (x.dim() == 0) return reshape(x, Dims{1});
  int64_t s = normalize_axis(start_axis, x.dim(), "oar.flatten");
  int64_t e = normalize_axis(stop_axis, x.dim(), "oar.flatten");
  OAR_CHECK(s <= e, Value, "[oar.flatten] start_axis (", start_axis, ") must not be after stop_axis (", stop_axis, ")");
  Dims shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(x.shape()[d]);
  int64_t m = 1;
  for (int64_t d = s; d <= e; ++d) m *= x.shape()[d];
  shape.push_back(m);
  for (int64_t d = e + 1; d < x.dim(); ++d) shape.push_back(x.shape()[d]);
  // The leading dim is left to be inferred (-1) whenever the others determine
  // it: the result is the same, and a captured program keeps a dynamic batch
  // dim dynamic instead of fixing the traced size.
  int64_t rest = 1;
  for (size_t d = 1; d < shape.size(); ++d) rest *= shape[d];
  if (rest > 0 && x.numel() > 0 && shape != x.shape()) shape[0] = -1;
  return reshape(x, shape);
}

}  // namespace ops
}  // namespace oar

// Shape manipulation: concat (a kernel: kernels/cpu/manip.cpp), flip and
// diagonal (views) are the primitives; everything else is a composite of them
// and of the shape views, so gradients come from the parts.
#include "ops/manip.h"

#include <algorithm>

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

// reshape to an exact shape. ops::reshape reads a 0 in the shape as "keep
// this input dim" (Paddle semantics), so zero-size results are built as a
// broadcast of sum(x) instead, which keeps them connected for autograd.
Tensor reshape_exact(const Tensor& x, const Dims& shape) {
  if (checked_numel(shape, "oar.reshape") > 0) return reshape(x, shape);
  if (!is_inexact(x.dtype())) return zeros(shape, x.dtype());
  return expand(sum(x), shape);
}

Tensor flat(const Tensor& x) { return reshape_exact(x, Dims{x.numel()}); }

// concat: attrs axis (normalised). Inputs share dtype and rank (the front end casts).
Metas concat_meta(std::span<const Tensor> in, const Attrs& a) {
  OAR_CHECK(!in.empty(), Value, "[oar.concat] expects at least one tensor");
  const Tensor& x0 = in[0];
  int64_t axis = a.i(0);
  OAR_CHECK(x0.dim() > 0, Value, "[oar.concat] cannot concatenate 0-D tensors");
  OAR_CHECK(axis >= 0 && axis < x0.dim(), Index, "[oar.concat] axis ", axis, " is out of range for ", x0.dim(),
            "-D tensors");
  Dims shape = x0.shape();
  int64_t total = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor& t = in[k];
    OAR_CHECK(t.dtype() == x0.dtype(), Type, "[oar.concat] all tensors must have one dtype, got ",
              dtype_name(x0.dtype()), " and ", dtype_name(t.dtype()));
    OAR_CHECK(t.dim() == x0.dim(), Value, "[oar.concat] all tensors must have the same rank; tensor 0 has shape ",
              shape_str(x0.shape()), " but tensor ", k, " has shape ", shape_str(t.shape()));
    for (int64_t d = 0; d < t.dim(); ++d)
      OAR_CHECK(d == axis || t.shape()[d] == x0.shape()[d], Value,
                "[oar.concat] shapes must match except along axis ", axis, "; tensor 0 has shape ",
                shape_str(x0.shape()), " but tensor ", k, " has shape ", shape_str(t.shape()));
    OAR_CHECK(!__builtin_add_overflow(total, t.shape()[axis], &total), Value, "[oar.concat] result size overflows");
  }
  shape[axis] = total;
  checked_numel(shape, "oar.concat");
  return {TensorMeta{shape, x0.dtype()}};
}

Tensors concat_grad(const GradCtx& c) {
  int64_t axis = c.attr().i(0);
  Tensor g = c.grad();
  Tensors out;
  int64_t off = 0;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    int64_t n = c.in(k).shape()[axis];
    out.push_back(c.needs_grad(k) ? strided_slice(g, Dims{axis}, Dims{off}, Dims{off + n}, Dims{1}) : Tensor());
    off += n;
  }
  return out;
}

// Length of the `offset` diagonal of an (n1, n2) plane.
int64_t diag_len(int64_t n1, int64_t n2, int64_t offset) {
  // (compared before subtracting: n2 - offset overflows for offset = INT64_MIN)
  if (offset >= 0) return offset >= n2 ? 0 : std::min(n1, n2 - offset);
  return offset <= -n1 ? 0 : std::min(n1 + offset, n2);
}

// diagonal: attrs offset, axis1, axis2 (normalised, distinct).
Metas diagonal_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t off = a.i(0), a1 = a.i(1), a2 = a.i(2);
  OAR_CHECK(x.dim() >= 2, Value, "[oar.diagonal] expects a tensor of at least 2 dims, got shape ",
            shape_str(x.shape()));
  OAR_CHECK(a1 != a2 && a1 >= 0 && a2 >= 0 && a1 < x.dim() && a2 < x.dim(), Value,
            "[oar.diagonal] axis1 and axis2 must be distinct axes, got ", a1, " and ", a2);
  Dims shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != a1 && d != a2) { shape.push_back(x.shape()[d]); strides.push_back(x.strides()[d]); }
  int64_t n1 = x.shape()[a1], n2 = x.shape()[a2];
  int64_t len = diag_len(n1, n2, off);
  int64_t offset = x.offset();
  if (len > 0) offset += off >= 0 ? off * x.strides()[a2] : -off * x.strides()[a1];
  shape.push_back(len);
  strides.push_back(x.strides()[a1] + x.strides()[a2]);
  return {TensorMeta{shape, x.dtype(), strides, offset}};
}

// Places g (shape [B..., L]) on the `off` diagonal of an [B..., n1, n2]
// tensor whose other entries are `fill` (0-D): g is zero-padded to a row (or
// column) vector and selected by a diagonal mask, so the result stays
// differentiable in g.
Tensor diag_embed(const Tensor& g, int64_t n1, int64_t n2, int64_t off, const Tensor& fill) {
  int64_t len = g.shape().back(), nd = g.dim();
  int64_t target = off >= 0 ? n1 : n2;
  Tensor v = g;
  if (target > len) {
    Dims zs = g.shape();
    zs.back() = target - len;
    Tensor parts[2] = {g, zeros(zs, g.dtype())};
    v = concat(parts, nd - 1);
  }
  v = unsqueeze(v, Dims{off >= 0 ? nd : nd - 1});  // [B..., n1, 1] or [B..., 1, n2]
  Tensor rows = reshape_exact(arange(Scalar(int64_t(0)), Scalar(n1), Scalar(int64_t(1)), DType::Int64), Dims{n1, 1});
  Tensor cols = reshape_exact(arange(Scalar(int64_t(0)), Scalar(n2), Scalar(int64_t(1)), DType::Int64), Dims{1, n2});
  Tensor mask = equal(subtract(cols, rows), full(Dims{}, Scalar(off), DType::Int64));
  return where(mask, v, fill);
}

Tensors diagonal_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  int64_t off = c.attr().i(0), a1 = c.attr().i(1), a2 = c.attr().i(2);
  Tensor g = c.grad();
  if (g.numel() == 0 || x.numel() == 0) return {zeros_like(x)};
  Dims perm;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != a1 && d != a2) perm.push_back(d);
  perm.push_back(a1);
  perm.push_back(a2);
  Tensor z = diag_embed(g, x.shape()[a1], x.shape()[a2], off, zeros(Dims{}, g.dtype()));
  Dims inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = int64_t(i);
  return {transpose(z, inv)};
}

// flip: attrs axes (normalised). A view with negated strides.
Metas flip_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  Dims strides = x.strides();
  int64_t off = x.offset();
  for (int64_t ax : a.ints(0)) {
    OAR_CHECK(ax >= 0 && ax < x.dim(), Index, "[oar.flip] axis ", ax, " is out of range for a ", x.dim(),
              "-D tensor");
    if (x.shape()[ax] > 0) off += (x.shape()[ax] - 1) * strides[ax];
    strides[ax] = -strides[ax];
  }
  return {TensorMeta{x.shape(), x.dtype(), strides, off}};
}
Tensors flip_grad(const GradCtx& c);

OpDef& kConcat = OpBuilder("concat").attrs({"axis"}).meta(concat_meta).grad(concat_grad).saves(true, false)
                     .spmd("concat");
OpDef& kDiagonal = OpBuilder("diagonal").attrs({"offset", "axis1", "axis2"}).meta(diagonal_meta)
                       .grad(diagonal_grad).traits({.view = true});

OpDef& kFlipView = OpBuilder("flip").attrs({"axis"}).meta(flip_meta).grad(flip_grad).traits({.view = true});

Tensor flip_view(const Tensor& x, const Dims& axes) {
  Tensor in[1] = {x};
  return dispatch1(kFlipView, in, Attrs{axes});
}
Tensors flip_grad(const GradCtx& c) { return {flip_view(c.grad(), c.attr().ints(0))}; }

// split: attrs axis (normalised), sections (sizes, summing to the axis size).
// One multi-output view op, so the gradient is one concat of the parts'
// gradients rather than a scatter into zeros per part.
Metas split_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t axis = a.i(0);
  const Dims& sec = a.ints(1);
  Metas out;
  int64_t off = x.offset();
  for (int64_t s : sec) {
    Dims shape = x.shape();
    shape[axis] = s;
    out.push_back(TensorMeta{shape, x.dtype(), x.strides(), s > 0 ? off : x.offset()});
    off += s * x.strides()[axis];
  }
  return out;
}
Tensors split_grad(const GradCtx& c) {
  Tensors parts;
  for (size_t i = 0; i < c.out_metas.size(); ++i) parts.push_back(c.grad(i));
  return {concat(std::span<const Tensor>(parts.data(), parts.size()), c.attr().i(0))};
}
OpDef& kSplit = OpBuilder("split").attrs({"axis", "sections"}).meta(split_meta).grad(split_grad)
                    .traits({.view = true}).saves(false, false).spmd("split");

Tensor slice1(const Tensor& x, int64_t axis, int64_t start, int64_t end) {
  return strided_slice(x, Dims{axis}, Dims{start}, Dims{end}, Dims{1});
}

Tensor flip1(const Tensor& x, int64_t axis) { return flip_view(x, Dims{axis}); }

// x with size `n` along axis (x has size 1 there).
Tensor expand_axis(const Tensor& x, int64_t axis, int64_t n) {
  Dims s = x.shape();
  s[axis] = n;
  return expand(x, s);
}

}  // namespace

namespace ops {

Tensor concat(std::span<const Tensor> xs, int64_t axis) {
  OAR_CHECK(!xs.empty(), Value, "[oar.concat] expects a non-empty list of tensors");
  DType dt = xs[0].dtype();
  for (const Tensor& t : xs) dt = promote_types(dt, t.dtype());
  OAR_CHECK(xs[0].dim() > 0, Value, "[oar.concat] cannot concatenate 0-D tensors; use oar.stack");
  int64_t ax = normalize_axis(axis, xs[0].dim(), "oar.concat");
  Tensors in;
  for (const Tensor& t : xs) in.push_back(cast(t, dt));
  return dispatch1(kConcat, std::span<const Tensor>(in.data(), in.size()), Attrs{ax});
}

Tensor stack(std::span<const Tensor> xs, int64_t axis) {
  OAR_CHECK(!xs.empty(), Value, "[oar.stack] expects a non-empty list of tensors");
  int64_t nd = xs[0].dim() + 1;
  OAR_CHECK(axis >= -nd && axis < nd, Index, "[oar.stack] axis ", axis, " is out of range for a result of ", nd,
            " dims; expected -", nd, " <= axis < ", nd);
  int64_t ax = axis < 0 ? axis + nd : axis;
  Tensors in;
  for (size_t k = 0; k < xs.size(); ++k) {
    OAR_CHECK(xs[k].shape() == xs[0].shape(), Value, "[oar.stack] all tensors must have the same shape; tensor 0 has ",
              shape_str(xs[0].shape()), " but tensor ", k, " has ", shape_str(xs[k].shape()));
    in.push_back(unsqueeze(xs[k], Dims{ax}));
  }
  return concat(std::span<const Tensor>(in.data(), in.size()), ax);
}

Tensors split(const Tensor& x, const Dims& sections, int64_t axis) {
  OAR_CHECK(x.dim() > 0, Value, "[oar.split] cannot split a 0-D tensor");
  int64_t ax = normalize_axis(axis, x.dim(), "oar.split");
  OAR_CHECK(!sections.empty(), Value, "[oar.split] num_or_sections must not be empty");
  int64_t n = x.shape()[ax], known = 0, infer = -1;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i] == -1) {
      OAR_CHECK(infer < 0, Value, "[oar.split] only one section may be -1, got ", shape_str(sections));
      infer = int64_t(i);
      continue;
    }
    OAR_CHECK(sections[i] >= 0, Value, "[oar.split] sections must be >= 0 (or one -1), got ", shape_str(sections));
    OAR_CHECK(!__builtin_add_overflow(known, sections[i], &known), Value, "[oar.split] sections overflow");
  }
  Dims sec = sections;
  if (infer >= 0) {
    OAR_CHECK(known <= n, Value, "[oar.split] sections ", shape_str(sections), " add up to more than the size ", n,
              " of axis ", ax);
    sec[infer] = n - known;
  } else {
    OAR_CHECK(known == n, Value, "[oar.split] sections ", shape_str(sections), " must add up to the size ", n,
              " of axis ", ax, ", got ", known);
  }
  Tensor in[1] = {x};
  return dispatch(kSplit, in, Attrs{ax, sec});
}

Tensors split_equal(const Tensor& x, int64_t num, int64_t axis) {
  OAR_CHECK(x.dim() > 0, Value, "[oar.split] cannot split a 0-D tensor");
  int64_t ax = normalize_axis(axis, x.dim(), "oar.split");
  OAR_CHECK(num > 0, Value, "[oar.split] the number of sections must be positive, got ", num);
  int64_t n = x.shape()[ax];
  OAR_CHECK(n % num == 0, Value, "[oar.split] the size ", n, " of axis ", ax, " is not divisible by ", num);
  return split(x, Dims(size_t(num), n / num), ax);
}

Tensors chunk(const Tensor& x, int64_t chunks, int64_t axis) {
  OAR_CHECK(x.dim() > 0, Value, "[oar.chunk] cannot split a 0-D tensor");
  int64_t ax = normalize_axis(axis, x.dim(), "oar.chunk");
  OAR_CHECK(chunks > 0, Value, "[oar.chunk] chunks must be positive, got ", chunks);
  OAR_CHECK(x.shape()[ax] % chunks == 0, Value, "[oar.chunk] the size ", x.shape()[ax], " of axis ", ax,
            " is not divisible by chunks (", chunks, ")");
  return split_equal(x, chunks, ax);
}

Tensors unbind(const Tensor& x, int64_t axis) {
  OAR_CHECK(x.dim() > 0, Value, "[oar.unbind] cannot unbind a 0-D tensor");
  int64_t ax = normalize_axis(axis, x.dim(), "oar.unbind");
  Tensors out;
  for (int64_t i = 0; i < x.shape()[ax]; ++i) out.push_back(squeeze(slice1(x, ax, i, i + 1), Dims{ax}));
  return out;
}

Tensor tile(const Tensor& x, const Dims& repeat_times) {
  for (int64_t r : repeat_times)
    OAR_CHECK(r >= 0, Value, "[oar.tile] repeat_times must be >= 0, got ", shape_str(repeat_times));
  size_t nd = std::max(repeat_times.size(), size_t(x.dim()));
  Dims reps(nd - repeat_times.size(), 1);
  for (int64_t r : repeat_times) reps.push_back(r);
  Dims xs(nd - size_t(x.dim()), 1);
  for (int64_t d : x.shape()) xs.push_back(d);
  if (std::all_of(reps.begin(), reps.end(), [](int64_t r) { return r == 1; })) return clone(reshape_exact(x, xs));
  // x viewed as [1, d0, 1, d1, ...] and broadcast to [r0, d0, r1, d1, ...].
  Tensor v = reshape_exact(x, xs);
  Dims ax, big, out;
  for (size_t i = 0; i < nd; ++i) {
    ax.push_back(int64_t(2 * i));
    big.push_back(reps[i]);
    big.push_back(xs[i]);
    int64_t o;
    OAR_CHECK(!__builtin_mul_overflow(reps[i], xs[i], &o), Value, "[oar.tile] result shape overflows");
    out.push_back(o);
  }
  checked_numel(out, "oar.tile");
  if (2 * nd <= size_t(kMaxRank)) return reshape_exact(expand(unsqueeze(v, ax), big), out);
  // Too many dims to interleave them all (Note [maximum rank]): one axis at a
  // time, x viewed as [before, 1, rest] and broadcast to [before, r, rest].
  Dims cur = xs;
  for (size_t i = 0; i < nd; ++i) {
    if (reps[i] == 1) continue;
    int64_t before = 1, rest = 1;
    for (size_t j = 0; j < i; ++j) before *= cur[j];
    for (size_t j = i; j < nd; ++j) rest *= cur[j];
    v = reshape_exact(expand(reshape_exact(v, Dims{before, 1, rest}), Dims{before, reps[i], rest}),
                      Dims{before * reps[i] * rest});
    cur[i] *= reps[i];
  }
  return reshape_exact(v, out);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t axis, bool flatten_first) {
  OAR_CHECK(repeats >= 0, Value, "[oar.repeat_interleave] repeats must be >= 0, got ", repeats);
  Tensor v = flatten_first ? flat(x) : x;
  if (v.dim() == 0) v = reshape_exact(v, Dims{1});
  int64_t ax = normalize_axis(axis, v.dim(), "oar.repeat_interleave");
  Dims big = v.shape();
  big.insert(size_t(ax + 1), repeats);
  Dims out = v.shape();
  OAR_CHECK(!__builtin_mul_overflow(out[ax], repeats, &out[ax]), Value, "[oar.repeat_interleave] result overflows");
  checked_numel(out, "oar.repeat_interleave");
  return reshape_exact(expand(unsqueeze(v, Dims{ax + 1}), big), out);
}

Tensor repeat_interleave(const Tensor& x, const Dims& repeats, int64_t axis, bool flatten_first) {
  Tensor v = flatten_first ? flat(x) : x;
  if (v.dim() == 0) v = reshape_exact(v, Dims{1});
  int64_t ax = normalize_axis(axis, v.dim(), "oar.repeat_interleave");
  int64_t n = v.shape()[ax];
  if (repeats.size() == 1) return repeat_interleave(v, repeats[0], ax, false);
  OAR_CHECK(int64_t(repeats.size()) == n, Value, "[oar.repeat_interleave] repeats has ", repeats.size(),
            " entries but axis ", ax, " has size ", n);
  for (int64_t r : repeats)
    OAR_CHECK(r >= 0, Value, "[oar.repeat_interleave] repeats must be >= 0, got ", shape_str(repeats));
  // Runs of equal counts become one sliced, broadcast piece.
  Tensors parts;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && repeats[j] == repeats[i]) ++j;
    if (repeats[i] > 0) parts.push_back(repeat_interleave(slice1(v, ax, i, j), repeats[i], ax, false));
    i = j;
  }
  if (parts.empty()) return clone(slice1(v, ax, 0, 0));
  if (parts.size() == 1) return parts[0];
  return concat(std::span<const Tensor>(parts.data(), parts.size()), ax);
}

Tensor flip(const Tensor& x, const Dims& axes) {
  if (x.dim() == 0) {
    for (int64_t a : axes) normalize_axis(a, 0, "oar.flip");
    return clone(x);
  }
  Dims ax = normalize_axes(axes, x.dim(), "oar.flip", false);
  if (ax.empty()) return clone(x);
  // A copy, as in Paddle: writing into the result must not change x.
  return clone(flip_view(x, ax));
}

Tensor roll(const Tensor& x, const Dims& shifts, const Dims& axes) {
  if (axes.empty()) {
    OAR_CHECK(shifts.size() == 1, Value, "[oar.roll] without axis, shifts must be one int, got ",
              shape_str(shifts));
    return reshape_exact(roll(flat(x), shifts, Dims{0}), x.shape());
  }
  OAR_CHECK(shifts.size() == axes.size(), Value, "[oar.roll] shifts ", shape_str(shifts),
            " and axis ", shape_str(axes), " must have the same length");
  Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = normalize_axis(axes[i], x.dim(), "oar.roll");
    if (x.dim() == 0) continue;
    int64_t n = x.shape()[ax];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    Tensor parts[2] = {slice1(y, ax, n - s, n), slice1(y, ax, 0, n - s)};
    y = concat(parts, ax);
  }
  return y.same(x) ? clone(x) : y;
}

Tensor pad(const Tensor& x, const Dims& axes_in, const Dims& before, const Dims& after, const std::string& mode,
           double value) {
  OAR_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular", Value,
            "[oar.pad] mode must be 'constant', 'reflect', 'replicate' or 'circular', got '", mode, "'");
  OAR_CHECK(axes_in.size() == before.size() && axes_in.size() == after.size(), Value,
            "[oar.pad] internal: one (before, after) pair per axis");
  Dims axes;
  for (int64_t a : axes_in) axes.push_back(normalize_axis(a, x.dim(), "oar.pad"));
  Tensor y = x;
  if (mode == "constant") {
    // Negative pads crop first; then one slice_scatter into a filled tensor.
    Dims cax, cst, cen, one;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t n = y.shape()[axes[i]];
      int64_t s = std::min<int64_t>(before[i] < 0 ? -before[i] : 0, n);
      int64_t e = std::max<int64_t>(after[i] < 0 ? n + after[i] : n, s);
      if (s != 0 || e != n) { cax.push_back(axes[i]); cst.push_back(s); cen.push_back(e); one.push_back(1); }
    }
    if (!cax.empty()) y = strided_slice(y, cax, cst, cen, one);
    Scalar v = is_inexact(x.dtype()) ? Scalar(value) : Scalar(int64_t(value));
    if (x.dtype() == DType::Bool) v = Scalar(value != 0);
    // One concat per padded axis; its gradient slices the padding off again.
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t b = std::max<int64_t>(before[i], 0), a = std::max<int64_t>(after[i], 0);
      if (b == 0 && a == 0) continue;
      Dims bs = y.shape(), as = y.shape();
      bs[axes[i]] = b;
      as[axes[i]] = a;
      checked_numel(bs, "oar.pad");
      checked_numel(as, "oar.pad");
      Tensor parts[3] = {full(bs, v, x.dtype()), y, full(as, v, x.dtype())};
      y = concat(parts, axes[i]);
    }
    return y.same(x) ? clone(x) : y;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = axes[i], b = before[i], a = after[i], n = y.shape()[ax];
    OAR_CHECK(b >= 0 && a >= 0, Value, "[oar.pad] pads must be >= 0 in mode '", mode, "', got ", b, " and ", a);
    if (b == 0 && a == 0) continue;
    Tensor left, right;
    if (mode == "reflect") {
      OAR_CHECK(b < n && a < n, Value, "[oar.pad] reflect pads (", b, ", ", a, ") must be less than the size ", n,
                " of axis ", ax);
      left = flip1(slice1(y, ax, 1, b + 1), ax);
      right = flip1(slice1(y, ax, n - 1 - a, n - 1), ax);
    } else if (mode == "replicate") {
      OAR_CHECK(n > 0, Value, "[oar.pad] cannot replicate-pad the zero-size axis ", ax);
      left = expand_axis(slice1(y, ax, 0, 1), ax, b);
      right = expand_axis(slice1(y, ax, n - 1, n), ax, a);
    } else {
      OAR_CHECK(b <= n && a <= n, Value, "[oar.pad] circular pads (", b, ", ", a, ") must not exceed the size ", n,
                " of axis ", ax);
      left = slice1(y, ax, n - b, n);
      right = slice1(y, ax, 0, a);
    }
    Tensor parts[3] = {left, y, right};
    y = concat(parts, ax);
  }
  return y.same(x) ? clone(x) : y;
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t axis1, int64_t axis2) {
  OAR_CHECK(x.dim() >= 2, Value, "[oar.diagonal] expects a tensor of at least 2 dims, got shape ",
            shape_str(x.shape()));
  int64_t a1 = normalize_axis(axis1, x.dim(), "oar.diagonal");
  int64_t a2 = normalize_axis(axis2, x.dim(), "oar.diagonal");
  OAR_CHECK(a1 != a2, Value, "[oar.diagonal] axis1 and axis2 must differ, both are ", a1);
  Tensor in[1] = {x};
  return dispatch1(kDiagonal, in, Attrs{offset, a1, a2});
}

static Tensor tri(const Tensor& x, int64_t k, bool lower, const char* api) {
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] expects a tensor of at least 2 dims, got shape ",
            shape_str(x.shape()));
  int64_t n = x.shape()[x.dim() - 2], m = x.shape()[x.dim() - 1];
  Tensor rows = reshape_exact(arange(Scalar(int64_t(0)), Scalar(n), Scalar(int64_t(1)), DType::Int64), Dims{n, 1});
  Tensor cols = reshape_exact(arange(Scalar(int64_t(0)), Scalar(m), Scalar(int64_t(1)), DType::Int64), Dims{1, m});
  Tensor d = subtract(cols, rows);
  Tensor kk = full(Dims{}, Scalar(k), DType::Int64);
  Tensor mask = lower ? less_equal(d, kk) : greater_equal(d, kk);
  return where(mask, x, zeros(Dims{}, x.dtype()));
}

Tensor tril(const Tensor& x, int64_t diagonal) { return tri(x, diagonal, true, "oar.tril"); }
Tensor triu(const Tensor& x, int64_t diagonal) { return tri(x, diagonal, false, "oar.triu"); }

Tensor diag(const Tensor& x, int64_t offset, double padding_value) {
  OAR_CHECK(x.dim() <= 2, Value, "[oar.diag] expects a 0-D, 1-D or 2-D tensor, got shape ", shape_str(x.shape()));
  if (x.dim() == 2) return clone(diagonal(x, offset, 0, 1));
  Tensor v = x.dim() == 0 ? reshape_exact(x, Dims{1}) : x;
  int64_t len = v.shape()[0];
  int64_t n;
  OAR_CHECK(offset != INT64_MIN && !__builtin_add_overflow(len, offset < 0 ? -offset : offset, &n), Value,
            "[oar.diag] the offset ", offset, " makes the result size overflow");
  int64_t nn;
  OAR_CHECK(!__builtin_mul_overflow(n, n, &nn), Value, "[oar.diag] result size overflows");
  Scalar pv = is_inexact(x.dtype()) ? Scalar(padding_value) : Scalar(int64_t(padding_value));
  if (x.dtype() == DType::Bool) pv = Scalar(padding_value != 0);
  if (nn == 0) return full(Dims{n, n}, pv, x.dtype());
  return diag_embed(v, n, n, offset, full(Dims{}, pv, x.dtype()));
}

Tensor diagflat(const Tensor& x, int64_t offset) { return diag(flat(x), offset, 0); }

Tensors meshgrid(std::span<const Tensor> xs) {
  Dims shape;
  for (size_t i = 0; i < xs.size(); ++i) {
    OAR_CHECK(xs[i].dim() <= 1, Value, "[oar.meshgrid] expects 0-D or 1-D tensors, got shape ",
              shape_str(xs[i].shape()), " for input ", i);
    shape.push_back(xs[i].numel());
  }
  checked_numel(shape, "oar.meshgrid");
  Tensors out;
  for (size_t i = 0; i < xs.size(); ++i) {
    Dims s(xs.size(), 1);
    s[i] = shape[i];
    out.push_back(clone(expand(reshape_exact(xs[i], s), shape)));
  }
  return out;
}

}  // namespace ops
}  // namespace oar

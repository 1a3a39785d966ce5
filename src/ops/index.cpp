// Indexing ops (kernels/cpu/index.cpp). The primitives with kernels are
// index_select/index_add, take_along_axis/put_along_axis, gather_nd/scatter_nd
// (each pair is the other's gradient), argsort, topk, nonzero, unique_rows and
// searchsorted; gather, scatter, sort, masked_fill, masked_select and unique
// are composites of them, so their gradients come for free.
//
// Index values are checked by the kernels before their parallel loops (the
// data is needed), so a bad index raises IndexError and never reads out of
// bounds.
#include "ops/index.h"

#include <array>

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

void check_index_dtype(const Tensor& idx, const char* api, const char* what = "index") {
  OAR_CHECK(idx.dtype() == DType::Int32 || idx.dtype() == DType::Int64, Type, "[", api, "] ", what,
            " must be an int32 or int64 tensor, got ", dtype_name(idx.dtype()));
}

Dims with_axis(Dims s, int64_t axis, int64_t n) {
  s[axis] = n;
  return s;
}

// Shapes equal except along `axis`.
bool same_but_axis(const Dims& a, const Dims& b, int64_t axis) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (int64_t(d) != axis && a[d] != b[d]) return false;
  return true;
}

// ---- index_select / index_add: attrs axis (normalised)
Metas index_select_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1];
  check_index_dtype(idx, "oar.index_select");
  OAR_CHECK(idx.dim() == 1, Value, "[oar.index_select] index must be 1-D, got shape ", shape_str(idx.shape()));
  return {TensorMeta{with_axis(x.shape(), a.i(0), idx.numel()), x.dtype()}};
}
Tensors index_select_grad(const GradCtx& c) {
  return {index_add(zeros_like(c.in(0)), c.in(1), c.attr().i(0), c.grad()), Tensor()};
}

Metas index_add_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1], &v = in[2];
  check_index_dtype(idx, "oar.index_add");
  OAR_CHECK(idx.dim() == 1, Value, "[oar.index_add] index must be 1-D, got shape ", shape_str(idx.shape()));
  Dims want = with_axis(x.shape(), a.i(0), idx.numel());
  OAR_CHECK(v.shape() == want, Value, "[oar.index_add] value must have shape ", shape_str(want), ", got ",
            shape_str(v.shape()));
  return {TensorMeta{x.shape(), x.dtype()}};
}
Tensors index_add_grad(const GradCtx& c) {
  Tensor g = c.grad();
  Tensor gv = c.needs_grad(2) ? index_select(g, c.in(1), c.attr().i(0)) : Tensor();
  return {g, Tensor(), gv};
}

// ---- take_along_axis / put_along_axis
// take attrs: axis. put attrs: axis, reduce (PutReduce), include_self. put's
// indices may be smaller than arr in the dims other than axis (the corner they
// cover is written); values always have the indices' shape here (the API
// function broadcasts or slices them).
Tensor put_raw(const Tensor& x, const Tensor& idx, const Tensor& v, int64_t axis, PutReduce r, bool self);

Metas take_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1];
  check_index_dtype(idx, "oar.take_along_axis", "indices");
  OAR_CHECK(same_but_axis(x.shape(), idx.shape(), a.i(0)), Value, "[oar.take_along_axis] indices shape ",
            shape_str(idx.shape()), " must match arr shape ", shape_str(x.shape()), " except along axis ", a.i(0));
  return {TensorMeta{idx.shape(), x.dtype()}};
}
Tensors take_grad(const GradCtx& c) {
  return {put_raw(zeros_like(c.in(0)), c.in(1), c.grad(), c.attr().i(0), PutReduce::Add, true), Tensor()};
}

// indices fit inside arr except along axis.
bool fits_but_axis(const Dims& x, const Dims& idx, int64_t axis) {
  if (x.size() != idx.size()) return false;
  for (size_t d = 0; d < x.size(); ++d)
    if (int64_t(d) != axis && idx[d] > x[d]) return false;
  return true;
}

Metas put_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor &x = in[0], &idx = in[1], &v = in[2];
  check_index_dtype(idx, "oar.put_along_axis", "indices");
  OAR_CHECK(fits_but_axis(x.shape(), idx.shape(), a.i(0)), Value, "[oar.put_along_axis] indices shape ",
            shape_str(idx.shape()), " must not exceed arr shape ", shape_str(x.shape()), " except along axis ",
            a.i(0));
  OAR_CHECK(v.shape() == idx.shape(), Value, "[oar.put_along_axis] values shape ", shape_str(v.shape()),
            " must equal the indices shape ", shape_str(idx.shape()));
  int64_t r = a.i(1);
  OAR_CHECK(r >= 0 && r <= int64_t(PutReduce::Amax), Value, "[oar.put_along_axis] unknown reduce mode ", r);
  OAR_CHECK(!is_complex(x.dtype()) || (r != int64_t(PutReduce::Amin) && r != int64_t(PutReduce::Amax)), Type,
            "[oar.put_along_axis] reduce='amin'/'amax' needs a real dtype, got ", dtype_name(x.dtype()));
  OAR_CHECK(x.dtype() != DType::Bool || r != int64_t(PutReduce::Mean), Type,
            "[oar.put_along_axis] reduce='mean' needs a numeric dtype, got bool");
  return {TensorMeta{x.shape(), x.dtype()}};
}

// t's entries at idx along axis (t has arr's shape; idx may cover only a corner of it).
Tensor gather_at(const Tensor& t, const Tensor& idx, int64_t axis) {
  if (same_but_axis(t.shape(), idx.shape(), axis)) return take_along_axis(t, idx, axis, false);
  Dims axes, starts, ends, steps;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == axis) continue;
    axes.push_back(d);
    starts.push_back(0);
    ends.push_back(idx.shape()[d]);
    steps.push_back(1);
  }
  return take_along_axis(strided_slice(t, axes, starts, ends, steps), idx, axis, false);
}

// Gradients of every reduce mode. n_p is the number of values written to arr
// position p; positions not written keep arr's value, so their gradient is g.
Tensors put_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &idx = c.in(1), &v = c.in(2);
  Tensor g = c.grad();
  int64_t ax = c.attr().i(0);
  auto mode = PutReduce(c.attr().i(1));
  bool inc = c.attr().b(2);
  DType dt = x.dtype();
  Tensor zero = scalar_tensor(0, dt), one = scalar_tensor(1, dt);
  // t with the written positions zeroed.
  auto unwritten = [&](const Tensor& t) { return put_raw(t, idx, zeros_like(v, t.dtype()), ax, PutReduce::Assign, true); };
  bool nx = c.needs_grad(0), nv = c.needs_grad(2);
  Tensor gx, gv;
  switch (mode) {
    case PutReduce::Assign: {
      if (nx) gx = unwritten(g);
      if (nv) {
        // Of repeated indices only the last write (largest position along
        // axis, the kernel's serial order) reaches the output.
        int64_t k = idx.shape()[ax];
        Dims s(size_t(idx.dim()), 1);
        s[ax] = k;
        Tensor pos = expand(reshape(arange(0, k, 1, DType::Int64), s), idx.shape());
        Tensor last = put_raw(full_like(x, -1, DType::Int64), idx, pos, ax, PutReduce::Assign, true);
        gv = where(equal(gather_at(last, idx, ax), pos), gather_at(g, idx, ax), zeros_like(v, g.dtype()));
      }
      break;
    }
    case PutReduce::Add:
      if (nx) gx = inc ? g : unwritten(g);
      if (nv) gv = gather_at(g, idx, ax);
      break;
    case PutReduce::Mean: {
      Tensor n = put_raw(zeros_like(x), idx, ones_like(v), ax, PutReduce::Add, true);
      Tensor denom = where(not_equal(n, zero), inc ? add(n, one) : n, one);
      Tensor gs = divide(g, denom);
      if (nx) gx = inc ? gs : unwritten(g);
      if (nv) gv = gather_at(gs, idx, ax);
      break;
    }
    case PutReduce::Mul: {
      if (nx) gx = inc ? multiply(g, conj(put_raw(ones_like(x), idx, v, ax, PutReduce::Mul, true))) : unwritten(g);
      if (nv) {
        // d out_p / d v_t is the product of the other factors at p. It is
        // formed from the product of the non-zero factors and the number of
        // zero factors, so zeros need no division by zero.
        Tensor vz = equal(v, zero);
        Tensor vnz = where(vz, one, v);
        Tensor xz = equal(x, zero);
        Tensor prod_nz = put_raw(inc ? where(xz, one, x) : ones_like(x), idx, vnz, ax, PutReduce::Mul, true);
        Tensor zeros_n = put_raw(inc ? cast(xz, dt) : zeros_like(x), idx, cast(vz, dt), ax, PutReduce::Add, true);
        Tensor pt = gather_at(prod_nz, idx, ax), zt = gather_at(zeros_n, idx, ax);
        Tensor none = zeros_like(v);
        Tensor others = where(vz, where(equal(zt, one), pt, none), where(equal(zt, zero), divide(pt, vnz), none));
        gv = multiply(gather_at(g, idx, ax), conj(others));
      }
      break;
    }
    case PutReduce::Amin:
    case PutReduce::Amax: {
      // The gradient goes to every contributor equal to the result, split
      // evenly among ties.
      Tensor out;
      {
        NoGradGuard ng;
        out = put_raw(x, idx, v, ax, mode, inc);
      }
      Tensor eqv = cast(equal(gather_at(out, idx, ax), v), dt);
      Tensor eqx = zeros_like(x);
      if (inc) {
        Tensor e = cast(equal(x, out), dt);
        eqx = subtract(e, unwritten(e));  // arr's own value only counts where something was written
      }
      Tensor n = put_raw(eqx, idx, eqv, ax, PutReduce::Add, true);
      Tensor gs = divide(g, where(equal(n, zero), one, n));
      if (nx) gx = add(unwritten(g), multiply(gs, eqx));
      if (nv) gv = multiply(gather_at(gs, idx, ax), eqv);
      break;
    }
  }
  return {gx, Tensor(), gv};
}

// ---- gather_nd / scatter_nd: attrs overwrite (scatter only)
Dims nd_out_shape(const Tensor& x, const Tensor& idx, const char* api) {
  check_index_dtype(idx, api);
  OAR_CHECK(idx.dim() >= 1, Value, "[", api, "] index must have at least 1 dim, got a 0-D tensor");
  int64_t k = idx.shape().back();
  OAR_CHECK(k <= x.dim(), Value, "[", api, "] index.shape[-1] (", k, ") must not exceed x.ndim (", x.dim(), ")");
  Dims s(idx.shape().begin(), idx.shape().end() - 1);
  for (int64_t d = k; d < x.dim(); ++d) s.push_back(x.shape()[d]);
  return s;
}
Metas gather_nd_meta(std::span<const Tensor> in, const Attrs&) {
  return {TensorMeta{nd_out_shape(in[0], in[1], "oar.gather_nd"), in[0].dtype()}};
}
Tensors gather_nd_grad(const GradCtx& c) {
  return {scatter_nd(zeros_like(c.in(0)), c.in(1), c.grad(), false), Tensor()};
}
Metas scatter_nd_meta(std::span<const Tensor> in, const Attrs&) {
  Dims want = nd_out_shape(in[0], in[1], "oar.scatter_nd");
  OAR_CHECK(in[2].shape() == want, Value, "[oar.scatter_nd] updates must have shape ", shape_str(want),
            " (index.shape[:-1] + x.shape[index.shape[-1]:]), got ", shape_str(in[2].shape()));
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}
Tensors scatter_nd_grad(const GradCtx& c) {
  Tensor g = c.grad();
  Tensor gx;
  if (c.needs_grad(0)) gx = c.attr().b(0) ? scatter_nd(g, c.in(1), zeros_like(c.in(2)), true) : g;
  Tensor gu = c.needs_grad(2) ? gather_nd(g, c.in(1)) : Tensor();
  return {gx, Tensor(), gu};
}

// ---- sorting and searching (no gradients: integer outputs)
void check_sortable(const Tensor& x, const char* api) {
  OAR_CHECK(!is_complex(x.dtype()), Type, "[", api, "] complex tensors have no order, got ",
            dtype_name(x.dtype()));
}
Metas argsort_meta(std::span<const Tensor> in, const Attrs&) {
  check_sortable(in[0], "oar.argsort");
  return {TensorMeta{in[0].shape(), DType::Int64}};
}
// attrs k, axis, largest
Metas topk_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_sortable(x, "oar.topk");
  int64_t n = x.dim() == 0 ? 1 : x.shape()[a.i(1)];
  OAR_CHECK(a.i(0) >= 0 && a.i(0) <= n, Value, "[oar.topk] k must be in [0, ", n, "] for an axis of size ", n,
            ", got ", a.i(0));
  Dims s = x.dim() == 0 ? Dims{} : with_axis(x.shape(), a.i(1), a.i(0));
  return {TensorMeta{s, DType::Int64}};
}
Metas dynamic_meta(std::span<const Tensor> in, const Attrs&) {
  return {TensorMeta{Dims{0}, DType::Int64}};
}
Metas unique_meta(std::span<const Tensor> in, const Attrs&) {
  check_sortable(in[0], "oar.unique");
  return {TensorMeta{Dims{0}, DType::Int64}, TensorMeta{Dims{0}, DType::Int64}, TensorMeta{Dims{0}, DType::Int64}};
}
// attrs right
Metas searchsorted_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor &s = in[0], &v = in[1];
  check_sortable(s, "oar.searchsorted");
  OAR_CHECK(s.dim() >= 1, Value, "[oar.searchsorted] sorted_sequence must have at least 1 dim, got a 0-D tensor");
  if (s.dim() > 1) {
    bool ok = v.dim() == s.dim();
    for (int64_t d = 0; ok && d + 1 < s.dim(); ++d) ok = s.shape()[d] == v.shape()[d];
    OAR_CHECK(ok, Value, "[oar.searchsorted] values shape ", shape_str(v.shape()),
              " must match sorted_sequence shape ", shape_str(s.shape()), " in all but the last dim");
  }
  return {TensorMeta{v.shape(), DType::Int64}};
}

constexpr OpTraits kDynamic{.dynamic_shape = true};
OpDef& kIndexSelect = OpBuilder("index_select").attrs({"axis"}).meta(index_select_meta).grad(index_select_grad);
OpDef& kIndexAdd = OpBuilder("index_add").attrs({"axis"}).meta(index_add_meta).grad(index_add_grad);
OpDef& kTake = OpBuilder("take_along_axis").attrs({"axis"}).meta(take_meta).grad(take_grad);
OpDef& kPut = OpBuilder("put_along_axis").attrs({"axis", "reduce", "include_self"}).meta(put_meta).grad(put_grad);

Tensor put_raw(const Tensor& x, const Tensor& idx, const Tensor& v, int64_t axis, PutReduce r, bool self) {
  return dispatch1(kPut, {x, idx, v}, Attrs{axis, int64_t(r), self});
}
OpDef& kGatherNd = OpBuilder("gather_nd").meta(gather_nd_meta).grad(gather_nd_grad).spmd("gather_nd");
OpDef& kScatterNd = OpBuilder("scatter_nd").attrs({"overwrite"}).meta(scatter_nd_meta).grad(scatter_nd_grad)
                        .spmd("scatter_nd");
OpDef& kArgsort = OpBuilder("argsort").attrs({"axis", "descending"}).meta(argsort_meta);
OpDef& kTopk = OpBuilder("topk").attrs({"k", "axis", "largest"}).meta(topk_meta);
OpDef& kNonzero = OpBuilder("nonzero").meta(dynamic_meta).traits(kDynamic);
OpDef& kUniqueRows = OpBuilder("unique_rows").meta(unique_meta).traits(kDynamic);
OpDef& kSearchsorted = OpBuilder("searchsorted").attrs({"right"}).meta(searchsorted_meta);

// Axis of a tensor with at least one dim (0-D tensors act as shape [1] where noted).
int64_t axis_of(const Tensor& x, int64_t axis, const char* api) {
  OAR_CHECK(x.dim() >= 1, Value, "[", api, "] x must have at least 1 dim, got a 0-D tensor");
  return normalize_axis(axis, x.dim(), api);
}

// Broadcasts a and b to a common shape except along `axis` (NumPy's
// take_along_axis rule); `only_b` leaves a alone (put_along_axis writes into it).
void broadcast_but_axis(Tensor& a, Tensor& b, int64_t axis, bool only_b, const char* api) {
  OAR_CHECK(a.dim() == b.dim(), Value, "[", api, "] indices must have as many dims as arr (", a.dim(), "), got ",
            b.dim());
  Dims sa = a.shape(), sb = b.shape();
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d == axis || sa[d] == sb[d]) continue;
    if (sb[d] == 1) { sb[d] = sa[d]; continue; }
    OAR_CHECK(sa[d] == 1 && !only_b, Value, "[", api, "] indices shape ", shape_str(b.shape()),
              " cannot be broadcast to arr shape ", shape_str(a.shape()), " (dim ", d, ")");
    sa[d] = sb[d];
  }
  a = expand(a, sa);
  b = expand(b, sb);
}

PutReduce put_reduce_of(const std::string& reduce) {
  static const std::pair<const char*, PutReduce> names[] = {
      {"assign", PutReduce::Assign}, {"add", PutReduce::Add},   {"mul", PutReduce::Mul},   {"multiply", PutReduce::Mul},
      {"mean", PutReduce::Mean},     {"amin", PutReduce::Amin}, {"amax", PutReduce::Amax}};
  for (const auto& [n, r] : names)
    if (reduce == n) return r;
  fail(ErrorKind::Value, "[oar.put_along_axis] reduce must be one of 'assign', 'add', 'mul', 'multiply', 'mean', "
       "'amin', 'amax', got '", reduce, "'");
}

// The (arr, indices, values) the op sees: indices broadcast against arr, or
// (broadcast=False) values sliced to the indices' shape.
std::array<Tensor, 3> put_inputs(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                                 bool broadcast, int64_t& ax) {
  ax = axis_of(arr, axis, "oar.put_along_axis");
  check_index_dtype(indices, "oar.put_along_axis", "indices");
  Tensor a = arr, i = indices;
  if (broadcast) broadcast_but_axis(a, i, ax, true, "oar.put_along_axis");
  OAR_CHECK(i.dim() == a.dim(), Value, "[oar.put_along_axis] indices must have as many dims as arr (", a.dim(),
            "), got ", i.dim());
  Tensor v = cast(values, arr.dtype());
  if (v.shape() == i.shape()) return {a, i, v};
  bool larger = !broadcast && v.dim() == i.dim();
  for (int64_t d = 0; larger && d < v.dim(); ++d) larger = v.shape()[d] >= i.shape()[d];
  if (larger) {  // Paddle's broadcast=False rule: values[corner of the indices' shape]
    Dims axes, starts, ends, steps;
    for (int64_t d = 0; d < v.dim(); ++d) {
      axes.push_back(d);
      starts.push_back(0);
      ends.push_back(i.shape()[d]);
      steps.push_back(1);
    }
    return {a, i, strided_slice(v, axes, starts, ends, steps)};
  }
  bool fits = v.dim() <= i.dim();
  for (int64_t d = 1; fits && d <= v.dim(); ++d) {
    int64_t n = v.shape()[size_t(v.dim() - d)];
    fits = n == 1 || n == i.shape()[size_t(i.dim() - d)];
  }
  OAR_CHECK(fits, Value, "[oar.put_along_axis] values shape ", shape_str(v.shape()),
            " cannot be broadcast to the indices shape ", shape_str(i.shape()));
  return {a, i, expand(v, i.shape())};
}

}  // namespace

namespace ops {

Tensor index_select(const Tensor& x, const Tensor& index, int64_t axis) {
  int64_t ax = axis_of(x, axis, "oar.index_select");
  Tensor idx = index.dim() == 0 ? reshape(index, Dims{1}) : index;
  return dispatch1(kIndexSelect, {x, idx}, Attrs{ax});
}

Tensor index_add(const Tensor& x, const Tensor& index, int64_t axis, const Tensor& value) {
  int64_t ax = axis_of(x, axis, "oar.index_add");
  Tensor idx = index.dim() == 0 ? reshape(index, Dims{1}) : index;
  return dispatch1(kIndexAdd, {x, idx, cast(value, x.dtype())}, Attrs{ax});
}

Tensor gather(const Tensor& x, const Tensor& index, int64_t axis) {
  int64_t ax = axis_of(x, axis, "oar.gather");
  check_index_dtype(index, "oar.gather");
  OAR_CHECK(index.dim() <= 1, Value, "[oar.gather] index must be 0-D or 1-D, got shape ", shape_str(index.shape()));
  Tensor out;
  try {
    out = dispatch1(kIndexSelect, {x, reshape(index, Dims{index.numel()})}, Attrs{ax});
  } catch (const Error& e) {  // name the API the user called
    std::string msg = e.what();
    const std::string from = "[oar.index_select]";
    if (msg.rfind(from, 0) == 0) msg = "[oar.gather]" + msg.substr(from.size());
    throw Error(e.kind(), msg);
  }
  return index.dim() == 0 ? squeeze(out, Dims{ax}) : out;
}

Tensor gather_nd(const Tensor& x, const Tensor& index) { return dispatch1(kGatherNd, {x, index}); }

Tensor scatter_nd(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite) {
  return dispatch1(kScatterNd, {x, index, cast(updates, x.dtype())}, Attrs{overwrite});
}

Tensor& scatter_nd_(Tensor& x, const Tensor& index, const Tensor& updates) {
  Tensor in[3] = {x, index, cast(updates, x.dtype())};
  return dispatch_inplace(kScatterNd, x, in, Attrs{true});
}

Tensor scatter_nd_add(const Tensor& x, const Tensor& index, const Tensor& updates) {
  return scatter_nd(x, index, updates, false);
}

Tensor scatter(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite) {
  check_index_dtype(index, "oar.scatter");
  OAR_CHECK(x.dim() >= 1, Value, "[oar.scatter] x must have at least 1 dim, got a 0-D tensor");
  OAR_CHECK(index.dim() <= 1, Value, "[oar.scatter] index must be 0-D or 1-D, got shape ", shape_str(index.shape()));
  Tensor idx = reshape(index, Dims{index.numel(), 1});
  Dims want = with_axis(x.shape(), 0, index.numel());
  Tensor upd = updates;
  if (index.dim() == 0 && updates.dim() == x.dim() - 1) upd = unsqueeze(updates, Dims{0});
  OAR_CHECK(upd.shape() == want, Value, "[oar.scatter] updates must have shape ", shape_str(want), ", got ",
            shape_str(updates.shape()));
  if (overwrite) return scatter_nd(x, idx, upd, true);
  // Paddle: the rows named by index are zeroed, then every update is added.
  return scatter_nd(scatter_nd(x, idx, zeros_like(upd, x.dtype()), true), idx, upd, false);
}

Tensor take_along_axis(const Tensor& arr, const Tensor& indices, int64_t axis, bool broadcast) {
  int64_t ax = axis_of(arr, axis, "oar.take_along_axis");
  check_index_dtype(indices, "oar.take_along_axis", "indices");
  Tensor a = arr, i = indices;
  if (broadcast) broadcast_but_axis(a, i, ax, false, "oar.take_along_axis");
  return dispatch1(kTake, {a, i}, Attrs{ax});
}

Tensor put_along_axis(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                      PutReduce reduce, bool include_self, bool broadcast) {
  int64_t ax = 0;
  auto [a, i, v] = put_inputs(arr, indices, values, axis, broadcast, ax);
  // 'assign' ignores include_self (every write replaces); normalising it lets
  // the kernel keep one fast path.
  return put_raw(a, i, v, ax, reduce, include_self || reduce == PutReduce::Assign);
}

Tensor put_along_axis(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                      const std::string& reduce, bool include_self, bool broadcast) {
  return put_along_axis(arr, indices, values, axis, put_reduce_of(reduce), include_self, broadcast);
}

Tensor& put_along_axis_(Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                        const std::string& reduce, bool include_self, bool broadcast) {
  PutReduce r = put_reduce_of(reduce);
  int64_t ax = 0;
  auto [a, i, v] = put_inputs(arr, indices, values, axis, broadcast, ax);
  Tensor in[3] = {arr, i, v};
  return dispatch_inplace(kPut, arr, in, Attrs{ax, int64_t(r), include_self || r == PutReduce::Assign});
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  OAR_CHECK(mask.dtype() == DType::Bool, Type, "[oar.masked_fill] mask must be a bool tensor, got ",
            dtype_name(mask.dtype()));
  OAR_CHECK(value.numel() == 1 || value.shape() == x.shape(), Value,
            "[oar.masked_fill] value must be a number or a one-element tensor, got shape ", shape_str(value.shape()));
  Tensor v = value.numel() == 1 && value.dim() > 0 ? reshape(value, Dims{}) : value;
  return where(mask, cast(v, x.dtype()), x);
}

Tensor nonzero(const Tensor& x) {
  Tensor b = x.dtype() == DType::Bool ? x : not_equal(x, zeros(Dims{}, x.dtype()));
  return dispatch1(kNonzero, {b});
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  OAR_CHECK(mask.dtype() == DType::Bool, Type, "[oar.masked_select] mask must be a bool tensor, got ",
            dtype_name(mask.dtype()));
  Dims s = broadcast_shapes(x.shape(), mask.shape(), "oar.masked_select");
  checked_numel(s, "oar.masked_select");
  // -1, not the sizes: under a trace the count of selected entries (and a
  // dynamic input dim) must stay dynamic in the program.
  Tensor xb = reshape(expand(x, s), Dims{-1});
  Tensor pos = nonzero(reshape(expand(mask, s), Dims{-1}));
  return dispatch1(kIndexSelect, {xb, reshape(pos, Dims{-1})}, Attrs{int64_t(0)});
}

Tensor argsort(const Tensor& x, int64_t axis, bool descending, bool stable) {
  // The kernel always sorts stably: ties keep their order, which is one valid
  // answer for stable=False too.
  if (x.dim() == 0) {
    normalize_axis(axis, 0, "oar.argsort");
    return zeros(Dims{}, DType::Int64);
  }
  int64_t ax = normalize_axis(axis, x.dim(), "oar.argsort");
  return dispatch1(kArgsort, {x}, Attrs{ax, descending});
}

Tensor sort(const Tensor& x, int64_t axis, bool descending, bool stable) {
  if (x.dim() == 0) {
    normalize_axis(axis, 0, "oar.sort");
    return x;
  }
  Tensor idx = argsort(x, axis, descending, stable);
  return dispatch1(kTake, {x, idx}, Attrs{normalize_axis(axis, x.dim(), "oar.sort")});
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis, bool largest, bool sorted) {
  if (x.dim() == 0) {
    normalize_axis(axis, 0, "oar.topk");
    OAR_CHECK(k == 1 || k == 0, Value, "[oar.topk] k must be in [0, 1] for a 0-D tensor, got ", k);
    return {x, zeros(Dims{}, DType::Int64)};
  }
  int64_t ax = normalize_axis(axis, x.dim(), "oar.topk");
  Tensor idx = dispatch1(kTopk, {x}, Attrs{k, ax, largest});
  return {dispatch1(kTake, {x, idx}, Attrs{ax}), idx};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> unique(const Tensor& x, bool has_axis, int64_t axis, DType index_dtype) {
  OAR_CHECK(index_dtype == DType::Int32 || index_dtype == DType::Int64, Type,
            "[oar.unique] dtype must be int32 or int64, got ", dtype_name(index_dtype));
  Tensor rows;  // [n, m]: unique rows of this
  int64_t ax = 0;
  Tensor src;
  if (!has_axis) {
    src = reshape(x, Dims{x.numel()});
    rows = reshape(src, Dims{x.numel(), 1});
  } else {
    ax = axis_of(x, axis, "oar.unique");
    src = x;
    Tensor moved = ax == 0 ? x : swapaxes(x, 0, ax);
    int64_t n = x.shape()[ax];
    int64_t m = n == 0 ? 0 : x.numel() / n;
    rows = reshape(moved, Dims{n, m});
  }
  Tensor in[1] = {detach(rows)};
  Tensors r = dispatch(kUniqueRows, in);
  Tensor out = index_select(src, r[0], ax);
  return {out, cast(r[0], index_dtype), cast(r[1], index_dtype), cast(r[2], index_dtype)};
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right, bool out_int32) {
  Tensor s = sorted_sequence, v = values;
  if (s.dtype() != v.dtype()) {
    DType t = is_floating(s.dtype()) || is_floating(v.dtype()) ? DType::Float64 : DType::Int64;
    s = cast(s, t);
    v = cast(v, t);
  }
  Tensor out = dispatch1(kSearchsorted, {s, v}, Attrs{right});
  return out_int32 ? cast(out, DType::Int32) : out;
}

}  // namespace ops
}  // namespace oar

// vmap: batching rules and the batched program interpreter (Note [vmap] in
// autograd/transforms.h).
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

#include "autograd/transforms.h"
#include "ops/dispatch.h"
#include "ops/manip.h"
#include "ops/ops.h"

namespace oar {

namespace {

using BV = BatchedValue;
using BVs = SmallVector<BV, 2>;

int64_t rank_of(const BV& v) { return v.t.dim() - (v.batched ? 1 : 0); }

Dims with_front(int64_t b, const Dims& rest) {
  Dims s{b};
  for (int64_t d : rest) s.push_back(d);
  return s;
}

Dims per_example_shape(const BV& v) {
  const Dims& s = v.t.shape();
  return v.batched ? Dims(s.begin() + 1, s.end()) : s;
}

// An unbatched value made batched (a broadcast view, no copy).
Tensor materialize(const BV& v, int64_t batch) {
  if (v.batched) return v.t;
  return ops::expand(ops::unsqueeze(v.t, {0}), with_front(batch, v.t.shape()));
}

// A batched tensor with ones inserted after the batch axis up to per-example
// rank `r`, so it broadcasts against unbatched operands of rank <= r.
Tensor pad_rank(const Tensor& t, int64_t r) {
  const int64_t have = t.dim() - 1;
  if (have >= r) return t;
  Dims s{t.shape()[0]};
  for (int64_t k = have; k < r; ++k) s.push_back(1);
  for (int64_t d = 1; d < t.dim(); ++d) s.push_back(t.shape()[d]);
  return ops::reshape(t, s);
}

// An axis of a per-example tensor of rank `rank` (>= 1), counted from 0.
int64_t norm_axis(int64_t a, int64_t rank) { return ops::normalize_axis(a, rank, "oar.vmap"); }

int attr_index(const OpDef& op, const char* name) {
  for (size_t k = 0; k < op.attr_names.size(); ++k)
    if (std::strcmp(op.attr_names[k], name) == 0) return int(k);
  return -1;
}

Attrs replace_attr(const Attrs& a, int k, AttrValue v) {
  Attrs out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(int(i) == k ? v : a[i]);
  return out;
}

// Runs `op` on rewritten operands. Kernels are reached here without the
// front ends that make rows dense, and the rules make broadcast and permuted
// views; kernels other than the elementwise and view ones get dense inputs
// (as the program executor gives them).
Tensors call(const OpDef& op, const Tensors& in, const Attrs& a) {
  if (op.traits.view || op.traits.elementwise || op.traits.broadcast)
    return dispatch(op, std::span<const Tensor>(in.data(), in.size()), a);
  Tensors dense;
  for (const Tensor& t : in) dense.push_back(t.defined() ? ops::contiguous(t) : t);
  return dispatch(op, std::span<const Tensor>(dense.data(), dense.size()), a);
}

BVs all_batched(Tensors outs) {
  BVs r;
  for (Tensor& t : outs) r.push_back(BV{std::move(t), true});
  return r;
}

// A rule fills `out` and returns true, or returns false to fall back to
// running the op once per example.
using Rule = std::function<bool(const OpDef&, std::span<const BV>, const Attrs&, int64_t, BVs&)>;

// Elementwise and broadcasting ops: batched operands get ones after the batch
// axis so that NumPy broadcasting lines up the per-example axes.
bool elementwise_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  int64_t r = 0;
  for (const BV& v : in)
    if (v.t.defined()) r = std::max(r, rank_of(v));
  Tensors phys;
  for (const BV& v : in) phys.push_back(v.t.defined() && v.batched ? pad_rank(v.t, r) : v.t);
  out = all_batched(call(op, phys, a));
  return true;
}

// Ops whose axis attributes refer to input 0's per-example axes (or, with
// `out_rank_extra`, to an output of rank + extra: stack, unsqueeze). With
// `align`, every tensor input is made batched (they are aligned with input 0,
// like softmax_grad's or concat's); otherwise the others must be unbatched.
Rule axis_rule(std::vector<const char*> names, bool align, int out_rank_extra = 0, bool empty_is_all = false) {
  return [=](const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
    Tensors phys;
    int64_t rank = -1;
    for (size_t i = 0; i < in.size(); ++i) {
      const BV& v = in[i];
      if (!v.t.defined()) {
        phys.push_back(v.t);
        continue;
      }
      if (rank < 0) rank = rank_of(v);
      if (i == 0 || align) {
        phys.push_back(materialize(v, batch));
      } else {
        if (v.batched) return false;
        phys.push_back(v.t);
      }
    }
    const int64_t axis_rank = rank + out_rank_extra;
    if (axis_rank == 0) return false;  // a 0-D example: its axis -1 is no axis of the batch
    Attrs na = a;
    for (const char* name : names) {
      const int k = attr_index(op, name);
      if (k < 0) continue;
      if (std::holds_alternative<int64_t>(na[k])) {
        na = replace_attr(na, k, norm_axis(na.i(k), axis_rank) + 1);
      } else if (std::holds_alternative<Dims>(na[k])) {
        Dims axes;
        const Dims& old = na.ints(k);
        if (old.empty() && empty_is_all)
          for (int64_t d = 0; d < axis_rank; ++d) axes.push_back(d + 1);
        for (int64_t ax : old) axes.push_back(norm_axis(ax, axis_rank) + 1);
        na = replace_attr(na, k, axes);
      } else {
        return false;
      }
    }
    out = all_batched(call(op, phys, na));
    return true;
  };
}

bool reshape_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  out = all_batched(call(op, {in[0].t}, Attrs{with_front(batch, a.ints(0))}));
  return true;
}

bool expand_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  const Dims& shape = a.ints(0);
  Tensor x = pad_rank(in[0].t, int64_t(shape.size()));
  out = all_batched(call(op, {x}, Attrs{with_front(batch, shape)}));
  return true;
}

bool transpose_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  const int64_t r = rank_of(in[0]);
  Dims perm{0};
  for (int64_t p : a.ints(0)) perm.push_back(norm_axis(p, r) + 1);
  out = all_batched(call(op, {in[0].t}, Attrs{perm}));
  return true;
}

bool squeeze_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  const Dims shape = per_example_shape(in[0]);
  Dims axes;
  if (a.ints(0).empty()) {
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 1) axes.push_back(int64_t(d) + 1);
  } else {
    for (int64_t ax : a.ints(0)) axes.push_back(norm_axis(ax, int64_t(shape.size())) + 1);
  }
  out = all_batched(call(op, {in[0].t}, Attrs{axes}));
  return true;
}

bool unsqueeze_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  const int64_t out_rank = rank_of(in[0]) + int64_t(a.ints(0).size());
  Dims axes;
  for (int64_t ax : a.ints(0)) axes.push_back(norm_axis(ax, out_rank) + 1);
  out = all_batched(call(op, {in[0].t}, Attrs{axes}));
  return true;
}

// matmul with its NumPy semantics per example: 1-D operands become matrices,
// the batched one gets ones after the batch axis so the broadcast batch axes
// line up, and the added axes are dropped from the result.
bool matmul_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  BV x = in[0], y = in[1];
  const bool tx = a.b(0), ty = a.b(1);
  const int64_t rx = rank_of(x), ry = rank_of(y);
  if (rx == 0 || ry == 0) return false;
  // A per-example vector y against an unbatched matrix x: (B, k) x^T.
  if (!x.batched && y.batched && ry == 1 && rx == 2) {
    out = all_batched(call(op, {y.t, x.t}, Attrs{false, !tx}));
    return true;
  }
  auto as_matrix = [](BV v, bool row) {
    // (.., k) -> (.., 1, k) for the left operand, (.., k, 1) for the right.
    Dims s = v.t.shape();
    s.insert(row ? s.size() - 1 : s.size(), 1);
    return BV{ops::reshape(v.t, s), v.batched};
  };
  const bool x_vec = rx == 1, y_vec = ry == 1;
  bool ntx = tx, nty = ty;
  if (x_vec) x = as_matrix(x, true), ntx = false;
  if (y_vec) y = as_matrix(y, false), nty = false;
  const int64_t r = std::max(rank_of(x), rank_of(y));
  Tensor px = x.batched ? pad_rank(x.t, r) : x.t;
  Tensor py = y.batched ? pad_rank(y.t, r) : y.t;
  Tensor res = call(op, {px, py}, Attrs{ntx, nty})[0];
  Dims drop;
  if (x_vec) drop.push_back(res.dim() - 2);
  if (y_vec) drop.push_back(res.dim() - 1);
  if (!drop.empty()) res = ops::squeeze(res, drop);
  out = {BV{res, true}};
  return true;
}

// linear(x, w, b): the batch is one more leading axis of x; a batched weight
// is a batched matmul.
bool linear_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  const BV &x = in[0], &w = in[1], &b = in[2];
  if (!w.batched && !(b.t.defined() && b.batched)) {
    out = all_batched(call(op, {materialize(x, batch), w.t, b.t}, a));
    return true;
  }
  const int64_t r = std::max<int64_t>(rank_of(x), 2);
  Tensor px = pad_rank(materialize(x, batch), r);
  Tensor pw = pad_rank(materialize(w, batch), r);
  Tensor y = ops::matmul(px, pw);
  if (b.t.defined()) y = ops::binary("add", y, pad_rank(materialize(b, batch), r));
  if (rank_of(x) == 1) y = ops::squeeze(y, {1});
  out = {BV{y, true}};
  return true;
}

// Ops whose result has input 0's shape and reads nothing else per position
// of the other inputs (full_like): run on the physical tensor.
bool shape_of_input_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t, BVs& out) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].batched) return false;
  Tensors phys;
  for (const BV& v : in) phys.push_back(v.t);
  out = all_batched(call(op, phys, a));
  return true;
}

// gather_nd(x, index): a batched index alone is more lookups into the same
// x; a batched x gets the batch coordinate prepended to every index row.
bool gather_nd_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  const BV &x = in[0], &idx = in[1];
  if (!x.batched) {
    out = all_batched(call(op, {x.t, idx.t}, a));
    return true;
  }
  Tensor index = materialize(idx, batch);  // (B, ..., k)
  Dims coord_shape = index.shape();
  coord_shape.back() = 1;
  Dims lead(index.dim(), 1);
  lead[0] = batch;
  Tensor b = ops::expand(ops::reshape(ops::arange(int64_t(0), batch, int64_t(1), index.dtype()), lead), coord_shape);
  Tensor both[2] = {b, index};
  out = all_batched(call(op, {x.t, ops::concat(std::span<const Tensor>(both, 2), -1)}, a));
  return true;
}

// Ops that treat every axis before their trailing operand axes as
// independent, with the same leading axes on every input (the linalg
// factorisations and solvers): all inputs batched, the op as it is.
bool leading_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  Tensors phys;
  for (const BV& v : in) phys.push_back(v.t.defined() ? materialize(v, batch) : v.t);
  out = all_batched(call(op, phys, a));
  return true;
}

// searchsorted(sorted, values): one sorted row for all examples looks up
// every example's values at once.
bool searchsorted_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  const BV &seq = in[0], &vals = in[1];
  if (!seq.batched && rank_of(seq) == 1) {
    out = all_batched(call(op, {seq.t, vals.t}, a));
    return true;
  }
  if (rank_of(seq) != rank_of(vals)) return false;
  return leading_rule(op, in, a, batch, out);
}

Tensor fold(const Tensor& t) {  // (B, N, ...) -> (B*N, ...)
  Dims s{t.shape()[0] * t.shape()[1]};
  for (int64_t d = 2; d < t.dim(); ++d) s.push_back(t.shape()[d]);
  return ops::reshape(t, s);
}

Tensor unfold(const Tensor& t, int64_t batch) {  // (B*N, ...) -> (B, N, ...)
  Dims s{batch, t.shape()[0] / batch};
  for (int64_t d = 1; d < t.dim(); ++d) s.push_back(t.shape()[d]);
  return ops::reshape(t, s);
}

// Ops that treat their leading axis N as independent examples (convolution,
// pooling, per-example losses and their input gradients): the mapped axis is
// folded into N. `carries_n` marks the inputs with that leading axis; the
// others (weights) must be unbatched.
Rule fold_rule(std::vector<int> carries_n) {
  return [=](const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
    Tensors phys;
    for (size_t i = 0; i < in.size(); ++i) {
      const bool n = std::find(carries_n.begin(), carries_n.end(), int(i)) != carries_n.end();
      if (!in[i].t.defined()) {
        phys.push_back(in[i].t);
      } else if (n) {
        if (rank_of(in[i]) < 1) return false;
        phys.push_back(fold(ops::contiguous(materialize(in[i], batch))));
      } else {
        if (in[i].batched) return false;
        phys.push_back(in[i].t);
      }
    }
    for (Tensor& t : call(op, phys, a)) out.push_back(BV{unfold(t, batch), true});
    return true;
  };
}

// The channel axis of a per-example (N, C, ...) tensor joined with the batch:
// (B, N, C, ...) -> (N, B*C, ...), and back.
Tensor batch_into_channels(const Tensor& t) {
  const Dims& s = t.shape();
  Dims perm{1, 0};
  for (int64_t d = 2; d < t.dim(); ++d) perm.push_back(d);
  Dims ns{s[1], s[0] * s[2]};
  for (int64_t d = 3; d < t.dim(); ++d) ns.push_back(s[d]);
  return ops::reshape(ops::transpose(t, perm), ns);
}

Tensor channels_to_batch(const Tensor& t, int64_t batch) {
  const Dims& s = t.shape();
  Dims ns{s[0], batch, s[1] / batch};
  for (int64_t d = 2; d < t.dim(); ++d) ns.push_back(s[d]);
  Dims perm{1, 0};
  for (int64_t d = 2; d < int64_t(ns.size()); ++d) perm.push_back(d);
  return ops::transpose(ops::reshape(t, ns), perm);
}

// conv(x, w): an unbatched weight folds the batch into N; a batched weight
// (one filter bank per example) becomes a grouped convolution with the batch
// joined to the channels.
bool conv_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  const BV &x = in[0], &w = in[1];
  if (!w.batched) return fold_rule({0})(op, in, a, batch, out);
  Tensor px = batch_into_channels(ops::contiguous(materialize(x, batch)));
  Tensor pw = fold(ops::contiguous(w.t));  // (B*O, C/g, k...)
  const int gk = attr_index(op, "groups");
  Attrs na = replace_attr(a, gk, a.i(gk) * batch);
  out = {BV{channels_to_batch(call(op, {px, pw}, na)[0], batch), true}};
  return true;
}

// conv_grad_weight(x, gy): per-example weight gradients as one grouped
// gradient with the batch joined to the channels.
bool conv_grad_weight_rule(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
  Tensor px = batch_into_channels(ops::contiguous(materialize(in[0], batch)));
  Tensor pg = batch_into_channels(ops::contiguous(materialize(in[1], batch)));
  const int gk = attr_index(op, "groups");
  Attrs na = replace_attr(a, gk, a.i(gk) * batch);
  out = {BV{unfold(call(op, {px, pg}, na)[0], batch), true}};
  return true;
}

const std::unordered_map<std::string, Rule>& rules() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, Rule>();
    auto& r = *t;
    r["reshape"] = reshape_rule;
    r["expand"] = expand_rule;
    r["transpose"] = transpose_rule;
    r["squeeze"] = squeeze_rule;
    r["unsqueeze"] = unsqueeze_rule;
    r["matmul"] = matmul_rule;
    for (const char* n : {"sum", "mean", "prod", "amax", "amin", "max", "min", "logsumexp", "all", "any"})
      r[n] = axis_rule({"axis"}, false, 0, true);
    for (const char* n : {"argmax", "argmin", "softmax", "log_softmax", "cumsum", "cumprod", "cummax", "cummin",
                          "flip", "argsort", "topk", "split", "median_index", "index_select"})
      r[n] = axis_rule({"axis"}, false);
    r["diagonal"] = axis_rule({"axis1", "axis2"}, false);
    r["strided_slice"] = axis_rule({"axes"}, false);
    for (const char* n : {"layer_norm", "rms_norm"}) r[n] = axis_rule({"begin_axis"}, false);
    for (const char* n : {"softmax_grad", "log_softmax_grad", "concat", "take_along_axis", "pick_along_axis"})
      r[n] = axis_rule({"axis"}, true);
    r["slice_scatter"] = axis_rule({"axes"}, true);
    r["stack"] = axis_rule({"axis"}, true, 1);
    r["linear"] = linear_rule;
    r["gather_nd"] = gather_nd_rule;
    r["searchsorted"] = searchsorted_rule;
    // slogdet stacks (sign, log|det|) in front of the batch axes.
    r["linalg_slogdet"] = [](const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, BVs& out) {
      Tensor t = call(op, {materialize(in[0], batch)}, a)[0];  // (2, B, ...)
      Dims perm{1, 0};
      for (int64_t d = 2; d < t.dim(); ++d) perm.push_back(d);
      out = {BV{ops::transpose(t, perm), true}};
      return true;
    };
    for (const char* n : {"linalg_svd", "linalg_eigh", "linalg_qr", "linalg_inv", "linalg_det", "linalg_solve", "linalg_cholesky", "linalg_eig", "linalg_lu", "linalg_triangular_solve"})
      r[n] = leading_rule;
    r["full_like"] = shape_of_input_rule;
    for (const char* n : {"put_along_axis", "put_add_along_axis"}) r[n] = axis_rule({"axis"}, true);
    r["conv"] = conv_rule;
    r["conv_grad_weight"] = conv_grad_weight_rule;
    r["conv_transpose"] = fold_rule({0});
    for (const char* n : {"max_pool", "avg_pool"}) r[n] = fold_rule({0});
    r["avg_pool_grad"] = fold_rule({0});
    r["max_pool_grad"] = fold_rule({0, 1});
    r["softmax_cross_entropy"] = fold_rule({0, 1});
    r["softmax_cross_entropy_grad"] = fold_rule({0, 1, 2, 3});
    return t;
  }();
  return *table;
}

// Attributes that make an op's meaning depend on axis positions or shapes:
// the elementwise rule does not apply to such an op without a rule of its own.
bool has_layout_attr(const OpDef& op) {
  for (const char* n : op.attr_names)
    for (const char* bad : {"axis", "axes", "shape", "perm", "dim", "dims", "axis1", "axis2", "begin_axis"})
      if (std::strcmp(n, bad) == 0) return true;
  return false;
}

// One call per example on slices, the results stacked.
BVs loop_fallback(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch) {
  std::vector<Tensors> slices(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].t.defined() && in[i].batched) slices[i] = ops::unbind(in[i].t, 0);
  std::vector<Tensors> results;
  for (int64_t b = 0; b < batch; ++b) {
    Tensors args;
    for (size_t i = 0; i < in.size(); ++i) args.push_back(in[i].batched ? slices[i][size_t(b)] : in[i].t);
    results.push_back(call(op, args, a));
  }
  BVs out;
  const size_t n = results.empty() ? 0 : results[0].size();
  for (size_t k = 0; k < n; ++k) {
    Tensors col;
    for (auto& r : results) col.push_back(r[k]);
    out.push_back(BV{ops::stack(std::span<const Tensor>(col.data(), col.size()), 0), true});
  }
  return out;
}

BVs batch_op(const OpDef& op, std::span<const BV> in, const Attrs& a, int64_t batch, const std::string& randomness,
             BatchStats* stats) {
  bool any = false;
  for (const BV& v : in) any = any || (v.t.defined() && v.batched);
  if (op.traits.random) {
    OAR_CHECK(randomness != "error", Value, "[oar.vmap] random op '", op.name, "' inside vmap: pass "
              "randomness='different' (independent draws per example) or 'same' (one draw for all)");
    OAR_CHECK(!(randomness == "same" && any), NotImplemented, "[oar.vmap] random op '", op.name,
              "' reads a batched input, so its draws cannot be the same for every example "
              "(randomness='same'); use randomness='different'");
  }
  if (stats) ++stats->ops;
  if (!any) {
    Tensors phys;
    for (const BV& v : in) phys.push_back(v.t);
    BVs out;
    Tensors res = call(op, phys, a);
    if (op.traits.random && randomness == "different") {
      // Independent draws: run it once per example.
      BVs looped;
      std::vector<Tensors> per;
      for (int64_t b = 0; b < batch; ++b) per.push_back(b == 0 ? res : call(op, phys, a));
      for (size_t k = 0; k < res.size(); ++k) {
        Tensors col;
        for (auto& r : per) col.push_back(r[k]);
        looped.push_back(BV{ops::stack(std::span<const Tensor>(col.data(), col.size()), 0), true});
      }
      return looped;
    }
    for (Tensor& t : res) out.push_back(BV{std::move(t), false});
    return out;
  }
  OAR_CHECK(!op.traits.side_effect, NotImplemented, "[oar.vmap] op '", op.name,
            "' has side effects and cannot run under vmap");
  OAR_CHECK(!op.traits.dynamic_shape, NotImplemented, "[oar.vmap] op '", op.name, "' gives a result whose "
            "shape depends on the data; each example may differ, so it cannot run under vmap");
  BVs out;
  auto it = rules().find(op.name);
  if (it != rules().end()) {
    if (it->second(op, in, a, batch, out)) return out;
  } else if ((op.traits.elementwise || op.traits.broadcast) && !has_layout_attr(op)) {
    if (elementwise_rule(op, in, a, batch, out)) return out;
  }
  if (stats) {
    ++stats->fallbacks;
    auto& names = stats->fallback_ops;
    if (std::find(names.begin(), names.end(), op.name) == names.end()) names.push_back(op.name);
  }
  return loop_fallback(op, in, a, batch);
}

}  // namespace

std::vector<BatchedValue> run_batched(const ir::Program& p, std::span<const BatchedValue> inputs,
                                      std::span<const Tensor> params, int64_t batch,
                                      const std::string& randomness, BatchStats* stats) {
  OAR_CHECK(randomness == "error" || randomness == "different" || randomness == "same", Value,
            "[oar.vmap] randomness must be 'error', 'different' or 'same', got '", randomness, "'");
  OAR_CHECK(batch >= 1, Value, "[oar.vmap] the batch size must be at least 1, got ", batch);
  OAR_CHECK(inputs.size() == p.inputs().size() && params.size() == p.parameters().size(), Value,
            "[oar.vmap] the program takes ", p.inputs().size(), " input(s) and ", p.parameters().size(),
            " parameter(s), got ", inputs.size(), " and ", params.size());
  OAR_CHECK(p.state_updates().empty(), NotImplemented,
            "[oar.vmap] the function writes to tensors from outside it (in-place updates of captured state); "
            "return the new values instead");
  std::unordered_map<const ir::Value*, BV> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BV& v = inputs[i];
    OAR_CHECK(!v.batched || (v.t.dim() >= 1 && v.t.shape()[0] == batch), Value, "[oar.vmap] input ", i,
              " must have the batch size ", batch, " on its mapped axis");
    env[p.inputs()[i].value] = v;
  }
  for (size_t i = 0; i < params.size(); ++i) env[p.parameters()[i].value] = BV{params[i], false};
  for (const auto& op : p.body().operations()) {
    OAR_CHECK(op->num_regions() == 0, NotImplemented, "[oar.vmap] control flow that depends on tensor values ('",
              op->name(), "') is not supported under vmap; express the choice with oar.where");
    SmallVector<BV, 4> in;
    for (size_t i = 0; i < op->num_operands(); ++i) {
      ir::Value* v = op->operand(i);
      if (!v) {
        in.push_back(BV{});
        continue;
      }
      auto found = env.find(v);
      OAR_CHECK(found != env.end(), Value, "[oar.vmap] operand ", i, " of op '", op->name(), "' is undefined");
      in.push_back(found->second);
    }
    BVs out = batch_op(op->def(), std::span<const BV>(in.data(), in.size()), op->attrs(), batch, randomness, stats);
    OAR_CHECK(out.size() == op->num_results(), Runtime, "[oar.vmap] op '", op->name(), "' gave ", out.size(),
              " result(s), the program expects ", op->num_results());
    for (size_t i = 0; i < out.size(); ++i) env[op->result(i)] = std::move(out[i]);
  }
  std::vector<BatchedValue> outs;
  for (const auto& o : p.outputs()) {
    auto found = env.find(o.value);
    OAR_CHECK(found != env.end(), Value, "[oar.vmap] output '", o.name, "' is undefined");
    outs.push_back(found->second);
  }
  return outs;
}

}  // namespace oar

// Distributed tensors: dispatch stage 2 and resharding (Note [distributed tensor]).
#include "dist/dist_tensor.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "autograd/autograd.h"
#include "dist/process_group.h"
#include "ops/dispatch.h"
#include "ops/index.h"
#include "ops/manip.h"
#include "ops/ops.h"
#include "ops/spmd.h"

namespace oar::dist {
namespace {

// Meshes travel in op attributes as an index into this table.
std::mutex g_mesh_mu;
std::vector<MeshPtr> g_meshes;

int64_t mesh_id(const MeshPtr& m) {
  std::lock_guard<std::mutex> lk(g_mesh_mu);
  for (size_t i = 0; i < g_meshes.size(); ++i)
    if (*g_meshes[i] == *m) return int64_t(i);
  g_meshes.push_back(m);
  return int64_t(g_meshes.size() - 1);
}

MeshPtr mesh_at(int64_t id) {
  std::lock_guard<std::mutex> lk(g_mesh_mu);
  OAR_CHECK(id >= 0 && size_t(id) < g_meshes.size(), Value, "[oar.distributed.reshard] unknown mesh id ", id);
  return g_meshes[size_t(id)];
}

Dims encode(const Placements& p) {
  Dims d;
  for (const Placement& x : p) {
    d.push_back(int64_t(x.kind));
    d.push_back(x.is_shard() ? x.dim : x.is_partial() ? int64_t(x.reduce) : 0);
  }
  return d;
}

Placements decode(const Dims& d) {
  Placements p;
  for (size_t i = 0; i + 1 < d.size(); i += 2) {
    auto kind = Placement::Kind(d[i]);
    p.push_back(kind == Placement::Kind::Shard     ? Placement::shard(d[i + 1])
                : kind == Placement::Kind::Partial ? Placement::partial(ReduceType(d[i + 1]))
                                                   : Placement::replicate());
  }
  return p;
}

ReduceOp to_reduce(ReduceType r) {
  switch (r) {
    case ReduceType::Sum: return ReduceOp::Sum;
    case ReduceType::Avg: return ReduceOp::Avg;
    case ReduceType::Max: return ReduceOp::Max;
    case ReduceType::Min: return ReduceOp::Min;
    case ReduceType::Prod: return ReduceOp::Prod;
  }
  return ReduceOp::Sum;
}

// The communicator of a set of ranks, created once (by its members only).
ProcessGroupPtr group_of(const std::vector<int64_t>& ids) {
  static std::mutex mu;
  static std::map<std::vector<int>, ProcessGroupPtr> cache;
  ProcessGroupPtr world = world_group();
  std::vector<int> ranks(ids.begin(), ids.end());
  if (ranks == world->ranks()) return world;
  std::lock_guard<std::mutex> lk(mu);
  auto it = cache.find(ranks);
  if (it != cache.end()) return it->second;
  ProcessGroupPtr g = new_group(ranks, world->timeout_seconds());
  cache.emplace(ranks, g);
  return g;
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t len) {
  return ops::contiguous(ops::strided_slice(t, {dim}, {start}, {start + len}, {1}));
}

// Mesh dim m: the group along it through this rank, and this rank's index in it.
std::pair<ProcessGroupPtr, int64_t> along(const ProcessMesh& mesh, int64_t m, int64_t rank) {
  Dims coord = mesh.coord_of(rank);
  return {group_of(mesh.process_ids_along(m, coord)), coord[size_t(m)]};
}

// Shard(t) -> Replicate along mesh dim m: gather the pieces (padded to the
// largest, as all_gather needs equal blocks) and join them along t.
Tensor gather_along(const Tensor& local, const ProcessMesh& mesh, int64_t m, int64_t t, int64_t full,
                    int64_t rank) {
  auto [g, c] = along(mesh, m, rank);
  int64_t k = mesh.dim_size(m);
  int64_t big = split_piece_size(full, k, 0);
  Tensor piece = ops::contiguous(local);
  if (piece.shape()[size_t(t)] < big) {
    Dims pad_shape = piece.shape();
    pad_shape[size_t(t)] = big - piece.shape()[size_t(t)];
    Tensor parts[2] = {piece, ops::zeros(pad_shape, piece.dtype())};
    piece = ops::concat(std::span<const Tensor>(parts, 2), t);
  }
  Dims out_shape{k};
  for (int64_t d : piece.shape()) out_shape.push_back(d);
  Tensor out = empty_tensor(out_shape, piece.dtype());
  g->all_gather(out, piece)->wait();
  Tensors pieces;
  for (int64_t j = 0; j < k; ++j) {
    Tensor pj = ops::strided_slice(out, {0}, {j}, {j + 1}, {1});
    pj = ops::reshape(pj, piece.shape());
    pieces.push_back(narrow(pj, t, 0, split_piece_size(full, k, j)));
  }
  return ops::concat(std::span<const Tensor>(pieces.data(), pieces.size()), t);
}

Tensor reduce_along(const Tensor& local, const ProcessMesh& mesh, int64_t m, ReduceType r, int64_t rank) {
  auto [g, c] = along(mesh, m, rank);
  Tensor out = ops::clone(ops::contiguous(local));
  g->all_reduce(out, to_reduce(r))->wait();
  return out;
}

// Resharding on the local pieces (no autograd): every mesh dim that changes
// goes to Replicate first, then each to its target. Simple and always valid;
// it can move more data than a direct all-to-all would.
Tensor reshard_local(const Tensor& local, const DistAttr& from, const MeshPtr& mesh, const Placements& to) {
  const ProcessMesh& src = *from.mesh;
  const Dims& shape = from.global_shape;
  int64_t rank = world_rank();
  Tensor cur = local;
  Placements now = from.placements;
  bool same_mesh = src == *mesh;
  if (src.contains(rank)) {
    for (int64_t m = 0; m < src.ndim(); ++m) {
      const Placement& p = now[size_t(m)];
      if (same_mesh && p == to[size_t(m)]) continue;
      if (p.is_shard()) cur = gather_along(cur, src, m, p.dim, shape[size_t(p.dim)], rank);
      if (p.is_partial()) cur = reduce_along(cur, src, m, p.reduce, rank);
      now[size_t(m)] = Placement::replicate();
    }
  }
  if (!same_mesh) {
    // Replicated on the source mesh; target rank i gets it from source rank
    // i mod |source|.
    ProcessGroupPtr world = world_group();
    const auto& sid = src.process_ids();
    const auto& did = mesh->process_ids();
    std::vector<WorkPtr> sends;
    Tensor mine = src.contains(rank) ? ops::contiguous(cur) : Tensor();
    for (size_t i = 0; i < did.size(); ++i) {
      int64_t s = sid[i % sid.size()], d = did[i];
      if (s == rank && d != rank) sends.push_back(world->send(mine, int(d)));
    }
    Tensor got;
    for (size_t i = 0; i < did.size(); ++i) {
      int64_t s = sid[i % sid.size()], d = did[i];
      if (d != rank) continue;
      if (s == rank) {
        got = mine;
      } else {
        got = empty_tensor(shape, local.dtype());
        world->recv(got, int(s))->wait();
      }
    }
    for (auto& w : sends) w->wait();
    if (!mesh->contains(rank)) {
      Dims none(shape.size(), 0);
      return empty_tensor(none, local.dtype());
    }
    cur = got;
    now = Placements(size_t(mesh->ndim()), Placement::replicate());
  }
  for (int64_t m = 0; m < mesh->ndim(); ++m) {
    const Placement& want = to[size_t(m)];
    if (now[size_t(m)] == want) continue;
    auto coord = mesh->coord_of(rank);
    int64_t c = coord[size_t(m)], k = mesh->dim_size(m);
    if (want.is_shard()) {
      int64_t full = shape[size_t(want.dim)];
      cur = narrow(cur, want.dim, split_piece_offset(full, k, c), split_piece_size(full, k, c));
    } else if (want.is_partial()) {
      // One piece keeps the value, the others hold the identity of the reduction.
      if (want.reduce == ReduceType::Sum && c != 0) cur = ops::zeros_like(cur);
      if (want.reduce == ReduceType::Prod && c != 0) cur = ops::ones_like(cur);
    }
    now[size_t(m)] = want;
  }
  return cur;
}

void check_placements(const char* api, const ProcessMesh& mesh, const Placements& p, int64_t ndim) {
  OAR_CHECK(int64_t(p.size()) == mesh.ndim(), Value, "[", api, "] expected one placement per mesh dim (",
            mesh.ndim(), "), got ", p.size());
  for (const Placement& x : p)
    OAR_CHECK(!x.is_shard() || (x.dim >= 0 && x.dim < ndim), Index, "[", api, "] Shard(", x.dim,
              ") is out of range for a tensor of ", ndim, " dims");
  to_dims_mapping(p, ndim);  // refuses two mesh dims splitting one tensor dim
}

// A distributed tensor of `global_shape` whose piece here is `local` (an
// alias of it: the piece never carries autograd history or placements).
Tensor wrap(const Tensor& local, MeshPtr mesh, const Placements& p, const Dims& global_shape) {
  // The wrapper's strides are the contiguous ones of the global shape, which
  // ops such as reshape read to decide whether a view is possible: the piece
  // must be contiguous too (a view op's strided result is copied).
  Tensor src = local;
  if (!src.is_contiguous()) {
    NoGradGuard ng;
    src = ops::contiguous(src);
  }
  Tensor piece = make_view(src, src.shape(), src.strides(), src.offset());
  auto impl = make_ref<TensorImpl>(piece.impl()->storage, global_shape, contiguous_strides(global_shape), 0,
                                   piece.dtype());
  impl->dist = std::make_shared<DistAttr>(std::move(mesh), p, global_shape);
  impl->dist->local = piece;
  return Tensor(std::move(impl));
}

Metas reshard_meta(std::span<const Tensor> in, const Attrs&) { return {TensorMeta{in[0].shape(), in[0].dtype()}}; }

Tensors reshard_grad(const GradCtx& ctx) {
  const Tensor& x = ctx.in(0);
  Placements back = x.impl()->dist->placements;
  for (Placement& p : back)
    if (p.is_partial()) p = Placement::replicate();
  Tensor g = ctx.grad(0);
  if (!g.is_dist()) {  // e.g. the ones a backward pass starts from: the same on every rank
    MeshPtr out_mesh = mesh_at(ctx.attr().i(0));
    g = wrap(g, out_mesh, Placements(size_t(out_mesh->ndim()), Placement::replicate()), g.shape());
  }
  return {reshard(g, x.impl()->dist->mesh, back)};
}

OpDef& kReshard = OpBuilder("dist_reshard").attrs({"mesh", "placements"}).meta(reshard_meta).grad(reshard_grad);

Placements no_partial(Placements p) {
  for (Placement& x : p)
    if (x.is_partial()) x = Placement::replicate();
  return p;
}

// The crossings between a piece and its distributed tensor, as ops so that
// gradients cross too. A gradient arriving at a piece is the gradient of the
// piece; one arriving at a Partial value reaches every piece whole.
Tensors from_local_grad(const GradCtx& ctx) {
  MeshPtr mesh = mesh_at(ctx.attr().i(0));
  Placements p = no_partial(decode(ctx.attr().ints(1)));
  Tensor g = ctx.grad(0);
  if (!g.is_dist()) g = wrap(g, mesh, Placements(size_t(mesh->ndim()), Placement::replicate()), g.shape());
  return {to_local(reshard(g, mesh, p))};
}

Tensors to_local_grad(const GradCtx& ctx) {
  const DistAttr& a = *ctx.in(0).impl()->dist;
  return {from_local(ctx.grad(0), a.mesh, no_partial(a.placements), a.global_shape)};
}

OpDef& kFromLocal = OpBuilder("dist_from_local").attrs({"mesh", "placements", "global_shape"})
                        .meta(reshard_meta).grad(from_local_grad).saves(false, false);
OpDef& kToLocal = OpBuilder("dist_to_local").meta(reshard_meta).grad(to_local_grad);

void warn_no_rule(const OpDef& op) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lk(mu);
  if (!warned.insert(op.name).second) return;
  std::fprintf(stderr,
               "[oar.distributed] %s has no SPMD rule: its distributed inputs are made replicated first "
               "(correct, but it communicates)\n",
               op.name.c_str());
}

// The pieces of `inputs` laid out like `ref` (a distributed tensor), for ops
// that work element by element on ref's piece: updates and in-place writes.
// Tensors already placed like ref give their own piece (so writes land).
Tensors pieces_like(const Tensor& ref, std::span<const Tensor> inputs, const OpDef& op) {
  const DistAttr& ra = *ref.impl()->dist;
  Tensors out(inputs.size());
  NoGradGuard ng;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) continue;
    if (t.is_dist()) {
      const DistAttr& a = *t.impl()->dist;
      bool same = *a.mesh == *ra.mesh && a.placements == ra.placements;
      if (!same) {
        OAR_CHECK(a.global_shape == ra.global_shape, NotImplemented, "[oar.", op.name, "] operand ", i,
                  " has global shape ", ops::shape_str(a.global_shape), " unlike the updated tensor's ",
                  ops::shape_str(ra.global_shape));
        out[i] = local_value(reshard(t, ra.mesh, ra.placements));
      } else {
        out[i] = local_value(t);
      }
    } else if (t.dim() == 0 || t.numel() == 1) {
      out[i] = t;  // a scalar operand is the same on every rank
    } else {
      OAR_CHECK(t.shape() == ra.global_shape, NotImplemented, "[oar.", op.name, "] a local operand of shape ",
                ops::shape_str(t.shape()), " cannot be combined with a distributed tensor of shape ",
                ops::shape_str(ra.global_shape));
      out[i] = local_value(shard_tensor(t, ra.mesh, ra.placements));
    }
  }
  return out;
}

void dist_stage_inplace(const OpDef& op, Tensor& self, std::span<const Tensor> inputs, const Attrs& attrs) {
  OAR_CHECK(self.is_dist(), NotImplemented, "[oar.", op.name,
            "_] cannot write a distributed value into a local tensor in place; reshard it to Replicate and "
            "use its _local_value()");
  OAR_CHECK(!(grad_enabled() && (self.requires_grad() || any_requires_grad(inputs))), NotImplemented, "[oar.",
            op.name, "_] in-place ops on distributed tensors do not record gradients; run them under oar.no_grad()");
  Tensors local = pieces_like(self, inputs, op);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].same(self)) local[i] = local_value(self);
  Tensor piece = local_value(self);
  NoGradGuard ng;
  dispatch_inplace(op, piece, std::span<const Tensor>(local.data(), local.size()), attrs);
}

// gather_nd on a table split along its rows (LocalRun::MaskedRowGather):
// this piece answers the ids in its row range and gives zero rows for the
// others; the sum over the pieces is the lookup.
Tensor masked_row_gather(const Tensor& table, const Tensor& ids, const DistSpec& table_spec,
                         const ProcessMesh& mesh, int64_t rank) {
  int64_t m = table_spec.dims_mapping[0], k = mesh.dim_size(m);
  int64_t c = mesh.coord_of(rank)[size_t(m)], rows = table_spec.shape[0];
  Tensor lo = ops::full({}, Scalar(split_piece_offset(rows, k, c)), ids.dtype());
  Tensor hi = ops::full({}, Scalar(split_piece_offset(rows, k, c) + split_piece_size(rows, k, c)), ids.dtype());
  Tensor mine = ops::logical_and(ops::greater_equal(ids, lo), ops::less_than(ids, hi));
  Tensor shifted = ops::where(mine, ops::subtract(ids, lo), ops::zeros_like(ids));
  Tensor got = ops::gather_nd(table, shifted);
  // mine is [..., 1]: it broadcasts over the looked-up rows' trailing dims.
  Tensor keep = ops::cast(mine, got.dtype());
  for (int64_t d = got.dim() - keep.dim(); d > 0; --d) keep = ops::unsqueeze(keep, {keep.dim()});
  return ops::multiply(got, keep);
}

// Dispatch stage 2 (Note [distributed tensor]).
bool dist_stage(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensors& outs) {
  if (&op == &kReshard) {
    const Tensor& x = inputs[0];
    MeshPtr mesh = mesh_at(attrs.i(0));
    Placements to = decode(attrs.ints(1));
    Tensor local = reshard_local(local_value(x), *x.impl()->dist, mesh, to);
    outs = {wrap(local, mesh, to, x.impl()->dist->global_shape)};
    if (grad_enabled() && x.requires_grad()) record_op(op, inputs, attrs, outs);
    return true;
  }
  if (op.traits.side_effect) {
    // Updates (optimizers) write their operands' memory: they run on the
    // pieces, every operand laid out like the first distributed one.
    const Tensor* ref = nullptr;
    for (const Tensor& t : inputs)
      if (!ref && t.defined() && t.is_dist()) ref = &t;
    Tensors local = pieces_like(*ref, inputs, op);
    Tensors lo;
    {
      NoGradGuard ng;
      lo = dispatch(op, std::span<const Tensor>(local.data(), local.size()), attrs);
    }
    const DistAttr& ra = *ref->impl()->dist;
    outs.clear();
    for (const Tensor& o : lo) outs.push_back(o.defined() ? wrap(o, ra.mesh, ra.placements, ra.global_shape) : o);
    return true;
  }
  MeshPtr mesh;
  for (const Tensor& t : inputs)
    if (t.defined() && t.is_dist()) {
      if (!mesh) mesh = t.impl()->dist->mesh;
      OAR_CHECK(*mesh == *t.impl()->dist->mesh, Value, "[oar.", op.name, "] the inputs are on different process "
                "meshes (", mesh->to_string(), " and ", t.impl()->dist->mesh->to_string(),
                "); reshard one onto the other's mesh first");
    }
  int64_t rank = world_rank();
  OAR_CHECK(mesh->contains(rank), NotImplemented, "[oar.", op.name, "] rank ", rank,
            " is not in the inputs' mesh ", mesh->to_string(), ": ops on ranks outside a mesh are not supported");
  SmallVector<DistSpec, 4> specs;
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      DistSpec s;
      s.defined = false;
      specs.push_back(s);
    } else {
      specs.push_back(t.is_dist() ? spec_of(*t.impl()->dist, int64_t(t.itemsize()))
                                  : DistSpec::replicated(t.shape(), int64_t(t.itemsize())));
    }
  }
  std::span<const DistSpec> in_specs(specs.data(), specs.size());
  SpmdFn rule = spmd_rule_of(op);
  if (!rule) warn_no_rule(op);
  SpmdInfo info = rule ? rule(*mesh, in_specs, attrs) : replicate_all(*mesh, in_specs, attrs);
  // Reshard the inputs as the rule asks (differentiably: autograd sees it).
  Tensors ready(inputs.size()), local(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) continue;
    Tensor d = t;
    if (!d.is_dist()) d = wrap(t, mesh, Placements(size_t(mesh->ndim()), Placement::replicate()), t.shape());
    Placements want = i < info.inputs.size() && info.inputs[i].defined ? placements_of(info.inputs[i], mesh->ndim())
                                                                       : Placements(size_t(mesh->ndim()));
    if (want != d.impl()->dist->placements) d = reshard(d, mesh, want);
    ready[i] = t.is_dist() ? d : t;  // a local input keeps its own autograd edge
    local[i] = local_value(d);
  }
  Attrs la;
  for (size_t k = 0; k < attrs.size(); ++k) {
    if (k == 0 && info.local == LocalRun::LocalShapeAttr) {
      la.push_back(local_shape(info.outputs[0].shape, *mesh, placements_of(info.outputs[0], mesh->ndim()), rank));
    } else {
      la.push_back(attrs[k]);
    }
  }
  Tensors lo;
  {
    NoGradGuard ng;
    if (info.local == LocalRun::MaskedRowGather)
      lo = {masked_row_gather(local[0], local[1], info.inputs[0], *mesh, rank)};
    else
      lo = dispatch(op, std::span<const Tensor>(local.data(), local.size()), la);
  }
  outs.clear();
  for (size_t j = 0; j < lo.size(); ++j) {
    Tensor o = lo[j];
    if (!o.defined()) {
      outs.push_back(o);
      continue;
    }
    if (j < info.outputs.size())
      outs.push_back(wrap(o, mesh, placements_of(info.outputs[j], mesh->ndim()), info.outputs[j].shape));
    else
      outs.push_back(wrap(o, mesh, Placements(size_t(mesh->ndim()), Placement::replicate()), o.shape()));
  }
  if (op.grad && grad_enabled() && any_requires_grad(std::span<const Tensor>(ready.data(), ready.size())))
    record_op(op, std::span<const Tensor>(ready.data(), ready.size()), attrs, outs);
  return true;
}

struct Install {
  Install() {
    dispatch_hooks().distributed = &dist_stage;
    dispatch_hooks().distributed_inplace = &dist_stage_inplace;
  }
} g_install;

}  // namespace

Tensor from_local(const Tensor& local, MeshPtr mesh, const Placements& placements, const Dims& global_shape) {
  Tensor out = make_dist(local, mesh, placements, global_shape);
  if (grad_enabled() && local.requires_grad()) {
    Tensors outs{out};
    Tensor in[1] = {local};
    record_op(kFromLocal, std::span<const Tensor>(in, 1), Attrs{mesh_id(mesh), encode(placements), global_shape},
              outs);
  }
  return out;
}

Tensor to_local(const Tensor& x) {
  OAR_CHECK(x.defined() && x.is_dist(), Type, "[oar.distributed.dtensor_to_local] expected a distributed tensor");
  Tensor piece = local_value(x);
  Tensor out = make_view(piece, piece.shape(), piece.strides(), piece.offset());  // its own autograd meta
  if (grad_enabled() && x.requires_grad()) {
    Tensors outs{out};
    Tensor in[1] = {x};
    record_op(kToLocal, std::span<const Tensor>(in, 1), no_attrs(), outs);
  }
  return out;
}

int64_t world_rank() { return world_initialized() ? world_info().rank : 0; }

Tensor local_value(const Tensor& x) {
  if (!x.is_dist()) return x;
  return x.impl()->dist->local;
}

Tensor make_dist(const Tensor& local, MeshPtr mesh, const Placements& placements, const Dims& global_shape) {
  const char* api = "oar.distributed.dtensor_from_local";
  OAR_CHECK(local.defined() && !local.is_dist(), Type, "[", api, "] expected a local (not distributed) tensor");
  check_placements(api, *mesh, placements, int64_t(global_shape.size()));
  int64_t rank = world_rank();
  if (mesh->contains(rank)) {
    Dims want = local_shape(global_shape, *mesh, placements, rank);
    OAR_CHECK(want == local.shape(), Value, "[", api, "] rank ", rank, "'s piece of a tensor of global shape ",
              ops::shape_str(global_shape), " placed ", placements_str(placements), " has shape ",
              ops::shape_str(want), ", got ", ops::shape_str(local.shape()));
  }
  return wrap(local, std::move(mesh), placements, global_shape);
}

Tensor shard_tensor(const Tensor& global, MeshPtr mesh, const Placements& placements) {
  const char* api = "oar.distributed.shard_tensor";
  OAR_CHECK(global.defined(), Value, "[", api, "] expected a tensor");
  OAR_CHECK(!global.is_dist(), Type, "[", api, "] the tensor is distributed already; use reshard");
  check_placements(api, *mesh, placements, global.dim());
  Tensor replicated = global;
  DistAttr from(mesh, Placements(size_t(mesh->ndim()), Placement::replicate()), global.shape());
  Tensor local = reshard_local(replicated, from, mesh, placements);
  // The piece must not share memory with the caller's tensor.
  if (local.storage().data() == global.storage().data()) local = ops::clone(local);
  return wrap(local, mesh, placements, global.shape());
}

Tensor reshard(const Tensor& x, MeshPtr mesh, const Placements& placements) {
  const char* api = "oar.distributed.reshard";
  OAR_CHECK(x.defined() && x.is_dist(), Type, "[", api,
            "] expected a distributed tensor (make one with shard_tensor or dtensor_from_local)");
  check_placements(api, *mesh, placements, int64_t(x.impl()->dist->global_shape.size()));
  if (*mesh == *x.impl()->dist->mesh && placements == x.impl()->dist->placements) return x;
  Tensor in[1] = {x};
  return dispatch(kReshard, std::span<const Tensor>(in, 1), Attrs{mesh_id(mesh), encode(placements)})[0];
}

}  // namespace oar::dist

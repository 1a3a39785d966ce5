// Process groups and collectives (src/dist/process_group.h).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "dist/dist_tensor.h"
#include "dist/process_group.h"

namespace oar::bind {
namespace {

using dist::ProcessGroup;
using dist::ReduceOp;
using dist::Work;

std::shared_ptr<const ProcessMesh> mesh_of(const Dims& shape, const std::vector<int64_t>& ids,
                                           const std::vector<std::string>& names) {
  return std::make_shared<const ProcessMesh>(shape, ids, names);
}

// Placements cross as (kind, arg) pairs: kind 0 Replicate, 1 Shard (arg: the
// tensor dim), 2 Partial (arg: the reduce type, ReduceType's order).
Placements placements_of(const std::vector<std::pair<int, int64_t>>& p) {
  Placements out;
  for (auto [kind, arg] : p) {
    if (kind == 1) out.push_back(Placement::shard(arg));
    else if (kind == 2) out.push_back(Placement::partial(ReduceType(arg)));
    else out.push_back(Placement::replicate());
  }
  return out;
}

Tensor as_tensor(TensorImpl& t) { return Tensor(&t); }

void bind_dist(nb::module_& m) {
  nb::enum_<ReduceOp>(m, "_ReduceOp")
      .value("SUM", ReduceOp::Sum)
      .value("MAX", ReduceOp::Max)
      .value("MIN", ReduceOp::Min)
      .value("PROD", ReduceOp::Prod)
      .value("AVG", ReduceOp::Avg);

  nb::class_<Work>(m, "_Work")
      .def("wait", &Work::wait, nb::call_guard<nb::gil_scoped_release>())
      .def("is_completed", &Work::is_completed);

  // Every collective only enqueues work (the communication thread does it),
  // so none needs the GIL released except wait().
  nb::class_<ProcessGroup>(m, "_ProcessGroup")
      .def_prop_ro("rank", &ProcessGroup::rank)
      .def_prop_ro("size", &ProcessGroup::size)
      .def_prop_ro("ranks", &ProcessGroup::ranks)
      .def_prop_rw("timeout", &ProcessGroup::timeout_seconds, &ProcessGroup::set_timeout)
      .def("all_reduce", [](ProcessGroup& g, TensorImpl& t, ReduceOp op) { return g.all_reduce(as_tensor(t), op); })
      .def("all_gather", [](ProcessGroup& g, TensorImpl& out, TensorImpl& in) {
        return g.all_gather(as_tensor(out), as_tensor(in));
      })
      .def("reduce_scatter", [](ProcessGroup& g, TensorImpl& out, TensorImpl& in, ReduceOp op) {
        return g.reduce_scatter(as_tensor(out), as_tensor(in), op);
      })
      .def("reduce", [](ProcessGroup& g, TensorImpl& t, int root, ReduceOp op) {
        return g.reduce(as_tensor(t), root, op);
      })
      .def("broadcast", [](ProcessGroup& g, TensorImpl& t, int root) { return g.broadcast(as_tensor(t), root); })
      .def("scatter", [](ProcessGroup& g, TensorImpl& out, TensorImpl* in, int root) {
        return g.scatter(as_tensor(out), in ? as_tensor(*in) : Tensor(), root);
      }, nb::arg("out"), nb::arg("input").none(), nb::arg("root"))
      .def("gather", [](ProcessGroup& g, TensorImpl* out, TensorImpl& in, int root) {
        return g.gather(out ? as_tensor(*out) : Tensor(), as_tensor(in), root);
      }, nb::arg("out").none(), nb::arg("input"), nb::arg("root"))
      .def("alltoall", [](ProcessGroup& g, TensorImpl& out, TensorImpl& in, const std::vector<int64_t>& out_counts,
                          const std::vector<int64_t>& in_counts) {
        return g.alltoall(as_tensor(out), as_tensor(in), out_counts, in_counts);
      })
      .def("send", [](ProcessGroup& g, TensorImpl& t, int dst) { return g.send(as_tensor(t), dst); })
      .def("recv", [](ProcessGroup& g, TensorImpl& t, int src) { return g.recv(as_tensor(t), src); })
      .def("barrier", &ProcessGroup::barrier);

  m.def("_dist_init", [](double timeout) {
    dist::WorldInfo w;
    {
      nb::gil_scoped_release nogil;
      w = dist::init_world(timeout);
    }
    return nb::make_tuple(w.rank, w.size, w.local_rank, w.local_size);
  });
  m.def("_dist_initialized", &dist::world_initialized);
  m.def("_dist_world_group", &dist::world_group);
  m.def("_dist_new_group", &dist::new_group, nb::call_guard<nb::gil_scoped_release>());
  m.def("_dist_shutdown", [] {
    dist::release_finished();  // with the interpreter lock: tensors may have Python owners
    nb::gil_scoped_release nogil;
    dist::shutdown_world();
  });
  m.def("_dist_has_mpi", &dist::built_with_mpi);

  using PL = std::vector<std::pair<int, int64_t>>;
  using Names = std::vector<std::string>;
  using Ids = std::vector<int64_t>;
  m.def("_dist_shard", [](TensorImpl& t, const Dims& ms, const Ids& ids, const Names& names, const PL& p) {
    return dist::shard_tensor(Tensor(&t), mesh_of(ms, ids, names), placements_of(p));
  });
  m.def("_dist_from_local", [](TensorImpl& t, const Dims& ms, const Ids& ids, const Names& names, const PL& p,
                               const Dims& global_shape) {
    return dist::from_local(Tensor(&t), mesh_of(ms, ids, names), placements_of(p), global_shape);
  });
  m.def("_dist_reshard", [](TensorImpl& t, const Dims& ms, const Ids& ids, const Names& names, const PL& p) {
    return dist::reshard(Tensor(&t), mesh_of(ms, ids, names), placements_of(p));
  });
  m.def("_dist_local", [](TensorImpl& t) { return dist::local_value(Tensor(&t)); });
  // Rebinds `dst` to `src`'s data and placements, keeping dst's identity and
  // autograd leaf state: a parameter re-placed by sharding stays the object
  // that layers and optimizers hold.
  m.def("_dist_set_", [](TensorImpl& dst, TensorImpl& src) {
    OAR_CHECK(dst.shape == src.shape && dst.dtype == src.dtype, Value,
              "[oar.distributed] re-placing a tensor needs the same global shape and dtype");
    dst.storage = src.storage;
    dst.strides = src.strides;
    dst.offset = src.offset;
    dst.dist = src.dist;
    dst.refresh();
  });
  m.def("_dist_to_local", [](TensorImpl& t) { return dist::to_local(Tensor(&t)); });
  m.def("_dist_attr", [](TensorImpl& t) -> nb::object {
    if (!t.dist) return nb::none();
    const DistAttr& a = *t.dist;
    nb::list pl;
    for (const Placement& p : a.placements)
      pl.append(nb::make_tuple(int(p.kind), p.is_shard() ? p.dim : p.is_partial() ? int64_t(p.reduce) : 0));
    return nb::make_tuple(a.mesh->shape(), a.mesh->process_ids(), a.mesh->dim_names(), pl, a.global_shape);
  });
}

Binder b(bind_dist);

}  // namespace
}  // namespace oar::bind

// Process groups and collectives (src/dist/process_group.h).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "common.h"
#include "dist/process_group.h"

namespace oar::bind {
namespace {

using dist::ProcessGroup;
using dist::ReduceOp;
using dist::Work;

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
}

Binder b(bind_dist);

}  // namespace
}  // namespace oar::bind

// Autograd nodes whose backward is Python (oar.autograd.PyLayer), and the
// Python side of saved-tensor hooks.
//
// Note [PyLayer]
// PyLayer.apply runs the user's forward with recording off, then records one
// PyLayerNode over the call: its edges are the forward's tensor inputs, its
// outputs the forward's tensor outputs. The tensors the forward saved with
// ctx.save_for_backward live in the node as SavedTensors (so a saved output is
// a detached alias, not a cycle through the node), and come back to Python
// only while the user's backward runs. The backward runs as any gradient rule
// does: under create_graph its ops are recorded, so a differentiable backward
// gives double backward.
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>

#include "autograd/autograd.h"
#include "common.h"
#include "ir/executor.h"
#include "ir/tracer.h"

namespace oar::bind {
namespace {

// Drops a Python reference from C++ code that may not hold the GIL.
void release_object(nb::object& o) {
  if (!o.is_valid()) return;
  nb::gil_scoped_acquire gil;
  o.reset();
}

// A Python object owned from C++: released under the GIL whoever drops it last.
std::shared_ptr<nb::object> py_ref(nb::object o) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(o)), [](nb::object* p) {
    nb::gil_scoped_acquire gil;
    delete p;
  });
}

struct PyLayerNode final : Node {
  nb::object backward;  // callable(saved: list, grads: list) -> sequence of Tensor | None
  std::string label;
  SmallVector<SavedTensor, 2> saved;
  Metas out_metas;
  Metas in_metas;
  bool materialize = true;
  bool released = false;

  ~PyLayerNode() override { release_object(backward); }
  std::string name() const override { return label + "_grad"; }
  int num_outputs() const override { return int(out_metas.size()); }
  void release() override {
    saved.clear();
    released = true;
    release_object(backward);  // the user's code may reach back to the outputs
  }

  Tensors apply(Tensors& grads) override {
    OAR_CHECK(!released, Runtime, "[oar.autograd.PyLayer] trying to backward through the graph of '", label,
              "' a second time; its saved tensors were freed. Pass retain_graph=True to the first backward if you "
              "need to backward twice.");
    nb::gil_scoped_acquire gil;
    auto self = shared_from_this();
    nb::list saved_list, grad_list;
    for (size_t i = 0; i < saved.size(); ++i) {
      Tensor t = saved[i].unpack(self, label.c_str(), int(i));
      saved_list.append(t.defined() ? nb::cast(t) : nb::none());
    }
    for (size_t i = 0; i < grads.size(); ++i) {
      Tensor g = grads[i];
      if (!g.defined() && materialize) g = ops::zeros(out_metas[i].shape, out_metas[i].dtype);
      grad_list.append(g.defined() ? nb::cast(g) : nb::none());
    }
    nb::object r = backward(saved_list, grad_list);
    std::string api = "[oar.autograd.PyLayer] " + label + ".backward";
    Tensors out;
    if (nb::isinstance<Tensor>(r) || r.is_none()) {
      out.push_back(r.is_none() ? Tensor() : nb::cast<Tensor>(r));
    } else {
      OAR_CHECK(nb::isinstance<nb::sequence>(r), Type, api, " must return a Tensor or a tuple of Tensors (one per "
                "tensor input of forward), got ", nb::inst_name(r).c_str());
      for (nb::handle h : r) {
        OAR_CHECK(h.is_none() || nb::isinstance<Tensor>(h), Type, api, " returned a ", nb::inst_name(h).c_str(),
                  " where a Tensor or None was expected");
        out.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
      }
    }
    OAR_CHECK(out.size() == next.size(), Value, api, " returned ", out.size(), " gradient(s) but forward took ",
              next.size(), " tensor input(s)");
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].defined()) continue;
      OAR_CHECK(out[i].shape() == in_metas[i].shape, Value, api, " gradient ", i, " has shape ",
                ops::shape_str(out[i].shape()), " but forward's tensor input ", i, " has shape ",
                ops::shape_str(in_metas[i].shape));
    }
    return out;
  }
};

// The live nodes, so that interpreter exit can drop their Python callables:
// a callable reaches its module's globals, which may hold the node's outputs,
// a cycle through C++ that Python's collector cannot see. Touched under the GIL.
std::vector<std::weak_ptr<PyLayerNode>>& live_nodes() {
  static auto* v = new std::vector<std::weak_ptr<PyLayerNode>>();
  return *v;
}

void track(const std::shared_ptr<PyLayerNode>& node) {
  auto& v = live_nodes();
  if (v.size() >= 64 && (v.size() & (v.size() - 1)) == 0)  // prune at powers of two
    std::erase_if(v, [](const std::weak_ptr<PyLayerNode>& w) { return w.expired(); });
  v.push_back(node);
}

void bind_pylayer(nb::module_& m) {
  m.def("_pylayer_release_all", [] {
    for (auto& w : live_nodes())
      if (auto n = w.lock()) n->backward.reset();
    live_nodes().clear();
  });
  m.def("_pylayer_record",
        [](const std::string& label, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
           std::vector<bool> differentiable, std::vector<std::optional<Tensor>> saved, nb::callable backward,
           bool materialize) {
          // Outputs that are inputs returned as they are become aliases, so the
          // input keeps its own place in the graph.
          auto node = std::make_shared<PyLayerNode>();
          node->label = label;
          node->materialize = materialize;
          for (const Tensor& t : inputs) {
            node->next.push_back(gradient_edge(t));
            node->in_metas.push_back(TensorMeta{t.shape(), t.dtype(), {}, 0});
          }
          std::vector<Tensor> result;
          int nr = 0;
          for (size_t i = 0; i < outputs.size(); ++i) {
            Tensor o = outputs[i];
            bool is_input = false;
            for (const Tensor& t : inputs) is_input = is_input || t.impl() == o.impl();
            if (is_input || o.requires_grad()) o = make_view(detach(o), o.shape(), o.strides(), o.offset());
            if (differentiable[i]) {
              node->out_metas.push_back(TensorMeta{o.shape(), o.dtype(), {}, 0});
              AutogradMeta& am = o.autograd_meta();
              am.stop_gradient = false;
              am.grad_fn = node;
              am.output_nr = nr++;
            }
            result.push_back(o);
          }
          // A saved output is saved as the node's output (Note [saved outputs]).
          node->saved.resize(saved.size());
          for (size_t i = 0; i < saved.size(); ++i) {
            if (!saved[i]) continue;
            const Tensor& s = *saved[i];
            size_t k = 0;
            while (k < outputs.size() && !(differentiable[k] && outputs[k].impl() == s.impl())) ++k;
            if (k < outputs.size()) node->saved[i].save(result[k], true, result[k].autograd_meta().output_nr);
            else node->saved[i].save(s, false, 0);
          }
          node->backward = std::move(backward);
          track(node);
          return result;
        });

  // Note [PyLayer in programs]
  m.def("_trace_py_layer", [](int64_t token, std::vector<Tensor> inputs, nb::callable forward) {
    Tensors in(inputs.begin(), inputs.end());
    Tensors out = ir::trace_py_layer(in, token, [&forward](const Tensors& args) -> Tensors {
      nb::list xs;
      for (const Tensor& t : args) xs.append(nb::cast(t));
      std::vector<Tensor> v = nb::cast<std::vector<Tensor>>(forward(xs));
      return Tensors(v.begin(), v.end());
    }, "oar.autograd.PyLayer");
    return std::vector<Tensor>(out.begin(), out.end());
  });
  m.def("_set_py_layer_runner", [](nb::object runner) {  // None clears it
    if (runner.is_none()) {
      ir::set_py_layer_runner(nullptr);
      return;
    }
    auto fn = py_ref(runner);
    ir::set_py_layer_runner([fn](int64_t token, const Tensors& inputs) -> std::optional<Tensors> {
      nb::gil_scoped_acquire gil;
      nb::list xs;
      for (const Tensor& t : inputs) xs.append(nb::cast(t));
      nb::object r = (*fn)(token, xs);
      if (r.is_none()) return std::nullopt;
      std::vector<Tensor> v = nb::cast<std::vector<Tensor>>(r);
      return Tensors(v.begin(), v.end());
    });
  }, nb::arg("runner").none());

  m.def("_push_saved_tensor_hooks", [](nb::callable pack, nb::callable unpack) {
    auto h = std::make_shared<SavedTensorHooks>();
    auto pack_ref = py_ref(pack);
    auto unpack_ref = py_ref(unpack);
    h->pack = [pack_ref](const Tensor& t) -> std::shared_ptr<void> {
      nb::gil_scoped_acquire gil;
      return py_ref((*pack_ref)(t));
    };
    h->unpack = [unpack_ref](const std::shared_ptr<void>& p) -> Tensor {
      nb::gil_scoped_acquire gil;
      nb::object r = (*unpack_ref)(*static_cast<nb::object*>(p.get()));
      OAR_CHECK(nb::isinstance<Tensor>(r), Type, "[oar.autograd.saved_tensors_hooks] unpack_hook must return a "
                "Tensor, got ", nb::inst_name(r).c_str());
      return nb::cast<Tensor>(r);
    };
    push_saved_tensor_hooks(std::move(h));
  });
  m.def("_pop_saved_tensor_hooks", &pop_saved_tensor_hooks);
}

Binder b(bind_pylayer);

}  // namespace
}  // namespace oar::bind

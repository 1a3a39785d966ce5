// oar.static's program builder: a Tracer that stays open across Python
// statements (static mode records the ops that user code dispatches, one
// statement at a time), and a switch that pauses recording on this thread.
// Also the autograd node through which a to_static call's captured backward
// program runs. oar/static/program.py and oar/jit/api.py wrap these.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include <memory>

#include "autograd/autograd.h"
#include "common.h"
#include "ir/executor.h"
#include "ir/serialize.h"
#include "ir/tracer.h"
#include "ops/dispatch.h"
#include "ops/random.h"

namespace oar::bind {
namespace {

using nb::arg;

class StaticRecorder {
 public:
  StaticRecorder() : tracer_(std::make_unique<ir::Tracer>()) {}

  ir::Tracer& tracer() {
    OAR_CHECK(tracer_ != nullptr, Runtime, "[oar.static.Program] the program was closed (oar.disable_static() "
              "ends the recording of static programs)");
    return *tracer_;
  }
  // Ends the recording; the program text stays printable.
  void close() {
    if (!tracer_) return;
    last_text_ = ir::to_string(tracer_->program());
    tracer_.reset();
  }
  bool closed() const { return tracer_ == nullptr; }
  std::string text() const { return tracer_ ? ir::to_string(tracer_->program()) : last_text_; }

 private:
  std::unique_ptr<ir::Tracer> tracer_;
  std::string last_text_;
};

// A backward program shared by the autograd nodes of every call that uses it,
// so that a node outlives the Python object that made the program.
struct BackwardProgram {
  std::shared_ptr<ir::Program> program;
  std::vector<Tensor> bindings;
  // The call's whole forward program and the outputs that get gradients:
  // a gradient of the gradient reruns it with autograd (see ProgramNode).
  std::shared_ptr<ir::Program> forward;
  std::vector<Tensor> forward_bindings;
  std::vector<int64_t> diff;
};

// The gradient of one to_static call: runs the captured backward program on
// the values its forward program saved and the gradients of the call's
// outputs. The backward program's ops are the ops' gradient rules, recorded
// by tracing (Note [captured backward] in oar/static/_split.py).
struct ProgramNode final : Node {
  std::shared_ptr<BackwardProgram> backward;
  std::vector<Tensor> saved;
  SmallVector<SavedTensor, 2> inputs;  // the call's inputs
  std::vector<Tensor> params;          // the parameters that get gradients, then inputs[leaf_index]
  std::vector<int64_t> leaf_index;
  Metas out_metas;
  // The generator's state when the forward program ran: a rerun draws the
  // same random numbers (Note [random state at run time], ops/random.h).
  std::pair<uint64_t, uint64_t> rng{0, 0};
  bool released = false;

  std::string name() const override { return "to_static_grad"; }
  int num_outputs() const override { return int(out_metas.size()); }
  void release() override {
    saved.clear();
    inputs.clear();
    released = true;
  }
  Tensor grad_or_zeros(const Tensors& grads, size_t i) const {
    return grads[i].defined() ? grads[i] : ops::zeros(out_metas[i].shape, out_metas[i].dtype);
  }
  Tensors apply(Tensors& grads) override {
    OAR_CHECK(!released, Runtime, "[oar.jit.to_static] trying to backward through a to_static call a second "
              "time; its saved tensors were freed. Pass retain_graph=True to the first backward if you need to "
              "backward twice.");
    if (grad_enabled()) return differentiable_grads(grads);
    std::vector<Tensor> in(saved.begin(), saved.end());
    for (size_t i = 0; i < out_metas.size(); ++i) in.push_back(grad_or_zeros(grads, i));
    const std::vector<Tensor>& b = backward->bindings;
    return ir::run(*backward->program, std::span<const Tensor>(in.data(), in.size()),
                   std::span<const Tensor>(b.data(), b.size()));
  }
  // create_graph=True: the saved values carry no autograd history, so the
  // gradient is taken again from a run of the forward program with autograd,
  // which makes it differentiable (to any order) like eager code.
  Tensors differentiable_grads(Tensors& grads) {
    auto self = shared_from_this();
    std::vector<Tensor> leaves;
    for (size_t i = 0; i < inputs.size(); ++i) leaves.push_back(inputs[i].unpack(self, "to_static", int(i)));
    const std::vector<Tensor>& fb = backward->forward_bindings;
    // The rerun must not apply the program's state updates a second time.
    std::vector<std::pair<Tensor, Tensor>> state;
    const auto& params_of = backward->forward->parameters();
    for (const ir::StateUpdate& u : backward->forward->state_updates())
      for (size_t i = 0; i < params_of.size(); ++i)
        if (params_of[i].value == u.parameter) state.emplace_back(fb[i], ops::clone(fb[i]));
    const auto now = rng_state();
    set_rng_state(rng.first, rng.second);
    Tensors outs;
    try {
      outs = ir::run(*backward->forward, std::span<const Tensor>(leaves.data(), leaves.size()),
                     std::span<const Tensor>(fb.data(), fb.size()));
    } catch (...) {
      set_rng_state(now.first, now.second);
      throw;
    }
    set_rng_state(now.first, now.second);
    {
      NoGradGuard ng;
      for (auto& [t, v] : state) {
        Tensor dst = t;
        ops::copy_(dst, v);
      }
    }
    std::vector<Tensor> targets, gos, wrt(params.begin(), params.end());
    for (size_t i = 0; i < backward->diff.size(); ++i) {
      targets.push_back(outs[size_t(backward->diff[i])]);
      gos.push_back(grad_or_zeros(grads, i));
    }
    for (int64_t k : leaf_index) wrt.push_back(leaves[size_t(k)]);
    // The graph of the rerun is kept: the gradients returned are differentiated through it next.
    return run_backward(std::span<const Tensor>(targets.data(), targets.size()),
                        std::span<const Tensor>(gos.data(), gos.size()), /*retain_graph=*/true,
                        /*create_graph=*/true, std::span<const Tensor>(wrt.data(), wrt.size()), /*allow_unused=*/true);
  }
};

void bind_static(nb::module_& m) {
  nb::class_<BackwardProgram>(m, "_BackwardProgram")
      .def("__str__", [](const BackwardProgram& b) { return ir::to_string(*b.program); });
  // Parses a backward program (the JSON of the format) bound to `bindings`,
  // with the call's whole forward program for gradients of gradients.
  m.def("_static_backward_program", [](const std::string& text, std::vector<Tensor> bindings,
                                       const std::string& forward_text, std::vector<Tensor> forward_bindings,
                                       std::vector<int64_t> diff) {
    auto b = std::make_shared<BackwardProgram>();
    b->program = std::shared_ptr<ir::Program>(ir::from_json(text, "<backward program>"));
    b->forward = std::shared_ptr<ir::Program>(ir::from_json(forward_text, "<forward program>"));
    OAR_CHECK(b->program->parameters().size() == bindings.size() &&
                  b->forward->parameters().size() == forward_bindings.size(), Value,
              "[oar.jit.to_static] internal: a program and its bindings do not match");
    for (int64_t d : diff)
      OAR_CHECK(d >= 0 && size_t(d) < b->forward->outputs().size(), Value, "[oar.jit.to_static] internal: output ",
                d, " is out of range");
    b->bindings = std::move(bindings);
    b->forward_bindings = std::move(forward_bindings);
    b->diff = std::move(diff);
    return b;
  }, arg("text"), arg("bindings"), arg("forward_text"), arg("forward_bindings"), arg("diff"));
  // Makes `outputs` (fresh results of a forward program run without
  // autograd) the outputs of one node whose gradient flows to `params` and
  // to inputs[leaf_index]: the backward program takes `saved` and then one
  // gradient per output, and returns one gradient per such tensor.
  m.def("_static_attach_backward", [](std::vector<Tensor> outputs, const std::vector<Tensor>& inputs,
                                      std::vector<Tensor> params, std::vector<int64_t> leaf_index,
                                      std::shared_ptr<BackwardProgram> backward, std::vector<Tensor> saved,
                                      std::pair<uint64_t, uint64_t> rng) {
    OAR_CHECK(backward->program->inputs().size() == saved.size() + outputs.size() &&
                  backward->program->outputs().size() == params.size() + leaf_index.size() &&
                  backward->diff.size() == outputs.size() && backward->forward->inputs().size() == inputs.size(),
              Value, "[oar.jit.to_static] internal: the backward program does not match the call");
    for (int64_t k : leaf_index)
      OAR_CHECK(k >= 0 && size_t(k) < inputs.size(), Value, "[oar.jit.to_static] internal: input ", k,
                " is out of range");
    auto node = std::make_shared<ProgramNode>();
    node->backward = std::move(backward);
    // Detached aliases: a saved value may be one of the outputs, and an output
    // holding its own node would be a reference cycle (Note [saved outputs]).
    for (const Tensor& t : saved) node->saved.push_back(detach(t));
    node->inputs.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) node->inputs[i].save(inputs[i], false, 0);
    for (const Tensor& p : params) node->next.push_back(gradient_edge(p));
    for (int64_t k : leaf_index) node->next.push_back(gradient_edge(inputs[size_t(k)]));
    node->params = std::move(params);
    node->leaf_index = std::move(leaf_index);
    node->rng = rng;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor& o = outputs[i];
      node->out_metas.push_back(TensorMeta{o.shape(), o.dtype(), {}, 0});
      AutogradMeta& meta = o.autograd_meta();
      OAR_CHECK(!meta.grad_fn, Value, "[oar.jit.to_static] internal: output ", i, " already has a gradient");
      meta.stop_gradient = false;
      meta.grad_fn = node;
      meta.output_nr = int(i);
    }
  }, arg("outputs"), arg("inputs"), arg("params"), arg("leaf_index"), arg("backward"), arg("saved"), arg("rng"));

  nb::class_<StaticRecorder>(m, "_StaticRecorder")
      .def(nb::init<>())
      .def("__str__", &StaticRecorder::text)
      .def_prop_ro("closed", &StaticRecorder::closed)
      .def("close", &StaticRecorder::close)
      .def("add_input", [](StaticRecorder& r, const std::string& name, const Tensor& example, const Dims& dyn) {
        r.tracer().add_input(name, example, dyn);
      }, arg("name"), arg("example"), arg("dynamic_dims"))
      .def("name_parameter", [](StaticRecorder& r, const std::string& name, const Tensor& t) {
        r.tracer().name_parameter(name, t);
      }, arg("name"), arg("tensor"))
      .def("add_output", [](StaticRecorder& r, const std::string& name, const Tensor& t) {
        r.tracer().add_output(name, t);
      }, arg("name"), arg("tensor"))
      .def_prop_ro("num_ops", [](StaticRecorder& r) { return r.tracer().program().body().operations().size(); })
      // The program so far in the versioned JSON format, and the tensors
      // bound to its parameters in order: a snapshot that the executor
      // prunes to what a run fetches.
      .def("snapshot", [](StaticRecorder& r) {
        ir::Tracer& t = r.tracer();
        std::string text = ir::to_json(t.program());
        std::vector<Tensor> bindings = t.bindings();
        return std::make_pair(std::move(text), std::move(bindings));
      });

  // Pauses (false) or resumes (true) recording on this thread; returns the
  // previous state. Parameter creation in static mode runs paused: a
  // parameter is initialised once, outside the program.
  m.def("_static_set_recording", [](bool on) {
    bool prev = dispatch_state().tracing;
    dispatch_state().tracing = on && ir::is_tracing();
    return prev;
  }, arg("on"));
}

Binder b(bind_static);

}  // namespace
}  // namespace oar::bind

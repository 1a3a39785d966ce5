#include "autograd/autograd.h"

#include <atomic>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {

namespace {
std::atomic<uint64_t> g_seq{0};

// A node for one op call: it runs the op's gradient rule.
struct OpNode final : Node {
  const OpDef* op;
  Attrs attrs;
  SmallVector<SavedTensor, 2> saved_in;
  SmallVector<SavedTensor, 1> saved_out;
  Metas out_metas;  // shape/dtype of each output (for zero grads)
  SmallVector<bool, 4> needs;
  bool released = false;

  std::string name() const override { return op->name + "_grad"; }
  int num_outputs() const override { return int(out_metas.size()); }
  void release() override {
    saved_in.clear();
    saved_out.clear();
    released = true;
  }

  Tensors apply(Tensors& grads) override {
    OAR_CHECK(!released, Runtime, "[oar.autograd] trying to backward through the graph of '", op->name,
              "' a second time; its saved tensors were freed. Pass retain_graph=True to the first "
              "backward if you need to backward twice.");
    auto self = shared_from_this();
    Tensors in, out;
    for (size_t i = 0; i < saved_in.size(); ++i) in.push_back(saved_in[i].unpack(self, op->name.c_str(), int(i)));
    for (size_t i = 0; i < saved_out.size(); ++i) out.push_back(saved_out[i].unpack(self, op->name.c_str(), int(i)));
    GradCtx ctx;
    ctx.inputs = std::span<const Tensor>(in.data(), in.size());
    ctx.outputs = std::span<const Tensor>(out.data(), out.size());
    ctx.grads = std::span<Tensor>(grads.data(), grads.size());
    ctx.out_metas = std::span<const TensorMeta>(out_metas.data(), out_metas.size());
    ctx.attrs = &attrs;
    ctx.needs = needs.data();
    return op->grad(ctx);
  }
};

// The sink for a leaf: accumulates into leaf.grad.
struct AccumulateGrad final : Node {
  Ref<TensorImpl> leaf;
  explicit AccumulateGrad(Ref<TensorImpl> l) : leaf(std::move(l)) {}
  std::string name() const override { return "AccumulateGrad"; }
  Tensors apply(Tensors& grads) override {
    Tensor g = grads[0];
    AutogradMeta& m = *leaf->autograd;
    for (auto& h : m.hooks) {
      Tensor r = h(g);
      if (r.defined()) g = r;
    }
    if (!grad_enabled()) g = detach(g);
    if (m.grad_zeroed) {
      m.grad = Tensor();
      m.grad_zeroed = false;
    }
    if (!m.grad.defined()) {
      // Keep our own copy: the incoming grad may alias a tensor the user holds.
      m.grad = grad_enabled() ? g : ops::clone(g);
    } else {
      m.grad = ops::add(m.grad, g);
      if (!grad_enabled()) m.grad = detach(m.grad);
    }
    for (auto& h : m.post_hooks) h();
    return {};
  }
};

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta& m = t.autograd_meta();
  if (auto acc = m.grad_accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(t.ref());
  acc->seq = g_seq.fetch_add(1, std::memory_order_relaxed);
  m.grad_accumulator = acc;
  return acc;
}
}  // namespace

namespace {
thread_local std::vector<std::shared_ptr<SavedTensorHooks>> t_saved_hooks;
}  // namespace

void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks) { t_saved_hooks.push_back(std::move(hooks)); }

void pop_saved_tensor_hooks() {
  if (!t_saved_hooks.empty()) t_saved_hooks.pop_back();
}

void SavedTensor::save(const Tensor& t, bool as_output, int out_nr) {
  if (!t.defined()) return;
  is_output = as_output;
  output_nr = out_nr;
  version = t.storage().version();
  requires_grad = t.requires_grad();
  if (!t_saved_hooks.empty()) {
    hooks = t_saved_hooks.back();
    packed = hooks->pack(as_output ? detach(t) : t);
    return;
  }
  data = as_output ? detach(t) : t;
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& self, const char* op, int index) const {
  Tensor base = data;
  if (hooks) {
    base = hooks->unpack(packed);
    OAR_CHECK(base.defined(), Type, "[oar.autograd.saved_tensors_hooks] unpack_hook returned no tensor for a tensor "
              "saved by '", op, "'");
  } else if (!data.defined()) {
    return data;
  } else {
    OAR_CHECK(data.storage().version() == version, Runtime, "[oar.autograd] a tensor saved by '", op,
              "' for backward (", is_output ? "output " : "input ", index,
              ") was modified by an in-place operation (version ", data.storage().version(),
              ", expected ", version, "). Use the out-of-place op, or clone() the tensor before changing it.");
  }
  // An input comes back as unpack made it (the tensor itself, with its place
  // in the graph, when the hooks return what they were given).
  if (!is_output || !requires_grad) return base;
  Tensor t = make_view(base, base.shape(), base.strides(), base.offset());
  t.impl()->dist = base.impl()->dist;
  AutogradMeta& m = t.autograd_meta();
  m.stop_gradient = false;
  m.grad_fn = self;
  m.output_nr = output_nr;
  return t;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& m = *t.impl()->autograd;
  if (m.grad_fn) return Edge{m.grad_fn, m.output_nr};
  return Edge{grad_accumulator(t), 0};
}

void record_op(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensors& outputs) {
  OAR_CHECK(op.grad != nullptr, NotImplemented, "[oar.", op.name,
            "] is not differentiable, but an input requires grad; detach() it or set stop_gradient=True");
  auto node = std::make_shared<OpNode>();
  node->op = &op;
  node->attrs = attrs;
  node->seq = g_seq.fetch_add(1, std::memory_order_relaxed);
  for (const Tensor& t : inputs) {
    node->next.push_back(gradient_edge(t));
    node->needs.push_back(t.defined() && t.requires_grad());
  }
  if (op.save_inputs) {
    node->saved_in.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) node->saved_in[i].save(inputs[i], false, 0);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& o = outputs[i];
    node->out_metas.push_back(TensorMeta{o.shape(), o.dtype(), {}, 0});
    AutogradMeta& m = o.autograd_meta();
    m.stop_gradient = false;
    m.grad_fn = node;
    m.output_nr = int(i);
  }
  if (op.save_outputs) {
    node->saved_out.resize(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) node->saved_out[i].save(outputs[i], true, int(i));
  }
}

void record_inplace(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs, Tensor& self,
                    std::span<const Tensor> saved_inputs) {
  // `inputs` carry the edges (input 0 is self before the write); `saved_inputs`
  // are copies of what the gradient rule needs, taken before the write.
  auto node = std::make_shared<OpNode>();
  node->op = &op;
  node->attrs = attrs;
  node->seq = g_seq.fetch_add(1, std::memory_order_relaxed);
  for (const Tensor& t : inputs) {
    node->next.push_back(gradient_edge(t));
    node->needs.push_back(t.defined() && t.requires_grad());
  }
  if (op.save_inputs) {
    node->saved_in.resize(saved_inputs.size());
    for (size_t i = 0; i < saved_inputs.size(); ++i) node->saved_in[i].save(saved_inputs[i], false, 0);
  }
  node->out_metas.push_back(TensorMeta{self.shape(), self.dtype(), {}, 0});
  AutogradMeta& m = self.autograd_meta();
  m.stop_gradient = false;
  m.grad_fn = node;
  m.output_nr = 0;
  if (op.save_outputs) {
    node->saved_out.resize(1);
    node->saved_out[0].save(self, true, 0);
  }
}

// Dispatch reaches recording through its stage-5 hooks (the core links
// without this library).
const bool kInstalled = [] {
  dispatch_hooks().record = record_op;
  dispatch_hooks().record_inplace = record_inplace;
  return true;
}();

// ---------------------------------------------------------------------------
// Engine

namespace {
thread_local int t_backward_depth = 0;
thread_local std::vector<std::function<void()>> t_backward_callbacks;

Tensors run_backward_impl(std::span<const Tensor> outputs, std::span<const Tensor> grad_outputs,
                          bool retain_graph, bool create_graph, std::span<const Tensor> inputs, bool allow_unused);
}  // namespace

void queue_backward_callback(std::function<void()> fn) {
  if (t_backward_depth == 0) {
    fn();
    return;
  }
  t_backward_callbacks.push_back(std::move(fn));
}

Tensors run_backward(std::span<const Tensor> outputs, std::span<const Tensor> grad_outputs,
                     bool retain_graph, bool create_graph, std::span<const Tensor> inputs,
                     bool allow_unused) {
  struct Depth {
    Depth() { ++t_backward_depth; }
    ~Depth() {
      if (--t_backward_depth == 0) t_backward_callbacks.clear();
    }
  } depth;
  Tensors r = run_backward_impl(outputs, grad_outputs, retain_graph, create_graph, inputs, allow_unused);
  if (t_backward_depth == 1) {
    // Callbacks may queue more (run in order); each runs outside the pass.
    for (size_t i = 0; i < t_backward_callbacks.size(); ++i) {
      std::function<void()> fn = std::move(t_backward_callbacks[i]);
      fn();
    }
    t_backward_callbacks.clear();
  }
  return r;
}

namespace {
Tensors run_backward_impl(std::span<const Tensor> outputs, std::span<const Tensor> grad_outputs,
                          bool retain_graph, bool create_graph, std::span<const Tensor> inputs,
                          bool allow_unused) {
  const char* api = inputs.empty() ? "oar.autograd.backward" : "oar.grad";
  GradModeGuard mode(create_graph);

  // Roots: (edge, grad) pairs.
  std::vector<std::pair<Edge, Tensor>> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    OAR_CHECK(o.defined() && o.requires_grad(), Runtime, "[", api, "] output ", i,
              " does not require grad (stop_gradient=True), so there is nothing to differentiate");
    Tensor g = i < grad_outputs.size() && grad_outputs[i].defined() ? grad_outputs[i]
                                                                    : ops::ones(o.shape(), o.dtype());
    OAR_CHECK(g.shape() == o.shape(), Value, "[", api, "] grad_outputs[", i, "] has shape ",
              ops::shape_str(g.shape()), " but the output has shape ", ops::shape_str(o.shape()));
    roots.emplace_back(gradient_edge(o), g);
  }

  // Capture points for oar.grad: (node, output_nr) -> index into result.
  struct Capture { Node* node; int nr; };
  std::vector<Capture> captures;
  for (const Tensor& t : inputs) {
    OAR_CHECK(t.defined() && t.requires_grad(), Runtime, "[", api,
              "] an input does not require grad (stop_gradient=True)");
    Edge e = gradient_edge(t);
    captures.push_back({e.fn.get(), e.input_nr});
  }
  Tensors results(inputs.size());

  // Discover the graph and count dependencies.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep;
  std::vector<Node*> stack;
  for (auto& r : roots)
    if (r.first.fn && !keep.count(r.first.fn.get())) {
      keep[r.first.fn.get()] = r.first.fn;
      stack.push_back(r.first.fn.get());
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (Edge& e : n->next) {
      if (!e.fn) continue;
      deps[e.fn.get()]++;
      if (!keep.count(e.fn.get())) {
        keep[e.fn.get()] = e.fn;
        stack.push_back(e.fn.get());
      }
    }
  }
  // With captures, only nodes on a path to a capture need to run.
  std::unordered_set<Node*> needed;
  if (!captures.empty()) {
    std::unordered_map<Node*, bool> memo;
    std::unordered_set<Node*> cap_nodes;
    for (auto& c : captures) cap_nodes.insert(c.node);
    // Iterative post-order.
    std::vector<std::pair<Node*, size_t>> st;
    for (auto& kv : keep) {
      if (memo.count(kv.first)) continue;
      st.push_back({kv.first, 0});
      while (!st.empty()) {
        auto& [n, k] = st.back();
        if (k < n->next.size()) {
          Node* c = n->next[k++].fn.get();
          if (c && !memo.count(c)) st.push_back({c, 0});
          continue;
        }
        bool need = cap_nodes.count(n) > 0;
        for (Edge& e : n->next)
          if (e.fn && memo[e.fn.get()]) need = true;
        memo[n] = need;
        st.pop_back();
      }
    }
    for (auto& kv : memo)
      if (kv.second) needed.insert(kv.first);
  }

  std::unordered_map<Node*, Tensors> buffers;
  auto accumulate = [&](Node* n, int nr, const Tensor& g) {
    Tensors& buf = buffers[n];
    if (buf.size() < size_t(n->num_outputs())) buf.resize(n->num_outputs());
    if (!g.defined()) return;
    buf[nr] = buf[nr].defined() ? ops::add(buf[nr], g) : g;
  };
  std::vector<Node*> ready;
  for (auto& r : roots) {
    if (!r.first.fn) continue;
    accumulate(r.first.fn.get(), r.first.input_nr, r.second);
  }
  for (auto& kv : keep)
    if (deps[kv.first] == 0) ready.push_back(kv.first);

  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    Tensors& grads = buffers[n];
    if (grads.size() < size_t(n->num_outputs())) grads.resize(n->num_outputs());
    for (auto& [nr, hook] : n->pre_hooks) {
      if (!grads[nr].defined()) continue;
      Tensor r = hook(grads[nr]);
      if (r.defined()) grads[nr] = r;
    }
    bool captured_leaf = false;
    for (size_t c = 0; c < captures.size(); ++c)
      if (captures[c].node == n) {
        const Tensor& g = grads[captures[c].nr];
        if (g.defined()) results[c] = results[c].defined() ? ops::add(results[c], g) : g;
        captured_leaf = captured_leaf || dynamic_cast<AccumulateGrad*>(n) != nullptr;
      }
    bool run = captures.empty() ? true : (needed.count(n) > 0 && !dynamic_cast<AccumulateGrad*>(n));
    bool any = false;
    for (auto& g : grads) any = any || g.defined();
    Tensors out;
    if (run && any && !captured_leaf) {
      out = n->apply(grads);
      if (!retain_graph) {
        n->release();
        // Hooks of a freed graph have run their course; dropping them also
        // breaks reference cycles through Python hooks that capture tensors.
        n->pre_hooks.clear();
      }
    }
    for (size_t k = 0; k < n->next.size(); ++k) {
      Edge& e = n->next[k];
      if (!e.fn) continue;
      if (k < out.size() && out[k].defined()) accumulate(e.fn.get(), e.input_nr, out[k]);
      if (--deps[e.fn.get()] == 0) ready.push_back(e.fn.get());
    }
    buffers.erase(n);
  }

  for (size_t c = 0; c < captures.size(); ++c)
    OAR_CHECK(results[c].defined() || allow_unused, Runtime, "[", api, "] input ", c,
              " is not reachable from the outputs; pass allow_unused=True to get None for it");
  return results;
}

}  // namespace

}  // namespace oar

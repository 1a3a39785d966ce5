#include "runtime/executor.h"

#include <omp.h>

#include <cstdlib>

#include "kernels/cpu/handoff.h"
#include "kernels/cpu/winograd.h"
#include "ops/dispatch.h"
#include "ops/profiler.h"
#include "ops/random.h"
#include "runtime/control_flow.h"

namespace oar::runtime {

namespace {

// Sets the OpenMP team size for this thread during a run and restores the
// caller's setting afterwards (the Python process shares the thread).
struct ThreadsGuard {
  int prev = 0;
  explicit ThreadsGuard(int n) {
    if (n > 0) {
      prev = omp_get_max_threads();
      omp_set_num_threads(n);
    }
  }
  ~ThreadsGuard() {
    if (prev > 0) omp_set_num_threads(prev);
  }
};

// Some kernels run further ops through dispatch (a cast to float32, a
// contiguous copy). Those must not be captured by a trace or changed by
// autocast that the calling thread happens to have on: the runtime runs the
// program as loaded. Autograd cannot record anything here, since no tensor
// the runtime holds requires grad.
struct DispatchIsolation {
  DispatchState saved;
  DispatchIsolation() : saved(dispatch_state()) { dispatch_state() = DispatchState{}; }
  ~DispatchIsolation() { dispatch_state() = saved; }
};

KernelFn kernel_for(const OpDef& op, DType dt, const char* api) {
  KernelFn k = op.kernels[int(DeviceType::CPU)][int(dt)];
  OAR_CHECK(k, NotImplemented, "[", api, "] op '", op.name, "' has no CPU kernel for dtype ", dtype_name(dt));
  return k;
}

int64_t nbytes_of(const Tensor& t) { return t.numel() * int64_t(t.itemsize()); }

// Whether a result of `st` lives at `data` (a buffer reused in place).
bool written_by(const Step& st, const std::vector<Tensor>& env, const void* data) {
  for (int o : st.out)
    if (env[size_t(o)].defined() && env[size_t(o)].raw_data() == data) return true;
  return false;
}

// Turns the hand-off flags off however the run ends.
struct HandoffGuard {
  ~HandoffGuard() { cpu::clear_layout_handoff(); }
};

}  // namespace

// What each step may do with oneDNN layouts (Note [layout hand-off] in
// kernels/cpu/handoff.h; the kernels keep float32 outputs only).
struct LayoutHandoffs {
  std::vector<char> step;           // step takes part: fused_conv, avg_pool, max_pool whose mask nobody reads
  std::vector<char> keep;           // its output is read only by such steps, at positions that take kept layouts
  std::vector<char> residual_dies;  // no later step reads its input 3 (a fused_conv's residual)
  std::vector<char> kept_slot;      // a slot that `keep` may leave in oneDNN's layout
};

namespace {

LayoutHandoffs layout_handoffs(const Model& m) {
  const size_t n = m.steps.size();
  LayoutHandoffs h{std::vector<char>(n, 0), std::vector<char>(n, 0), std::vector<char>(n, 0),
                   std::vector<char>(size_t(m.num_slots), 0)};
  std::vector<char> other_reader(size_t(m.num_slots), 0);  // read some other way, or by the caller
  std::vector<int64_t> last_reader(size_t(m.num_slots), -1);
  for (int o : m.output_slots) other_reader[size_t(o)] = 1;
  for (size_t s = 0; s < n; ++s) {
    for (int in : m.steps[s].in)
      if (in >= 0) last_reader[size_t(in)] = int64_t(s);
    // What control-flow regions read is read by their step, in plain layout.
    for (int in : m.steps[s].captures) {
      last_reader[size_t(in)] = int64_t(s);
      other_reader[size_t(in)] = 1;
    }
  }
  std::vector<char> is_conv(n, 0);
  for (size_t s = 0; s < n; ++s) {
    const Step& st = m.steps[s];
    is_conv[s] = st.def->name == "fused_conv" && st.out.size() == 1;
    const bool max_pool = st.def->name == "max_pool" && st.out.size() == 2 && !other_reader[size_t(st.out[1])] &&
                          last_reader[size_t(st.out[1])] < 0;
    h.step[s] = is_conv[s] || max_pool || (st.def->name == "avg_pool" && st.out.size() == 1);
    for (size_t k = 0; k < st.in.size(); ++k)
      if (st.in[k] >= 0 && !(h.step[s] && (k == 0 || (is_conv[s] && k == 3)))) other_reader[size_t(st.in[k])] = 1;
  }
  for (size_t s = 0; s < n; ++s) {
    if (!h.step[s]) continue;
    const Step& st = m.steps[s];
    const int out = st.out[0];
    h.keep[s] = !other_reader[size_t(out)] && last_reader[size_t(out)] > int64_t(s);
    h.kept_slot[size_t(out)] = h.keep[s];
    const int r = is_conv[s] && st.in.size() > 3 ? st.in[3] : -1;
    h.residual_dies[s] = r >= 0 && r != st.in[0] && !other_reader[size_t(r)] && last_reader[size_t(r)] == int64_t(s);
  }
  return h;
}

}  // namespace

Executor::Executor(std::shared_ptr<const Model> model, bool memory_optim, int threads, bool winograd)
    : model_(std::move(model)),
      handoffs_(std::make_shared<const LayoutHandoffs>(layout_handoffs(*model_))),
      memory_optim_(memory_optim),
      threads_(threads),
      winograd_(winograd) {}

int64_t Executor::release_arena() {
  int64_t freed = arena_bytes_;
  arena_.reset();
  arena_bytes_ = 0;
  return freed;
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, const char* api) {
  const Model& m = *model_;
  ThreadsGuard threads(threads_);
  cpu::WinogradConvScope winograd(winograd_);
  DispatchIsolation isolation;
  std::vector<Dims> shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  // The plan also gives the no-reuse baseline, so it is made in both modes.
  std::shared_ptr<const SlotPlan> plan = m.plan_for(shapes);
  if (memory_optim_ && plan->memory.arena_bytes > arena_bytes_) {
    arena_.reset();  // the old arena stays alive only while tensors still point into it
    const size_t n = size_t(plan->memory.arena_bytes);
    char* p = static_cast<char*>(std::aligned_alloc(size_t(kArenaAlignment), n));
    OAR_CHECK(p, Runtime, "[", api, "] out of memory allocating a ", n, "-byte arena");
    arena_ = std::shared_ptr<char>(p, &std::free);
    arena_bytes_ = plan->memory.arena_bytes;
  }
  std::vector<Tensor> env(size_t(m.num_slots));
  std::vector<int64_t> fresh(size_t(m.num_slots), 0);  // bytes of buffers of their own
  for (size_t i = 0; i < inputs.size(); ++i) env[size_t(m.input_slots[i])] = inputs[i];
  for (size_t i = 0; i < m.param_slots.size(); ++i) env[size_t(m.param_slots[i])] = m.params[i];
  std::vector<char> is_output(size_t(m.num_slots), 0);
  for (int o : m.output_slots) is_output[size_t(o)] = 1;

  int64_t live = 0, peak = 0;
  Tensors ins;
  Tensors outs;
  const LayoutHandoffs& handoff = *handoffs_;
  HandoffGuard handoff_guard;
  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step& st = m.steps[s];
    const OpDef& op = *st.def;
    ins.clear();
    for (int in : st.in) ins.push_back(in >= 0 ? env[size_t(in)] : Tensor());
    std::span<const Tensor> in_span(ins.data(), ins.size());
    outs.clear();
    if (st.control) {  // Note [control flow in the runtime]: results in buffers of their own
      const char* arena = memory_optim_ ? arena_.get() : nullptr;
      outs = run_control_flow(st, env, api, arena, arena ? arena + arena_bytes_ : nullptr);
      for (size_t k = 0; k < outs.size() && k < st.out.size(); ++k)
        if (!is_output[size_t(st.out[k])]) fresh[size_t(st.out[k])] = nbytes_of(outs[k]);
    } else if (op.traits.dynamic_shape) {
      outs = run_eager(op, in_span, *st.attrs);  // the kernel sizes its outputs
      for (size_t k = 0; k < outs.size() && k < st.out.size(); ++k)
        if (outs[k].defined() && !is_output[size_t(st.out[k])]) fresh[size_t(st.out[k])] = nbytes_of(outs[k]);
    } else {
      Metas metas = infer_metas(op, in_span, *st.attrs);
      OAR_CHECK(metas.size() == st.out.size(), Runtime, "[", api, "] op '", op.name, "' gave ", metas.size(),
                " result(s), the program expects ", st.out.size());
      if (op.traits.view) {
        for (TensorMeta& mt : metas) {
          outs.push_back(make_view(ins[0], std::move(mt.shape), std::move(mt.strides), mt.offset));
          outs.back().impl()->is_view = true;
        }
      } else {
        DType key = !ins.empty() && ins[0].defined() ? ins[0].dtype() : metas[0].dtype;
        KernelFn k = kernel_for(op, key, api);
        for (size_t j = 0; j < metas.size(); ++j) {
          const int slot = st.out[j];
          const int64_t off = memory_optim_ ? plan->offset[size_t(slot)] : -1;
          int64_t bytes = checked_numel(metas[j].shape, api) * int64_t(itemsize(metas[j].dtype));
          if (off >= 0 && bytes <= plan->bytes[size_t(slot)]) {
            std::shared_ptr<char> keep = arena_;
            auto storage = make_ref<Storage>(arena_.get() + off, size_t(bytes), Device{}, [keep]() {});
            outs.push_back(Tensor(make_ref<TensorImpl>(std::move(storage), metas[j].shape,
                                                       contiguous_strides(metas[j].shape), 0, metas[j].dtype)));
          } else {
            outs.push_back(empty_tensor(metas[j].shape, metas[j].dtype));
            if (!is_output[size_t(slot)]) fresh[size_t(slot)] = bytes;
          }
        }
        if (handoff.step[s]) cpu::set_layout_handoff(true, bool(handoff.keep[s]), bool(handoff.residual_dies[s]));
        const int64_t t0 = profiler::enabled() ? profiler::now_ns() : 0;
        const Attrs* attrs = st.attrs;
        Attrs drawn;
        if (op.traits.random && draws_at_run_time(op, *attrs)) {  // Note [random state at run time]
          drawn = with_drawn_state(op, in_span, *attrs);
          attrs = &drawn;
        }
        k(in_span, std::span<Tensor>(outs.data(), outs.size()), *attrs);
        if (t0) profiler::record(op, in_span, profiler::now_ns() - t0, outs);  // the rows eager kernels use
        if (handoff.step[s]) cpu::set_layout_handoff(false);
      }
    }
    OAR_CHECK(outs.size() == st.out.size(), Runtime, "[", api, "] op '", op.name, "' returned ", outs.size(),
              " result(s), the program expects ", st.out.size());
    for (size_t j = 0; j < outs.size(); ++j) {
      live += fresh[size_t(st.out[j])];
      env[size_t(st.out[j])] = std::move(outs[j]);
    }
    peak = std::max(peak, live);
    if (memory_optim_)
      for (int r : plan->release[s]) {
        if (handoff.kept_slot[size_t(r)] && !written_by(st, env, env[size_t(r)].raw_data()))
          cpu::release_layout_handoff(env[size_t(r)].raw_data());
        env[size_t(r)] = Tensor();
        live -= fresh[size_t(r)];
      }
  }

  std::vector<Tensor> result;
  int64_t out_bytes = 0;
  const OpDef* cast = find_op("cast");
  for (int o : m.output_slots) {
    Tensor t = env[size_t(o)];
    OAR_CHECK(t.defined(), Runtime, "[", api, "] a program output was not computed");
    // Outputs that are views (of an input, a weight or another result) get
    // their own contiguous copy, so that callers can read them as flat data
    // and nothing the runtime reuses is handed out.
    bool own = t.is_contiguous() && !t.impl()->is_view && t.offset() == 0;
    for (const Tensor& w : m.params) own = own && &w.storage() != &t.storage();
    for (const Tensor& x : inputs) own = own && &x.storage() != &t.storage();
    for (const Tensor& r : result) own = own && &r.storage() != &t.storage();
    if (!own) {
      Tensor src[] = {t};
      t = run_eager(*cast, src, Attrs{t.dtype()})[0];
    }
    out_bytes += nbytes_of(t);
    result.push_back(std::move(t));
  }
  stats_.intermediate_peak_bytes = memory_optim_ ? plan->memory.arena_bytes + peak : peak;
  stats_.planned_bytes = plan->memory.arena_bytes;
  stats_.unplanned_bytes = plan->memory.total_bytes;
  stats_.live_lower_bound_bytes = plan->memory.live_peak;
  stats_.output_bytes = out_bytes;
  return result;
}

}  // namespace oar::runtime

// The autocast dispatch stage and the per-op cast policies (see autocast.h).
#include "ops/autocast.h"

#include <mutex>
#include <vector>

#include "base/error.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

thread_local AutocastConfig t_config;

struct Policies {
  std::mutex mu;
  std::vector<CastPolicy> by_id;  // indexed by OpDef::id
};

Policies& policies() {
  static Policies p;
  static const bool init = [] {
    // The categories the ops are defined with; custom lists change these.
    for (const OpDef* op : all_ops()) {
      if (size_t(op->id) >= p.by_id.size()) p.by_id.resize(size_t(op->id) + 1, CastPolicy::Promote);
      p.by_id[size_t(op->id)] = op->amp;
    }
    return true;
  }();
  (void)init;
  return p;
}

CastPolicy policy_of(const OpDef& op) {
  Policies& p = policies();
  return size_t(op.id) < p.by_id.size() ? p.by_id[size_t(op.id)] : CastPolicy::Promote;
}

bool castable(const Tensor& t) {
  return t.defined() && (t.dtype() == DType::Float32 || t.dtype() == DType::Float16 ||
                         t.dtype() == DType::BFloat16 || t.dtype() == DType::Float64);
}

bool autocast_stage(const OpDef& op, std::span<const Tensor> inputs, Tensors& cast_inputs) {
  const AutocastConfig& c = t_config;
  // Ops that write through their inputs (optimizer updates) must see the
  // caller's tensors, never cast copies.
  if (!c.enabled || op.name == "cast" || op.traits.side_effect) return false;
  CastPolicy p = policy_of(op);
  DType target;
  if (p == CastPolicy::Low) {
    target = c.dtype;
  } else if (p == CastPolicy::Float32) {
    target = DType::Float32;
  } else if (c.level >= 2) {
    target = c.dtype;
  } else {
    // O1 gray op: mixed low/float32 float inputs meet at float32.
    bool low = false, f32 = false;
    for (const Tensor& t : inputs) {
      if (!castable(t)) continue;
      low |= t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16;
      f32 |= t.dtype() == DType::Float32;
    }
    if (!(low && f32)) return false;
    target = DType::Float32;
  }
  bool any = false;
  for (const Tensor& t : inputs) any |= castable(t) && t.dtype() != target && t.dtype() != DType::Float64;
  if (!any) return false;
  cast_inputs.clear();
  for (const Tensor& t : inputs)
    cast_inputs.push_back(castable(t) && t.dtype() != target && t.dtype() != DType::Float64 ? ops::cast(t, target) : t);
  return true;
}

const bool installed = [] {
  dispatch_hooks().autocast = autocast_stage;
  return true;
}();

}  // namespace

AutocastConfig autocast_config() { return t_config; }

void set_autocast_config(const AutocastConfig& c) {
  OAR_CHECK(c.dtype == DType::Float16 || c.dtype == DType::BFloat16, Value,
            "[oar.amp.auto_cast] dtype must be float16 or bfloat16, got ", dtype_name(c.dtype));
  OAR_CHECK(c.level == 1 || c.level == 2, Value, "[oar.amp.auto_cast] level must be O1 or O2, got O", c.level);
  (void)installed;
  t_config = c;
  dispatch_state().autocast = c.enabled;
}

CastPolicy cast_policy(const std::string& name) {
  const OpDef* op = find_op(name);
  OAR_CHECK(op, Value, "[oar.amp] unknown op '", name, "' in a custom white/black list");
  return policy_of(*op);
}

void set_cast_policy(const std::string& name, CastPolicy p) {
  const OpDef* op = find_op(name);
  OAR_CHECK(op, Value, "[oar.amp] unknown op '", name, "' in a custom white/black list");
  Policies& ps = policies();
  std::lock_guard<std::mutex> lock(ps.mu);
  // Every op registers at load time, so by_id already has a slot for it.
  if (size_t(op->id) < ps.by_id.size()) ps.by_id[size_t(op->id)] = p;
}

}  // namespace oar

#include "ops/profiler.h"

#include <chrono>
#include <map>
#include <mutex>

#include "ops/op.h"
#include "tensor/tensor.h"

namespace oar::profiler {
namespace {
std::mutex g_mu;
std::vector<OpStat> g_rows;                       // by op id
std::map<std::pair<int, std::string>, OpStat> g_shaped;  // by (op id, signature)
bool g_shapes = false;

std::string signature(std::span<const Tensor> inputs) {
  std::string s;
  for (const Tensor& t : inputs) {
    if (!s.empty()) s += ", ";
    if (!t.defined()) {
      s += "None";
      continue;
    }
    s += dtype_name(t.dtype());
    s += "[";
    for (size_t d = 0; d < t.shape().size(); ++d) {
      if (d) s += ',';
      s += std::to_string(t.shape()[d]);
    }
    s += "]";
  }
  return s;
}
}  // namespace

std::atomic<bool> g_enabled{false};

void set_enabled(bool on, bool shapes) {
  std::lock_guard<std::mutex> g(g_mu);
  g_shapes = shapes;
  g_enabled.store(on, std::memory_order_relaxed);
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record(const OpDef& op, std::span<const Tensor> inputs, int64_t ns, std::span<const Tensor> outputs) {
  int64_t bytes = 0;
  for (const Tensor& o : outputs)
    if (o.defined()) bytes += o.numel() * int64_t(o.itemsize());
  std::lock_guard<std::mutex> g(g_mu);
  OpStat* r;
  if (g_shapes) {
    std::string sig = signature(inputs);
    r = &g_shaped[{op.id, sig}];
    if (r->calls == 0) r->inputs = std::move(sig);
  } else {
    if (size_t(op.id) >= g_rows.size()) g_rows.resize(size_t(op.id) + 1);
    r = &g_rows[size_t(op.id)];
  }
  if (r->calls == 0) r->name = op.name;
  r->calls += 1;
  r->ns += ns;
  r->bytes += bytes;
}

std::vector<OpStat> take() {
  std::lock_guard<std::mutex> g(g_mu);
  std::vector<OpStat> out;
  for (OpStat& r : g_rows)
    if (r.calls) out.push_back(r);
  for (auto& [key, r] : g_shaped) out.push_back(r);
  g_rows.clear();
  g_shaped.clear();
  return out;
}

}  // namespace oar::profiler

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ops/op.h"

namespace oar {
namespace {
struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<OpDef>> by_name;
  std::vector<OpDef*> by_id;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

OpDef& op_def(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto& slot = r.by_name[name];
  if (!slot) {
    slot = std::make_unique<OpDef>();
    slot->name = name;
    slot->id = int(r.by_id.size());
    r.by_id.push_back(slot.get());
  }
  return *slot;
}

const OpDef* find_op(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second.get();
}

std::span<OpDef* const> all_ops() {
  Registry& r = registry();
  return std::span<OpDef* const>(r.by_id.data(), r.by_id.size());
}

void register_kernel(const char* op, DeviceType device, std::initializer_list<DType> dtypes, KernelFn fn) {
  OpDef& d = op_def(op);
  for (DType t : dtypes) d.kernels[int(device)][int(t)] = fn;
}

}  // namespace oar

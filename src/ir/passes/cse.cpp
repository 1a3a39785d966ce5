// Common subexpression elimination within one block: ops are keyed by their
// OpDef and operand Values; among ops with the same key, one whose attributes
// and result types equal an earlier op's is replaced by it.
#include <bit>
#include <cstring>
#include <unordered_map>

#include "ir/passes/passes.h"

namespace oar::ir {

namespace {

bool same_double(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) return same_double(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::complex<double>>(&a)) {
    const auto& y = std::get<std::complex<double>>(b);
    return same_double(x->real(), y.real()) && same_double(x->imag(), y.imag());
  }
  return a == b;
}

struct Key {
  const OpDef* def;
  std::vector<Value*> operands;
  bool operator==(const Key& o) const { return def == o.def && operands == o.operands; }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<const void*>()(k.def);
    for (Value* v : k.operands) h = h * 1000003u ^ std::hash<const void*>()(v);
    return h;
  }
};

bool mergeable(const Operation& op) {
  return !op.def().traits.random && !op.def().traits.side_effect && op.num_regions() == 0 && op.num_results() > 0;
}

bool same_op(const Operation& a, const Operation& b) {
  if (!attrs_equal(a.attrs(), b.attrs()) || a.num_results() != b.num_results()) return false;
  for (size_t i = 0; i < a.num_results(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  return true;
}

bool cse_block(Block& b) {
  bool changed = false;
  for (const auto& op : b.operations())
    for (size_t r = 0; r < op->num_regions(); ++r) changed = cse_block(op->region(r)) || changed;
  std::unordered_map<Key, std::vector<Operation*>, KeyHash> seen;
  for (auto it = b.begin(); it != b.end();) {
    Operation* op = it->get();
    ++it;  // erasing `op` below leaves `it` valid
    if (!mergeable(*op)) continue;
    auto& candidates = seen[Key{&op->def(), op->operands()}];
    Operation* earlier = nullptr;
    for (Operation* c : candidates)
      if (same_op(*c, *op)) {
        earlier = c;
        break;
      }
    if (!earlier) {
      candidates.push_back(op);
      continue;
    }
    for (size_t i = 0; i < op->num_results(); ++i) op->result(i)->replace_all_uses_with(earlier->result(i));
    b.erase(op);
    changed = true;
  }
  return changed;
}

}  // namespace

bool attrs_equal(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!attr_equal(a[i], b[i])) return false;
  return true;
}

bool common_subexpression_elimination(Program& p) { return cse_block(p.body()); }

}  // namespace oar::ir

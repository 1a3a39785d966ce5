// The pass manager: the passes feed each other (folding leaves dead
// constants, CSE leaves dead duplicates, DCE can expose new duplicates,
// fusions leave dead pattern inputs), so they run in rounds until a round
// changes nothing.
#include "ir/passes/passes.h"

namespace oar::ir {

ConstantAdder::ConstantAdder(Program& p, std::vector<Tensor>& bindings) : p_(p), bindings_(bindings) {
  for (const NamedValue& n : p.inputs()) names_.insert(n.name);
  for (const NamedValue& n : p.parameters()) names_.insert(n.name);
}

Value* ConstantAdder::add(const Tensor& t) {
  std::string name;
  do name = "const_" + std::to_string(next_++);
  while (!names_.insert(name).second);
  Value* c = p_.add_parameter(std::move(name), Type::of(t), true);
  bindings_.push_back(t);
  return c;
}

namespace {

struct NamedPass {
  std::string_view name;
  bool PassOptions::*flag;
};

constexpr NamedPass kPasses[] = {
    {"common_subexpression_elimination", &PassOptions::cse},
    {"constant_folding", &PassOptions::fold},
    {"dead_code_elimination", &PassOptions::dce},
    {"fold_conv_batch_norm", &PassOptions::fold_conv_bn},
    {"fuse_softmax_layer_norm", &PassOptions::fuse_softmax_layer_norm},
    {"fuse_attention", &PassOptions::fuse_attention},
    {"fuse_linear_activation", &PassOptions::fuse_linear_act},
    {"fuse_conv_activation", &PassOptions::fuse_conv_act},
    {"fuse_elementwise", &PassOptions::fuse_elementwise},
};

}  // namespace

const std::vector<std::string_view>& pass_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const NamedPass& p : kPasses) v.push_back(p.name);
    return v;
  }();
  return names;
}

bool set_pass(PassOptions& o, std::string_view name, bool on) {
  for (const NamedPass& p : kPasses)
    if (p.name == name) {
      o.*p.flag = on;
      return true;
    }
  return false;
}

PassResult run_passes(Program& p, std::vector<Tensor>& bindings, const PassOptions& options) {
  PassResult r;
  for (int round = 0; round < kMaxPassRounds; ++round) {
    bool changed = false;
    // CSE before folding: duplicates folded first would become distinct
    // constants, and their users could no longer be merged.
    if (options.cse && common_subexpression_elimination(p)) changed = r.cse = true;
    if (options.fold && constant_folding(p, bindings)) changed = r.fold = true;
    if (options.dce && dead_code_elimination(p)) changed = r.dce = true;
    // Fusions after the clean-up passes, so that they see folded constants
    // (a causal mask built from constants becomes one); softmax before
    // attention, which needs it whole; attention before elementwise chains,
    // which would otherwise take its scale multiply.
    if (options.fold_conv_bn && fold_conv_batch_norm(p, bindings)) changed = r.fold_conv_bn = true;
    if (options.fuse_softmax_layer_norm && fuse_softmax_layer_norm(p)) changed = r.fuse_softmax_layer_norm = true;
    if (options.fuse_attention && fuse_attention(p)) changed = r.fuse_attention = true;
    if (options.fuse_linear_act && fuse_linear_activation(p)) changed = r.fuse_linear_act = true;
    // Before elementwise chains, which would otherwise take the bias and residual adds.
    if (options.fuse_conv_act && fuse_conv_activation(p)) changed = r.fuse_conv_act = true;
    if (options.fuse_elementwise && fuse_elementwise(p)) changed = r.fuse_elementwise = true;
    if (!changed) break;
  }
  verify(p);
  return r;
}

}  // namespace oar::ir

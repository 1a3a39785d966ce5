#include "ops/control_flow.h"

namespace oar {
namespace {

// Control-flow ops are run by the IR executor, never by dispatch: a region is
// not a tensor, so no kernel could receive one. An infer_meta that raises
// turns a stray dispatch into a clear error instead of a null call.
Metas not_dispatchable(std::span<const Tensor>, const Attrs&) {
  fail(ErrorKind::NotImplemented, "[oar.control_flow] cond, while_loop, switch_case and py_layer are ops of a "
       "captured program and run only through its executor; call oar.static.nn.cond / while_loop / switch_case "
       "or oar.autograd.PyLayer.apply");
}

constexpr OpTraits kControlFlowTraits{.side_effect = true};

}  // namespace

OpDef& kCond = OpBuilder("cond").meta(not_dispatchable).traits(kControlFlowTraits).saves(false, false);
OpDef& kWhileLoop = OpBuilder("while_loop").meta(not_dispatchable).traits(kControlFlowTraits).saves(false, false);
OpDef& kSwitchCase = OpBuilder("switch_case")
                          .attrs({"branch_indices"})
                          .meta(not_dispatchable)
                          .traits(kControlFlowTraits)
                          .saves(false, false);

OpDef& kPyLayer =
    OpBuilder("py_layer").attrs({"token"}).meta(not_dispatchable).traits(kControlFlowTraits).saves(false, false);

bool is_control_flow(const OpDef& op) {
  return &op == &kCond || &op == &kWhileLoop || &op == &kSwitchCase || &op == &kPyLayer;
}

std::string check_selector(DType dtype, const Dims& shape, bool index) {
  const bool dtype_ok = index ? is_integral(dtype) : (dtype == DType::Bool || is_integral(dtype));
  if (!dtype_ok)
    return std::string("must have ") + (index ? "an integer dtype (int32, int64 or uint8)" : "dtype bool") +
           ", got " + dtype_name(dtype);
  for (int64_t d : shape)
    if (d != 1) {
      std::string s = "[";
      for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
      return "must hold exactly one element (shape [] or [1]), got shape " + s + "]";
    }
  return {};
}

}  // namespace oar

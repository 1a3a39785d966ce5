// The fused ops (ops/fused.h), for scaled_dot_product_attention's eager fast
// path and for tests; graph passes emit them in programs. No logic here.
#include <limits>

#include "common.h"
#include "ops/fused.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_fused(nb::module_& m) {
  m.def("fused_attention", [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask,
                              double scale, bool causal) {
    return ops::fused_attention(q, k, v, mask ? *mask : Tensor(), scale, causal);
  }, arg("q"), arg("k"), arg("v"), arg("mask").none() = nb::none(), arg("scale") = 1.0, arg("causal") = false);
  m.def("fused_linear_act", [](const Tensor& x, const Tensor& w, const Tensor& b, const std::string& act) {
    return ops::fused_linear_act(x, w, b, act);
  }, arg("x"), arg("weight"), arg("bias"), arg("act"));
  m.def("fused_conv", [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, std::optional<Tensor> residual,
                         const Dims& stride, const Dims& padding, const Dims& dilation, int64_t groups,
                         const std::string& act, double lo, double hi) {
    ops::ConvParams p{stride, padding, padding, dilation, groups};
    return ops::fused_conv(x, w, bias ? *bias : Tensor(), residual ? *residual : Tensor(), p, act, lo, hi);
  }, arg("x"), arg("weight"), arg("bias").none() = nb::none(), arg("residual").none() = nb::none(),
     arg("stride") = Dims{1, 1}, arg("padding") = Dims{0, 0}, arg("dilation") = Dims{1, 1}, arg("groups") = 1,
     arg("act") = "", arg("lo") = -std::numeric_limits<double>::infinity(),
     arg("hi") = std::numeric_limits<double>::infinity());
  m.def("fused_elementwise", [](const std::vector<Tensor>& inputs, const Dims& program) {
    return ops::fused_elementwise(std::span<const Tensor>(inputs.data(), inputs.size()), program);
  }, arg("inputs"), arg("program"));
  m.def("fused_reduce", [](const std::vector<Tensor>& inputs, const Dims& program, int64_t kind, const Dims& axes,
                           bool keepdim) {
    return ops::fused_reduce(std::span<const Tensor>(inputs.data(), inputs.size()), program, kind, axes, keepdim);
  }, arg("inputs"), arg("program"), arg("kind"), arg("axes"), arg("keepdim") = false);
  m.def("_fused_elementwise_code", [](const std::string& op, bool approximate) {
    const OpDef* d = find_op(op);
    return d ? ops::elementwise_code(*d, op == "gelu" ? Attrs{approximate} : Attrs{}) : -1;
  }, arg("op"), arg("approximate") = false);
}

Binder b(bind_fused);

}  // namespace
}  // namespace oar::bind

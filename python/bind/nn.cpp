// Convolution, pooling and normalisation ops for oar.nn.functional. The
// Python wrappers normalise Paddle's argument forms and pass the name of the
// public API, which the C++ checks put at the start of their errors.
#include "common.h"
#include "ops/conv.h"
#include "ops/norm.h"
#include "ops/pool.h"

namespace oar::bind {
namespace {

using nb::arg;
using OptT = std::optional<Tensor>;

Tensor opt(const OptT& t) { return t ? *t : Tensor(); }

void bind_nn(nb::module_& m) {
  m.def("nn_conv", [](const Tensor& x, const Tensor& w, const Dims& strides, const Dims& pads_l, const Dims& pads_r,
                      const Dims& dilations, int64_t groups, const std::string& api) {
    return ops::conv(x, w, ops::ConvParams{strides, pads_l, pads_r, dilations, groups}, api.c_str());
  }, arg("x"), arg("weight"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("dilations"), arg("groups"),
     arg("api"));
  m.def("nn_conv_transpose", [](const Tensor& x, const Tensor& w, const Dims& out_spatial, const Dims& strides,
                                const Dims& pads_l, const Dims& pads_r, const Dims& dilations, int64_t groups,
                                const std::string& api) {
    return ops::conv_transpose(x, w, out_spatial, ops::ConvParams{strides, pads_l, pads_r, dilations, groups},
                               api.c_str());
  }, arg("x"), arg("weight"), arg("out_spatial"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("dilations"),
     arg("groups"), arg("api"));
  m.def("nn_conv_grad_weight", [](const Tensor& x, const Tensor& gy, const Dims& k_spatial, const Dims& strides,
                                  const Dims& pads_l, const Dims& pads_r, const Dims& dilations, int64_t groups,
                                  const std::string& api) {
    return ops::conv_grad_weight(x, gy, k_spatial, ops::ConvParams{strides, pads_l, pads_r, dilations, groups},
                                 api.c_str());
  }, arg("x"), arg("grad"), arg("k_spatial"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("dilations"),
     arg("groups"), arg("api"));
  m.def("nn_max_pool", [](const Tensor& x, const Dims& kernel, const Dims& strides, const Dims& pads_l,
                          const Dims& pads_r, bool ceil_mode, bool adaptive, const std::string& api) {
    auto r = ops::max_pool(x, ops::PoolParams{kernel, strides, pads_l, pads_r, ceil_mode, adaptive, true}, api.c_str());
    return nb::make_tuple(r.first, r.second);
  }, arg("x"), arg("kernel"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("ceil_mode"), arg("adaptive"),
     arg("api"));
  m.def("nn_avg_pool", [](const Tensor& x, const Dims& kernel, const Dims& strides, const Dims& pads_l,
                          const Dims& pads_r, bool ceil_mode, bool adaptive, bool exclusive, const std::string& api) {
    return ops::avg_pool(x, ops::PoolParams{kernel, strides, pads_l, pads_r, ceil_mode, adaptive, exclusive},
                         api.c_str());
  }, arg("x"), arg("kernel"), arg("strides"), arg("pads_l"), arg("pads_r"), arg("ceil_mode"), arg("adaptive"),
     arg("exclusive"), arg("api"));
  m.def("nn_batch_norm", [](const Tensor& x, OptT rm, OptT rv, OptT w, OptT b, bool use_batch_stats,
                            double momentum, double eps, int64_t axis, const std::string& api) {
    return ops::batch_norm(x, opt(rm), opt(rv), opt(w), opt(b), use_batch_stats, momentum, eps, axis, api.c_str());
  }, arg("x"), arg("running_mean").none(), arg("running_var").none(), arg("weight").none(), arg("bias").none(),
     arg("use_batch_stats"), arg("momentum"), arg("eps"), arg("axis"), arg("api"));
  m.def("nn_layer_norm", [](const Tensor& x, int64_t begin_axis, OptT w, OptT b, double eps, const std::string& api) {
    return ops::layer_norm(x, begin_axis, opt(w), opt(b), eps, api.c_str());
  }, arg("x"), arg("begin_axis"), arg("weight").none(), arg("bias").none(), arg("eps"), arg("api"));
  m.def("nn_group_norm", [](const Tensor& x, int64_t groups, OptT w, OptT b, double eps, const std::string& api) {
    return ops::group_norm(x, groups, opt(w), opt(b), eps, api.c_str());
  }, arg("x"), arg("groups"), arg("weight").none(), arg("bias").none(), arg("eps"), arg("api"));
  m.def("nn_instance_norm", [](const Tensor& x, OptT w, OptT b, double eps, const std::string& api) {
    return ops::instance_norm(x, opt(w), opt(b), eps, api.c_str());
  }, arg("x"), arg("weight").none(), arg("bias").none(), arg("eps"), arg("api"));
  m.def("nn_rms_norm", [](const Tensor& x, int64_t begin_axis, OptT w, double eps, const std::string& api) {
    return ops::rms_norm(x, begin_axis, opt(w), eps, api.c_str());
  }, arg("x"), arg("begin_axis"), arg("weight").none(), arg("eps"), arg("api"));
}

Binder b(bind_nn);

}  // namespace
}  // namespace oar::bind

// The fused optimizer updates of ops/optimizer.h, bound into the submodule
// oar._C._optimizer. The optimizer classes are in python/oar/optimizer/.
#include "common.h"
#include "ops/optimizer.h"

namespace oar::bind {
namespace {

using nb::arg;

// A Tensor argument that may be None (amsgrad / centered state).
Tensor* opt_tensor(nb::handle h, Tensor& slot) {
  if (h.is_none()) return nullptr;
  slot = nb::cast<Tensor>(h);
  return &slot;
}

void bind_optimizer(nb::module_& top) {
  nb::module_ m = top.def_submodule("_optimizer", "fused in-place optimizer updates");
  m.def("state_dtype", [](DType d) { return ops::state_dtype(d); });
  m.def("sgd_", [](Tensor p, const Tensor& g, double lr, double l1, double l2) {
    ops::sgd_(p, g, lr, {l1, l2});
  }, arg("param"), arg("grad"), arg("lr"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("momentum_", [](Tensor p, const Tensor& g, Tensor vel, double lr, double mu, bool nesterov, double l1,
                        double l2) {
    ops::momentum_(p, g, vel, lr, mu, nesterov, {l1, l2});
  }, arg("param"), arg("grad"), arg("velocity"), arg("lr"), arg("mu"), arg("use_nesterov") = false,
     arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("adam_", [](Tensor p, const Tensor& g, Tensor m1, Tensor m2, nb::handle vmax, double lr, double b1,
                    double b2, double eps, int64_t step, double coeff, double l1, double l2) {
    Tensor slot;
    ops::adam_(p, g, m1, m2, opt_tensor(vmax, slot), lr, b1, b2, eps, step, coeff, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment1"), arg("moment2"), arg("moment2_max").none(), arg("lr"),
     arg("beta1"), arg("beta2"), arg("epsilon"), arg("step"), arg("coeff") = 0.0, arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("adamax_", [](Tensor p, const Tensor& g, Tensor m1, Tensor u, double lr, double b1, double b2, double eps,
                      int64_t step, double l1, double l2) {
    ops::adamax_(p, g, m1, u, lr, b1, b2, eps, step, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment"), arg("inf_norm"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("adagrad_", [](Tensor p, const Tensor& g, Tensor acc, double lr, double eps, double l1, double l2) {
    ops::adagrad_(p, g, acc, lr, eps, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment"), arg("lr"), arg("epsilon"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("adadelta_", [](Tensor p, const Tensor& g, Tensor eg2, Tensor edx2, double lr, double rho, double eps,
                        double l1, double l2) {
    ops::adadelta_(p, g, eg2, edx2, lr, rho, eps, {l1, l2});
  }, arg("param"), arg("grad"), arg("avg_squared_grad"), arg("avg_squared_update"), arg("lr"), arg("rho"),
     arg("epsilon"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("rmsprop_", [](Tensor p, const Tensor& g, Tensor ms, Tensor mom, nb::handle mg, double lr, double rho,
                       double eps, double momentum, double l1, double l2) {
    Tensor slot;
    ops::rmsprop_(p, g, ms, mom, opt_tensor(mg, slot), lr, rho, eps, momentum, {l1, l2});
  }, arg("param"), arg("grad"), arg("mean_square"), arg("moment"), arg("mean_grad").none(), arg("lr"), arg("rho"),
     arg("epsilon"), arg("momentum"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("lamb_", [](Tensor p, const Tensor& g, Tensor m1, Tensor m2, double lr, double b1, double b2, double eps,
                    int64_t step, double wd, bool always_adapt, double l1, double l2) {
    ops::lamb_(p, g, m1, m2, lr, b1, b2, eps, step, wd, always_adapt, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment1"), arg("moment2"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("lamb_weight_decay"), arg("always_adapt") = false, arg("l1") = 0.0,
     arg("l2") = 0.0);
  m.def("nadam_", [](Tensor p, const Tensor& g, Tensor m1, Tensor m2, double lr, double b1, double b2, double eps,
                     int64_t step, double mu_t, double mu_next, double mu_product, double l1, double l2) {
    ops::nadam_(p, g, m1, m2, lr, b1, b2, eps, step, mu_t, mu_next, mu_product, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment1"), arg("moment2"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("mu_t"), arg("mu_next"), arg("mu_product"), arg("l1") = 0.0,
     arg("l2") = 0.0);
  m.def("radam_", [](Tensor p, const Tensor& g, Tensor m1, Tensor m2, double lr, double b1, double b2, double eps,
                     int64_t step, double l1, double l2) {
    ops::radam_(p, g, m1, m2, lr, b1, b2, eps, step, {l1, l2});
  }, arg("param"), arg("grad"), arg("moment1"), arg("moment2"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("l1") = 0.0, arg("l2") = 0.0);
  // The merged updates take lists with one entry per parameter (Note [multi-tensor updates]).
  using List = std::vector<Tensor>;
  m.def("merged_sgd_", [](List p, const List& g, double lr, double l1, double l2) {
    ops::merged_sgd_(p, g, lr, {l1, l2});
  }, arg("params"), arg("grads"), arg("lr"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_momentum_", [](List p, const List& g, List vel, double lr, double mu, bool nesterov, double l1,
                               double l2) {
    ops::merged_momentum_(p, g, vel, lr, mu, nesterov, {l1, l2});
  }, arg("params"), arg("grads"), arg("velocity"), arg("lr"), arg("mu"), arg("use_nesterov") = false,
     arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_adam_", [](List p, const List& g, List m1, List m2, std::optional<List> vmax, double lr, double b1,
                           double b2, double eps, int64_t step, double coeff, double l1, double l2) {
    List none;
    ops::merged_adam_(p, g, m1, m2, vmax ? *vmax : none, lr, b1, b2, eps, step, coeff, {l1, l2});
  }, arg("params"), arg("grads"), arg("moment1"), arg("moment2"), arg("moment2_max").none(), arg("lr"),
     arg("beta1"), arg("beta2"), arg("epsilon"), arg("step"), arg("coeff") = 0.0, arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_adamax_", [](List p, const List& g, List m1, List u, double lr, double b1, double b2, double eps,
                             int64_t step, double l1, double l2) {
    ops::merged_adamax_(p, g, m1, u, lr, b1, b2, eps, step, {l1, l2});
  }, arg("params"), arg("grads"), arg("moment"), arg("inf_norm"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_adagrad_", [](List p, const List& g, List acc, double lr, double eps, double l1, double l2) {
    ops::merged_adagrad_(p, g, acc, lr, eps, {l1, l2});
  }, arg("params"), arg("grads"), arg("moment"), arg("lr"), arg("epsilon"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_adadelta_", [](List p, const List& g, List eg2, List edx2, double lr, double rho, double eps,
                               double l1, double l2) {
    ops::merged_adadelta_(p, g, eg2, edx2, lr, rho, eps, {l1, l2});
  }, arg("params"), arg("grads"), arg("avg_squared_grad"), arg("avg_squared_update"), arg("lr"), arg("rho"),
     arg("epsilon"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_rmsprop_", [](List p, const List& g, List ms, List mom, std::optional<List> mg, double lr,
                              double rho, double eps, double momentum, double l1, double l2) {
    List none;
    ops::merged_rmsprop_(p, g, ms, mom, mg ? *mg : none, lr, rho, eps, momentum, {l1, l2});
  }, arg("params"), arg("grads"), arg("mean_square"), arg("moment"), arg("mean_grad").none(), arg("lr"),
     arg("rho"), arg("epsilon"), arg("momentum"), arg("l1") = 0.0, arg("l2") = 0.0);
  m.def("merged_nadam_", [](List p, const List& g, List m1, List m2, double lr, double b1, double b2, double eps,
                            int64_t step, double mu_t, double mu_next, double mu_product, double l1, double l2) {
    ops::merged_nadam_(p, g, m1, m2, lr, b1, b2, eps, step, mu_t, mu_next, mu_product, {l1, l2});
  }, arg("params"), arg("grads"), arg("moment1"), arg("moment2"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("mu_t"), arg("mu_next"), arg("mu_product"), arg("l1") = 0.0,
     arg("l2") = 0.0);
  m.def("merged_radam_", [](List p, const List& g, List m1, List m2, double lr, double b1, double b2, double eps,
                            int64_t step, double l1, double l2) {
    ops::merged_radam_(p, g, m1, m2, lr, b1, b2, eps, step, {l1, l2});
  }, arg("params"), arg("grads"), arg("moment1"), arg("moment2"), arg("lr"), arg("beta1"), arg("beta2"),
     arg("epsilon"), arg("step"), arg("l1") = 0.0, arg("l2") = 0.0);
}

Binder b(bind_optimizer);

}  // namespace
}  // namespace oar::bind

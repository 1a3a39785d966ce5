// The optimizer update ops of ops/optimizer.h. Kernels:
// kernels/cpu/optimizer.cpp.
//
// Note [optimizer ops]
// An update writes several tensors in place (the parameter and its state), so
// the ops have no outputs: infer_meta validates the operands and returns no
// metas, and the kernel writes through its inputs. They have no gradient rule
// and are traced as side-effecting ops. The C++ API below makes the gradient
// contiguous and in the parameter's dtype, updates non-contiguous in-place
// operands through contiguous copies, and bumps the storage versions so that
// autograd notices the writes. Each update but lamb_ also has a merged form,
// merged_<update>, taking the operands of many parameters at once (Note
// [multi-tensor updates] in kernels/cpu/optimizer.cpp).
#include "ops/optimizer.h"

#include <cmath>

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

// Operands: param, grad, then n_states state tensors (n_min..n_max).
Metas check_update(std::span<const Tensor> in, const char* api, size_t n_min, size_t n_max) {
  OAR_CHECK(in.size() >= 2 + n_min && in.size() <= 2 + n_max, Value, "[", api, "] expects param, grad and ",
            n_min, "..", n_max, " state tensors, got ", in.size(), " tensors");
  for (const Tensor& t : in) OAR_CHECK(t.defined(), Value, "[", api, "] got an undefined tensor");
  const Tensor& p = in[0];
  OAR_CHECK(is_floating(p.dtype()), Type, "[", api, "] parameters must be float16, bfloat16, float32 or float64, got ",
            dtype_name(p.dtype()));
  OAR_CHECK(in[1].dtype() == p.dtype(), Type, "[", api, "] the gradient dtype ", dtype_name(in[1].dtype()),
            " must equal the parameter dtype ", dtype_name(p.dtype()));
  DType sd = state_dtype(p.dtype());
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor& t = in[k];
    OAR_CHECK(t.shape() == p.shape(), Value, "[", api, "] operand ", k, " has shape ", shape_str(t.shape()),
              " but the parameter has shape ", shape_str(p.shape()));
    OAR_CHECK(t.device() == p.device(), Value, "[", api, "] operand ", k, " is on ", t.device().str(),
              " but the parameter is on ", p.device().str());
    OAR_CHECK(t.is_contiguous(), Value, "[", api, "] operand ", k, " must be contiguous");
    if (k >= 2)
      OAR_CHECK(t.dtype() == sd, Type, "[", api, "] state tensor ", k - 2, " must be ", dtype_name(sd),
                " for a ", dtype_name(p.dtype()), " parameter, got ", dtype_name(t.dtype()));
  }
  return {};
}

void check_finite(double v, const char* what, const char* api) {
  OAR_CHECK(std::isfinite(v), Value, "[", api, "] ", what, " must be finite, got ", v);
}
void check_step(int64_t step, const char* api) {
  OAR_CHECK(step >= 1, Value, "[", api, "] step must be >= 1, got ", step);
}
void check_beta(double b, const char* what, const char* api) {
  OAR_CHECK(b >= 0.0 && b < 1.0, Value, "[", api, "] ", what, " must be in [0, 1), got ", b);
}

// attrs common to all: lr first, l1 and l2 last.
#define OAR_DECAY "l1_decay", "l2_decay"

// The Adam family: attrs start learning_rate, beta1, beta2, epsilon, step.
Metas adam_family_meta(std::span<const Tensor> in, const Attrs& a, const char* api, int min_state, int max_state) {
  check_finite(a.f(0), "learning_rate", api);
  check_beta(a.f(1), "beta1", api);
  check_beta(a.f(2), "beta2", api);
  check_step(a.i(4), api);
  return check_update(in, api, min_state, max_state);
}

// The API each op's errors name.
constexpr char kSgd[] = "oar.optimizer.SGD", kMomentum[] = "oar.optimizer.Momentum", kAdam[] = "oar.optimizer.Adam",
               kAdamax[] = "oar.optimizer.Adamax", kAdagrad[] = "oar.optimizer.Adagrad",
               kAdadelta[] = "oar.optimizer.Adadelta", kRmsprop[] = "oar.optimizer.RMSProp",
               kLamb[] = "oar.optimizer.Lamb", kNadam[] = "oar.optimizer.NAdam", kRadam[] = "oar.optimizer.RAdam";

Metas sgd_meta(std::span<const Tensor> in, const Attrs& a) {
  check_finite(a.f(0), "learning_rate", kSgd);
  return check_update(in, kSgd, 0, 0);
}
Metas momentum_meta(std::span<const Tensor> in, const Attrs& a) {
  check_finite(a.f(0), "learning_rate", kMomentum);
  check_finite(a.f(1), "momentum", kMomentum);
  return check_update(in, kMomentum, 1, 1);
}
Metas adam_meta(std::span<const Tensor> in, const Attrs& a) {
  return adam_family_meta(in, a, kAdam, 2, 3);  // m, v[, vmax]
}
Metas adamax_meta(std::span<const Tensor> in, const Attrs& a) {
  return adam_family_meta(in, a, kAdamax, 2, 2);
}
Metas adagrad_meta(std::span<const Tensor> in, const Attrs& a) {
  check_finite(a.f(0), "learning_rate", kAdagrad);
  return check_update(in, kAdagrad, 1, 1);
}
Metas adadelta_meta(std::span<const Tensor> in, const Attrs& a) {
  check_finite(a.f(0), "learning_rate", kAdadelta);
  return check_update(in, kAdadelta, 2, 2);
}
Metas rmsprop_meta(std::span<const Tensor> in, const Attrs& a) {
  check_finite(a.f(0), "learning_rate", kRmsprop);
  return check_update(in, kRmsprop, 2, 3);  // ms, mom[, mg]
}
Metas lamb_meta(std::span<const Tensor> in, const Attrs& a) {
  return adam_family_meta(in, a, kLamb, 2, 2);
}
Metas nadam_meta(std::span<const Tensor> in, const Attrs& a) {
  return adam_family_meta(in, a, kNadam, 2, 2);
}
Metas radam_meta(std::span<const Tensor> in, const Attrs& a) {
  return adam_family_meta(in, a, kRadam, 2, 2);
}

// The merged ops (ops/optimizer.h): the operands of many parameters, each as
// the single-tensor op takes them, one after another, and the number of
// states per parameter as the last attribute. All share the first
// parameter's dtype and device, since one kernel runs them.
template <MetaFn Single, const char* Api> Metas merged_meta(std::span<const Tensor> in, const Attrs& a) {
  const int64_t n_states = a.i(a.size() - 1);
  OAR_CHECK(n_states >= 0 && n_states <= 3, Value, "[", Api, "] num_states must be in 0..3, got ", n_states);
  const size_t per = 2 + size_t(n_states);
  OAR_CHECK(in.size() % per == 0, Value, "[", Api, "] expects ", per, " tensors per parameter, got ", in.size(),
            " tensors");
  for (size_t k = 0; k < in.size(); k += per) {
    std::span<const Tensor> one = in.subspan(k, per);
    Single(one, a);
    if (k == 0) continue;
    OAR_CHECK(one[0].dtype() == in[0].dtype(), Type, "[", Api, "] parameter ", k / per, " is ",
              dtype_name(one[0].dtype()), " but parameter 0 is ", dtype_name(in[0].dtype()),
              "; one merged update takes parameters of one dtype");
    OAR_CHECK(one[0].device() == in[0].device(), Value, "[", Api, "] parameter ", k / per, " is on ",
              one[0].device().str(), " but parameter 0 is on ", in[0].device().str());
  }
  return {};
}

constexpr OpTraits kUpdate{.side_effect = true};
// Each update op and its merged form, with the same attributes and then num_states.
#define OAR_UPDATE_OP(Var, name, meta_fn, api, ...)                                                       \
  OpDef& k##Var##Op = OpBuilder(name).attrs({__VA_ARGS__}).meta(meta_fn).traits(kUpdate);              \
  OpDef& kMerged##Var##Op =                                                                              \
      OpBuilder("merged_" name).attrs({__VA_ARGS__, "num_states"}).meta(merged_meta<meta_fn, api>).traits(kUpdate)
OAR_UPDATE_OP(Sgd, "sgd_", sgd_meta, kSgd, "learning_rate", OAR_DECAY);
OAR_UPDATE_OP(Momentum, "momentum_", momentum_meta, kMomentum, "learning_rate", "mu", "use_nesterov", OAR_DECAY);
OAR_UPDATE_OP(Adam, "adam_", adam_meta, kAdam, "learning_rate", "beta1", "beta2", "epsilon", "step", "coeff",
              OAR_DECAY);
OAR_UPDATE_OP(Adamax, "adamax_", adamax_meta, kAdamax, "learning_rate", "beta1", "beta2", "epsilon", "step",
              OAR_DECAY);
OAR_UPDATE_OP(Adagrad, "adagrad_", adagrad_meta, kAdagrad, "learning_rate", "epsilon", OAR_DECAY);
OAR_UPDATE_OP(Adadelta, "adadelta_", adadelta_meta, kAdadelta, "learning_rate", "rho", "epsilon", OAR_DECAY);
OAR_UPDATE_OP(Rmsprop, "rmsprop_", rmsprop_meta, kRmsprop, "learning_rate", "rho", "epsilon", "momentum",
              OAR_DECAY);
OAR_UPDATE_OP(Nadam, "nadam_", nadam_meta, kNadam, "learning_rate", "beta1", "beta2", "epsilon", "step", "mu_t",
              "mu_next", "mu_product", OAR_DECAY);
OAR_UPDATE_OP(Radam, "radam_", radam_meta, kRadam, "learning_rate", "beta1", "beta2", "epsilon", "step",
              OAR_DECAY);
#undef OAR_UPDATE_OP
// LAMB's trust ratio needs each parameter's norms: no merged form.
OpDef& kLambOp = OpBuilder("lamb_").attrs({"learning_rate", "beta1", "beta2", "epsilon", "step", "weight_decay",
                                           "always_adapt", OAR_DECAY}).meta(lamb_meta).traits(kUpdate);

// See Note [optimizer ops].
// Autocast would hand the kernel cast copies, and the in-place update would
// land in them; an optimizer step always runs in the operands' own dtypes.
struct AutocastOff {
  bool prev = dispatch_state().autocast;
  AutocastOff() { dispatch_state().autocast = false; }
  ~AutocastOff() { dispatch_state().autocast = prev; }
};

// Adds one parameter's operands to `in` (see Note [optimizer ops]): the
// gradient cast to the parameter's dtype and made contiguous, and contiguous
// stand-ins for the tensors written in place, remembered in targets/copies.
void add_operands(const OpDef& op, Tensor& p, const Tensor& g, std::span<Tensor* const> states, Tensors& in,
                  SmallVector<Tensor*, 4>& targets, SmallVector<Tensor, 4>& copies) {
  OAR_CHECK(p.defined() && g.defined(), Value, "[oar.optimizer] ", op.name, " got an undefined tensor");
  Tensor grad = g;
  if (grad.dtype() != p.dtype() && is_floating(grad.dtype()) && is_floating(p.dtype())) grad = cast(grad, p.dtype());
  grad = contiguous(grad);
  const size_t first = copies.size();
  auto add_target = [&](Tensor* t) {
    OAR_CHECK(t && t->defined(), Value, "[oar.optimizer] ", op.name, " got an undefined state tensor");
    targets.push_back(t);
    copies.push_back(t->is_contiguous() ? *t : contiguous(*t));
  };
  add_target(&p);
  for (Tensor* s : states) add_target(s);
  in.push_back(copies[first]);
  in.push_back(grad);
  for (size_t k = first + 1; k < copies.size(); ++k) in.push_back(copies[k]);
}

// Writes the stand-ins back (or bumps the versions of tensors written directly).
void finish_update(std::span<Tensor* const> targets, std::span<const Tensor> copies) {
  for (size_t k = 0; k < targets.size(); ++k) {
    if (!copies[k].same(*targets[k])) copy_(*targets[k], copies[k]);
    else targets[k]->storage().bump_version();
  }
}

void run_update(const OpDef& op, Tensor& p, const Tensor& g, std::initializer_list<Tensor*> states,
                const Attrs& attrs) {
  NoGradGuard ng;
  AutocastOff no_autocast;
  Tensors in;
  SmallVector<Tensor*, 4> targets;
  SmallVector<Tensor, 4> copies;
  add_operands(op, p, g, std::span<Tensor* const>(states.begin(), states.size()), in, targets, copies);
  dispatch(op, std::span<const Tensor>(in.data(), in.size()), attrs);
  finish_update(targets, copies);
}

// The merged form of run_update: `states` holds one span per state, each with
// one tensor per parameter; `attrs` gets the number of states appended.
void run_merged_update(const OpDef& op, std::span<Tensor> p, std::span<const Tensor> g,
                       std::initializer_list<std::span<Tensor>> states, Attrs attrs) {
  NoGradGuard ng;
  AutocastOff no_autocast;
  OAR_CHECK(g.size() == p.size(), Value, "[oar.optimizer] ", op.name, " got ", p.size(), " parameters but ",
            g.size(), " gradients");
  for (std::span<Tensor> s : states)
    OAR_CHECK(s.size() == p.size(), Value, "[oar.optimizer] ", op.name, " got ", p.size(), " parameters but ",
              s.size(), " tensors of a state");
  if (p.empty()) return;
  Tensors in;
  in.reserve(p.size() * (2 + states.size()));
  SmallVector<Tensor*, 4> targets;
  SmallVector<Tensor, 4> copies;
  SmallVector<Tensor*, 3> own;
  for (size_t i = 0; i < p.size(); ++i) {
    own.clear();
    for (std::span<Tensor> s : states) own.push_back(&s[i]);
    add_operands(op, p[i], g[i], std::span<Tensor* const>(own.data(), own.size()), in, targets, copies);
  }
  attrs.push_back(int64_t(states.size()));
  dispatch(op, std::span<const Tensor>(in.data(), in.size()), attrs);
  finish_update(std::span<Tensor* const>(targets.data(), targets.size()),
                std::span<const Tensor>(copies.data(), copies.size()));
}

}  // namespace

namespace ops {

DType state_dtype(DType param) {
  return param == DType::Float16 || param == DType::BFloat16 ? DType::Float32 : param;
}

void sgd_(Tensor& p, const Tensor& g, double lr, Decay d) {
  run_update(kSgdOp, p, g, {}, Attrs{lr, d.l1, d.l2});
}
void momentum_(Tensor& p, const Tensor& g, Tensor& velocity, double lr, double mu, bool nesterov, Decay d) {
  run_update(kMomentumOp, p, g, {&velocity}, Attrs{lr, mu, nesterov, d.l1, d.l2});
}
void adam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, Tensor* vmax, double lr, double beta1, double beta2,
           double eps, int64_t step, double decoupled_coeff, Decay d) {
  Attrs a{lr, beta1, beta2, eps, step, decoupled_coeff, d.l1, d.l2};
  if (vmax && vmax->defined()) run_update(kAdamOp, p, g, {&m, &v, vmax}, a);
  else run_update(kAdamOp, p, g, {&m, &v}, a);
}
void adamax_(Tensor& p, const Tensor& g, Tensor& m, Tensor& inf_norm, double lr, double beta1, double beta2,
             double eps, int64_t step, Decay d) {
  run_update(kAdamaxOp, p, g, {&m, &inf_norm}, Attrs{lr, beta1, beta2, eps, step, d.l1, d.l2});
}
void adagrad_(Tensor& p, const Tensor& g, Tensor& acc, double lr, double eps, Decay d) {
  run_update(kAdagradOp, p, g, {&acc}, Attrs{lr, eps, d.l1, d.l2});
}
void adadelta_(Tensor& p, const Tensor& g, Tensor& avg_sq_grad, Tensor& avg_sq_update, double lr, double rho,
               double eps, Decay d) {
  run_update(kAdadeltaOp, p, g, {&avg_sq_grad, &avg_sq_update}, Attrs{lr, rho, eps, d.l1, d.l2});
}
void rmsprop_(Tensor& p, const Tensor& g, Tensor& mean_square, Tensor& moment, Tensor* mean_grad, double lr,
              double rho, double eps, double momentum, Decay d) {
  Attrs a{lr, rho, eps, momentum, d.l1, d.l2};
  if (mean_grad && mean_grad->defined()) run_update(kRmspropOp, p, g, {&mean_square, &moment, mean_grad}, a);
  else run_update(kRmspropOp, p, g, {&mean_square, &moment}, a);
}
void lamb_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
           int64_t step, double lamb_weight_decay, bool always_adapt, Decay d) {
  run_update(kLambOp, p, g, {&m, &v}, Attrs{lr, beta1, beta2, eps, step, lamb_weight_decay, always_adapt, d.l1, d.l2});
}
void nadam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
            int64_t step, double mu_t, double mu_next, double mu_product, Decay d) {
  run_update(kNadamOp, p, g, {&m, &v},
             Attrs{lr, beta1, beta2, eps, step, mu_t, mu_next, mu_product, d.l1, d.l2});
}
void radam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
            int64_t step, Decay d) {
  run_update(kRadamOp, p, g, {&m, &v}, Attrs{lr, beta1, beta2, eps, step, d.l1, d.l2});
}

void merged_sgd_(std::span<Tensor> p, std::span<const Tensor> g, double lr, Decay d) {
  run_merged_update(kMergedSgdOp, p, g, {}, Attrs{lr, d.l1, d.l2});
}
void merged_momentum_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> velocity, double lr,
                      double mu, bool nesterov, Decay d) {
  run_merged_update(kMergedMomentumOp, p, g, {velocity}, Attrs{lr, mu, nesterov, d.l1, d.l2});
}
void merged_adam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                  std::span<Tensor> vmax, double lr, double beta1, double beta2, double eps, int64_t step,
                  double decoupled_coeff, Decay d) {
  Attrs a{lr, beta1, beta2, eps, step, decoupled_coeff, d.l1, d.l2};
  if (vmax.empty()) run_merged_update(kMergedAdamOp, p, g, {m, v}, a);
  else run_merged_update(kMergedAdamOp, p, g, {m, v, vmax}, a);
}

void merged_adamax_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> inf_norm,
                    double lr, double beta1, double beta2, double eps, int64_t step, Decay d) {
  run_merged_update(kMergedAdamaxOp, p, g, {m, inf_norm}, Attrs{lr, beta1, beta2, eps, step, d.l1, d.l2});
}
void merged_adagrad_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> acc, double lr, double eps,
                     Decay d) {
  run_merged_update(kMergedAdagradOp, p, g, {acc}, Attrs{lr, eps, d.l1, d.l2});
}
void merged_adadelta_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> avg_sq_grad,
                      std::span<Tensor> avg_sq_update, double lr, double rho, double eps, Decay d) {
  run_merged_update(kMergedAdadeltaOp, p, g, {avg_sq_grad, avg_sq_update}, Attrs{lr, rho, eps, d.l1, d.l2});
}
void merged_rmsprop_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> mean_square,
                     std::span<Tensor> moment, std::span<Tensor> mean_grad, double lr, double rho, double eps,
                     double momentum, Decay d) {
  Attrs a{lr, rho, eps, momentum, d.l1, d.l2};
  if (mean_grad.empty()) run_merged_update(kMergedRmspropOp, p, g, {mean_square, moment}, a);
  else run_merged_update(kMergedRmspropOp, p, g, {mean_square, moment, mean_grad}, a);
}
void merged_nadam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                   double lr, double beta1, double beta2, double eps, int64_t step, double mu_t, double mu_next,
                   double mu_product, Decay d) {
  run_merged_update(kMergedNadamOp, p, g, {m, v},
                    Attrs{lr, beta1, beta2, eps, step, mu_t, mu_next, mu_product, d.l1, d.l2});
}
void merged_radam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                   double lr, double beta1, double beta2, double eps, int64_t step, Decay d) {
  run_merged_update(kMergedRadamOp, p, g, {m, v}, Attrs{lr, beta1, beta2, eps, step, d.l1, d.l2});
}

}  // namespace ops
}  // namespace oar

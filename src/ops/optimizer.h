// In-place parameter updates of the optimizers (oar.optimizer). Each op takes
// the parameter, its gradient and the optimizer's state tensors for it and
// updates parameter and state in one fused pass, with the hyperparameters as
// scalar attributes. They are non-differentiable side-effecting ops, so a
// captured training step records each update as one op.
//
// Every op folds coupled weight decay into the gradient first,
//   g = grad + l2 * p + l1 * sign(p)
// (Paddle's L2Decay / L1Decay regularizers), so one pass does both.
// Parameters may be float16/bfloat16/float32/float64; the state of a
// float16/bfloat16 parameter is float32 (state_dtype), the gradient has the
// parameter's dtype.
#pragma once
#include <cmath>

#include "ops/ops.h"

namespace oar::ops {

// Coupled weight decay terms shared by every update.
struct Decay {
  double l1 = 0.0;
  double l2 = 0.0;
};

// The dtype of the optimizer state kept for a parameter of dtype `param`.
DType state_dtype(DType param);

// RAdam's rectification factor r_t at step t (both kernels, CPU and CUDA), or
// 0 while rho_t <= 5, when the variance is not yet tractable and the update
// is momentum SGD.
inline double radam_rectification(double beta2, double t) {
  const double b2t = std::pow(beta2, t);
  const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
  const double rho_t = rho_inf - 2.0 * t * b2t / (1.0 - b2t);
  if (rho_t <= 5.0) return 0.0;
  return std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
}

// p -= lr * g
void sgd_(Tensor& p, const Tensor& g, double lr, Decay d = {});
// v = mu * v + g; p -= lr * (nesterov ? g + mu * v : v)
void momentum_(Tensor& p, const Tensor& g, Tensor& velocity, double lr, double mu, bool nesterov, Decay d = {});
// Paddle's Adam (step t >= 1, counted before this call as t - 1 updates):
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  vmax = max(vmax, v) with amsgrad
//   lr_t = lr sqrt(1-b2^t) / (1-b1^t)
//   p -= lr_t m / (sqrt(v) + eps sqrt(1-b2^t))
// decoupled_coeff != 0 makes it AdamW: p *= 1 - lr * coeff before the update.
// `vmax` undefined means no amsgrad.
void adam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, Tensor* vmax, double lr, double beta1, double beta2,
           double eps, int64_t step, double decoupled_coeff = 0.0, Decay d = {});
// m = b1 m + (1-b1) g;  u = max(b2 u + eps, |g|);  p -= lr / (1-b1^t) * m / u
void adamax_(Tensor& p, const Tensor& g, Tensor& m, Tensor& inf_norm, double lr, double beta1, double beta2,
             double eps, int64_t step, Decay d = {});
// acc += g^2;  p -= lr g / (sqrt(acc) + eps)
void adagrad_(Tensor& p, const Tensor& g, Tensor& acc, double lr, double eps, Decay d = {});
// Eg2 = rho Eg2 + (1-rho) g^2;  u = -sqrt((Edx2 + eps) / (Eg2 + eps)) g;
// Edx2 = rho Edx2 + (1-rho) u^2;  p += lr u
void adadelta_(Tensor& p, const Tensor& g, Tensor& avg_sq_grad, Tensor& avg_sq_update, double lr, double rho,
               double eps, Decay d = {});
// ms = rho ms + (1-rho) g^2;  centered: mg = rho mg + (1-rho) g, denom = sqrt(ms - mg^2 + eps)
// else denom = sqrt(ms + eps);  mom = momentum mom + lr g / denom;  p -= mom.
// `mean_grad` undefined means not centered.
void rmsprop_(Tensor& p, const Tensor& g, Tensor& mean_square, Tensor& moment, Tensor* mean_grad, double lr,
              double rho, double eps, double momentum, Decay d = {});
// r = m_hat / (sqrt(v_hat) + eps) + wd p;  p -= lr * trust * r with
// trust = |p| / |r| (1 when either norm is 0, and when lamb_weight_decay is 0
// unless always_adapt).
void lamb_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
           int64_t step, double lamb_weight_decay, bool always_adapt = false, Decay d = {});
// NAdam with momentum decay: mu_t, mu_next and mu_product (the product of
// mu_1..mu_t) are computed by the caller, which keeps the running product.
void nadam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
            int64_t step, double mu_t, double mu_next, double mu_product, Decay d = {});
// Rectified Adam (falls back to momentum SGD while rho_t <= 5).
void radam_(Tensor& p, const Tensor& g, Tensor& m, Tensor& v, double lr, double beta1, double beta2, double eps,
            int64_t step, Decay d = {});

// Multi-tensor (merged) forms of the updates above, all but lamb_ (whose
// trust ratio needs each parameter's norms): one update with one set of
// hyperparameters applied to many parameters of one dtype and device, in one
// op and one parallel region (Note [multi-tensor updates] in
// kernels/cpu/optimizer.cpp), with the single-tensor ops' results to the bit.
// The spans hold one entry per parameter; an empty optional-state span
// (`vmax`, `mean_grad`) means the option is off. The optimizers use them for
// CPU parameters; on other devices they run one kernel per parameter.
void merged_sgd_(std::span<Tensor> p, std::span<const Tensor> g, double lr, Decay d = {});
void merged_momentum_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> velocity, double lr,
                      double mu, bool nesterov, Decay d = {});
void merged_adam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                  std::span<Tensor> vmax, double lr, double beta1, double beta2, double eps, int64_t step,
                  double decoupled_coeff = 0.0, Decay d = {});
void merged_adamax_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> inf_norm,
                    double lr, double beta1, double beta2, double eps, int64_t step, Decay d = {});
void merged_adagrad_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> acc, double lr, double eps,
                     Decay d = {});
void merged_adadelta_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> avg_sq_grad,
                      std::span<Tensor> avg_sq_update, double lr, double rho, double eps, Decay d = {});
void merged_rmsprop_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> mean_square,
                     std::span<Tensor> moment, std::span<Tensor> mean_grad, double lr, double rho, double eps,
                     double momentum, Decay d = {});
void merged_nadam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                   double lr, double beta1, double beta2, double eps, int64_t step, double mu_t, double mu_next,
                   double mu_product, Decay d = {});
void merged_radam_(std::span<Tensor> p, std::span<const Tensor> g, std::span<Tensor> m, std::span<Tensor> v,
                   double lr, double beta1, double beta2, double eps, int64_t step, Decay d = {});

}  // namespace oar::ops

// CUDA kernels of the fused optimizer updates (ops/optimizer.h): one pass
// over parameter, gradient and state per step, in place, with the update
// rules of kernels/cpu/optimizer.cpp. Half-precision parameters keep
// float32 state and are computed in float32; float64 parameters in float64.
// The per-step constants are computed on the host in double, as on the CPU.
// Operands are contiguous and validated by infer_meta.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/optimizer.h"

namespace oar::cuda {
namespace {

// Coupled weight decay folded into the gradient: g + l2 p + l1 sign(p).
template <typename C> struct Decay {
  C l1, l2;
  __device__ C operator()(C g, C p) const { return g + l2 * p + l1 * C((p > C(0)) - (p < C(0))); }
};
template <typename C> Decay<C> decay_of(const Attrs& a, size_t k) { return {C(a.f(k)), C(a.f(k + 1))}; }

// The states of one element: up to three arrays in C.
template <typename C> struct States {
  C *s0, *s1, *s2;
};

// p[i] = f(p[i], g[i], i, states), computed in C = value_t<P>.
template <typename P, typename F> __global__ void update_kernel(F f, P* p, const P* g, States<value_t<P>> s, int64_t n) {
  OAR_GRID_LOOP(i, n) put(p, i, f(get(p, i), get(g, i), i, s));
}

// Runs the update Rule<C> (made on the host from the attrs) over the operands.
template <template <typename> class Rule> void run(std::span<const Tensor> in, const Attrs& a, const char* api) {
  const int64_t n = in[0].numel();
  if (n == 0) return;
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    using P = decltype(tag);
    using C = value_t<P>;
    States<C> s{nullptr, nullptr, nullptr};
    C** slots[3] = {&s.s0, &s.s1, &s.s2};
    for (size_t k = 2; k < in.size() && k < 5; ++k) *slots[k - 2] = in[k].data<C>();
    const Rule<C> rule(a, in.size() - 2);
    DeviceGuard guard(in[0].device().index);
    update_kernel<P><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(rule, in[0].data<P>(), in[1].data<P>(), s, n);
  });
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

// ------------------------------------------------------------------- rules
// attrs as ops/optimizer.cpp; each rule takes (attrs, number of states).

template <typename C> struct Sgd {
  C lr;
  Decay<C> dec;
  Sgd(const Attrs& a, size_t) : lr(C(a.f(0))), dec(decay_of<C>(a, 1)) {}
  __device__ C operator()(C p, C g, int64_t, States<C>) const { return p - lr * dec(g, p); }
};

template <typename C> struct Momentum {
  C lr, mu;
  bool nesterov;
  Decay<C> dec;
  Momentum(const Attrs& a, size_t) : lr(C(a.f(0))), mu(C(a.f(1))), nesterov(a.b(2)), dec(decay_of<C>(a, 3)) {}
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C v = mu * s.s0[i] + g;
    s.s0[i] = v;
    return nesterov ? p - (g + mu * v) * lr : p - lr * v;
  }
};

template <typename C> struct Adam {
  C lr_t, eps_t, b1, b2, decay;
  bool decoupled, amsgrad;
  Decay<C> dec;
  Adam(const Attrs& a, size_t states) : dec(decay_of<C>(a, 6)) {
    const double lr = a.f(0), cb1 = a.f(1), cb2 = a.f(2), eps = a.f(3), coeff = a.f(5), t = double(a.i(4));
    const double bc1 = 1.0 - std::pow(cb1, t), bc2 = std::sqrt(1.0 - std::pow(cb2, t));
    lr_t = C(lr * bc2 / bc1);
    eps_t = C(eps * bc2);
    b1 = C(cb1);
    b2 = C(cb2);
    decay = C(1.0 - lr * coeff);
    decoupled = coeff != 0.0;
    amsgrad = states == 3;
  }
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    if (decoupled) p = p * decay;
    const C m = b1 * s.s0[i] + (C(1) - b1) * g;
    C v = b2 * s.s1[i] + (C(1) - b2) * g * g;
    s.s0[i] = m;
    s.s1[i] = v;
    if (amsgrad) {
      const C vm = s.s2[i];
      v = vm < v ? v : vm;  // std::max(vm, v)
      s.s2[i] = v;
    }
    return p - lr_t * m / (sqrt(v) + eps_t);
  }
};

template <typename C> struct Adamax {
  C lr_t, b1, b2, eps;
  Decay<C> dec;
  Adamax(const Attrs& a, size_t)
      : lr_t(C(a.f(0) / (1.0 - std::pow(a.f(1), double(a.i(4)))))), b1(C(a.f(1))), b2(C(a.f(2))), eps(C(a.f(3))),
        dec(decay_of<C>(a, 5)) {}
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C m = b1 * s.s0[i] + (C(1) - b1) * g;
    const C x = b2 * s.s1[i] + eps, ag = fabs(g);
    const C u = x < ag ? ag : x;  // std::max(x, |g|)
    s.s0[i] = m;
    s.s1[i] = u;
    return p - lr_t * m / u;
  }
};

template <typename C> struct Adagrad {
  C lr, eps;
  Decay<C> dec;
  Adagrad(const Attrs& a, size_t) : lr(C(a.f(0))), eps(C(a.f(1))), dec(decay_of<C>(a, 2)) {}
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C h = s.s0[i] + g * g;
    s.s0[i] = h;
    return p - lr * g / (sqrt(h) + eps);
  }
};

template <typename C> struct Adadelta {
  C lr, rho, eps;
  Decay<C> dec;
  Adadelta(const Attrs& a, size_t) : lr(C(a.f(0))), rho(C(a.f(1))), eps(C(a.f(2))), dec(decay_of<C>(a, 3)) {}
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C sg = rho * s.s0[i] + (C(1) - rho) * g * g;
    const C upd = -sqrt((s.s1[i] + eps) / (sg + eps)) * g;
    s.s0[i] = sg;
    s.s1[i] = rho * s.s1[i] + (C(1) - rho) * upd * upd;
    return p + lr * upd;
  }
};

template <typename C> struct Rmsprop {
  C lr, rho, eps, mom;
  bool centered;
  Decay<C> dec;
  Rmsprop(const Attrs& a, size_t states)
      : lr(C(a.f(0))), rho(C(a.f(1))), eps(C(a.f(2))), mom(C(a.f(3))), centered(states == 3), dec(decay_of<C>(a, 4)) {}
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C ms = rho * s.s0[i] + (C(1) - rho) * g * g;
    s.s0[i] = ms;
    C denom;
    if (centered) {
      const C mg = rho * s.s2[i] + (C(1) - rho) * g;
      s.s2[i] = mg;
      denom = sqrt(ms - mg * mg + eps);
    } else {
      denom = sqrt(ms + eps);
    }
    const C m = mom * s.s1[i] + lr * g / denom;
    s.s1[i] = m;
    return p - m;
  }
};

template <typename C> struct Nadam {
  C lr, b1, b2, eps, c_m, c_g, bc2;
  Decay<C> dec;
  Nadam(const Attrs& a, size_t) : dec(decay_of<C>(a, 8)) {
    const double mu_t = a.f(5), mu_next = a.f(6), mu_prod = a.f(7);
    lr = C(a.f(0));
    b1 = C(a.f(1));
    b2 = C(a.f(2));
    eps = C(a.f(3));
    c_m = C(mu_next / (1.0 - mu_prod * mu_next));
    c_g = C((1.0 - mu_t) / (1.0 - mu_prod));
    bc2 = C(1.0 - std::pow(a.f(2), double(a.i(4))));
  }
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C m = b1 * s.s0[i] + (C(1) - b1) * g;
    const C v = b2 * s.s1[i] + (C(1) - b2) * g * g;
    s.s0[i] = m;
    s.s1[i] = v;
    const C m_hat = c_m * m + c_g * g;
    return p - lr * m_hat / (sqrt(v / bc2) + eps);
  }
};

template <typename C> struct Radam {
  C b1, b2, eps, lr_m, sbc2;
  bool rectify;
  Decay<C> dec;
  Radam(const Attrs& a, size_t) : dec(decay_of<C>(a, 5)) {
    const double cb1 = a.f(1), cb2 = a.f(2), t = double(a.i(4));
    const double r = ops::radam_rectification(cb2, t);
    rectify = r > 0.0;
    b1 = C(cb1);
    b2 = C(cb2);
    eps = C(a.f(3));
    lr_m = C(a.f(0) / (1.0 - std::pow(cb1, t)) * (rectify ? r : 1.0));
    sbc2 = C(std::sqrt(1.0 - std::pow(cb2, t)));
  }
  __device__ C operator()(C p, C g, int64_t i, States<C> s) const {
    g = dec(g, p);
    const C m = b1 * s.s0[i] + (C(1) - b1) * g;
    const C v = b2 * s.s1[i] + (C(1) - b2) * g * g;
    s.s0[i] = m;
    s.s1[i] = v;
    return rectify ? p - lr_m * m * sbc2 / (sqrt(v) + eps) : p - lr_m * m;
  }
};

void sgd_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) { run<Sgd>(in, a, "oar.sgd_"); }
void momentum_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  run<Momentum>(in, a, "oar.momentum_");
}
void adam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) { run<Adam>(in, a, "oar.adam_"); }
void adamax_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  run<Adamax>(in, a, "oar.adamax_");
}
void adagrad_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  run<Adagrad>(in, a, "oar.adagrad_");
}
void adadelta_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  run<Adadelta>(in, a, "oar.adadelta_");
}
void rmsprop_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  run<Rmsprop>(in, a, "oar.rmsprop_");
}
void nadam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) { run<Nadam>(in, a, "oar.nadam_"); }
void radam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) { run<Radam>(in, a, "oar.radam_"); }

// -------------------------------------------------------------------- lamb
//
// Three launches: the moments and the update direction r (into scratch)
// with per-block sums of p^2 and r^2 in double; one block that adds the
// partial sums in a fixed order and turns them into the step lr * trust
// ratio; the update p -= step * r. No value goes back to the host, and the
// sums do not depend on timing (the grid size depends only on n).

constexpr int kLambBlocks = 1024;  // the most partial sums

template <typename C> struct LambConsts {
  C b1, b2, eps, wd, bc1, bc2;
  Decay<C> dec;
};

// Sums v over the block into out[0] (thread 0); `buf` holds kThreads doubles.
__device__ double block_sum(double v, double* buf) {
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) buf[threadIdx.x] += buf[threadIdx.x + w];
    __syncthreads();
  }
  const double r = buf[0];
  __syncthreads();
  return r;
}

template <typename P>
__global__ void lamb_moments_kernel(LambConsts<value_t<P>> k, const P* p, const P* g, value_t<P>* m, value_t<P>* v,
                                    value_t<P>* r, double* partial, int64_t n) {
  using C = value_t<P>;
  __shared__ double buf[kThreads];
  double ps = 0, rs = 0;
  OAR_GRID_LOOP(i, n) {
    const C pv = get(p, i), gv = k.dec(get(g, i), pv);
    const C mi = k.b1 * m[i] + (C(1) - k.b1) * gv;
    const C vi = k.b2 * v[i] + (C(1) - k.b2) * gv * gv;
    m[i] = mi;
    v[i] = vi;
    const C ri = (mi / k.bc1) / (sqrt(vi / k.bc2) + k.eps) + k.wd * pv;
    r[i] = ri;
    ps += double(pv) * double(pv);
    rs += double(ri) * double(ri);
  }
  ps = block_sum(ps, buf);
  rs = block_sum(rs, buf);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = ps;
    partial[2 * blockIdx.x + 1] = rs;
  }
}

// One block: step = lr * (p_norm / r_norm where the trust ratio applies, else 1).
template <typename C>
__global__ void lamb_step_kernel(const double* partial, int nparts, double lr, bool adapt, C* step) {
  __shared__ double buf[kThreads];
  double ps = 0, rs = 0;
  for (int b = int(threadIdx.x); b < nparts; b += kThreads) {
    ps += partial[2 * b];
    rs += partial[2 * b + 1];
  }
  ps = block_sum(ps, buf);
  rs = block_sum(rs, buf);
  if (threadIdx.x == 0) {
    const double p_norm = sqrt(ps), r_norm = sqrt(rs);
    const double trust = adapt && p_norm > 0 && r_norm > 0 ? p_norm / r_norm : 1.0;
    *step = C(lr * trust);
  }
}

template <typename P> __global__ void lamb_apply_kernel(P* p, const value_t<P>* r, const value_t<P>* step, int64_t n) {
  const value_t<P> s = *step;
  OAR_GRID_LOOP(i, n) put(p, i, get(p, i) - s * r[i]);
}

void lamb_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  const int64_t n = in[0].numel();
  if (n == 0) return;
  DeviceGuard guard(in[0].device().index);
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    using P = decltype(tag);
    using C = value_t<P>;
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const LambConsts<C> k{C(b1),
                          C(b2),
                          C(a.f(3)),
                          C(a.f(5)),
                          C(1.0 - std::pow(b1, t)),
                          C(1.0 - std::pow(b2, t)),
                          decay_of<C>(a, 7)};
    const bool adapt = a.f(5) != 0.0 || a.b(6);
    const DType sd = in[2].dtype();
    const int blocks = std::min(blocks_for(n), kLambBlocks);
    Tensor r = empty_tensor(in[0].shape(), sd, in[0].device());
    Tensor partial = empty_tensor(Dims{2 * int64_t(blocks)}, DType::Float64, in[0].device());
    Tensor step = empty_tensor(Dims{}, sd, in[0].device());
    lamb_moments_kernel<P><<<blocks, kThreads, 0, cudaStreamLegacy>>>(k, in[0].data<P>(), in[1].data<P>(),
                                                                      in[2].data<C>(), in[3].data<C>(), r.data<C>(),
                                                                      partial.data<double>(), n);
    lamb_step_kernel<C><<<1, kThreads, 0, cudaStreamLegacy>>>(partial.data<double>(), blocks, a.f(0), adapt,
                                                             step.data<C>());
    lamb_apply_kernel<P><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(in[0].data<P>(), r.data<C>(),
                                                                           step.data<C>(), n);
  });
  cuda_check(cudaGetLastError(), "oar.lamb_", "kernel launch");
}

// The merged updates (Note [multi-tensor updates] in kernels/cpu/optimizer.cpp)
// launch the single-parameter kernel once per parameter: the optimizers keep
// GPU parameters on the single-parameter ops, and this makes the merged op
// correct wherever it is dispatched.
template <template <typename> class Rule> void merged(std::span<const Tensor> in, const Attrs& a, const char* api) {
  const size_t per = 2 + size_t(a.i(a.size() - 1));
  for (size_t k = 0; k + per <= in.size(); k += per) run<Rule>(in.subspan(k, per), a, api);
}
#define OAR_MERGED_KERNEL(op, Rule)                                                        \
  void merged_##op##_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) { \
    merged<Rule>(in, a, "oar.merged_" #op "_");                                             \
  }
OAR_MERGED_KERNEL(sgd, Sgd)
OAR_MERGED_KERNEL(momentum, Momentum)
OAR_MERGED_KERNEL(adam, Adam)
OAR_MERGED_KERNEL(adamax, Adamax)
OAR_MERGED_KERNEL(adagrad, Adagrad)
OAR_MERGED_KERNEL(adadelta, Adadelta)
OAR_MERGED_KERNEL(rmsprop, Rmsprop)
OAR_MERGED_KERNEL(nadam, Nadam)
OAR_MERGED_KERNEL(radam, Radam)
#undef OAR_MERGED_KERNEL

const bool sgd_reg = register_real("sgd_", sgd_kernel, OAR_FLOAT_DTYPES);
const bool momentum_reg = register_real("momentum_", momentum_kernel, OAR_FLOAT_DTYPES);
const bool adam_reg = register_real("adam_", adam_kernel, OAR_FLOAT_DTYPES);
const bool adamax_reg = register_real("adamax_", adamax_kernel, OAR_FLOAT_DTYPES);
const bool adagrad_reg = register_real("adagrad_", adagrad_kernel, OAR_FLOAT_DTYPES);
const bool adadelta_reg = register_real("adadelta_", adadelta_kernel, OAR_FLOAT_DTYPES);
const bool rmsprop_reg = register_real("rmsprop_", rmsprop_kernel, OAR_FLOAT_DTYPES);
const bool lamb_reg = register_real("lamb_", lamb_kernel, OAR_FLOAT_DTYPES);
const bool nadam_reg = register_real("nadam_", nadam_kernel, OAR_FLOAT_DTYPES);
const bool radam_reg = register_real("radam_", radam_kernel, OAR_FLOAT_DTYPES);
const bool merged_sgd_reg = register_real("merged_sgd_", merged_sgd_kernel, OAR_FLOAT_DTYPES);
const bool merged_momentum_reg = register_real("merged_momentum_", merged_momentum_kernel, OAR_FLOAT_DTYPES);
const bool merged_adam_reg = register_real("merged_adam_", merged_adam_kernel, OAR_FLOAT_DTYPES);
const bool merged_adamax_reg = register_real("merged_adamax_", merged_adamax_kernel, OAR_FLOAT_DTYPES);
const bool merged_adagrad_reg = register_real("merged_adagrad_", merged_adagrad_kernel, OAR_FLOAT_DTYPES);
const bool merged_adadelta_reg = register_real("merged_adadelta_", merged_adadelta_kernel, OAR_FLOAT_DTYPES);
const bool merged_rmsprop_reg = register_real("merged_rmsprop_", merged_rmsprop_kernel, OAR_FLOAT_DTYPES);
const bool merged_nadam_reg = register_real("merged_nadam_", merged_nadam_kernel, OAR_FLOAT_DTYPES);
const bool merged_radam_reg = register_real("merged_radam_", merged_radam_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

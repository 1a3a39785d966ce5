// Fused optimizer updates (ops/optimizer.h): one pass over parameter,
// gradient and state per step, for one parameter or, merged, for many (Note
// [multi-tensor updates]). Operands are contiguous and validated by
// infer_meta. Half-precision parameters keep float32 state and are computed
// in float32; float64 parameters in float64.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "ops/optimizer.h"

namespace oar::cpu {
namespace {

constexpr int64_t kGrain = 8192;  // the per-element work is a dozen flops

template <typename P> using state_t = compute_t<P>;  // float for half types, else P

// Adam's moment updates in place: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2;
// returns the new (m, v).
template <typename C> inline std::pair<C, C> moments(C& m, C& v, C g, C cb1, C cb2) {
  m = cb1 * m + (C(1) - cb1) * g;
  v = cb2 * v + (C(1) - cb2) * g * g;
  return {m, v};
}

// Operand pointers: the parameter and gradient in P, the states in S.
template <typename P> struct Operands {
  using S = state_t<P>;
  P* p;
  const P* g;
  S* s[3] = {nullptr, nullptr, nullptr};
  int64_t n;
  explicit Operands(std::span<const Tensor> in) : p(in[0].data<P>()), g(in[1].data<P>()), n(in[0].numel()) {
    for (size_t k = 2; k < in.size() && k < 5; ++k) s[k - 2] = in[k].data<S>();
  }
};

// Coupled weight decay folded into the gradient: g + l2 p + l1 sign(p).
template <typename C> struct Decay {
  C l1, l2;
  Decay(double a, double b) : l1(C(a)), l2(C(b)) {}
  C operator()(C g, C p) const { return g + l2 * p + l1 * C((p > C(0)) - (p < C(0))); }
};

template <typename F> void for_dtype(std::span<const Tensor> in, F&& f) {
  visit_float(in[0].dtype(), [&](auto tag) { f(tag); });
}

// The update rules that also run over many tensors (Note [multi-tensor
// updates]): Rule<P>(attrs) computes the per-step constants once, and
// rule(o, b, e) updates elements [b, e) of one parameter. The single-tensor
// kernel and the multi-tensor walk call the same rule, so their results are
// the same to the bit.

template <typename P> struct SgdRule {
  using C = state_t<P>;
  C lr;
  Decay<C> dec;
  explicit SgdRule(const Attrs& a) : lr(C(a.f(0))), dec(a.f(1), a.f(2)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      o.p[i] = P(p - lr * dec(C(o.g[i]), p));
    }
  }
};

template <typename P> struct MomentumRule {
  using C = state_t<P>;
  C lr, mu;
  bool nesterov;
  Decay<C> dec;
  explicit MomentumRule(const Attrs& a) : lr(C(a.f(0))), mu(C(a.f(1))), nesterov(a.b(2)), dec(a.f(3), a.f(4)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C* vel = o.s[0];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      C v = mu * vel[i] + g;
      vel[i] = v;
      o.p[i] = P(nesterov ? p - (g + mu * v) * lr : p - lr * v);
    }
  }
};

template <typename P> struct AdamRule {
  using C = state_t<P>;
  C lr_t, eps_t, cb1, cb2, decay;
  bool decoupled;
  Decay<C> dec;
  explicit AdamRule(const Attrs& a) : dec(a.f(6), a.f(7)) {
    const double lr = a.f(0), b1 = a.f(1), b2 = a.f(2), eps = a.f(3), coeff = a.f(5);
    const double t = double(a.i(4));
    const double bc1 = 1.0 - std::pow(b1, t), bc2 = std::sqrt(1.0 - std::pow(b2, t));
    lr_t = C(lr * bc2 / bc1);
    eps_t = C(eps * bc2);
    cb1 = C(b1);
    cb2 = C(b2);
    decay = C(1.0 - lr * coeff);
    decoupled = coeff != 0.0;
  }
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    using T = std::true_type;
    using F = std::false_type;
    const bool amsgrad = o.s[2] != nullptr;
    if (decoupled) amsgrad ? run(o, b, e, T{}, T{}) : run(o, b, e, T{}, F{});
    else amsgrad ? run(o, b, e, F{}, T{}) : run(o, b, e, F{}, F{});
  }
  // The options are template flags so that the loop has no branch and
  // vectorises (the operands never alias: each is its own tensor).
  template <typename Dc, typename Ams> void run(const Operands<P>& o, int64_t b, int64_t e, Dc, Ams) const {
    constexpr bool kDecoupled = Dc::value, kAmsgrad = Ams::value;
    P* __restrict pp = o.p;
    const P* __restrict gp = o.g;
    C* __restrict mp = o.s[0];
    C* __restrict vp = o.s[1];
    C* __restrict vm = o.s[2];
#pragma omp simd
    for (int64_t i = b; i < e; ++i) {
      C p = C(pp[i]);
      C g = dec(C(gp[i]), p);
      if constexpr (kDecoupled) p = p * decay;
      C mi = cb1 * mp[i] + (C(1) - cb1) * g;
      C vi = cb2 * vp[i] + (C(1) - cb2) * g * g;
      mp[i] = mi;
      vp[i] = vi;
      if constexpr (kAmsgrad) {
        vi = std::max(vm[i], vi);
        vm[i] = vi;
      }
      pp[i] = P(p - lr_t * mi / (std::sqrt(vi) + eps_t));
    }
  }
};

template <typename P> struct AdamaxRule {
  using C = state_t<P>;
  C lr_t, cb1, cb2, eps;
  Decay<C> dec;
  explicit AdamaxRule(const Attrs& a)
      : lr_t(C(a.f(0) / (1.0 - std::pow(a.f(1), double(a.i(4)))))), cb1(C(a.f(1))), cb2(C(a.f(2))), eps(C(a.f(3))),
        dec(a.f(5), a.f(6)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C *m = o.s[0], *u = o.s[1];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      C mi = cb1 * m[i] + (C(1) - cb1) * g;
      C ui = std::max(cb2 * u[i] + eps, std::abs(g));
      m[i] = mi;
      u[i] = ui;
      o.p[i] = P(p - lr_t * mi / ui);
    }
  }
};

template <typename P> struct AdagradRule {
  using C = state_t<P>;
  C lr, eps;
  Decay<C> dec;
  explicit AdagradRule(const Attrs& a) : lr(C(a.f(0))), eps(C(a.f(1))), dec(a.f(2), a.f(3)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C* acc = o.s[0];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      C h = acc[i] + g * g;
      acc[i] = h;
      o.p[i] = P(p - lr * g / (std::sqrt(h) + eps));
    }
  }
};

template <typename P> struct AdadeltaRule {
  using C = state_t<P>;
  C lr, rho, eps;
  Decay<C> dec;
  explicit AdadeltaRule(const Attrs& a) : lr(C(a.f(0))), rho(C(a.f(1))), eps(C(a.f(2))), dec(a.f(3), a.f(4)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C *eg2 = o.s[0], *edx2 = o.s[1];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      C sg = rho * eg2[i] + (C(1) - rho) * g * g;
      C upd = -std::sqrt((edx2[i] + eps) / (sg + eps)) * g;
      eg2[i] = sg;
      edx2[i] = rho * edx2[i] + (C(1) - rho) * upd * upd;
      o.p[i] = P(p + lr * upd);
    }
  }
};

template <typename P> struct RmspropRule {
  using C = state_t<P>;
  C lr, rho, eps, mom_c;
  Decay<C> dec;
  explicit RmspropRule(const Attrs& a)
      : lr(C(a.f(0))), rho(C(a.f(1))), eps(C(a.f(2))), mom_c(C(a.f(3))), dec(a.f(4), a.f(5)) {}
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C *ms = o.s[0], *mom = o.s[1], *mg = o.s[2];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      C msi = rho * ms[i] + (C(1) - rho) * g * g;
      ms[i] = msi;
      C denom;
      if (mg) {
        C mgi = rho * mg[i] + (C(1) - rho) * g;
        mg[i] = mgi;
        denom = std::sqrt(msi - mgi * mgi + eps);
      } else {
        denom = std::sqrt(msi + eps);
      }
      C mi = mom_c * mom[i] + lr * g / denom;
      mom[i] = mi;
      o.p[i] = P(p - mi);
    }
  }
};

template <typename P> struct NadamRule {
  using C = state_t<P>;
  C cb1, cb2, eps, lr, c_m, c_g, bc2;
  Decay<C> dec;
  explicit NadamRule(const Attrs& a) : dec(a.f(8), a.f(9)) {
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const double mu_t = a.f(5), mu_next = a.f(6), mu_prod = a.f(7);
    cb1 = C(b1);
    cb2 = C(b2);
    eps = C(a.f(3));
    lr = C(a.f(0));
    c_m = C(mu_next / (1.0 - mu_prod * mu_next));
    c_g = C((1.0 - mu_t) / (1.0 - mu_prod));
    bc2 = C(1.0 - std::pow(b2, t));
  }
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C *m = o.s[0], *v = o.s[1];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      const auto [mi, vi] = moments(m[i], v[i], g, cb1, cb2);
      C m_hat = c_m * mi + c_g * g;
      o.p[i] = P(p - lr * m_hat / (std::sqrt(vi / bc2) + eps));
    }
  }
};

// Rectified Adam: falls back to momentum SGD while rho_t <= 5.
template <typename P> struct RadamRule {
  using C = state_t<P>;
  C cb1, cb2, eps, lr_m, sbc2;
  bool rectify;
  Decay<C> dec;
  explicit RadamRule(const Attrs& a) : dec(a.f(5), a.f(6)) {
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const double r = ops::radam_rectification(b2, t);
    rectify = r > 0.0;
    cb1 = C(b1);
    cb2 = C(b2);
    eps = C(a.f(3));
    lr_m = C(a.f(0) / (1.0 - std::pow(b1, t)) * (rectify ? r : 1.0));
    sbc2 = C(std::sqrt(1.0 - std::pow(b2, t)));
  }
  void operator()(const Operands<P>& o, int64_t b, int64_t e) const {
    C *m = o.s[0], *v = o.s[1];
    for (int64_t i = b; i < e; ++i) {
      C p = C(o.p[i]);
      C g = dec(C(o.g[i]), p);
      const auto [mi, vi] = moments(m[i], v[i], g, cb1, cb2);
      o.p[i] = P(rectify ? p - lr_m * mi * sbc2 / (std::sqrt(vi) + eps) : p - lr_m * mi);
    }
  }
};

// One parameter: its elements split over the threads.
template <template <typename> class Rule> void single_kernel(std::span<const Tensor> in, std::span<Tensor>,
                                                             const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    const Operands<P> o(in);
    const Rule<P> rule(a);
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) { rule(o, b, e); });
  });
}

// Note [multi-tensor updates]
// With one op per parameter, an optimizer step over a model of many small
// parameters (biases, norm weights) pays, per parameter, a Python call, a
// dispatch and the start of a parallel region (or runs a small parameter on
// one thread), for a few hundred elements of work. The merged
// ops take the operands of many parameters that share dtype, device and
// hyperparameters, laid out [p0, g0, states0..., p1, g1, states1..., ...]
// with the number of states as their last attribute, and walk them in ONE
// parallel region: the parameters are seen as one array, the concatenation
// of their elements, and parallel_for splits that array by element count, so
// each thread gets an equal share whether it falls inside a large tensor or
// spans fifty small ones. Each thread finds the parameter where its share
// starts and runs the rule over (parameter, element range) pieces. The rule
// is the single-tensor kernel's and -ffp-contract=off keeps vector and scalar
// loops alike, so where a range is cut does not change a bit of the result.
template <template <typename> class Rule> void merged_kernel(std::span<const Tensor> in, std::span<Tensor>,
                                                             const Attrs& a) {
  const size_t per = 2 + size_t(a.i(a.size() - 1));
  const size_t n_params = in.size() / per;
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    std::vector<Operands<P>> ops;
    std::vector<int64_t> start{0};  // start[k]: the first element of ops[k] in the concatenation
    ops.reserve(n_params);
    start.reserve(n_params + 1);
    for (size_t k = 0; k < n_params; ++k) {
      Operands<P> o(in.subspan(k * per, per));
      if (o.n == 0) continue;
      ops.push_back(o);
      start.push_back(start.back() + o.n);
    }
    const Rule<P> rule(a);
    parallel_for(start.back(), kGrain, [&](int64_t b, int64_t e) {
      size_t k = size_t(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
      for (; b < e; ++k) {
        const int64_t hi = std::min(e, start[k + 1]);
        rule(ops[k], b - start[k], hi - start[k]);
        b = hi;
      }
    });
  });
}

// Two passes: the first updates the moments and writes the update direction
// r into a scratch buffer while the norms of p and r accumulate per chunk;
// the second applies the trust ratio.
void lamb_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const C cb1 = C(b1), cb2 = C(b2), eps = C(a.f(3)), wd = C(a.f(5));
    const C bc1 = C(1.0 - std::pow(b1, t)), bc2 = C(1.0 - std::pow(b2, t));
    const bool adapt = a.f(5) != 0.0 || a.b(6);
    const Decay<C> dec(a.f(7), a.f(8));
    C *m = o.s[0], *v = o.s[1];
    std::vector<C> r(size_t(o.n));
    constexpr int64_t kChunk = 16384;
    const int64_t nchunks = (o.n + kChunk - 1) / kChunk;
    std::vector<double> pn(size_t(nchunks), 0.0), rn(size_t(nchunks), 0.0);
    parallel_for(nchunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        double ps = 0, rs = 0;
        for (int64_t i = c * kChunk, e = std::min(o.n, (c + 1) * kChunk); i < e; ++i) {
          C p = C(o.p[i]);
          C g = dec(C(o.g[i]), p);
          const auto [mi, vi] = moments(m[i], v[i], g, cb1, cb2);
          C ri = (mi / bc1) / (std::sqrt(vi / bc2) + eps) + wd * p;
          r[size_t(i)] = ri;
          ps += double(p) * double(p);
          rs += double(ri) * double(ri);
        }
        pn[size_t(c)] = ps;
        rn[size_t(c)] = rs;
      }
    });
    double psum = 0, rsum = 0;
    for (int64_t c = 0; c < nchunks; ++c) { psum += pn[size_t(c)]; rsum += rn[size_t(c)]; }
    const double p_norm = std::sqrt(psum), r_norm = std::sqrt(rsum);
    const double trust = adapt && p_norm > 0 && r_norm > 0 ? p_norm / r_norm : 1.0;
    const C step = C(a.f(0) * trust);
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o.p[i] = P(C(o.p[i]) - step * r[size_t(i)]);
    });
  });
}

// The single-tensor op and its merged form of each update with a rule.
#define OAR_UPDATE_KERNELS(op, Rule)                                                                   \
  KernelRegistrar r_##op(#op "_", DeviceType::CPU, OAR_FLOAT_DTYPES, single_kernel<Rule>);            \
  KernelRegistrar r_merged_##op("merged_" #op "_", DeviceType::CPU, OAR_FLOAT_DTYPES, merged_kernel<Rule>)
OAR_UPDATE_KERNELS(sgd, SgdRule);
OAR_UPDATE_KERNELS(momentum, MomentumRule);
OAR_UPDATE_KERNELS(adam, AdamRule);
OAR_UPDATE_KERNELS(adamax, AdamaxRule);
OAR_UPDATE_KERNELS(adagrad, AdagradRule);
OAR_UPDATE_KERNELS(adadelta, AdadeltaRule);
OAR_UPDATE_KERNELS(rmsprop, RmspropRule);
OAR_UPDATE_KERNELS(nadam, NadamRule);
OAR_UPDATE_KERNELS(radam, RadamRule);
#undef OAR_UPDATE_KERNELS
KernelRegistrar r_lamb("lamb_", DeviceType::CPU, OAR_FLOAT_DTYPES, lamb_kernel);

}  // namespace
}  // namespace oar::cpu

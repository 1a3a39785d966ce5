// Fused optimizer updates (ops/optimizer.h): one pass over parameter,
// gradient and state per step. Operands are contiguous and validated by
// infer_meta. Half-precision parameters keep float32 state and are computed
// in float32; float64 parameters in float64.
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"

namespace oar::cpu {
namespace {

constexpr int64_t kGrain = 8192;  // the per-element work is a dozen flops

template <typename P> using state_t = compute_t<P>;  // float for half types, else P

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

void sgd_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const C lr = C(a.f(0));
    const Decay<C> dec(a.f(1), a.f(2));
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        o.p[i] = P(p - lr * dec(C(o.g[i]), p));
      }
    });
  });
}

void momentum_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const C lr = C(a.f(0)), mu = C(a.f(1));
    const bool nesterov = a.b(2);
    const Decay<C> dec(a.f(3), a.f(4));
    C* vel = o.s[0];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C v = mu * vel[i] + g;
        vel[i] = v;
        o.p[i] = P(nesterov ? p - (g + mu * v) * lr : p - lr * v);
      }
    });
  });
}

void adam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const double lr = a.f(0), b1 = a.f(1), b2 = a.f(2), eps = a.f(3), coeff = a.f(5);
    const double t = double(a.i(4));
    const double bc1 = 1.0 - std::pow(b1, t), bc2 = std::sqrt(1.0 - std::pow(b2, t));
    const C lr_t = C(lr * bc2 / bc1), eps_t = C(eps * bc2);
    const C cb1 = C(b1), cb2 = C(b2), decay = C(1.0 - lr * coeff);
    const bool decoupled = coeff != 0.0;
    const Decay<C> dec(a.f(6), a.f(7));
    C *m = o.s[0], *v = o.s[1], *vmax = o.s[2];
    // The options are template flags so that the loop has no branch and
    // vectorises (the operands never alias: infer_meta checks them).
    auto run = [&](auto decoupled_c, auto amsgrad_c) {
      constexpr bool kDecoupled = decltype(decoupled_c)::value, kAmsgrad = decltype(amsgrad_c)::value;
      parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
        P* __restrict pp = o.p;
        const P* __restrict gp = o.g;
        C* __restrict mp = m;
        C* __restrict vp = v;
        C* __restrict vm = vmax;
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
      });
    };
    using T = std::true_type;
    using F = std::false_type;
    if (decoupled) vmax ? run(T{}, T{}) : run(T{}, F{});
    else vmax ? run(F{}, T{}) : run(F{}, F{});
  });
}

void adamax_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const double b1 = a.f(1);
    const C lr_t = C(a.f(0) / (1.0 - std::pow(b1, double(a.i(4)))));
    const C cb1 = C(b1), cb2 = C(a.f(2)), eps = C(a.f(3));
    const Decay<C> dec(a.f(5), a.f(6));
    C *m = o.s[0], *u = o.s[1];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C mi = cb1 * m[i] + (C(1) - cb1) * g;
        C ui = std::max(cb2 * u[i] + eps, std::abs(g));
        m[i] = mi;
        u[i] = ui;
        o.p[i] = P(p - lr_t * mi / ui);
      }
    });
  });
}

void adagrad_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const C lr = C(a.f(0)), eps = C(a.f(1));
    const Decay<C> dec(a.f(2), a.f(3));
    C* acc = o.s[0];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C h = acc[i] + g * g;
        acc[i] = h;
        o.p[i] = P(p - lr * g / (std::sqrt(h) + eps));
      }
    });
  });
}

void adadelta_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const C lr = C(a.f(0)), rho = C(a.f(1)), eps = C(a.f(2));
    const Decay<C> dec(a.f(3), a.f(4));
    C *eg2 = o.s[0], *edx2 = o.s[1];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C sg = rho * eg2[i] + (C(1) - rho) * g * g;
        C upd = -std::sqrt((edx2[i] + eps) / (sg + eps)) * g;
        eg2[i] = sg;
        edx2[i] = rho * edx2[i] + (C(1) - rho) * upd * upd;
        o.p[i] = P(p + lr * upd);
      }
    });
  });
}

void rmsprop_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const C lr = C(a.f(0)), rho = C(a.f(1)), eps = C(a.f(2)), mom_c = C(a.f(3));
    const Decay<C> dec(a.f(4), a.f(5));
    C *ms = o.s[0], *mom = o.s[1], *mg = o.s[2];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
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
          C mi = cb1 * m[i] + (C(1) - cb1) * g;
          C vi = cb2 * v[i] + (C(1) - cb2) * g * g;
          m[i] = mi;
          v[i] = vi;
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

void nadam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const double mu_t = a.f(5), mu_next = a.f(6), mu_prod = a.f(7);
    const C cb1 = C(b1), cb2 = C(b2), eps = C(a.f(3)), lr = C(a.f(0));
    const C c_m = C(mu_next / (1.0 - mu_prod * mu_next)), c_g = C((1.0 - mu_t) / (1.0 - mu_prod));
    const C bc2 = C(1.0 - std::pow(b2, t));
    const Decay<C> dec(a.f(8), a.f(9));
    C *m = o.s[0], *v = o.s[1];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C mi = cb1 * m[i] + (C(1) - cb1) * g;
        C vi = cb2 * v[i] + (C(1) - cb2) * g * g;
        m[i] = mi;
        v[i] = vi;
        C m_hat = c_m * mi + c_g * g;
        o.p[i] = P(p - lr * m_hat / (std::sqrt(vi / bc2) + eps));
      }
    });
  });
}

void radam_kernel(std::span<const Tensor> in, std::span<Tensor>, const Attrs& a) {
  for_dtype(in, [&](auto tag) {
    using P = decltype(tag);
    using C = state_t<P>;
    Operands<P> o(in);
    const double b1 = a.f(1), b2 = a.f(2), t = double(a.i(4));
    const double b2t = std::pow(b2, t);
    const double rho_inf = 2.0 / (1.0 - b2) - 1.0;
    const double rho_t = rho_inf - 2.0 * t * b2t / (1.0 - b2t);
    const bool rectify = rho_t > 5.0;
    const double rect = rectify ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                                : 1.0;
    const C cb1 = C(b1), cb2 = C(b2), eps = C(a.f(3));
    const C lr_m = C(a.f(0) / (1.0 - std::pow(b1, t)) * rect), sbc2 = C(std::sqrt(1.0 - b2t));
    const Decay<C> dec(a.f(5), a.f(6));
    C *m = o.s[0], *v = o.s[1];
    parallel_for(o.n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        C p = C(o.p[i]);
        C g = dec(C(o.g[i]), p);
        C mi = cb1 * m[i] + (C(1) - cb1) * g;
        C vi = cb2 * v[i] + (C(1) - cb2) * g * g;
        m[i] = mi;
        v[i] = vi;
        o.p[i] = P(rectify ? p - lr_m * mi * sbc2 / (std::sqrt(vi) + eps) : p - lr_m * mi);
      }
    });
  });
}

KernelRegistrar r_sgd("sgd_", DeviceType::CPU, OAR_FLOAT_DTYPES, sgd_kernel);
KernelRegistrar r_momentum("momentum_", DeviceType::CPU, OAR_FLOAT_DTYPES, momentum_kernel);
KernelRegistrar r_adam("adam_", DeviceType::CPU, OAR_FLOAT_DTYPES, adam_kernel);
KernelRegistrar r_adamax("adamax_", DeviceType::CPU, OAR_FLOAT_DTYPES, adamax_kernel);
KernelRegistrar r_adagrad("adagrad_", DeviceType::CPU, OAR_FLOAT_DTYPES, adagrad_kernel);
KernelRegistrar r_adadelta("adadelta_", DeviceType::CPU, OAR_FLOAT_DTYPES, adadelta_kernel);
KernelRegistrar r_rmsprop("rmsprop_", DeviceType::CPU, OAR_FLOAT_DTYPES, rmsprop_kernel);
KernelRegistrar r_lamb("lamb_", DeviceType::CPU, OAR_FLOAT_DTYPES, lamb_kernel);
KernelRegistrar r_nadam("nadam_", DeviceType::CPU, OAR_FLOAT_DTYPES, nadam_kernel);
KernelRegistrar r_radam("radam_", DeviceType::CPU, OAR_FLOAT_DTYPES, radam_kernel);

}  // namespace
}  // namespace oar::cpu

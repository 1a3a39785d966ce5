// The vector bodies of vmath, written once over an ISA traits struct I with
//   V (register type), S (scalar), W (lanes), load/store/set1, add/sub/mul/div,
//   and the SLEEF functions exp/expm1/log/log1p/sin/cos/tanh/erf.
// Included only by vmath_<isa>.cpp, each compiled with its target flags.
// Everything here has internal linkage so that no code compiled for one ISA
// can be picked by the linker for another (no standard headers either: their
// inline functions would be emitted with the wider instruction set).
#pragma once
#include <cstdint>

#include "kernels/cpu/vmath.h"

namespace oar::cpu::vmath {
namespace {

// float32 erf, cheaper than SLEEF's 1-ulp version and within 3 ulp: an odd
// Taylor polynomial below |x| = 0.5 (truncation error < 2e-8 relative), and
// above it erf = 1 - t·P(t)·exp(-x²) with t = 1/(1 + p|x|) (Abramowitz &
// Stegun 7.1.26, absolute error < 1.5e-7 where erf > 0.52).
template <class I> typename I::V erf_f32(typename I::V x) {
  using V = typename I::V;
  V a = I::abs(x);
  V x2 = I::mul(x, x);
  // Taylor: erf(x) = 2/sqrt(pi) * sum_k (-1)^k x^(2k+1) / (k! (2k+1)), k <= 5
  // (the next term is below 1e-9 for |x| < 0.5).
  V p = I::set1(-8.548327023450853e-04f);
  p = I::fma(p, x2, I::set1(5.223977625442188e-03f));
  p = I::fma(p, x2, I::set1(-2.6866170645131252e-02f));
  p = I::fma(p, x2, I::set1(1.1283791670955128e-01f));
  p = I::fma(p, x2, I::set1(-3.7612638903183754e-01f));
  p = I::fma(p, x2, I::set1(1.1283791670955126e+00f));
  V small = I::mul(x, p);
  // erf is 1 in float beyond 10; clamping keeps the reciprocal finite at inf
  // (NaN passes through: the comparison is false for it).
  V ac = I::select_lt(I::set1(10.0f), a, I::set1(10.0f), a);
  V t = I::recip(I::fma(I::set1(0.3275911f), ac, I::set1(1.0f)));
  V q = I::set1(1.061405429f);
  q = I::fma(q, t, I::set1(-1.453152027f));
  q = I::fma(q, t, I::set1(1.421413741f));
  q = I::fma(q, t, I::set1(-0.284496736f));
  q = I::fma(q, t, I::set1(0.254829592f));
  q = I::mul(q, t);
  V e = I::exp(I::sub(I::set1(0.0f), x2));
  V large = I::copysign(I::sub(I::set1(1.0f), I::mul(q, e)), x);
  return I::select_lt(a, I::set1(0.5f), small, large);
}

template <class I> struct Ops {
  using V = typename I::V;
  using S = typename I::S;
  static V exp(V x) { return I::exp(x); }
  static V expm1(V x) { return I::expm1(x); }
  static V log(V x) { return I::log(x); }
  static V log1p(V x) { return I::log1p(x); }
  static V sin(V x) { return I::sin(x); }
  static V cos(V x) { return I::cos(x); }
  static V tanh(V x) { return I::tanh(x); }
  static V erf(V x) { return I::erf(x); }
  // exp(-x) overflows to inf for x < -88 (float): 1 / inf = 0, the right limit.
  static V sigmoid(V x) {
    V one = I::set1(S(1));
    return I::div(one, I::add(one, I::exp(I::sub(I::set1(S(0)), x))));
  }
  static V silu(V x) { return I::mul(x, sigmoid(x)); }
  static V gelu(V x) {
    V half = I::set1(S(0.5));
    V t = I::erf(I::mul(x, I::set1(S(0.70710678118654752440))));
    return I::mul(I::mul(half, x), I::add(I::set1(S(1)), t));
  }
  // Phi(x) + x phi(x)
  static V gelu_deriv(V x) {
    V cdf = I::mul(I::set1(S(0.5)), I::add(I::set1(S(1)), I::erf(I::mul(x, I::set1(S(0.70710678118654752440))))));
    V pdf = I::mul(I::set1(S(0.39894228040143267794)), I::exp(I::mul(I::set1(S(-0.5)), I::mul(x, x))));
    return I::add(cdf, I::mul(x, pdf));
  }
  // (1 + t)/2 + x/2 (1 - t^2) u', t = tanh(u), u = k (x + c x^3)
  static V gelu_tanh_deriv(V x) {
    V x2 = I::mul(x, x);
    V k = I::set1(S(0.79788456080286535588)), c = I::set1(S(0.044715));
    V t = I::tanh(I::mul(k, I::add(x, I::mul(c, I::mul(x2, x)))));
    V du = I::mul(k, I::add(I::set1(S(1)), I::mul(I::set1(S(3 * 0.044715)), x2)));
    V one = I::set1(S(1)), half = I::set1(S(0.5));
    return I::add(I::mul(half, I::add(one, t)), I::mul(I::mul(half, x), I::mul(I::sub(one, I::mul(t, t)), du)));
  }
  static V gelu_tanh(V x) {
    V x3 = I::mul(I::mul(x, x), x);
    V u = I::mul(I::set1(S(0.79788456080286535588)), I::add(x, I::mul(I::set1(S(0.044715)), x3)));
    return I::mul(I::mul(I::set1(S(0.5)), x), I::add(I::set1(S(1)), I::tanh(u)));
  }
};

// Full vectors, then the tail through a zero-padded register-sized buffer.
template <class I, typename I::V (*F)(typename I::V)>
void run(const typename I::S* x, typename I::S* y, int64_t n) {
  int64_t i = 0;
  for (; i + I::W <= n; i += I::W) I::store(y + i, F(I::load(x + i)));
  if (i < n) {
    alignas(64) typename I::S buf[I::W] = {};
    for (int64_t k = 0; i + k < n; ++k) buf[k] = x[i + k];
    I::store(buf, F(I::load(buf)));
    for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
  }
}

template <class I, class Fp> void fill(Fp (&t)[kNumFns]) {
  using O = Ops<I>;
  t[int(Fn::Exp)] = run<I, O::exp>;
  t[int(Fn::Expm1)] = run<I, O::expm1>;
  t[int(Fn::Log)] = run<I, O::log>;
  t[int(Fn::Log1p)] = run<I, O::log1p>;
  t[int(Fn::Sin)] = run<I, O::sin>;
  t[int(Fn::Cos)] = run<I, O::cos>;
  t[int(Fn::Tanh)] = run<I, O::tanh>;
  t[int(Fn::Erf)] = run<I, O::erf>;
  t[int(Fn::Sigmoid)] = run<I, O::sigmoid>;
  t[int(Fn::Silu)] = run<I, O::silu>;
  t[int(Fn::Gelu)] = run<I, O::gelu>;
  t[int(Fn::GeluTanh)] = run<I, O::gelu_tanh>;
  t[int(Fn::GeluDeriv)] = run<I, O::gelu_deriv>;
  t[int(Fn::GeluTanhDeriv)] = run<I, O::gelu_tanh_deriv>;
}

template <class F32Isa, class F64Isa> Table make_table(const char* name) {
  Table t{};
  fill<F32Isa>(t.f32);
  fill<F64Isa>(t.f64);
  t.isa = name;
  return t;
}

}  // namespace
}  // namespace oar::cpu::vmath

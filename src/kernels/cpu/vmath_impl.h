// The vector bodies of vmath, written once over an ISA traits struct I with
//   V (register type), S (scalar), W (lanes), load/store/set1, add/sub/mul/div,
//   and the SLEEF functions exp/expm1/log/log1p/sin/cos/tanh/erf.
// Included only by vmath_<isa>.cpp, each compiled with its target flags.
// Everything here has internal linkage so that no code compiled for one ISA
// can be picked by the linker for another (no standard headers either: their
// inline functions would be emitted with the wider instruction set).
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/cpu/vmath.h"

namespace oar::cpu::vmath {
namespace {

// float32 erf pieces, cheaper than SLEEF's 1-ulp erf and within 3 ulp: an
// odd Taylor polynomial below |z| = 0.5 (truncation error < 2e-8 relative),
// and above it erfc(|z|) = t·P(t)·exp(-z²) with t = 1/(1 + p|z|) (Abramowitz
// & Stegun 7.1.26, absolute error < 1.5e-7). Returns erf(z) for |z| < 0.5 in
// `small`, erfc(|z|) in `tail` and exp(-z²) in `e` (the normal density and
// the gelu derivative reuse it).
template <class I> struct ErfParts {
  using V = typename I::V;
  V small, tail, e;
  explicit ErfParts(V z) {
    V z2 = I::mul(z, z);
    // Taylor: erf(z) = 2/sqrt(pi) * sum_k (-1)^k z^(2k+1) / (k! (2k+1)), k <= 5
    // (the next term is below 1e-9 for |z| < 0.5).
    V p = I::set1(-8.548327023450853e-04f);
    p = I::fma(p, z2, I::set1(5.223977625442188e-03f));
    p = I::fma(p, z2, I::set1(-2.6866170645131252e-02f));
    p = I::fma(p, z2, I::set1(1.1283791670955128e-01f));
    p = I::fma(p, z2, I::set1(-3.7612638903183754e-01f));
    p = I::fma(p, z2, I::set1(1.1283791670955126e+00f));
    small = I::mul(z, p);
    // erfc is 0 in float beyond 10; clamping keeps the reciprocal finite at
    // inf (NaN passes through: the comparison is false for it).
    V a = I::abs(z);
    V ac = I::select_lt(I::set1(10.0f), a, I::set1(10.0f), a);
    V t = I::recip(I::fma(I::set1(0.3275911f), ac, I::set1(1.0f)));
    V q = I::set1(1.061405429f);
    q = I::fma(q, t, I::set1(-1.453152027f));
    q = I::fma(q, t, I::set1(1.421413741f));
    q = I::fma(q, t, I::set1(-0.284496736f));
    q = I::fma(q, t, I::set1(0.254829592f));
    e = I::exp(I::sub(I::set1(0.0f), z2));
    tail = I::mul(I::mul(q, t), e);
  }
  V erf(V z) const {
    V large = I::copysign(I::sub(I::set1(1.0f), tail), z);
    return I::select_lt(I::abs(z), I::set1(0.5f), small, large);
  }
  // Phi(x) for z = x/sqrt(2): 0.5 (1 + erf z), with the negative tail taken
  // as 0.5 erfc|z| directly so that it keeps its relative accuracy.
  V normal_cdf(V z) const {
    V half = I::set1(0.5f);
    V mid = I::fma(half, small, half);
    V ht = I::mul(half, tail);
    V lo_hi = I::select_lt(z, I::set1(0.0f), ht, I::sub(I::set1(1.0f), ht));
    return I::select_lt(I::abs(z), half, mid, lo_hi);
  }
};
template <class I> typename I::V erf_f32(typename I::V x) { return ErfParts<I>(x).erf(x); }

// Phi(x) = 0.5 (1 + erf(x/sqrt 2)) for gelu, with erf(z) = z P(z²)/Q(z²) on
// |z| <= 3.92 (beyond it erf rounds to ±1 in float): a (5, 5) rational fit,
// relative error 4e-7 in float arithmetic and half the work of ErfParts. Its
// error is absolute near Phi = 0 (about 2e-7), like 1 + erf computed directly.
template <class I> typename I::V normal_cdf_fast_f32(typename I::V x) {
  using V = typename I::V;
  V z = I::mul(x, I::set1(0.70710678118654752440f));
  z = I::max(I::set1(-3.92f), I::min(I::set1(3.92f), z));
  V s = I::mul(z, z);
  V p = I::set1(2.15824343e-06f);
  p = I::fma(p, s, I::set1(0.0002847547f));
  p = I::fma(p, s, I::set1(0.00354361697f));
  p = I::fma(p, s, I::set1(0.0520761013f));
  p = I::fma(p, s, I::set1(0.184581652f));
  p = I::fma(p, s, I::set1(1.12837911f));
  V q = I::set1(3.9206232e-05f);
  q = I::fma(q, s, I::set1(0.00111785182f));
  q = I::fma(q, s, I::set1(0.0145192826f));
  q = I::fma(q, s, I::set1(0.111790702f));
  q = I::fma(q, s, I::set1(0.496914297f));
  q = I::fma(q, s, I::set1(1.0f));
  V half = I::set1(0.5f);
  V cdf = I::fma(I::mul(half, z), I::mul(p, I::recip(q)), half);
  return I::max(I::set1(0.0f), cdf);
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
  // x Phi(x); the traits give Phi (and exp(-x^2/2) for the derivative).
  static V gelu(V x) { return I::mul(x, I::normal_cdf_fast(x)); }
  // Phi(x) + x phi(x)
  static V gelu_deriv(V x) {
    V pdf = I::mul(I::set1(S(0.39894228040143267794)), I::exp(I::mul(I::set1(S(-0.5)), I::mul(x, x))));
    return I::fma(x, pdf, I::normal_cdf_fast(x));
  }
  // The tanh form through 0.5 (1 + tanh u) = sigmoid(2u), which keeps its
  // relative accuracy in both tails: gelu = x s, gelu' = s + 2 x s (1 - s) u',
  // u = k (x + c x^3).
  static V gelu_tanh_sigmoid(V x, V x2) {
    V k2 = I::set1(S(2 * 0.79788456080286535588)), c = I::set1(S(0.044715));
    return sigmoid(I::mul(k2, I::mul(x, I::add(I::set1(S(1)), I::mul(c, x2)))));
  }
  static V gelu_tanh(V x) { return I::mul(x, gelu_tanh_sigmoid(x, I::mul(x, x))); }
  static V gelu_tanh_deriv(V x) {
    V x2 = I::mul(x, x);
    V sg = gelu_tanh_sigmoid(x, x2);
    V du2 = I::mul(I::set1(S(2 * 0.79788456080286535588)), I::add(I::set1(S(1)), I::mul(I::set1(S(3 * 0.044715)), x2)));
    return I::add(sg, I::mul(I::mul(x, du2), I::mul(sg, I::sub(I::set1(S(1)), sg))));
  }
};

// Full vectors, then the tail through a zero-padded register-sized buffer.
template <class I> void tail(const typename I::S* x, typename I::S* y, int64_t n, typename I::V (*f)(typename I::V)) {
  alignas(64) typename I::S buf[I::W] = {};
  for (int64_t k = 0; k < n; ++k) buf[k] = x[k];
  I::store(buf, f(I::load(buf)));
  for (int64_t k = 0; k < n; ++k) y[k] = buf[k];
}
// Full vectors from i on, stored by `st`; returns where the tail starts. Four
// independent vectors per step: one vector's dependency chain through F is
// long, and the next ones' loads and arithmetic overlap it (gelu and exp on
// data far larger than the caches went from 0.9x to 1.1x of a plain copy's
// bandwidth).
template <class I, typename I::V (*F)(typename I::V), class Store>
int64_t vectors(const typename I::S* x, typename I::S* y, int64_t i, int64_t n, Store st) {
  using V = typename I::V;
  for (; i + 4 * I::W <= n; i += 4 * I::W) {
    V a = F(I::load(x + i)), b = F(I::load(x + i + I::W));
    V c = F(I::load(x + i + 2 * I::W)), d = F(I::load(x + i + 3 * I::W));
    st(y + i, a);
    st(y + i + I::W, b);
    st(y + i + 2 * I::W, c);
    st(y + i + 3 * I::W, d);
  }
  for (; i + I::W <= n; i += I::W) st(y + i, F(I::load(x + i)));
  return i;
}
template <class I, typename I::V (*F)(typename I::V)>
void run(const typename I::S* x, typename I::S* y, int64_t n) {
  int64_t i = vectors<I, F>(x, y, 0, n, [](typename I::S* p, typename I::V v) { I::store(p, v); });
  if (i < n) tail<I>(x + i, y + i, n - i, F);
}
// The same with streaming stores for outputs far larger than the caches:
// the output lines are written without being read first, which saves a third
// of the memory traffic. y is brought to vector alignment by a short head.
template <class I, typename I::V (*F)(typename I::V)>
void run_stream(const typename I::S* x, typename I::S* y, int64_t n) {
  using S = typename I::S;
  constexpr uintptr_t kAlign = sizeof(S) * I::W;
  int64_t head = int64_t(((kAlign - reinterpret_cast<uintptr_t>(y) % kAlign) % kAlign) / sizeof(S));
  if (reinterpret_cast<uintptr_t>(y) % sizeof(S) != 0 || head >= n) return run<I, F>(x, y, n);
  if (head) tail<I>(x, y, head, F);
  int64_t i = vectors<I, F>(x, y, head, n, [](S* p, typename I::V v) { I::stream(p, v); });
  I::fence();
  if (i < n) tail<I>(x + i, y + i, n - i, F);
}

// Bytes moved through vector registers (moves are bit-exact whatever the
// data), the aligned middle of dst written with streaming stores.
template <class I> void copy_stream(const void* src, void* dst, int64_t bytes) {
  using S = typename I::S;
  constexpr int64_t kVec = int64_t(sizeof(S)) * I::W;
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  const int64_t head = int64_t((uintptr_t(kVec) - reinterpret_cast<uintptr_t>(d) % uintptr_t(kVec)) % uintptr_t(kVec));
  if (head + kVec > bytes) {
    std::memcpy(d, s, size_t(bytes));
    return;
  }
  std::memcpy(d, s, size_t(head));
  int64_t i = head;
  for (; i + kVec <= bytes; i += kVec) I::stream(reinterpret_cast<S*>(d + i), I::load(reinterpret_cast<const S*>(s + i)));
  I::fence();
  std::memcpy(d + i, s + i, size_t(bytes - i));
}

template <class I, template <class, typename I::V (*)(typename I::V)> class R, class Fp>
void fill(Fp (&t)[kNumFns]) {
  using O = Ops<I>;
  t[int(Fn::Exp)] = R<I, O::exp>::f;
  t[int(Fn::Expm1)] = R<I, O::expm1>::f;
  t[int(Fn::Log)] = R<I, O::log>::f;
  t[int(Fn::Log1p)] = R<I, O::log1p>::f;
  t[int(Fn::Sin)] = R<I, O::sin>::f;
  t[int(Fn::Cos)] = R<I, O::cos>::f;
  t[int(Fn::Tanh)] = R<I, O::tanh>::f;
  t[int(Fn::Erf)] = R<I, O::erf>::f;
  t[int(Fn::Sigmoid)] = R<I, O::sigmoid>::f;
  t[int(Fn::Silu)] = R<I, O::silu>::f;
  t[int(Fn::Gelu)] = R<I, O::gelu>::f;
  t[int(Fn::GeluTanh)] = R<I, O::gelu_tanh>::f;
  t[int(Fn::GeluDeriv)] = R<I, O::gelu_deriv>::f;
  t[int(Fn::GeluTanhDeriv)] = R<I, O::gelu_tanh_deriv>::f;
}
template <class I, typename I::V (*F)(typename I::V)> struct Run {
  static constexpr auto f = run<I, F>;
};
template <class I, typename I::V (*F)(typename I::V)> struct RunStream {
  static constexpr auto f = run_stream<I, F>;
};

template <class F32Isa, class F64Isa> Table make_table(const char* name) {
  Table t{};
  fill<F32Isa, Run>(t.f32);
  fill<F64Isa, Run>(t.f64);
  fill<F32Isa, RunStream>(t.f32_stream);
  fill<F64Isa, RunStream>(t.f64_stream);
  t.copy_stream = copy_stream<F32Isa>;
  t.isa = name;
  return t;
}

}  // namespace
}  // namespace oar::cpu::vmath

// Kernels of the unary elementwise ops (definitions: ops/unary.cpp).
#include <cmath>
#include <string_view>
#include <utility>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/special.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

template <typename C> inline C sign_of(C x) {
  if constexpr (is_complex_v<C>) {
    auto r = std::abs(x);
    return r == 0 ? C(0) : x / r;
  } else if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) {
    return C(x != 0);
  } else {
    return C((C(0) < x) - (x < C(0)));
  }
}

template <typename C> inline C conj_of(C x) {
  if constexpr (is_complex_v<C>) return std::conj(x);
  else return x;
}

template <typename C> inline auto abs_of(C x) {
  if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) return x;
  else if constexpr (std::is_integral_v<C>) return x < 0 ? C(-x) : x;
  else return std::abs(x);
}

// The ops with a dense vectorised path (vmath); the others use the iterator only.
constexpr int vec_fn(std::string_view op) {
  constexpr std::pair<std::string_view, vmath::Fn> kVec[] = {
      {"exp", vmath::Fn::Exp},     {"expm1", vmath::Fn::Expm1}, {"log", vmath::Fn::Log},
      {"log1p", vmath::Fn::Log1p}, {"sin", vmath::Fn::Sin},     {"cos", vmath::Fn::Cos},
      {"tanh", vmath::Fn::Tanh},   {"erf", vmath::Fn::Erf},     {"sigmoid", vmath::Fn::Sigmoid}};
  for (const auto& [name, fn] : kVec)
    if (name == op) return int(fn);
  return -1;
}

#define OAR_UNARY_KERNEL(NAME, VISIT, DTYPES, EXPR)                                         \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {    \
    if constexpr (vec_fn(#NAME) >= 0)                                                       \
      if (vmath::apply(vmath::Fn(vec_fn(#NAME)), in[0], out[0])) return;                    \
    VISIT(in[0].dtype(), [&](auto tag) {                                                    \
      using T = decltype(tag);                                                              \
      using C = compute_t<T>;                                                               \
      elementwise<T, T>(out[0], [](C x) -> C { return EXPR; }, in[0]);                      \
    });                                                                                     \
  }                                                                                         \
  KernelRegistrar NAME##_reg(#NAME, DeviceType::CPU, DTYPES, NAME##_kernel);

#define OAR_UNARY_TO(NAME, VISIT, DTYPES, OUT, EXPR)                                        \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {    \
    VISIT(in[0].dtype(), [&](auto tag) {                                                    \
      using T = decltype(tag);                                                              \
      using C = compute_t<T>;                                                               \
      using O = OUT;                                                                        \
      elementwise<O, T>(out[0], [](C x) { return EXPR; }, in[0]);                           \
    });                                                                                     \
  }                                                                                         \
  KernelRegistrar NAME##_reg(#NAME, DeviceType::CPU, DTYPES, NAME##_kernel);

template <typename T> struct real_of { using type = T; };
template <> struct real_of<complex64> { using type = float; };
template <> struct real_of<complex128> { using type = double; };
template <typename T> using real_t = typename real_of<T>::type;

OAR_UNARY_KERNEL(neg, visit_numeric, OAR_NUMERIC_DTYPES, C(-x))
OAR_UNARY_KERNEL(sign, visit_numeric, OAR_NUMERIC_DTYPES, sign_of(x))
OAR_UNARY_KERNEL(square, visit_numeric, OAR_NUMERIC_DTYPES, C(x * x))
OAR_UNARY_KERNEL(conj, visit_inexact, OAR_COMPLEX_DTYPES, conj_of(x))
OAR_UNARY_KERNEL(exp, visit_inexact, OAR_INEXACT_DTYPES, std::exp(x))
OAR_UNARY_KERNEL(log, visit_inexact, OAR_INEXACT_DTYPES, std::log(x))
OAR_UNARY_KERNEL(log10, visit_inexact, OAR_INEXACT_DTYPES, std::log10(x))
OAR_UNARY_KERNEL(sqrt, visit_inexact, OAR_INEXACT_DTYPES, std::sqrt(x))
OAR_UNARY_KERNEL(rsqrt, visit_inexact, OAR_INEXACT_DTYPES, C(1) / std::sqrt(x))
OAR_UNARY_KERNEL(reciprocal, visit_inexact, OAR_INEXACT_DTYPES, C(1) / x)
OAR_UNARY_KERNEL(sin, visit_inexact, OAR_INEXACT_DTYPES, std::sin(x))
OAR_UNARY_KERNEL(cos, visit_inexact, OAR_INEXACT_DTYPES, std::cos(x))
OAR_UNARY_KERNEL(tan, visit_inexact, OAR_INEXACT_DTYPES, std::tan(x))
OAR_UNARY_KERNEL(asin, visit_inexact, OAR_INEXACT_DTYPES, std::asin(x))
OAR_UNARY_KERNEL(acos, visit_inexact, OAR_INEXACT_DTYPES, std::acos(x))
OAR_UNARY_KERNEL(atan, visit_inexact, OAR_INEXACT_DTYPES, std::atan(x))
OAR_UNARY_KERNEL(sinh, visit_inexact, OAR_INEXACT_DTYPES, std::sinh(x))
OAR_UNARY_KERNEL(cosh, visit_inexact, OAR_INEXACT_DTYPES, std::cosh(x))
OAR_UNARY_KERNEL(tanh, visit_inexact, OAR_INEXACT_DTYPES, std::tanh(x))
OAR_UNARY_KERNEL(asinh, visit_inexact, OAR_INEXACT_DTYPES, std::asinh(x))
OAR_UNARY_KERNEL(acosh, visit_inexact, OAR_INEXACT_DTYPES, std::acosh(x))
OAR_UNARY_KERNEL(atanh, visit_inexact, OAR_INEXACT_DTYPES, std::atanh(x))
OAR_UNARY_KERNEL(sigmoid, visit_inexact, OAR_INEXACT_DTYPES, C(1) / (C(1) + std::exp(-x)))
OAR_UNARY_KERNEL(expm1, visit_float, OAR_FLOAT_DTYPES, std::expm1(x))
OAR_UNARY_KERNEL(log2, visit_float, OAR_FLOAT_DTYPES, std::log2(x))
OAR_UNARY_KERNEL(log1p, visit_float, OAR_FLOAT_DTYPES, std::log1p(x))
OAR_UNARY_KERNEL(erf, visit_float, OAR_FLOAT_DTYPES, std::erf(x))
OAR_UNARY_KERNEL(erfinv, visit_float, OAR_FLOAT_DTYPES, erfinv(x))
OAR_UNARY_KERNEL(lgamma, visit_float, OAR_FLOAT_DTYPES, std::lgamma(x))
OAR_UNARY_KERNEL(digamma, visit_float, OAR_FLOAT_DTYPES, digamma(x))
OAR_UNARY_KERNEL(trigamma, visit_float, OAR_FLOAT_DTYPES, trigamma(x))
OAR_UNARY_KERNEL(floor, visit_real, OAR_REAL_DTYPES, C(std::floor(x)))
OAR_UNARY_KERNEL(ceil, visit_real, OAR_REAL_DTYPES, C(std::ceil(x)))
OAR_UNARY_KERNEL(round, visit_real, OAR_REAL_DTYPES, C(std::round(x)))
OAR_UNARY_KERNEL(trunc, visit_real, OAR_REAL_DTYPES, C(std::trunc(x)))
template <typename C> C bit_not(C x) {
  if constexpr (std::is_same_v<C, bool>) return !x;
  else return C(~x);
}
OAR_UNARY_KERNEL(bitwise_not, visit_int, OAR_INT_BOOL_DTYPES, bit_not(x))
OAR_UNARY_TO(abs, visit_numeric, OAR_NUMERIC_DTYPES, real_t<T>, abs_of(x))
OAR_UNARY_TO(real, visit_inexact, OAR_COMPLEX_DTYPES, real_t<T>, std::real(x))
OAR_UNARY_TO(imag, visit_inexact, OAR_COMPLEX_DTYPES, real_t<T>, std::imag(x))
OAR_UNARY_TO(angle, visit_inexact, OAR_INEXACT_DTYPES, real_t<T>, std::arg(x))
OAR_UNARY_TO(isnan, visit_dtype, OAR_ALL_DTYPES, bool, x != x)
OAR_UNARY_TO(logical_not, visit_int, {DType::Bool}, bool, !x)

template <typename C> inline bool is_inf(C x) {
  if constexpr (is_complex_v<C>) return std::isinf(x.real()) || std::isinf(x.imag());
  else if constexpr (std::is_floating_point_v<C>) return std::isinf(x);
  else return false;
}
template <typename C> inline bool is_fin(C x) {
  if constexpr (is_complex_v<C>) return std::isfinite(x.real()) && std::isfinite(x.imag());
  else if constexpr (std::is_floating_point_v<C>) return std::isfinite(x);
  else return true;
}
OAR_UNARY_TO(isinf, visit_dtype, OAR_ALL_DTYPES, bool, is_inf(x))
OAR_UNARY_TO(isfinite, visit_dtype, OAR_ALL_DTYPES, bool, is_fin(x))

}  // namespace
}  // namespace oar::cpu

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

// VEC: the vmath function with a dense vectorised path, or kNoVec (the
// iterator only).
constexpr int kNoVec = -1;
#define OAR_UNARY_KERNEL(NAME, VISIT, DTYPES, VEC, EXPR)                                    \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {    \
    if constexpr (int(VEC) >= 0)                                                            \
      if (vmath::apply(vmath::Fn(VEC), in[0], out[0])) return;                              \
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

template <typename C> C bit_not(C x) {
  if constexpr (std::is_same_v<C, bool>) return !x;
  else return C(~x);
}
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
// The declared unary ops' kernels (ops/elementwise.toml).
#include "gen/kernels/unary.inc"

}  // namespace
}  // namespace oar::cpu

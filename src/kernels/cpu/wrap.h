// Integer arithmetic that wraps around (two's complement), as NumPy's and
// Paddle's integer tensors do. Signed overflow is undefined behaviour in C++
// (UBSan stops on it, and the optimiser may assume it never happens), so
// signed integers are added and multiplied as their unsigned counterparts;
// every other type uses its own operators.
#pragma once
#include <type_traits>

#include "base/hd.h"

namespace oar::cpu {

template <typename C> constexpr bool kWraps = std::is_integral_v<C> && std::is_signed_v<C>;

template <typename C> OAR_HD constexpr C wrap_add(C a, C b) {
  if constexpr (kWraps<C>) return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else return a + b;
}
template <typename C> OAR_HD constexpr C wrap_sub(C a, C b) {
  if constexpr (kWraps<C>) return C(std::make_unsigned_t<C>(a) - std::make_unsigned_t<C>(b));
  else return a - b;
}
template <typename C> OAR_HD constexpr C wrap_mul(C a, C b) {
  // (unsigned short operands would promote to int and overflow there)
  if constexpr (kWraps<C>) return C(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  else if constexpr (std::is_same_v<C, bool>) return a && b;
  else return a * b;
}
template <typename C> OAR_HD constexpr C wrap_neg(C a) {
  if constexpr (kWraps<C>) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(a));
  else return -a;
}

}  // namespace oar::cpu

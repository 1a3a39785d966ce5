// The scalar functions of the declared elementwise ops (Note [op
// declarations]): the helpers their declared expressions use, and the
// generated functors, one per op, that the CPU kernels (unary.cpp,
// binary.cpp) and the fused elementwise interpreter (fused.cpp) both call,
// so that each scalar function is written once.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <complex>
#include <type_traits>

#include "base/hd.h"
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/special.h"
#include "kernels/cpu/wrap.h"

namespace oar::cpu::scalar {

template <typename C> OAR_HD inline C sign_of(C x) {
  if constexpr (is_complex_v<C>) {
    using std::abs;  // (unqualified: CUDA's complex type finds its own)
    auto r = abs(x);
    return r == 0 ? C(0) : x / r;
  } else if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) {
    return C(x != 0);
  } else {
    return C((C(0) < x) - (x < C(0)));
  }
}

template <typename C> OAR_HD inline C conj_of(C x) {
  using std::conj;
  if constexpr (is_complex_v<C>) return conj(x);
  else return x;
}

template <typename C> OAR_HD inline auto abs_of(C x) {
  if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) return x;
  else if constexpr (std::is_integral_v<C>) return x < 0 ? wrap_neg(x) : x;
  else {
    using std::abs;
    return abs(x);
  }
}

// The real and imaginary parts of any numeric value (a real x is x + 0i),
// written here rather than with std::real so that nvcc compiles them too.
template <typename C> OAR_HD inline auto real_part(C x) {
  if constexpr (is_complex_v<C>) return x.real();
  else return x;
}
template <typename C> OAR_HD inline auto imag_part(C x) {
  if constexpr (is_complex_v<C>) return x.imag();
  else return C(0);
}

template <typename T> struct real_of { using type = T; };
template <> struct real_of<complex64> { using type = float; };
template <> struct real_of<complex128> { using type = double; };
template <typename T> using real_t = typename real_of<T>::type;

template <typename C> OAR_HD C bit_not(C x) {
  if constexpr (std::is_same_v<C, bool>) return !x;
  else return C(~x);
}
template <typename C> OAR_HD inline bool is_inf(C x) {
  if constexpr (is_complex_v<C>) return std::isinf(x.real()) || std::isinf(x.imag());
  else if constexpr (std::is_floating_point_v<C>) return std::isinf(x);
  else return false;
}
template <typename C> OAR_HD inline bool is_fin(C x) {
  if constexpr (is_complex_v<C>) return std::isfinite(x.real()) && std::isfinite(x.imag());
  else if constexpr (std::is_floating_point_v<C>) return std::isfinite(x);
  else return true;
}
template <typename C> OAR_HD inline bool nan_of(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

template <typename C> OAR_HD inline C int_pow(C a, C b) {
  if (b < 0) return a == 1 ? C(1) : (a == C(-1) ? (b % 2 ? C(-1) : C(1)) : C(0));
  using U = std::make_unsigned_t<C>;
  U r = 1, base = U(a);
  for (auto e = b; e > 0; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return C(r);
}

template <typename C> OAR_HD inline C floor_div(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return C(-static_cast<std::make_unsigned_t<C>>(a));  // no overflow trap at INT_MIN
      C q = a / b;
      return (q * b != a && ((a < 0) != (b < 0))) ? C(q - 1) : q;
    } else {
      return a / b;
    }
  } else {
    return std::floor(a / b);
  }
}

template <typename C> OAR_HD inline C py_mod(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return 0;
      C r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? C(r + b) : r;
    } else {
      return a % b;
    }
  } else {
    C r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
}

// (std::signbit here made GCC 12 fail with an internal error when vectorising.)
template <typename C> OAR_HD inline bool sign_bit_of(C x) {
  if constexpr (std::is_same_v<C, float>) return std::bit_cast<uint32_t>(x) >> 31;
  else if constexpr (std::is_same_v<C, double>) return std::bit_cast<uint64_t>(x) >> 63;
  else if constexpr (std::is_signed_v<C>) return x < 0;
  else return false;
}

// std::arg of a real x: pi where the sign bit is set (-0.0 included), NaN kept.
template <typename C> OAR_HD inline auto arg_of(C x) {
  using std::arg;
  if constexpr (is_complex_v<C>) return arg(x);
  else return x == x ? (sign_bit_of(x) ? C(3.141592653589793) : C(0)) : x;
}

// gcd and lcm of integers, computed on magnitudes in the unsigned type (no
// overflow trap at the most negative value; the result wraps as NumPy's).
template <typename C> OAR_HD inline C gcd_of(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || b;
  } else {
    using U = std::make_unsigned_t<C>;
    U x = a < 0 ? U(U(0) - U(a)) : U(a), y = b < 0 ? U(U(0) - U(b)) : U(b);
    while (y) {
      U t = U(x % y);
      x = y;
      y = t;
    }
    return C(x);
  }
}
template <typename C> OAR_HD inline C lcm_of(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a && b;
  } else {
    using U = std::make_unsigned_t<C>;
    if (a == 0 || b == 0) return C(0);
    U x = a < 0 ? U(U(0) - U(a)) : U(a), y = b < 0 ? U(U(0) - U(b)) : U(b);
    return C(U(x / U(gcd_of(a, b))) * y);
  }
}

// One struct per declared op: apply(x) or apply(a, b) with C the compute type.
#include "gen/kernels/scalar_fns.inc"

// Scalar functions of ops defined in C++ (ops/activation.cpp) that the fused
// interpreters and the CUDA kernels also run. (The CPU's dense paths use
// vmath's vectorised forms of the same formulas.)
struct op_relu {
  // x < 0 ? 0 : x keeps NaN.
  template <typename C> OAR_HD static C apply(C x) { return x < C(0) ? C(0) : x; }
};
struct op_gelu {
  template <typename C> OAR_HD static C apply(C x) { return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476))); }
};
struct op_gelu_tanh {
  template <typename C> OAR_HD static C apply(C x) {
    C u = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + std::tanh(u));
  }
};
struct op_silu {
  template <typename C> OAR_HD static C apply(C x) { return x / (C(1) + std::exp(-x)); }
};
struct op_log_sigmoid {
  // min(x, 0) - log1p(exp(-|x|)): stable for large |x| of either sign.
  template <typename C> OAR_HD static C apply(C x) {
    return (C(0) < x ? C(0) : x) - std::log1p(std::exp(-std::abs(x)));
  }
};
// The derivatives of the two gelu forms (gelu_grad).
struct op_gelu_deriv {
  template <typename C> OAR_HD static C apply(C x) {
    return C(0.5) * (C(1) + std::erf(x * C(0.7071067811865476))) +
           x * C(0.3989422804014327) * std::exp(C(-0.5) * x * x);
  }
};
struct op_gelu_tanh_deriv {
  template <typename C> OAR_HD static C apply(C x) {
    C x2 = x * x, k = C(0.7978845608028654), c = C(0.044715);
    C t = std::tanh(k * (x + c * x2 * x));
    return C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * k * (C(1) + C(3) * c * x2);
  }
};

}  // namespace oar::cpu::scalar

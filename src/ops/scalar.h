#pragma once
#include <complex>
#include <cstdint>

#include "base/dtype.h"

namespace oar {

// A Python number: bool, int, float or complex, kept exactly.
struct Scalar {
  enum class Kind : uint8_t { Bool, Int, Float, Complex };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double d = 0;
  std::complex<double> c;

  Scalar() = default;
  Scalar(bool v) : kind(Kind::Bool), i(v), d(v), c(double(v)) {}
  Scalar(int v) : Scalar(int64_t(v)) {}
  Scalar(int64_t v) : kind(Kind::Int), i(v), d(double(v)), c(double(v)) {}
  Scalar(double v) : kind(Kind::Float), i(int64_t(v)), d(v), c(v) {}
  Scalar(std::complex<double> v) : kind(Kind::Complex), i(int64_t(v.real())), d(v.real()), c(v) {}

  bool is_complex() const { return kind == Kind::Complex; }
  bool is_floating() const { return kind == Kind::Float; }
  bool is_integral() const { return kind == Kind::Int || kind == Kind::Bool; }
  // The dtype a tensor made from this number gets by default.
  DType natural_dtype() const {
    switch (kind) {
      case Kind::Bool: return DType::Bool;
      case Kind::Int: return DType::Int64;
      case Kind::Float: return default_float_dtype();
      default: return to_complex(default_float_dtype());
    }
  }
  template <typename T> T to() const {
    if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>)
      return T(typename T::value_type(c.real()), typename T::value_type(c.imag()));
    else if constexpr (std::is_same_v<T, bool>) return kind == Kind::Complex ? c != 0.0 : (kind == Kind::Float ? d != 0 : i != 0);
    else if constexpr (std::is_integral_v<T>) return kind == Kind::Float || kind == Kind::Complex ? T(d) : T(i);
    else return T(kind == Kind::Int || kind == Kind::Bool ? double(i) : d);
  }
};

}  // namespace oar

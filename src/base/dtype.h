#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/half.h"

namespace oar {

enum class DType : uint8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64,
  Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
constexpr int kNumDTypes = 12;

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

size_t itemsize(DType t);
const char* dtype_name(DType t);  // "float32", ...
// Parses "float32", "float", "int64", "bool", "bfloat16", "complex64", ...
// Throws TypeError naming `api` on an unknown name.
DType dtype_from_name(const std::string& name, const char* api);

inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
inline bool is_floating(DType t) { return t >= DType::Float16 && t <= DType::Float64; }
inline bool is_inexact(DType t) { return t >= DType::Float16; }  // floating or complex
inline bool is_integral(DType t) { return t >= DType::UInt8 && t <= DType::Int64; }
// Real counterpart of a complex type (identity for real types).
DType to_real(DType t);
// Complex counterpart of a real floating type (float64 -> complex128, else complex64).
DType to_complex(DType t);
// The result type of a binary op on two tensors of these types.
DType promote_types(DType a, DType b);

// C++ scalar type for a dtype, and back.
template <DType D> struct dtype_cpp;
#define OAR_DTYPE_CPP(D, T) \
  template <> struct dtype_cpp<DType::D> { using type = T; };
OAR_DTYPE_CPP(Bool, bool)
OAR_DTYPE_CPP(UInt8, uint8_t)
OAR_DTYPE_CPP(Int8, int8_t)
OAR_DTYPE_CPP(Int16, int16_t)
OAR_DTYPE_CPP(Int32, int32_t)
OAR_DTYPE_CPP(Int64, int64_t)
OAR_DTYPE_CPP(Float16, float16)
OAR_DTYPE_CPP(BFloat16, bfloat16)
OAR_DTYPE_CPP(Float32, float)
OAR_DTYPE_CPP(Float64, double)
OAR_DTYPE_CPP(Complex64, complex64)
OAR_DTYPE_CPP(Complex128, complex128)
#undef OAR_DTYPE_CPP

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<float16>() { return DType::Float16; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }
template <> constexpr DType dtype_of<complex64>() { return DType::Complex64; }
template <> constexpr DType dtype_of<complex128>() { return DType::Complex128; }

// Type that arithmetic on T is carried out in (float for the 16-bit floats).
template <typename T> struct compute_type { using type = T; };
template <> struct compute_type<float16> { using type = float; };
template <> struct compute_type<bfloat16> { using type = float; };
template <typename T> using compute_t = typename compute_type<T>::type;

// Calls f(T{}) with T the C++ type of `t`, for every dtype.
template <typename F> decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: return f(complex64{});
    case DType::Complex128: return f(complex128{});
  }
  return f(float{});
}

// The process-wide default floating dtype (float32 unless set).
DType default_float_dtype();
void set_default_float_dtype(DType t);

}  // namespace oar

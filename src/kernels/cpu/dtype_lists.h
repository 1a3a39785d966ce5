// Dtype lists for kernel registration, and visitors that instantiate a kernel
// template only for the dtypes in a list.
#pragma once
#include <initializer_list>

#include "base/error.h"
#include "ops/op.h"

namespace oar::cpu {

#define OAR_ALL_DTYPES                                                                        \
  { DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,        \
    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64,       \
    DType::Complex128 }
#define OAR_NUMERIC_DTYPES                                                                    \
  { DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,     \
    DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64, DType::Complex128 }
#define OAR_REAL_DTYPES                                                                       \
  { DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,     \
    DType::BFloat16, DType::Float32, DType::Float64 }
#define OAR_INT_DTYPES \
  { DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64 }
#define OAR_INT_BOOL_DTYPES \
  { DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64 }
#define OAR_FLOAT_DTYPES { DType::Float16, DType::BFloat16, DType::Float32, DType::Float64 }
#define OAR_INEXACT_DTYPES \
  { DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64, DType::Complex128 }
#define OAR_COMPLEX_DTYPES { DType::Complex64, DType::Complex128 }

template <typename T> constexpr bool is_complex_v = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;
template <typename T> constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Visitors: f(T{}) for T in the named set; other dtypes never reach a kernel
// (the registry has no entry for them), so they are internal errors here.
template <typename F> decltype(auto) visit_float(DType t, F&& f) {
  switch (t) {
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Float64: return f(double{});
    default: return f(float{});
  }
}
template <typename F> decltype(auto) visit_inexact(DType t, F&& f) {
  switch (t) {
    case DType::Complex64: return f(complex64{});
    case DType::Complex128: return f(complex128{});
    default: return visit_float(t, f);
  }
}
template <typename F> decltype(auto) visit_int(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    default: return f(int64_t{});
  }
}
template <typename F> decltype(auto) visit_real(DType t, F&& f) {
  if (is_floating(t)) return visit_float(t, f);
  return visit_int(t, f);
}

}  // namespace oar::cpu

namespace oar::cpu {
// Every dtype but bool; complex included.
template <typename F> decltype(auto) visit_numeric(DType t, F&& f) {
  if (is_complex(t)) return visit_inexact(t, f);
  return visit_real(t, f);
}
}  // namespace oar::cpu

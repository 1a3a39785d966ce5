#include "base/dtype.h"

#include <atomic>

#include "base/error.h"
#include "base/refcount.h"

namespace oar {

namespace {
struct DTypeInfo { const char* name; size_t size; };
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1},     {"uint8", 1},    {"int8", 1},    {"int16", 2},
    {"int32", 4},    {"int64", 8},    {"float16", 2}, {"bfloat16", 2},
    {"float32", 4},  {"float64", 8},  {"complex64", 8}, {"complex128", 16},
};
std::atomic<DType> g_default_float{DType::Float32};
}  // namespace

size_t itemsize(DType t) { return kInfo[int(t)].size; }
const char* dtype_name(DType t) { return kInfo[int(t)].name; }

DType dtype_from_name(const std::string& name, const char* api) {
  std::string n = name;
  if (n.rfind("paddle.", 0) == 0 || n.rfind("oar.", 0) == 0) n = n.substr(n.find('.') + 1);
  for (int i = 0; i < kNumDTypes; ++i)
    if (n == kInfo[i].name) return DType(i);
  if (n == "float" || n == "float_") return DType::Float32;
  if (n == "double") return DType::Float64;
  if (n == "half") return DType::Float16;
  if (n == "int" || n == "long") return DType::Int64;
  if (n == "bool_") return DType::Bool;
  if (n == "uint16") return DType::BFloat16;  // Paddle stores bfloat16 as uint16
  fail(ErrorKind::Type, "[", api, "] unknown dtype '", name,
       "'; expected one of bool, uint8, int8, int16, int32, int64, float16, bfloat16, "
       "float32, float64, complex64, complex128");
}

DType to_real(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

DType to_complex(DType t) {
  if (is_complex(t)) return t;
  return t == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

// Categories order bool < integer < floating < complex; within a category the
// wider type wins, with the usual signed/unsigned and half/bfloat16 cases.
DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) {
    bool wide = a == DType::Complex128 || b == DType::Complex128 ||
                a == DType::Float64 || b == DType::Float64;
    return wide ? DType::Complex128 : DType::Complex64;
  }
  if (is_floating(a) || is_floating(b)) {
    if (!is_floating(a)) return b;
    if (!is_floating(b)) return a;
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return a > b ? a : b;
  }
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType o = a == DType::UInt8 ? b : a;  // signed partner
    return o == DType::Int8 ? DType::Int16 : o;
  }
  return a > b ? a : b;
}

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }
void set_default_float_dtype(DType t) { g_default_float.store(t, std::memory_order_relaxed); }

PyRefHooks& py_ref_hooks() {
  static PyRefHooks hooks;
  return hooks;
}

}  // namespace oar

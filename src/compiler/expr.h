// The scalar functions of the fused elementwise codes (ops/fused.h) as C++
// expressions for the code generators.
#pragma once
#include <cstdint>
#include <string>

#include "ops/fused.h"

namespace oar::compiler {

// The expression of `c` in `a` (and `b`) of compute type T, with F(fn) for
// the math function fn of T's precision; null for the transcendental codes
// unless `transcendental` (the CPU kernels call oar's vector math for them).
const char* scalar_expression(ops::EwCode c, bool transcendental);

// `expr` with a and b replaced by the given operands (parenthesised) and
// F(fn) by fn + suffix ("f" for float), plus `builtin_suffix` after sqrt and
// fabs (the CPU prelude's inline wrappers over compiler builtins).
std::string instantiate(const std::string& expr, const std::string& a, const std::string& b, const char* suffix,
                        const char* builtin_suffix);

// The C++ names a generated kernel uses for a floating dtype.
struct TypeNames {
  const char* storage;  // element type in memory
  const char* compute;  // T
  const char* suffix;   // math-function precision suffix ("f" for float)
  const char* load;     // conversion from storage to T ("" for none)
  const char* store;    // conversion from T to storage
};
// float16 is _Float16 in CPU code and its raw bits (u16) in CUDA code.
TypeNames type_names(DType dt, bool cuda);

// prefix + r, e.g. "v3" (built by appending: GCC 12 warns falsely on
// "literal" + std::to_string(r)).
std::string reg_name(const char* prefix, int64_t r);

}  // namespace oar::compiler

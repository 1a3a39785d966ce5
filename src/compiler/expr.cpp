// The scalar functions of the fused elementwise codes as C++ expressions,
// shared by the CPU and CUDA code generators.
#include "compiler/expr.h"

#include <cctype>

namespace oar::compiler {

using ops::EwCode;

// The scalar function of each code, in `a` (and `b`) of compute type T
// (float, or double for float64); F(name) is the libm function of T's
// precision. These are the scalar functions of the ops' declarations
// (src/ops/*.toml, kernels/cpu/scalar_fns.h) written for the generated code.
const char* scalar_expression(EwCode c, bool transcendental) {
  switch (c) {
    case EwCode::Add: return "a + b";
    case EwCode::Subtract: return "a - b";
    case EwCode::Multiply: return "a * b";
    case EwCode::Divide: return "a / b";
    case EwCode::Maximum: return "a != a ? a : (b != b ? b : (a > b ? a : b))";
    case EwCode::Minimum: return "a != a ? a : (b != b ? b : (a < b ? a : b))";
    case EwCode::Pow: return "F(pow)(a, b)";
    case EwCode::Neg: return "-a";
    case EwCode::Sqrt: return "F(sqrt)(a)";
    case EwCode::Rsqrt: return "T(1) / F(sqrt)(a)";
    case EwCode::Square: return "a * a";
    case EwCode::Reciprocal: return "T(1) / a";
    case EwCode::Abs: return "F(fabs)(a)";
    case EwCode::Relu: return "a < T(0) ? T(0) : a";
    default: break;
  }
  if (!transcendental) return nullptr;  // the CPU kernels call oar's vmath for these (codegen_cpu.cpp)
  switch (c) {
    case EwCode::Exp: return "F(exp)(a)";
    case EwCode::Log: return "F(log)(a)";
    case EwCode::Sin: return "F(sin)(a)";
    case EwCode::Cos: return "F(cos)(a)";
    case EwCode::Tanh: return "F(tanh)(a)";
    case EwCode::Sigmoid: return "T(1) / (T(1) + F(exp)(-a))";
    case EwCode::Erf: return "F(erf)(a)";
    case EwCode::Silu: return "a / (T(1) + F(exp)(-a))";
    case EwCode::Gelu: return "T(0.5) * a * (T(1) + F(erf)(a * T(0.7071067811865476)))";
    case EwCode::GeluTanh:
      return "T(0.5) * a * (T(1) + F(tanh)(T(0.7978845608028654) * (a + T(0.044715) * a * a * a)))";
    case EwCode::Expm1: return "F(expm1)(a)";
    case EwCode::Log1p: return "F(log1p)(a)";
    default: return nullptr;
  }
}

// `expr` with a, b replaced by registers and F(fn) by the precision's name.
std::string instantiate(const std::string& expr, const std::string& a, const std::string& b, const char* suffix,
                        const char* builtin_suffix) {
  std::string out;
  for (size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    const bool word_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(expr[i - 1])) || expr[i - 1] == '_');
    const bool word_end = i + 1 == expr.size() || !(std::isalnum(static_cast<unsigned char>(expr[i + 1])) ||
                                                   expr[i + 1] == '_');
    if (c == 'F' && word_start && i + 1 < expr.size() && expr[i + 1] == '(') {
      size_t close = expr.find(')', i);
      std::string fn = expr.substr(i + 2, close - i - 2);
      const bool builtin = fn == "sqrt" || fn == "fabs";
      out += fn + suffix + (builtin ? builtin_suffix : "");
      i = close;
    } else if ((c == 'a' || c == 'b') && word_start && word_end) {
      out += "(" + (c == 'a' ? a : b) + ")";
    } else {
      out += c;
    }
  }
  return out;
}

TypeNames type_names(DType dt, bool cuda) {
  switch (dt) {
    case DType::Float64: return {"double", "double", "", "", ""};
    case DType::BFloat16: return {"u16", "float", "f", "load_bf16", "store_bf16"};
    case DType::Float16: return {cuda ? "u16" : "_Float16", "float", "f", "load_f16", "store_f16"};
    default: return {"float", "float", "f", "", ""};
  }
}

std::string reg_name(const char* prefix, int64_t r) {
  std::string s(prefix);
  s += std::to_string(r);
  return s;
}

}  // namespace oar::compiler

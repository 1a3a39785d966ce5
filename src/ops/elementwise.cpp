// Elementwise ops: binary arithmetic, comparisons, logical and bitwise ops,
// unary math, where, clip, complex parts. Kernels: kernels/cpu/binary.cpp and
// kernels/cpu/unary.cpp.
#include <cmath>
#include <unordered_map>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using ops::conj;
using ops::multiply;
using ops::sum_to;

// ---------------------------------------------------------------- binary

enum class OutKind { Same, Bool };

// Runs on every call of every binary op: nothing is allocated unless the
// shapes differ or the check fails.
Metas binary_meta_impl(const char* api, std::span<const Tensor> in, OutKind k) {
  const Tensor &x = in[0], &y = in[1];
  OAR_CHECK(x.dtype() == y.dtype(), Type, "[", api, "] x and y must have the same dtype, got ",
            dtype_name(x.dtype()), " and ", dtype_name(y.dtype()));
  Dims shape = x.shape() == y.shape() ? x.shape() : ops::broadcast_shapes(x.shape(), y.shape(), api);
  return {TensorMeta{std::move(shape), k == OutKind::Bool ? DType::Bool : x.dtype()}};
}

#define OAR_BINARY_META(NAME, KIND) \
  Metas NAME##_meta(std::span<const Tensor> in, const Attrs&) { return binary_meta_impl("oar." #NAME, in, KIND); }

Tensor reduce_grad(const Tensor& g, const Tensor& like) { return sum_to(g, like.shape()); }

Tensors add_grad(const GradCtx& c) {
  Tensor g = c.grad();
  return {c.needs_grad(0) ? reduce_grad(g, c.in(0)) : Tensor(), c.needs_grad(1) ? reduce_grad(g, c.in(1)) : Tensor()};
}
Tensors subtract_grad(const GradCtx& c) {
  Tensor g = c.grad();
  return {c.needs_grad(0) ? reduce_grad(g, c.in(0)) : Tensor(),
          c.needs_grad(1) ? reduce_grad(ops::neg(g), c.in(1)) : Tensor()};
}
Tensors multiply_grad(const GradCtx& c) {
  Tensor g = c.grad();
  return {c.needs_grad(0) ? reduce_grad(multiply(g, conj(c.in(1))), c.in(0)) : Tensor(),
          c.needs_grad(1) ? reduce_grad(multiply(g, conj(c.in(0))), c.in(1)) : Tensor()};
}
Tensors divide_grad(const GradCtx& c) {
  Tensor g = c.grad();
  Tensor gx = ops::divide(g, conj(c.in(1)));
  Tensor gy;
  if (c.needs_grad(1)) gy = reduce_grad(ops::neg(multiply(gx, conj(ops::divide(c.in(0), c.in(1))))), c.in(1));
  return {c.needs_grad(0) ? reduce_grad(gx, c.in(0)) : Tensor(), gy};
}
Tensors remainder_grad(const GradCtx& c) {
  Tensor g = c.grad();
  Tensor gy;
  if (c.needs_grad(1))
    gy = reduce_grad(ops::neg(multiply(g, ops::floor_divide(c.in(0), c.in(1)))), c.in(1));
  return {c.needs_grad(0) ? reduce_grad(g, c.in(0)) : Tensor(), gy};
}
Tensors pow_grad(const GradCtx& c) {
  const Tensor &x = c.in(0), &y = c.in(1);
  Tensor g = c.grad();
  Tensor gx, gy;
  if (c.needs_grad(0)) {
    Tensor ym1 = ops::binary_scalar("subtract", y, Scalar(int64_t(1)), false);
    gx = reduce_grad(multiply(g, conj(multiply(y, ops::pow(x, ym1)))), x);
  }
  if (c.needs_grad(1)) {
    // d/dy x^y = x^y log x; defined as 0 where x == 0 and y >= 0.
    Tensor out = ops::pow(x, y);
    Tensor lg = ops::log(ops::where(ops::equal(x, ops::zeros_like(x)), ops::ones_like(x), x));
    gy = reduce_grad(multiply(g, conj(multiply(out, lg))), y);
  }
  return {gx, gy};
}
// Gradient of a selection between x and y: x where mask, else y.
Tensors select_grad(const GradCtx& c, const Tensor& mask) {
  Tensor g = c.grad();
  Tensor z = ops::zeros_like(g);
  return {c.needs_grad(0) ? reduce_grad(ops::where(mask, g, z), c.in(0)) : Tensor(),
          c.needs_grad(1) ? reduce_grad(ops::where(mask, z, g), c.in(1)) : Tensor()};
}
Tensors maximum_grad(const GradCtx& c) { return select_grad(c, ops::greater_equal(c.in(0), c.in(1))); }
Tensors minimum_grad(const GradCtx& c) { return select_grad(c, ops::less_equal(c.in(0), c.in(1))); }
Tensors fmax_grad(const GradCtx& c) {
  return select_grad(c, ops::logical_or(ops::greater_equal(c.in(0), c.in(1)), ops::isnan(c.in(1))));
}
Tensors fmin_grad(const GradCtx& c) {
  return select_grad(c, ops::logical_or(ops::less_equal(c.in(0), c.in(1)), ops::isnan(c.in(1))));
}
Tensors atan2_grad(const GradCtx& c) {
  const Tensor &y = c.in(0), &x = c.in(1);
  Tensor g = c.grad();
  Tensor r2 = ops::add(multiply(x, x), multiply(y, y));
  return {c.needs_grad(0) ? reduce_grad(multiply(g, ops::divide(x, r2)), y) : Tensor(),
          c.needs_grad(1) ? reduce_grad(multiply(g, ops::neg(ops::divide(y, r2))), x) : Tensor()};
}
Tensors complex_grad(const GradCtx& c) {
  Tensor g = c.grad();
  return {c.needs_grad(0) ? reduce_grad(ops::real(g), c.in(0)) : Tensor(),
          c.needs_grad(1) ? reduce_grad(ops::imag(g), c.in(1)) : Tensor()};
}

Metas complex_meta(std::span<const Tensor> in, const Attrs&) {
  OAR_CHECK(in[0].dtype() == in[1].dtype() && (in[0].dtype() == DType::Float32 || in[0].dtype() == DType::Float64),
            Type, "[oar.complex] real and imag must both be float32 or both float64, got ",
            dtype_name(in[0].dtype()), " and ", dtype_name(in[1].dtype()));
  return {TensorMeta{ops::broadcast_shapes(in[0].shape(), in[1].shape(), "oar.complex"), to_complex(in[0].dtype())}};
}

constexpr OpTraits kBinaryTraits{.elementwise = true, .broadcast = true};

#define OAR_DEF_BINARY(NAME, GRAD, AMP) \
  OpDef& k_##NAME = OpBuilder(#NAME).meta(NAME##_meta).grad(GRAD).traits(kBinaryTraits).amp(AMP);
// The declared binary ops (elementwise.toml): infer_meta, gradient, registration.
#define OAR_GEN_BINARY_DEFS
#include "gen/ops/binary_defs.inc"
#undef OAR_GEN_BINARY_DEFS
OAR_DEF_BINARY(complex, complex_grad, CastPolicy::Promote)

// How a binary op treats its operands' dtypes before the kernel runs.
enum class Promote { Arith, TrueDiv, Float, Compare, Logical, Bitwise };

}  // namespace

struct ops::BinaryOp { OpDef* op; Promote promote; };

namespace {
using BinaryInfo = ops::BinaryOp;

const std::unordered_map<std::string, BinaryInfo>& binary_table() {
  static const std::unordered_map<std::string, BinaryInfo> t = {
#define OAR_GEN_BINARY_TABLE
#include "gen/ops/binary_defs.inc"
#undef OAR_GEN_BINARY_TABLE
  };
  return t;
}

const BinaryInfo& binary_info(const std::string& name) {
  auto& t = binary_table();
  auto it = t.find(name);
  OAR_CHECK(it != t.end(), NotImplemented, "[oar] unknown binary op '", name, "'");
  return it->second;
}

// The dtype both operands are cast to.
DType operand_dtype(const BinaryInfo& info, DType common) {
  switch (info.promote) {
    case Promote::TrueDiv:
    case Promote::Float: return is_inexact(common) ? common : default_float_dtype();
    case Promote::Logical: return DType::Bool;
    case Promote::Bitwise:
      OAR_CHECK(is_integral(common) || common == DType::Bool, Type, "[oar.", info.op->name,
                "] expects integer or bool tensors, got ", dtype_name(common));
      return common;
    default: return common;
  }
}

Tensor run_binary(const BinaryInfo& info, const Tensor& x, const Tensor& y) {
  DType t = operand_dtype(info, promote_types(x.dtype(), y.dtype()));
  if (x.dtype() == t && y.dtype() == t) {
    const Tensor in[2] = {x, y};
    return dispatch1(*info.op, in);
  }
  Tensor in[2] = {ops::cast(x, t), ops::cast(y, t)};
  return dispatch1(*info.op, in);
}

}  // namespace

namespace ops {

const BinaryOp& binary_op(const std::string& name) { return binary_info(name); }

Tensor binary(const std::string& op, const Tensor& x, const Tensor& y) { return run_binary(binary_info(op), x, y); }
Tensor binary(const BinaryOp& op, const Tensor& x, const Tensor& y) { return run_binary(op, x, y); }

Tensor binary_scalar(const std::string& op, const Tensor& x, const Scalar& s, bool scalar_first) {
  return binary_scalar(binary_info(op), x, s, scalar_first);
}
Tensor binary_scalar(const BinaryOp& info, const Tensor& x, const Scalar& s, bool scalar_first) {
  DType t = result_type(x, s);
  if (info.promote == Promote::Logical) t = DType::Bool;
  Tensor st = scalar_tensor(s, t);
  Tensor xt = cast(x, t);
  return scalar_first ? run_binary(info, st, xt) : run_binary(info, xt, st);
}

Tensor& binary_(const std::string& op, Tensor& x, const Tensor& y) { return binary_(binary_info(op), x, y); }
Tensor& binary_(const BinaryOp& info, Tensor& x, const Tensor& y) {
  DType t = operand_dtype(info, x.dtype());
  OAR_CHECK(t == x.dtype(), Type, "[oar.", info.op->name, "_] the result dtype ", dtype_name(t),
            " cannot be stored in the ", dtype_name(x.dtype()), " tensor modified in place");
  Tensor in[2] = {x, cast(y, x.dtype())};
  return dispatch_inplace(*info.op, x, in);
}

#define OAR_BINARY_API(NAME)                               \
  Tensor NAME(const Tensor& x, const Tensor& y) {          \
    static const BinaryInfo& info = binary_info(#NAME);    \
    return run_binary(info, x, y);                         \
  }
#define OAR_GEN_BINARY_API
#include "gen/ops/binary_defs.inc"
#undef OAR_GEN_BINARY_API

Tensor complex(const Tensor& re, const Tensor& im) {
  Tensor in[2] = {re, im};
  return dispatch1(k_complex, in);
}

Tensor scale(const Tensor& x, double s) { return binary_scalar("multiply", x, Scalar(s), false); }

}  // namespace ops
}  // namespace oar

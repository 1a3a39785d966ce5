// Unary elementwise ops and where/clip. Kernels: kernels/cpu/unary.cpp.
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

using namespace ops;

// How a unary op maps its input dtype.
enum class UKind {
  Float,  // integers are promoted to the default float dtype first
  Same,   // any numeric dtype, result has the input dtype
  Real,   // real dtypes only (floor, erf, ...), integers promoted for the float ones
  Bool,   // result is bool (isnan, logical_not)
  ToReal, // complex -> its real dtype (abs, real, imag, angle)
  Int,    // integer or bool only (bitwise_not)
  RealSame,  // integer or floating point, result has the input dtype (frac)
};

struct UnaryInfo { OpDef* op; UKind kind; };
std::unordered_map<std::string, UnaryInfo>& unary_table() {
  static std::unordered_map<std::string, UnaryInfo> t;
  return t;
}

Metas unary_meta(std::span<const Tensor> in, const Attrs& a, UKind k, const char* name) {
  DType t = in[0].dtype();
  switch (k) {
    case UKind::Bool: t = DType::Bool; break;
    case UKind::ToReal: t = to_real(t); break;
    case UKind::Real:
      OAR_CHECK(!is_complex(t), Type, "[oar.", name, "] does not support complex input (", dtype_name(t), ")");
      break;
    case UKind::RealSame:
      OAR_CHECK(!is_complex(t) && t != DType::Bool, Type, "[oar.", name,
                "] needs an integer or floating point tensor, got ", dtype_name(t));
      break;
    case UKind::Int:
      OAR_CHECK(is_integral(t) || t == DType::Bool, Type, "[oar.", name, "] expects an integer or bool tensor, got ",
                dtype_name(t));
      break;
    default: break;
  }
  return {TensorMeta{in[0].shape(), t}};
}

struct UnaryReg {
  UnaryReg(const char* name, UKind kind, MetaFn meta, GradFn grad, bool save_in, bool save_out, CastPolicy amp) {
    OpDef& op =
        OpBuilder(name).meta(meta).grad(grad).traits({.elementwise = true}).saves(save_in, save_out).amp(amp);
    unary_table()[name] = {&op, kind};
  }
};

Tensor C(const Tensor& t) { return conj(t); }
Tensor mul(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor muls(const Tensor& a, double s) { return scale(a, s); }
Tensor adds(const Tensor& a, double s) { return binary_scalar("add", a, Scalar(s), false); }
Tensor rsubs(double s, const Tensor& a) { return binary_scalar("subtract", a, Scalar(s), true); }
Tensor zeros_grad(const GradCtx& c) { return zeros_like(c.in(0)); }

// Rules: g = grad of output, x = input, y = output (when saved).
#define G c.grad()
#define X c.in(0)
#define Y c.out(0)
constexpr double kPi = std::numbers::pi;

// abs: sign(x) for real x, x/|x| for complex x (0 at 0).
Tensors abs_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  Tensor g = c.grad();
  if (!is_complex(x.dtype())) return {mul(g, sign(x))};
  Tensor r = abs(x);
  Tensor safe = where(equal(r, zeros_like(r)), ones_like(r), r);
  return {mul(cast(divide(g, safe), x.dtype()), x)};
}

// angle: 0 for real x; for complex z, d angle = i z / |z|^2.
Tensors angle_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  if (!is_complex(x.dtype())) return {zeros_like(x)};
  Tensor r2 = real(mul(x, conj(x)));
  Tensor safe = where(equal(r2, zeros_like(r2)), ones_like(r2), r2);
  Tensor i = scalar_tensor(Scalar(std::complex<double>(0, 1)), x.dtype());
  return {mul(cast(divide(c.grad(), safe), x.dtype()), mul(i, x))};
}

// sinc: (cos(pi x) - sinc(x)) / x, and 0 at 0.
Tensors sinc_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  Tensor zero = equal(x, zeros_like(x));
  Tensor safe = where(zero, ones_like(x), x);
  Tensor d = divide(subtract(cos(muls(safe, kPi)), unary("sinc", safe)), safe);
  return {mul(c.grad(), where(zero, zeros_like(x), d))};
}

// The declared unary ops (elementwise.toml): infer_meta, gradient, registration.
#define OAR_GEN_UNARY_DEFS
#include "gen/ops/unary_defs.inc"
#undef OAR_GEN_UNARY_DEFS

#undef G
#undef X
#undef Y

const UnaryInfo& unary_info(const std::string& name) {
  auto& t = unary_table();
  auto it = t.find(name);
  OAR_CHECK(it != t.end(), NotImplemented, "[oar] unknown unary op '", name, "'");
  return it->second;
}

Tensor prepare(const UnaryInfo& u, const Tensor& x) {
  bool int_like = is_integral(x.dtype()) || x.dtype() == DType::Bool;
  if ((u.kind == UKind::Float || u.kind == UKind::Real) && int_like && u.op->name != "sign" &&
      u.op->name != "floor" && u.op->name != "ceil" && u.op->name != "round" && u.op->name != "trunc")
    return cast(x, default_float_dtype());
  if (u.kind == UKind::Bool && u.op->name == "logical_not") return cast(x, DType::Bool);
  return x;
}

// where / clip
Metas where_meta(std::span<const Tensor> in, const Attrs&) {
  OAR_CHECK(in[0].dtype() == DType::Bool, Type, "[oar.where] condition must be a bool tensor, got ",
            dtype_name(in[0].dtype()));
  OAR_CHECK(in[1].dtype() == in[2].dtype(), Type, "[oar.where] x and y must have the same dtype, got ",
            dtype_name(in[1].dtype()), " and ", dtype_name(in[2].dtype()));
  Dims s = broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape(), "oar.where"), in[2].shape(), "oar.where");
  return {TensorMeta{s, in[1].dtype()}};
}
Tensors where_grad(const GradCtx& c) {
  Tensor g = c.grad();
  Tensor z = zeros_like(g);
  return {Tensor(), c.needs_grad(1) ? sum_to(where(c.in(0), g, z), c.in(1).shape()) : Tensor(),
          c.needs_grad(2) ? sum_to(where(c.in(0), z, g), c.in(2).shape()) : Tensor()};
}
OpDef& kWhere = OpBuilder("where").meta(where_meta).grad(where_grad).traits({.elementwise = true, .broadcast = true});

// clip(x, lo, hi): lo/hi are 0-D tensors of x's dtype, or undefined.
Metas clip_meta(std::span<const Tensor> in, const Attrs&) {
  OAR_CHECK(!is_complex(in[0].dtype()), Type, "[oar.clip] does not support complex input");
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}
Tensors clip_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  Tensor keep = ones_like(x, DType::Bool);
  if (c.in(1).defined()) keep = logical_and(keep, greater_equal(x, c.in(1)));
  if (c.in(2).defined()) keep = logical_and(keep, less_equal(x, c.in(2)));
  Tensor g = c.grad();
  return {where(keep, g, zeros_like(g))};
}
OpDef& kClip =
    OpBuilder("clip").meta(clip_meta).grad(clip_grad).traits({.elementwise = true}).optional({1, 2});

}  // namespace

namespace ops {

Tensor unary(const std::string& name, const Tensor& x) {
  const UnaryInfo& u = unary_info(name);
  if (name == "conj" && !is_complex(x.dtype())) return x;
  Tensor in[1] = {prepare(u, x)};
  return dispatch1(*u.op, in);
}

Tensor& unary_(const std::string& name, Tensor& x) {
  const UnaryInfo& u = unary_info(name);
  Metas m = u.op->infer_meta(std::span<const Tensor>(&x, 1), Attrs{});
  OAR_CHECK(m[0].dtype == x.dtype() && prepare(u, x).same(x), Type, "[oar.", name, "_] cannot write a ",
            dtype_name(m[0].dtype), " result into the ", dtype_name(x.dtype()), " tensor modified in place");
  Tensor in[1] = {x};
  return dispatch_inplace(*u.op, x, in);
}

// The declared ops' C++ API (ops.h); real, imag and conj are below.
#define OAR_GEN_UNARY_API
#include "gen/ops/unary_defs.inc"
#undef OAR_GEN_UNARY_API
Tensor real(const Tensor& x) { return is_complex(x.dtype()) ? unary("real", x) : x; }
Tensor imag(const Tensor& x) {
  OAR_CHECK(is_complex(x.dtype()), Type, "[oar.imag] expects a complex tensor, got ", dtype_name(x.dtype()));
  return unary("imag", x);
}
Tensor conj(const Tensor& x) { return is_complex(x.dtype()) ? unary("conj", x) : x; }

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  DType t = promote_types(x.dtype(), y.dtype());
  Tensor in[3] = {cond, cast(x, t), cast(y, t)};
  return dispatch1(kWhere, in);
}

Tensor clip(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor xx = x;
  if ((lo && lo->is_floating()) || (hi && hi->is_floating()))
    if (!is_inexact(x.dtype())) xx = cast(x, default_float_dtype());
  Tensor in[3] = {xx, lo ? scalar_tensor(*lo, xx.dtype()) : Tensor(), hi ? scalar_tensor(*hi, xx.dtype()) : Tensor()};
  return dispatch1(kClip, in);
}

}  // namespace ops
}  // namespace oar

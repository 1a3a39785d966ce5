// Creation ops: full, arange, linspace, eye. (Random creation: random.cpp.)
#include <cmath>

#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

void check_shape(const Dims& shape, const char* api) { checked_numel(shape, api); }

Metas full_meta(std::span<const Tensor>, const Attrs& a) {
  check_shape(a.ints(0), "oar.full");
  return {TensorMeta{a.ints(0), a.dtype(2)}};
}
OpDef& kFull = OpBuilder("full").attrs({"shape", "value", "dtype"}).meta(full_meta);

// full_like reads only x's shape; taking x as an operand (rather than its
// shape as an attribute) keeps dynamic dims dynamic in a captured program.
// No gradient flows to x.
Metas full_like_meta(std::span<const Tensor> in, const Attrs& a) {
  return {TensorMeta{in[0].shape(), a.dtype(1)}};
}
OpDef& kFullLike = OpBuilder("full_like").attrs({"value", "dtype"}).meta(full_like_meta).spmd("full_like");

// arange: attrs start, step (as double or int64), count, dtype.
Metas arange_meta(std::span<const Tensor>, const Attrs& a) {
  return {TensorMeta{Dims{a.i(2)}, a.dtype(3)}};
}
OpDef& kArange = OpBuilder("arange").attrs({"start", "step", "num", "dtype"}).meta(arange_meta);

Metas linspace_meta(std::span<const Tensor>, const Attrs& a) {
  OAR_CHECK(a.i(2) >= 0, Value, "[oar.linspace] num must be non-negative, got ", a.i(2));
  return {TensorMeta{Dims{a.i(2)}, a.dtype(3)}};
}
OpDef& kLinspace = OpBuilder("linspace").attrs({"start", "stop", "num", "dtype"}).meta(linspace_meta);

Metas eye_meta(std::span<const Tensor>, const Attrs& a) {
  OAR_CHECK(a.i(0) >= 0 && a.i(1) >= 0, Value, "[oar.eye] num_rows and num_columns must be non-negative, got ",
            a.i(0), " and ", a.i(1));
  return {TensorMeta{Dims{a.i(0), a.i(1)}, a.dtype(2)}};
}
OpDef& kEye = OpBuilder("eye").attrs({"num_rows", "num_columns", "dtype"}).meta(eye_meta);

}  // namespace

namespace ops {

Tensor full(const Dims& shape, const Scalar& value, DType dtype) {
  return dispatch1(kFull, std::span<const Tensor>(), Attrs{shape, scalar_attr(value), dtype});
}
Tensor zeros(const Dims& shape, DType dtype) { return full(shape, Scalar(int64_t(0)), dtype); }
Tensor ones(const Dims& shape, DType dtype) { return full(shape, Scalar(int64_t(1)), dtype); }
Tensor full_like(const Tensor& x, const Scalar& v, std::optional<DType> dtype) {
  return dispatch1(kFullLike, {x}, Attrs{scalar_attr(v), dtype.value_or(x.dtype())});
}
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype) { return full_like(x, Scalar(int64_t(0)), dtype); }
Tensor ones_like(const Tensor& x, std::optional<DType> dtype) { return full_like(x, Scalar(int64_t(1)), dtype); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype) {
  bool integral = start.is_integral() && end.is_integral() && step.is_integral();
  DType dt = dtype.value_or(integral ? DType::Int64 : default_float_dtype());
  OAR_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(), Type,
            "[oar.arange] start, end and step must be real numbers");
  OAR_CHECK(step.d != 0, Value, "[oar.arange] step must be non-zero");
  OAR_CHECK(std::isfinite(start.d) && std::isfinite(end.d) && std::isfinite(step.d), Value,
            "[oar.arange] start, end and step must be finite, got ", start.d, ", ", end.d, ", ", step.d);
  int64_t n;
  if (integral) {
    __int128 span = __int128(end.i) - start.i;
    __int128 cnt = span / step.i + ((span % step.i) != 0 ? 1 : 0);
    n = cnt < 0 ? 0 : int64_t(cnt);
  } else {
    double c = std::ceil((end.d - start.d) / step.d);
    OAR_CHECK(c < 9.2e18, Value, "[oar.arange] the number of elements overflows int64");
    n = c < 0 ? 0 : int64_t(c);
  }
  Attrs a;
  if (is_integral(dt) && integral) { a.push_back(start.i); a.push_back(step.i); }
  else { a.push_back(start.d); a.push_back(step.d); }
  a.push_back(n);
  a.push_back(dt);
  return dispatch1(kArange, std::span<const Tensor>(), a);
}

Tensor linspace(double start, double stop, int64_t num, DType dtype) {
  return dispatch1(kLinspace, std::span<const Tensor>(), Attrs{start, stop, num, dtype});
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  return dispatch1(kEye, std::span<const Tensor>(), Attrs{n, m < 0 ? n : m, dtype});
}

}  // namespace ops
}  // namespace oar

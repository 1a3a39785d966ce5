// The FFT ops (ops/fft.h): validation, gradient rules and the C++ API.
//
// Note [FFT gradients]
// Each transform is linear over the reals, so its gradient is its adjoint
// applied to the output gradient (conjugate-Wirtinger convention, as for
// every complex op: a C-linear y = A x has gradient A^H g). The adjoint of a
// transform is the transform with the opposite sign and the same scale,
// which is the opposite direction with "forward" and "backward"
// normalisation swapped. Hence:
//   c2c: gx = c2c(g, !forward, swapped norm).
//   r2c: y = P F x with x real and P keeping the first m = n/2 + 1 bins of
//        the last axis (onesided): gx = Re(F^H P^T g), P^T the zero padding
//        of g back to n bins.
//   c2r: y = Re(F E x), E the Hermitian extension of the half spectrum x
//        (bin n - j is conj(x_j)). Its adjoint folds bin n - j back onto
//        bin j: gx_j = w_j + conj(w_{n-j}) with w = F^H g. g is real, so w
//        is Hermitian and that is 2 w_j for the bins that have a mirror
//        (0 < j < n - j) and w_j for bin 0 and, n even, bin n/2; w on the
//        first m bins is r2c(g, !forward, swapped norm).
// The rules use the three ops (and pad, real, multiply), so derivatives of
// any order work, in eager mode and in captured graphs alike.
#include "ops/fft.h"

#include <algorithm>
#include <vector>

#include "ops/dispatch.h"
#include "ops/grad.h"
#include "ops/manip.h"

namespace oar {
namespace {

using namespace ops;

bool valid_norm(const std::string& s) { return s == "backward" || s == "forward" || s == "ortho"; }

std::string swapped_norm(const std::string& s) {
  return s == "backward" ? "forward" : s == "forward" ? "backward" : s;
}

// What every transform checks: the dtype domain, the axes and the norm.
void check_common(const Tensor& x, const Attrs& a, bool complex_in, const char* api) {
  DType t = x.dtype();
  if (complex_in)
    OAR_CHECK(t == DType::Complex64 || t == DType::Complex128, Type, "[", api,
              "] expects a complex64 or complex128 input, got ", dtype_name(t));
  else
    OAR_CHECK(t == DType::Float32 || t == DType::Float64, Type, "[", api, "] expects a float32 or float64 input, got ",
              dtype_name(t));
  const Dims& axes = a.ints(0);
  OAR_CHECK(!axes.empty(), Value, "[", api, "] axes must not be empty");
  for (size_t i = 0; i < axes.size(); ++i) {
    OAR_CHECK(axes[i] >= 0 && axes[i] < x.dim(), Index, "[", api, "] axis ", axes[i], " is out of range for a ",
              x.dim(), "-D tensor");
    for (size_t j = 0; j < i; ++j)
      OAR_CHECK(axes[j] != axes[i], Value, "[", api, "] axes must be unique, got axis ", axes[i], " twice");
  }
  OAR_CHECK(valid_norm(a.s(1)), Value, "[", api, "] normalization must be 'backward', 'forward' or 'ortho', got '",
            a.s(1), "'");
}

void check_lengths(const Dims& shape, const Dims& axes, const char* api) {
  for (int64_t ax : axes)
    OAR_CHECK(shape[size_t(ax)] >= 1, Value, "[", api, "] the transformed axis ", ax,
              " must have at least 1 element, got ", shape[size_t(ax)]);
}

Metas c2c_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_common(x, a, true, "oar.fft_c2c");
  check_lengths(x.shape(), a.ints(0), "oar.fft_c2c");
  return {TensorMeta{x.shape(), x.dtype()}};
}

Metas r2c_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_common(x, a, false, "oar.fft_r2c");
  check_lengths(x.shape(), a.ints(0), "oar.fft_r2c");
  Dims s = x.shape();
  if (a.b(3)) s[size_t(a.ints(0).back())] = s[size_t(a.ints(0).back())] / 2 + 1;
  return {TensorMeta{s, to_complex(x.dtype())}};
}

Metas c2r_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  const char* api = "oar.fft_c2r";
  check_common(x, a, true, api);
  int64_t n = a.i(3), last = a.ints(0).back();
  OAR_CHECK(n >= 1, Value, "[", api, "] the output length along axis ", last, " must be at least 1, got ", n);
  OAR_CHECK(x.shape()[size_t(last)] == n / 2 + 1, Value, "[", api, "] axis ", last, " must hold ", n / 2 + 1,
            " bins for an output of length ", n, ", got ", x.shape()[size_t(last)]);
  check_lengths(x.shape(), a.ints(0), api);
  Dims s = x.shape();
  s[size_t(last)] = n;
  return {TensorMeta{s, to_real(x.dtype())}};
}

Tensors c2c_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  return {fft_c2c(c.grad(0), a.ints(0), swapped_norm(a.s(1)), !a.b(2))};
}

Tensors r2c_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  const Dims& axes = a.ints(0);
  int64_t last = axes.back(), n = c.in(0).shape()[size_t(last)];
  Tensor g = c.grad(0);
  int64_t m = g.shape()[size_t(last)];
  if (m < n) {  // onesided: the dropped bins get no gradient
    Dims zs = g.shape();
    zs[size_t(last)] = n - m;
    Tensor parts[2] = {g, zeros(zs, g.dtype())};
    g = concat(std::span<const Tensor>(parts, 2), last);
  }
  return {real(fft_c2c(g, axes, swapped_norm(a.s(1)), !a.b(2)))};
}

Tensors c2r_grad(const GradCtx& c) {
  const Attrs& a = c.attr();
  const Dims& axes = a.ints(0);
  int64_t last = axes.back(), n = a.i(3), m = n / 2 + 1;
  Tensor w = fft_r2c(c.grad(0), axes, swapped_norm(a.s(1)), !a.b(2), true);
  // Bins with a mirror image count twice (Note [FFT gradients]): bin 0 once,
  // bins 1 .. (n - 1) / 2 twice, bin n / 2 once when n is even.
  DType rt = to_real(w.dtype());
  std::vector<Tensor> parts{ones(Dims{1}, rt)};
  if ((n - 1) / 2 > 0) parts.push_back(full(Dims{(n - 1) / 2}, Scalar(2.0), rt));
  if (n % 2 == 0 && n > 1) parts.push_back(ones(Dims{1}, rt));
  Tensor weight = parts.size() == 1 ? parts[0] : concat(std::span<const Tensor>(parts), 0);
  Dims bshape(size_t(w.dim()), 1);
  bshape[size_t(last)] = m;
  return {multiply(w, cast(reshape(weight, bshape), w.dtype()))};
}

OpDef& kC2c = OpBuilder("fft_c2c").attrs({"axes", "normalization", "forward"}).meta(c2c_meta).grad(c2c_grad)
                  .saves(false, false).spmd("fft");
OpDef& kR2c = OpBuilder("fft_r2c").attrs({"axes", "normalization", "forward", "onesided"}).meta(r2c_meta)
                  .grad(r2c_grad).saves(true, false).spmd("fft");
OpDef& kC2r = OpBuilder("fft_c2r").attrs({"axes", "normalization", "forward", "last_dim_size"}).meta(c2r_meta)
                  .grad(c2r_grad).saves(false, false).spmd("fft");

Dims normalized_axes(const Dims& axes, int64_t ndim, const char* api) {
  Dims r;
  for (int64_t ax : axes) r.push_back(normalize_axis(ax, ndim, api));
  return r;
}

// Integers and bools compute in the default float dtype.
Tensor as_inexact(const Tensor& x) { return is_inexact(x.dtype()) ? x : cast(x, default_float_dtype()); }
Tensor as_complex(const Tensor& x) {
  Tensor t = as_inexact(x);
  return t.dtype() == DType::Float32 || t.dtype() == DType::Float64 ? cast(t, to_complex(t.dtype())) : t;
}

Tensor run1(OpDef& op, const Tensor& x, Attrs a) {
  Tensor in[1] = {contiguous(x)};
  return dispatch(op, std::span<const Tensor>(in, 1), a)[0];
}

}  // namespace

namespace ops {

Tensor fft_c2c(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward) {
  return run1(kC2c, as_complex(x), Attrs{normalized_axes(axes, x.dim(), "oar.fft_c2c"), normalization, forward});
}

Tensor fft_r2c(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward, bool onesided) {
  return run1(kR2c, as_inexact(x),
              Attrs{normalized_axes(axes, x.dim(), "oar.fft_r2c"), normalization, forward, onesided});
}

Tensor fft_c2r(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward,
               int64_t last_dim_size) {
  return run1(kC2r, as_complex(x),
              Attrs{normalized_axes(axes, x.dim(), "oar.fft_c2r"), normalization, forward, last_dim_size});
}

}  // namespace ops
}  // namespace oar

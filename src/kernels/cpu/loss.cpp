// Fused softmax cross entropy (ops/loss.cpp): per row, the maximum, the sum
// of exponentials (vectorised), the log-sum-exp and the picked logit; the
// gradient in one pass from the saved log-sum-exp.
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/autograd_meta.h"
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rows.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

// Labels are checked before any thread starts: nothing may throw inside a
// parallel region, and a bad index must not read outside the row.
template <typename L> void check_labels(const L* lp, int64_t rows, int64_t classes, int64_t ignore) {
  for (int64_t r = 0; r < rows; ++r) {
    int64_t v = int64_t(lp[r]);
    if (v != ignore && (v < 0 || v >= classes))
      fail(ErrorKind::Value, "[oar.nn.functional.cross_entropy] labels must be in [0, ", classes,
           ") or equal ignore_index (", ignore, "), got ", v);
  }
}

template <typename C> void exp_row(const C* v, C* e, int64_t n) {
  if constexpr (std::is_same_v<C, float>) vmath::apply_f32(vmath::Fn::Exp, v, e, n);
  else vmath::apply_f64(vmath::Fn::Exp, v, e, n);
}

template <typename T, typename L>
void sce_forward(const Tensor& x, const Tensor& label, Tensor& loss, Tensor& lse, int64_t ignore) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t classes = x.shape().back();
  const int64_t rows = classes ? x.numel() / classes : label.numel();
  const T* xp = x.data<T>();
  const L* lp = label.data<L>();
  T* out = loss.data<T>();
  C* lo = lse.data<C>();
  check_labels(lp, rows, classes, ignore);
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(classes, 1)), [&](int64_t b, int64_t e) {
    std::vector<C> v(static_cast<size_t>(classes)), ex(static_cast<size_t>(classes));
    for (int64_t r = b; r < e; ++r) {
      const T* xr = xp + r * classes;
      C* vp = v.data();
#pragma omp simd
      for (int64_t j = 0; j < classes; ++j) vp[j] = C(compute_t<T>(xr[j]));
      C m = row_max(vp, classes);
      if (!std::isfinite(m)) m = std::isnan(m) ? m : (m > 0 ? m : C(0));
#pragma omp simd
      for (int64_t j = 0; j < classes; ++j) vp[j] -= m;
      exp_row(v.data(), ex.data(), classes);
      C s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < classes; ++j) s += ex[size_t(j)];
      const C l = m + std::log(s);
      lo[r] = l;
      const int64_t y = int64_t(lp[r]);
      out[r] = (y == ignore || classes == 0) ? T(0) : T(l - C(compute_t<T>(xr[y])));
    }
  });
}

template <typename T, typename L>
void sce_backward(const Tensor& x, const Tensor& label, const Tensor& lse, const Tensor& g, Tensor& dx,
                  int64_t ignore) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t classes = x.shape().back();
  const int64_t rows = classes ? x.numel() / classes : 0;
  const T* xp = x.data<T>();
  const L* lp = label.data<L>();
  const C* lo = lse.data<C>();
  const T* gp = g.data<T>();
  T* dp = dx.data<T>();
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(classes, 1)), [&](int64_t b, int64_t e) {
    std::vector<C> v(static_cast<size_t>(classes));
    for (int64_t r = b; r < e; ++r) {
      const T* xr = xp + r * classes;
      T* dr = dp + r * classes;
      const int64_t y = int64_t(lp[r]);
      if (y == ignore) {
        for (int64_t j = 0; j < classes; ++j) dr[j] = T(0);
        continue;
      }
      const C l = lo[r], gr = C(compute_t<T>(gp[r]));
      C* vp = v.data();
#pragma omp simd
      for (int64_t j = 0; j < classes; ++j) vp[j] = C(compute_t<T>(xr[j])) - l;
      exp_row(vp, vp, classes);
#pragma omp simd
      for (int64_t j = 0; j < classes; ++j) dr[j] = T(vp[j] * gr);
      dr[y] = T(C(compute_t<T>(dr[y])) - gr);
    }
  });
}

template <typename F> void with_types(const Tensor& x, const Tensor& label, F&& f) {
  visit_float(x.dtype(), [&](auto t) {
    if (label.dtype() == DType::Int64) f(t, int64_t{});
    else f(t, int32_t{});
  });
}

// The kernels walk dense rows. The ops:: front end and the gradient rule make
// their inputs contiguous, but a captured program dispatches the op directly,
// so a strided value (a view whose example happened to be contiguous) is
// copied here.
Tensors dense_inputs(std::span<const Tensor> in) {
  NoGradGuard ng;
  Tensors d;
  d.reserve(in.size());
  for (const Tensor& t : in) d.push_back(t.defined() && !t.is_contiguous() ? ops::contiguous(t) : t);
  return d;
}

void sce_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  with_types(in[0], in[1], [&](auto t, auto l) {
    sce_forward<decltype(t), decltype(l)>(in[0], in[1], out[0], out[1], a.i(0));
  });
}

void sce_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  with_types(in[0], in[1], [&](auto t, auto l) {
    sce_backward<decltype(t), decltype(l)>(in[0], in[1], in[2], in[3], out[0], a.i(0));
  });
}

KernelRegistrar r1("softmax_cross_entropy", DeviceType::CPU, OAR_FLOAT_DTYPES, sce_kernel);
KernelRegistrar r2("softmax_cross_entropy_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, sce_grad_kernel);

}  // namespace
}  // namespace oar::cpu

// Kernels of the activation ops (definitions: ops/activation.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/autograd_meta.h"
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rows.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cpu/vmath.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

// Note [dense kernel inputs]: these kernels walk rows of data<T>() as dense
// memory. The ops:: front ends make inputs contiguous, but a captured program
// dispatches the op directly, so a strided program input, a view result (a
// transpose whose example happened to be contiguous) or an expanded gradient
// reaches the kernel as is: such inputs are copied to dense memory first.
Tensors dense_inputs(std::span<const Tensor> in) {
  NoGradGuard ng;
  Tensors d;
  d.reserve(in.size());
  for (const Tensor& t : in) d.push_back(t.defined() && !t.is_contiguous() ? ops::contiguous(t) : t);
  return d;
}

template <typename F> void unary_float(std::span<const Tensor> in, std::span<Tensor> out, F make) {
  visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    elementwise<T, T>(out[0], make(compute_t<T>{}), in[0]);
  });
}

void relu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  unary_float(in, out, [](auto z) { using C = decltype(z); return [](C x) { return scalar::op_relu::apply(x); }; });
}

void relu_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    elementwise<T, T, T>(out[0], [](C y, C g) { return y > C(0) ? g : C(0); }, in[0], in[1]);
  });
}

void gelu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (vmath::apply(a.b(0) ? vmath::Fn::GeluTanh : vmath::Fn::Gelu, in[0], out[0])) return;
  if (a.b(0)) unary_float(in, out, [](auto z) { return [](decltype(z) x) { return scalar::op_gelu_tanh::apply(x); }; });
  else unary_float(in, out, [](auto z) { return [](decltype(z) x) { return scalar::op_gelu::apply(x); }; });
}

void silu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (vmath::apply(vmath::Fn::Silu, in[0], out[0])) return;
  unary_float(in, out, [](auto z) { return [](decltype(z) x) { return scalar::op_silu::apply(x); }; });
}

void log_sigmoid_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  unary_float(in, out, [](auto z) { return [](decltype(z) x) { return scalar::op_log_sigmoid::apply(x); }; });
}

inline void exp_dense(const float* x, float* y, int64_t n) { vmath::apply_f32(vmath::Fn::Exp, x, y, n); }
inline void exp_dense(const double* x, double* y, int64_t n) { vmath::apply_f64(vmath::Fn::Exp, x, y, n); }

// Note [softmax layout]: the (dense) input is viewed as [outer, n, inner] with
// the reduced axis in the middle. With inner == 1 each row is contiguous and
// one thread handles whole rows (max, sum of exp, scale: three vectorised
// passes); otherwise a thread takes a block of `inner` columns of one outer
// slice and keeps per-column running maxima and sums, so the loads along
// `inner` stay contiguous.
template <typename T, bool Log> void softmax_impl(const Tensor& x, Tensor& y, int64_t axis) {
  using C = compute_t<T>;
  const Dims& s = x.shape();
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(s.size()); ++d) {
    if (d < axis) outer *= s[d];
    else if (d == axis) n = s[d];
    else inner *= s[d];
  }
  if (outer * n * inner == 0) return;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
      std::vector<C> buf(static_cast<size_t>(Log ? 2 * n : n));
      for (int64_t r = b; r < e; ++r) {
        const T* xr = xp + r * n;
        T* yr = yp + r * n;
        C* v = buf.data();
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) v[j] = C(xr[j]);
        C m = row_max(v, n);
        if (!std::isfinite(m)) m = std::isnan(m) ? m : (m > 0 ? m : C(0));  // all -inf rows, +inf entries
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) v[j] -= m;
        C* ev = Log ? v + n : v;  // exp(x - m); log-softmax keeps x - m too
        exp_dense(v, ev, n);
        C sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < n; ++j) sum += ev[j];
        if constexpr (Log) {
          C ls = std::log(sum);
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) yr[j] = T(v[j] - ls);
        } else {
          C inv = C(1) / sum;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) yr[j] = T(ev[j] * inv);
        }
      }
    });
    return;
  }
  constexpr int64_t kCols = 256;
  int64_t col_blocks = (inner + kCols - 1) / kCols;
  parallel_for(outer * col_blocks, std::max<int64_t>(1, kParallelGrain / (n * kCols)), [&](int64_t b, int64_t e) {
    C m[kCols], sum[kCols];
    for (int64_t task = b; task < e; ++task) {
      int64_t o = task / col_blocks, c0 = (task % col_blocks) * kCols;
      int64_t w = std::min(kCols, inner - c0);
      const T* xs = xp + o * n * inner + c0;
      T* ys = yp + o * n * inner + c0;
      for (int64_t k = 0; k < w; ++k) { m[k] = -std::numeric_limits<C>::infinity(); sum[k] = 0; }
      for (int64_t j = 0; j < n; ++j)
#pragma omp simd
        for (int64_t k = 0; k < w; ++k) m[k] = std::max(m[k], C(xs[j * inner + k]));
      for (int64_t k = 0; k < w; ++k)
        if (!std::isfinite(m[k]) && !std::isnan(m[k])) m[k] = m[k] > 0 ? m[k] : C(0);
      for (int64_t j = 0; j < n; ++j)
#pragma omp simd
        for (int64_t k = 0; k < w; ++k) sum[k] += std::exp(C(xs[j * inner + k]) - m[k]);
      for (int64_t k = 0; k < w; ++k) sum[k] = Log ? std::log(sum[k]) : C(1) / sum[k];
      for (int64_t j = 0; j < n; ++j)
#pragma omp simd
        for (int64_t k = 0; k < w; ++k) {
          C v = C(xs[j * inner + k]) - m[k];
          ys[j * inner + k] = Log ? T(v - sum[k]) : T(std::exp(v) * sum[k]);
        }
    }
  });
}

template <bool Log> void softmax_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);  // Note [dense kernel inputs]
  visit_float(in[0].dtype(), [&](auto tag) { softmax_impl<decltype(tag), Log>(in[0], out[0], a.i(0)); });
}

// out = g * f(x) for dense x, g: f vectorised over blocks, widened to float
// for the 16-bit types.
void grad_times(vmath::Fn fn, const Tensor& x, const Tensor& g, Tensor& out) {
  const int64_t n = x.numel();
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* xp = x.data<T>();
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      constexpr int64_t kBlock = 1024;
      C buf[kBlock];
      for (int64_t i = b; i < e; i += kBlock) {
        int64_t m = std::min(kBlock, e - i);
        if constexpr (detail::is_half_v<T>) {
          C gbuf[kBlock];
          detail::widen_block(xp + i, buf, m);
          detail::widen_block(gp + i, gbuf, m);
          vmath::apply_f32(fn, buf, buf, m);
#pragma omp simd
          for (int64_t k = 0; k < m; ++k) buf[k] *= gbuf[k];
          detail::narrow_block(buf, op + i, m);
        } else {
          if constexpr (std::is_same_v<C, double>) vmath::apply_f64(fn, xp + i, buf, m);
          else vmath::apply_f32(fn, xp + i, buf, m);
#pragma omp simd
          for (int64_t k = 0; k < m; ++k) op[i + k] = T(buf[k] * gp[i + k]);
        }
      }
    });
  });
}

void gelu_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);  // Note [dense kernel inputs]
  grad_times(a.b(0) ? vmath::Fn::GeluTanhDeriv : vmath::Fn::GeluDeriv, in[0], in[1], out[0]);
}

// Rows of the last axis: dx = y (g - sum(g y)).
void softmax_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs&) {
  const Tensors in = dense_inputs(in_);  // Note [dense kernel inputs]
  const Tensor &y = in[0], &g = in[1];
  if (y.numel() == 0) return;
  int64_t n = y.shape()[y.dim() - 1], rows = y.numel() / n;
  visit_float(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const T* yp = y.data<T>();
    const T* gp = g.data<T>();
    T* op = out[0].data<T>();
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* yr = yp + r * n;
        const T* gr = gp + r * n;
        T* o = op + r * n;
        C s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) s += C(gr[j]) * C(yr[j]);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) o[j] = T(C(yr[j]) * (C(gr[j]) - s));
      }
    });
  });
}

KernelRegistrar r7("gelu_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, gelu_grad_kernel);
KernelRegistrar r8("softmax_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, softmax_grad_kernel);
KernelRegistrar r1("relu", DeviceType::CPU, OAR_FLOAT_DTYPES, relu_kernel);
KernelRegistrar r1g("relu_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, relu_grad_kernel);
KernelRegistrar r2("gelu", DeviceType::CPU, OAR_FLOAT_DTYPES, gelu_kernel);
KernelRegistrar r3("silu", DeviceType::CPU, OAR_FLOAT_DTYPES, silu_kernel);
KernelRegistrar r4("log_sigmoid", DeviceType::CPU, OAR_FLOAT_DTYPES, log_sigmoid_kernel);
KernelRegistrar r5("softmax", DeviceType::CPU, OAR_FLOAT_DTYPES, softmax_kernel<false>);
KernelRegistrar r6("log_softmax", DeviceType::CPU, OAR_FLOAT_DTYPES, softmax_kernel<true>);

}  // namespace
}  // namespace oar::cpu

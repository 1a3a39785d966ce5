// Fused kernels of batch_norm, layer_norm and rms_norm and of their first-
// order gradients: statistics in double (float64) or float accumulators
// (layer_norm with a two-pass variance), then one pass that normalises and
// applies the affine.
#include <cmath>
#include <vector>

#include "tensor/autograd_meta.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
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

// The mean and (biased) variance of channel c of a dense [outer, C, inner]
// tensor in one pass, in double (the statistics of a large channel lose
// digits in float): sums of d = x - K and d^2 with K the channel's first
// value, so that a mean large against the spread does not cancel
// (var = (sum d^2 - (sum d)^2 / M) / M); each inner run in vector lanes.
struct ChannelStats {
  double mean, var;
};
template <typename T>
ChannelStats channel_stats(const T* xp, int64_t c, int64_t C, int64_t outer, int64_t inner) {
  const int64_t M = outer * inner;
  if (M == 0) return {0.0, 0.0};
  const double K = double(compute_t<T>(xp[c * inner]));
  double s = 0, q = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* p = xp + (o * C + c) * inner;
    double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
    for (int64_t i = 0; i < inner; ++i) {
      const double d = double(compute_t<T>(p[i])) - K;
      a += d;
      b += d * d;
    }
    s += a;
    q += b;
  }
  const double ds = s / double(M);
  return {K + ds, std::max(0.0, q / double(M) - ds * ds)};
}

// Accumulate in double: the statistics of a large channel lose digits in float.
template <typename T> void batch_norm_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t axis = a.i(0);
  double eps = a.f(1);
  bool batch = a.b(2);
  int64_t C = x.shape()[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const T* xp = x.data<T>();
  const T *w = in[1].data<T>(), *b = in[2].data<T>(), *rm = in[3].data<T>(), *rv = in[4].data<T>();
  T* y = out[0].data<T>();
  T *bm = out[1].data<T>(), *bv = out[2].data<T>();
  int64_t M = outer * inner;
  parallel_for(C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(M, 1)), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      double mu, var;
      if (batch) {
        const ChannelStats st = channel_stats(xp, c, C, outer, inner);
        mu = st.mean;
        var = st.var;
      } else {
        mu = double(compute_t<T>(rm[c]));
        var = double(compute_t<T>(rv[c]));
      }
      bm[c] = T(compute_t<T>(mu));
      bv[c] = T(compute_t<T>(var));
      double r = 1.0 / std::sqrt(var + eps);
      using Cm = compute_t<T>;
      Cm scale = Cm(double(compute_t<T>(w[c])) * r);
      Cm shift = Cm(double(compute_t<T>(b[c])) - mu * double(compute_t<T>(w[c])) * r);
      for (int64_t o = 0; o < outer; ++o) {
        const T* p = xp + (o * C + c) * inner;
        T* q = y + (o * C + c) * inner;
        for (int64_t i = 0; i < inner; ++i) q[i] = T(Cm(p[i]) * scale + shift);
      }
    }
  });
}

void batch_norm_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { batch_norm_impl<decltype(t)>(in, out, a); });
}

template <typename T> void layer_norm_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t begin = a.i(0);
  double eps = a.f(1);
  int64_t cols = 1;
  for (int64_t d = begin; d < x.dim(); ++d) cols *= x.shape()[d];
  int64_t rows = cols ? x.numel() / cols : 0;
  const T *xp = x.data<T>(), *w = in[1].data<T>(), *b = in[2].data<T>();
  T* y = out[0].data<T>();
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      const T* p = xp + r * cols;
      T* q = y + r * cols;
      Acc s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < cols; ++i) s += Acc(compute_t<T>(p[i]));
      Acc mu = s / Acc(cols);
      Acc v = 0;
#pragma omp simd reduction(+ : v)
      for (int64_t i = 0; i < cols; ++i) {
        Acc d = Acc(compute_t<T>(p[i])) - mu;
        v += d * d;
      }
      Acc rs = Acc(1) / std::sqrt(v / Acc(cols) + Acc(eps));
#pragma omp simd
      for (int64_t i = 0; i < cols; ++i)
        q[i] = T(compute_t<T>((Acc(compute_t<T>(p[i])) - mu) * rs * Acc(compute_t<T>(w[i])) + Acc(compute_t<T>(b[i]))));
    }
  });
}

void layer_norm_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { layer_norm_impl<decltype(t)>(in, out, a); });
}

// in: x, w, g, running mean, running var; out: gx, gw, gb (Note [norm gradients]).
template <typename T> void batch_norm_grad_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t axis = a.i(0);
  double eps = a.f(1);
  bool batch = a.b(2);
  int64_t C = x.shape()[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const T *xp = x.data<T>(), *w = in[1].data<T>(), *gp = in[2].data<T>(), *rm = in[3].data<T>(), *rv = in[4].data<T>();
  T *gx = out[0].data<T>(), *gw = out[1].data<T>(), *gb = out[2].data<T>();
  int64_t M = outer * inner;
  parallel_for(C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(M, 1)), [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      double mu, var;
      if (batch) {
        const ChannelStats st = channel_stats(xp, c, C, outer, inner);
        mu = st.mean;
        var = st.var;
      } else {
        mu = double(compute_t<T>(rm[c]));
        var = double(compute_t<T>(rv[c]));
      }
      const double r = 1.0 / std::sqrt(var + eps), wc = double(compute_t<T>(w[c]));
      double sg = 0, sgd = 0;  // sums of g and of g (x - mu)
      for (int64_t o = 0; o < outer; ++o) {
        const T *g = gp + (o * C + c) * inner, *xr = xp + (o * C + c) * inner;
        double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
        for (int64_t i = 0; i < inner; ++i) {
          const double gv = double(compute_t<T>(g[i]));
          a += gv;
          b += gv * (double(compute_t<T>(xr[i])) - mu);
        }
        sg += a;
        sgd += b;
      }
      const double sgx = sgd * r;
      gb[c] = T(compute_t<T>(sg));
      gw[c] = T(compute_t<T>(sgx));
      const double mg = M ? sg / double(M) : 0.0, mgx = M ? sgx / double(M) : 0.0;
      // dx = k (g - mg - xhat mgx) = k g + (-k mg + k mu r mgx) - k r mgx x, k = w r
      // (k g with batch statistics off); per channel constants, then one fused pass.
      const double k = wc * r;
      const double kx = batch ? -k * r * mgx : 0.0, k0 = batch ? -k * mg + k * mu * r * mgx : 0.0;
      for (int64_t o = 0; o < outer; ++o) {
        const T *g = gp + (o * C + c) * inner, *xr = xp + (o * C + c) * inner;
        T* dst = gx + (o * C + c) * inner;
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i)
          dst[i] = T(compute_t<T>(k * double(compute_t<T>(g[i])) + kx * double(compute_t<T>(xr[i])) + k0));
      }
    }
  });
}

void batch_norm_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { batch_norm_grad_impl<decltype(t)>(in, out, a); });
}

// in: x, w, g; out: gx, gw, gb. Rows in parallel for gx, then columns in
// parallel for gw and gb so that no two threads add into one output.
// One pass over each row (it stays in L1): statistics, dx, and this part's
// running column sums for dw and db. Rows are split into a fixed number of
// parts whose partial sums are added in part order, so the result does not
// depend on thread scheduling.
template <typename T> void layer_norm_grad_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t begin = a.i(0);
  double eps = a.f(1);
  int64_t cols = 1;
  for (int64_t d = begin; d < x.dim(); ++d) cols *= x.shape()[d];
  int64_t rows = cols ? x.numel() / cols : 0;
  const T *xp = x.data<T>(), *w = in[1].data<T>(), *gp = in[2].data<T>();
  T *gx = out[0].data<T>(), *gw = out[1].data<T>(), *gb = out[2].data<T>();
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1));
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), rows / grain));
  std::vector<Acc> wcol(static_cast<size_t>(cols));
  for (int64_t i = 0; i < cols; ++i) wcol[size_t(i)] = Acc(compute_t<T>(w[i]));
  // per part: [sum g*xhat | sum g] over its rows
  std::vector<Acc> partial(static_cast<size_t>(parts * 2 * cols), Acc(0));
  parallel_for(parts, 1, [&](int64_t pb, int64_t pe) {
    std::vector<Acc> xr(static_cast<size_t>(cols)), gr(static_cast<size_t>(cols));
    for (int64_t part = pb; part < pe; ++part) {
      Acc* sw = partial.data() + part * 2 * cols;
      Acc* sb = sw + cols;
      const Acc* wc = wcol.data();
      for (int64_t r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
        const T* p = xp + r * cols;
        const T* g = gp + r * cols;
        Acc* xv = xr.data();
        Acc* gv = gr.data();
        Acc s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < cols; ++i) {
          xv[i] = Acc(compute_t<T>(p[i]));
          gv[i] = Acc(compute_t<T>(g[i]));
          s += xv[i];
        }
        const Acc mu = s / Acc(cols);
        Acc v = 0;
#pragma omp simd reduction(+ : v)
        for (int64_t i = 0; i < cols; ++i) {
          xv[i] -= mu;
          v += xv[i] * xv[i];
        }
        const Acc rs = Acc(1) / std::sqrt(v / Acc(cols) + Acc(eps));
        Acc sg = 0, sgx = 0;
#pragma omp simd reduction(+ : sg, sgx)
        for (int64_t i = 0; i < cols; ++i) {
          xv[i] *= rs;  // x hat
          Acc gw_i = gv[i] * wc[i];
          sg += gw_i;
          sgx += gw_i * xv[i];
          sw[i] += gv[i] * xv[i];
          sb[i] += gv[i];
        }
        sg /= Acc(cols);
        sgx /= Acc(cols);
        T* o = gx + r * cols;
#pragma omp simd
        for (int64_t i = 0; i < cols; ++i) o[i] = T(compute_t<T>(rs * (gv[i] * wc[i] - sg - xv[i] * sgx)));
      }
    }
  });
  for (int64_t i = 0; i < cols; ++i) {
    Acc sw = 0, sb = 0;
    for (int64_t part = 0; part < parts; ++part) {
      sw += partial[size_t(part * 2 * cols + i)];
      sb += partial[size_t(part * 2 * cols + cols + i)];
    }
    gw[i] = T(compute_t<T>(sw));
    gb[i] = T(compute_t<T>(sb));
  }
}

void layer_norm_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { layer_norm_grad_impl<decltype(t)>(in, out, a); });
}

// Row access for the rms_norm kernels: float/double rows are read and
// written in place; 16-bit rows are widened into a float buffer (and the
// results narrowed back) with the vector conversions, so that the arithmetic
// loops run on floats and vectorise.
template <typename T> struct RowIO {
  static constexpr bool kHalf = detail::is_half_v<T>;
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::vector<float> in0, in1, out;
  explicit RowIO(int64_t cols, int inputs)
      : in0(kHalf ? size_t(cols) : 0), in1(kHalf && inputs > 1 ? size_t(cols) : 0), out(kHalf ? size_t(cols) : 0) {}
  static const Acc* read(const T* p, std::vector<float>& buf, int64_t n) {
    if constexpr (kHalf) {
      detail::widen_block(p, buf.data(), n);
      return buf.data();
    } else {
      return p;
    }
  }
  Acc* dest(T* p) {
    if constexpr (kHalf) return out.data();
    else return p;
  }
  void commit(T* p, int64_t n) {
    if constexpr (kHalf) detail::narrow_block(out.data(), p, n);
  }
};

// The weight as accumulator values (ones without a weight).
template <typename T, typename Acc> std::vector<Acc> weight_column(const Tensor& w, int64_t cols) {
  std::vector<Acc> v(static_cast<size_t>(cols), Acc(1));
  if (w.defined()) {
    const T* p = w.data<T>();
    for (int64_t i = 0; i < cols; ++i) v[size_t(i)] = Acc(compute_t<T>(p[i]));
  }
  return v;
}

// (rows, columns) of x normalised over the dims from `begin` on.
std::pair<int64_t, int64_t> rows_cols(const Tensor& x, int64_t begin) {
  int64_t cols = 1;
  for (int64_t d = begin; d < x.dim(); ++d) cols *= x.shape()[d];
  return {cols ? x.numel() / cols : 0, cols};
}

// rms_norm: one pass for the row's sum of squares, one that scales (the row
// is still in cache). Float accumulators except for float64, as layer_norm.
template <typename T> void rms_norm_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  const auto [rows, cols] = rows_cols(x, a.i(0));
  using IO = RowIO<T>;
  using Acc = typename IO::Acc;
  const T* xp = x.data<T>();
  T* y = out[0].data<T>();
  const Acc eps = Acc(a.f(1));
  const bool weighted = in[1].defined();
  const std::vector<Acc> wcol = weight_column<T, Acc>(in[1], weighted ? cols : 0);
  const Acc* w = wcol.data();
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)), [&](int64_t rb, int64_t re) {
    IO io(cols, 1);
    for (int64_t r = rb; r < re; ++r) {
      const Acc* p = IO::read(xp + r * cols, io.in0, cols);
      Acc* q = io.dest(y + r * cols);
      Acc s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < cols; ++i) s += p[i] * p[i];
      const Acc rs = Acc(1) / std::sqrt(s / Acc(cols) + eps);
      if (weighted) {
#pragma omp simd
        for (int64_t i = 0; i < cols; ++i) q[i] = p[i] * rs * w[i];
      } else {
#pragma omp simd
        for (int64_t i = 0; i < cols; ++i) q[i] = p[i] * rs;
      }
      io.commit(y + r * cols, cols);
    }
  });
}

void rms_norm_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { rms_norm_impl<decltype(t)>(in, out, a); });
}

// in: x, w?, g; out: dx, dw ([0] unless attr weight_grad) (Note [rms_norm
// gradients]). Per row: one sweep for sum(x^2) and sum(g * w * x), one that
// writes dx and adds g * xhat into this part's dw partial. Rows are split into
// a fixed number of parts whose partials are added in part order, as
// layer_norm_grad does, so dw does not depend on thread scheduling.
template <typename T> void rms_norm_grad_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  const auto [rows, cols] = rows_cols(x, a.i(0));
  using IO = RowIO<T>;
  using Acc = typename IO::Acc;
  const Acc eps = Acc(a.f(1));
  const bool weight_grad = a.b(2) && in[1].defined();
  const T *xp = x.data<T>(), *gp = in[2].data<T>();
  T* gx = out[0].data<T>();
  const std::vector<Acc> wcol = weight_column<T, Acc>(in[1], cols);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1));
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), rows / grain));
  std::vector<Acc> partial(weight_grad ? static_cast<size_t>(parts * cols) : 0, Acc(0));
  parallel_for(parts, 1, [&](int64_t pb, int64_t pe) {
    const Acc* wc = wcol.data();
    IO io(cols, 2);
    for (int64_t part = pb; part < pe; ++part) {
      Acc* sw = weight_grad ? partial.data() + part * cols : nullptr;
      for (int64_t r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
        const Acc* p = IO::read(xp + r * cols, io.in0, cols);
        const Acc* g = IO::read(gp + r * cols, io.in1, cols);
        Acc* o = io.dest(gx + r * cols);
        Acc s = 0, sgx = 0;
#pragma omp simd reduction(+ : s, sgx)
        for (int64_t i = 0; i < cols; ++i) {
          s += p[i] * p[i];
          sgx += g[i] * wc[i] * p[i];
        }
        const Acc rs = Acc(1) / std::sqrt(s / Acc(cols) + eps);
        // dx = rs * gw - x * rs^3 * mean(gw * x)
        const Acc k = rs * rs * rs * sgx / Acc(cols);
        if (sw) {
#pragma omp simd
          for (int64_t i = 0; i < cols; ++i) {
            o[i] = rs * g[i] * wc[i] - p[i] * k;
            sw[i] += g[i] * p[i] * rs;
          }
        } else {
#pragma omp simd
          for (int64_t i = 0; i < cols; ++i) o[i] = rs * g[i] * wc[i] - p[i] * k;
        }
        io.commit(gx + r * cols, cols);
      }
    }
  });
  if (!weight_grad) return;
  T* gw = out[1].data<T>();
  for (int64_t i = 0; i < cols; ++i) {
    Acc sw = 0;
    for (int64_t part = 0; part < parts; ++part) sw += partial[size_t(part * cols + i)];
    gw[i] = T(compute_t<T>(sw));
  }
}

void rms_norm_grad_kernel(std::span<const Tensor> in_, std::span<Tensor> out, const Attrs& a) {
  const Tensors in = dense_inputs(in_);
  visit_float(in[0].dtype(), [&](auto t) { rms_norm_grad_impl<decltype(t)>(in, out, a); });
}

KernelRegistrar r3("batch_norm_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, batch_norm_grad_kernel);
KernelRegistrar r4("layer_norm_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, layer_norm_grad_kernel);
KernelRegistrar r1("batch_norm", DeviceType::CPU, OAR_FLOAT_DTYPES, batch_norm_kernel);
KernelRegistrar r2("layer_norm", DeviceType::CPU, OAR_FLOAT_DTYPES, layer_norm_kernel);
KernelRegistrar r5("rms_norm", DeviceType::CPU, OAR_FLOAT_DTYPES, rms_norm_kernel);
KernelRegistrar r6("rms_norm_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, rms_norm_grad_kernel);

}  // namespace
}  // namespace oar::cpu

// custom_cpu's layer kernels, float32: linear, relu, exp, conv with its two
// adjoints (conv_transpose, conv_grad_weight), max/avg pooling and their
// gradients, batch_norm and its fused gradient, softmax and log_softmax
// (softmax_grad too), and softmax cross entropy with its fused gradient.
// Plain loops with the CPU kernels' semantics (src/kernels/cpu); strided
// inputs are read through Dense copies.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "custom_cpu.h"
#include "kernel_util.h"

namespace custom_cpu {
namespace {

using oar::ext::Error;
using oar::ext::KernelContext;

// ---- linear: x [..., K] @ w [K, N] + b [N] --------------------------------------

void linear(KernelContext& ctx) {
  TensorView xv = ctx.input(0), wv = ctx.input(1), bv = ctx.input(2), out = ctx.output(0);
  const Dense<float> x(xv), w(wv), b(bv);
  const int64_t K = wv.shape(0), N = wv.shape(1), R = N ? out.numel() / N : 0;
  float* y = out.data<float>();
  for (int64_t r = 0; r < R; ++r) {
    float* row = y + r * N;
    for (int64_t n = 0; n < N; ++n) row[n] = b[n];
    for (int64_t k = 0; k < K; ++k) {
      const float a = x[r * K + k];
      const float* wk = w.get() + k * N;
      for (int64_t n = 0; n < N; ++n) row[n] += a * wk[n];
    }
  }
}

// ---- relu, exp ------------------------------------------------------------------------

void relu(KernelContext& ctx) {
  TensorView x = ctx.input(0), out = ctx.output(0);
  const float* a = x.data<float>();
  float* y = out.data<float>();
  // NaN passes through, as on the CPU.
  for_each_broadcast<1>(out, {x}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const float v = a[o[0]];
    y[i] = v > 0.0f || v != v ? v : 0.0f;
  });
}

// exp: log_softmax's gradient uses it.
void exp(KernelContext& ctx) {
  TensorView x = ctx.input(0), out = ctx.output(0);
  const float* a = x.data<float>();
  float* y = out.data<float>();
  for_each_broadcast<1>(out, {x}, [&](int64_t i, const std::array<int64_t, 1>& o) { y[i] = std::exp(a[o[0]]); });
}

// ---- conv ---------------------------------------------------------------------------------
// attrs: strides, pads_l, pads_r, dilations, groups, spatial. Spatial dims are
// padded to three (leading size-1 dims) as in src/kernels/cpu/conv.cpp.

struct ConvGeo {
  int64_t N, C, O, G, Cg, Og;
  int64_t i[3], o[3], k[3], s[3], p[3], d[3];
  // x: (N, C, *i), w: (O, C/G, *k), y: (N, O, *o)
  ConvGeo(const TensorView& x, const TensorView& w, const TensorView& y, const KernelContext& ctx) {
    N = x.shape(0); C = x.shape(1); O = w.shape(0); G = ctx.attr_int(4); Cg = C / G; Og = O / G;
    const int nsp = x.ndim() - 2, off = 3 - nsp;
    for (int j = 0; j < 3; ++j) { i[j] = o[j] = k[j] = s[j] = d[j] = 1; p[j] = 0; }
    auto strides = ctx.attr_ints(0), pads = ctx.attr_ints(1), dil = ctx.attr_ints(3);
    for (int j = 0; j < nsp; ++j) {
      i[off + j] = x.shape(2 + j); o[off + j] = y.shape(2 + j); k[off + j] = w.shape(2 + j);
      s[off + j] = strides[j]; p[off + j] = pads[j]; d[off + j] = dil[j];
    }
  }
  int64_t isz() const { return i[0] * i[1] * i[2]; }
  int64_t osz() const { return o[0] * o[1] * o[2]; }
  int64_t ksz() const { return k[0] * k[1] * k[2]; }
  // Calls f(input offset, output offset, tap offset) for every (output, tap)
  // pair whose input position lies inside the input.
  template <typename F> void each_tap(F&& f) const {
    for (int64_t a0 = 0; a0 < o[0]; ++a0)
      for (int64_t k0 = 0; k0 < k[0]; ++k0) {
        const int64_t j0 = a0 * s[0] - p[0] + k0 * d[0];
        if (j0 < 0 || j0 >= i[0]) continue;
        for (int64_t a1 = 0; a1 < o[1]; ++a1)
          for (int64_t k1 = 0; k1 < k[1]; ++k1) {
            const int64_t j1 = a1 * s[1] - p[1] + k1 * d[1];
            if (j1 < 0 || j1 >= i[1]) continue;
            for (int64_t a2 = 0; a2 < o[2]; ++a2)
              for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                const int64_t j2 = a2 * s[2] - p[2] + k2 * d[2];
                if (j2 < 0 || j2 >= i[2]) continue;
                f((j0 * i[1] + j1) * i[2] + j2, (a0 * o[1] + a1) * o[2] + a2, (k0 * k[1] + k1) * k[2] + k2);
              }
          }
      }
  }
};

void zero(const TensorView& t) { std::fill(t.data<float>(), t.data<float>() + t.numel(), 0.0f); }

// in: x (N, C, *i), w (O, C/G, *k); out: y (N, O, *o).
void conv(KernelContext& ctx) {
  TensorView xv = ctx.input(0), wv = ctx.input(1), yv = ctx.output(0);
  zero(yv);
  if (xv.numel() == 0 || wv.numel() == 0) return;
  const ConvGeo g(xv, wv, yv, ctx);
  const Dense<float> x(xv), w(wv);
  float* y = yv.data<float>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t oc = 0; oc < g.O; ++oc) {
      float* yp = y + (n * g.O + oc) * g.osz();
      const int64_t grp = oc / g.Og;
      for (int64_t ic = 0; ic < g.Cg; ++ic) {
        const float* xp = x.get() + (n * g.C + grp * g.Cg + ic) * g.isz();
        const float* wp = w.get() + (oc * g.Cg + ic) * g.ksz();
        g.each_tap([&](int64_t xi, int64_t yi, int64_t ki) { yp[yi] += xp[xi] * wp[ki]; });
      }
    }
}

// The adjoint in x. in: gy (N, O, *o), w (O, C/G, *k); out: gx (N, C, *spatial).
void conv_transpose(KernelContext& ctx) {
  TensorView gyv = ctx.input(0), wv = ctx.input(1), gxv = ctx.output(0);
  zero(gxv);
  if (gyv.numel() == 0 || wv.numel() == 0) return;
  const ConvGeo g(gxv, wv, gyv, ctx);
  const Dense<float> gy(gyv), w(wv);
  float* gx = gxv.data<float>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t oc = 0; oc < g.O; ++oc) {
      const float* yp = gy.get() + (n * g.O + oc) * g.osz();
      const int64_t grp = oc / g.Og;
      for (int64_t ic = 0; ic < g.Cg; ++ic) {
        float* xp = gx + (n * g.C + grp * g.Cg + ic) * g.isz();
        const float* wp = w.get() + (oc * g.Cg + ic) * g.ksz();
        g.each_tap([&](int64_t xi, int64_t yi, int64_t ki) { xp[xi] += yp[yi] * wp[ki]; });
      }
    }
}

// The adjoint in w. in: x (N, C, *i), gy (N, O, *o); out: gw (O, C/G, *k).
void conv_grad_weight(KernelContext& ctx) {
  TensorView xv = ctx.input(0), gyv = ctx.input(1), gwv = ctx.output(0);
  zero(gwv);
  if (xv.numel() == 0 || gyv.numel() == 0) return;
  const ConvGeo g(xv, gwv, gyv, ctx);
  const Dense<float> x(xv), gy(gyv);
  float* gw = gwv.data<float>();
  for (int64_t oc = 0; oc < g.O; ++oc)
    for (int64_t ic = 0; ic < g.Cg; ++ic) {
      float* wp = gw + (oc * g.Cg + ic) * g.ksz();
      const int64_t c = (oc / g.Og) * g.Cg + ic;
      for (int64_t n = 0; n < g.N; ++n) {
        const float* xp = x.get() + (n * g.C + c) * g.isz();
        const float* yp = gy.get() + (n * g.O + oc) * g.osz();
        g.each_tap([&](int64_t xi, int64_t yi, int64_t ki) { wp[ki] += xp[xi] * yp[yi]; });
      }
    }
}

// ---- pooling -------------------------------------------------------------------------
// attrs: kernel, strides, pads_l, pads_r, ceil_mode, adaptive, exclusive,
// spatial. Windows follow src/kernels/cpu/pool.cpp: fixed windows are clipped
// to the input, adaptive ones are [floor(a*I/O), ceil((a+1)*I/O)).

struct PoolGeo {
  int64_t planes;
  int64_t i[3], o[3], k[3], s[3], p[3];
  bool adaptive, exclusive;
  // x: (N, C, *i), y: (N, C, *o).
  PoolGeo(const TensorView& x, const TensorView& y, const KernelContext& ctx) {
    planes = x.shape(0) * x.shape(1);
    adaptive = ctx.attr_bool(5);
    exclusive = ctx.attr_bool(6);
    const int nsp = x.ndim() - 2, off = 3 - nsp;
    for (int j = 0; j < 3; ++j) { i[j] = o[j] = k[j] = s[j] = 1; p[j] = 0; }
    auto kernel = ctx.attr_ints(0), strides = ctx.attr_ints(1), pads = ctx.attr_ints(2);
    for (int j = 0; j < nsp; ++j) {
      i[off + j] = x.shape(2 + j);
      o[off + j] = y.shape(2 + j);
      if (!adaptive) { k[off + j] = kernel[j]; s[off + j] = strides[j]; p[off + j] = pads[j]; }
    }
  }
  int64_t isz() const { return i[0] * i[1] * i[2]; }
  int64_t osz() const { return o[0] * o[1] * o[2]; }
  void window(int j, int64_t a, int64_t& st, int64_t& en) const {
    if (adaptive) {
      st = a * i[j] / o[j];
      en = ((a + 1) * i[j] + o[j] - 1) / o[j];
    } else {
      st = a * s[j] - p[j];
      en = std::min(st + k[j], i[j]);
      st = std::max<int64_t>(st, 0);
    }
  }
  // Calls f(output index, window starts, window ends) for each output of a plane.
  template <typename F> void each_output(F&& f) const {
    int64_t st[3], en[3], idx = 0;
    for (int64_t a0 = 0; a0 < o[0]; ++a0) {
      window(0, a0, st[0], en[0]);
      for (int64_t a1 = 0; a1 < o[1]; ++a1) {
        window(1, a1, st[1], en[1]);
        for (int64_t a2 = 0; a2 < o[2]; ++a2) {
          window(2, a2, st[2], en[2]);
          f(idx++, st, en);
        }
      }
    }
  }
  float divisor(const int64_t* st, const int64_t* en) const {
    if (adaptive || exclusive) {
      int64_t n = 1;
      for (int j = 0; j < 3; ++j) n *= std::max<int64_t>(en[j] - st[j], 0);
      return float(n);
    }
    return float(k[0] * k[1] * k[2]);
  }
  // Calls f(input offset in the plane) for each element of a window.
  template <typename F> void each_in(const int64_t* st, const int64_t* en, F&& f) const {
    for (int64_t j0 = st[0]; j0 < en[0]; ++j0)
      for (int64_t j1 = st[1]; j1 < en[1]; ++j1)
        for (int64_t j2 = st[2]; j2 < en[2]; ++j2) f((j0 * i[1] + j1) * i[2] + j2);
  }
};

// out: values and the int32 plane offset of each window's first maximum (a
// NaN wins over numbers, and the first NaN stays).
void max_pool(KernelContext& ctx) {
  TensorView xv = ctx.input(0), yv = ctx.output(0), mv = ctx.output(1);
  if (yv.numel() == 0) return;
  const PoolGeo g(xv, yv, ctx);
  const Dense<float> x(xv);
  float* y = yv.data<float>();
  int32_t* mask = mv.data<int32_t>();
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const float* xp = x.get() + pl * g.isz();
    g.each_output([&](int64_t oi, const int64_t* st, const int64_t* en) {
      float best = 0.0f;
      int64_t arg = -1;
      g.each_in(st, en, [&](int64_t f) {
        const float v = xp[f];
        if (arg < 0 || v > best || (v != v && best == best)) { best = v; arg = f; }
      });
      y[pl * g.osz() + oi] = arg < 0 ? 0.0f : best;
      mask[pl * g.osz() + oi] = int32_t(arg < 0 ? 0 : arg);
    });
  }
}

// in: gy (N, C, *o), mask (N, C, *o); attrs: spatial. out: gx (N, C, *spatial).
void max_pool_grad(KernelContext& ctx) {
  TensorView gyv = ctx.input(0), mv = ctx.input(1), gxv = ctx.output(0);
  zero(gxv);
  const int64_t planes = gxv.shape(0) * gxv.shape(1);
  if (planes == 0) return;
  const int64_t isz = gxv.numel() / planes, osz = gyv.numel() / planes;
  const Dense<float> gy(gyv);
  const Dense<int32_t> mask(mv);
  float* gx = gxv.data<float>();
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o = 0; o < osz; ++o) {
      const int32_t m = mask[pl * osz + o];
      if (m >= 0 && m < isz) gx[pl * isz + m] += gy[pl * osz + o];
    }
}

void avg_pool(KernelContext& ctx) {
  TensorView xv = ctx.input(0), yv = ctx.output(0);
  if (yv.numel() == 0) return;
  const PoolGeo g(xv, yv, ctx);
  const Dense<float> x(xv);
  float* y = yv.data<float>();
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const float* xp = x.get() + pl * g.isz();
    g.each_output([&](int64_t oi, const int64_t* st, const int64_t* en) {
      float acc = 0.0f;
      g.each_in(st, en, [&](int64_t f) { acc += xp[f]; });
      const float d = g.divisor(st, en);
      y[pl * g.osz() + oi] = d > 0 ? acc / d : 0.0f;
    });
  }
}

// in: gy (N, C, *o); attrs as avg_pool (spatial: the input's). out: gx.
void avg_pool_grad(KernelContext& ctx) {
  TensorView gyv = ctx.input(0), gxv = ctx.output(0);
  zero(gxv);
  if (gxv.numel() == 0 || gyv.numel() == 0) return;
  const PoolGeo g(gxv, gyv, ctx);
  const Dense<float> gy(gyv);
  float* gx = gxv.data<float>();
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    float* xp = gx + pl * g.isz();
    g.each_output([&](int64_t oi, const int64_t* st, const int64_t* en) {
      const float d = g.divisor(st, en);
      if (d <= 0) return;
      const float v = gy[pl * g.osz() + oi] / d;
      g.each_in(st, en, [&](int64_t f) { xp[f] += v; });
    });
  }
}

// ---- batch_norm -------------------------------------------------------------------------
// attrs: axis, eps, use_batch_stats. Statistics in double, two-pass variance.

struct Channels {
  int64_t C, outer = 1, inner = 1;
  Channels(const TensorView& x, int64_t axis) : C(x.shape(int(axis))) {
    for (int d = 0; d < axis; ++d) outer *= x.shape(d);
    for (int d = int(axis) + 1; d < x.ndim(); ++d) inner *= x.shape(d);
  }
  int64_t count() const { return outer * inner; }
  // Calls f(flat offset) for every element of channel c.
  template <typename F> void each(int64_t c, F&& f) const {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) f((o * C + c) * inner + i);
  }
  // The channel's mean and (biased) variance.
  void stats(const float* x, int64_t c, double& mu, double& var) const {
    const int64_t M = count();
    double s = 0, q = 0;
    each(c, [&](int64_t f) { s += double(x[f]); });
    mu = M ? s / double(M) : 0.0;
    each(c, [&](int64_t f) { q += (double(x[f]) - mu) * (double(x[f]) - mu); });
    var = M ? q / double(M) : 0.0;
  }
};

// in: x, weight, bias, running mean, running var; out: y, batch mean, batch var.
void batch_norm(KernelContext& ctx) {
  TensorView xv = ctx.input(0);
  const Channels ch(xv, ctx.attr_int(0));
  const double eps = ctx.attr_float(1);
  const bool batch = ctx.attr_bool(2);
  const Dense<float> x(xv), w(ctx.input(1)), b(ctx.input(2)), rm(ctx.input(3)), rv(ctx.input(4));
  float* y = ctx.output(0).data<float>();
  float *bm = ctx.output(1).data<float>(), *bv = ctx.output(2).data<float>();
  for (int64_t c = 0; c < ch.C; ++c) {
    double mu, var;
    if (batch) ch.stats(x.get(), c, mu, var);
    else { mu = rm[c]; var = rv[c]; }
    bm[c] = float(mu);
    bv[c] = float(var);
    const double r = 1.0 / std::sqrt(var + eps);
    const float scale = float(double(w[c]) * r), shift = float(double(b[c]) - mu * double(w[c]) * r);
    ch.each(c, [&](int64_t f) { y[f] = x[f] * scale + shift; });
  }
}

// in: x, weight, grad of y, running mean, running var; out: gx, gw, gb.
void batch_norm_grad(KernelContext& ctx) {
  TensorView xv = ctx.input(0);
  const Channels ch(xv, ctx.attr_int(0));
  const double eps = ctx.attr_float(1);
  const bool batch = ctx.attr_bool(2);
  const Dense<float> x(xv), w(ctx.input(1)), g(ctx.input(2)), rm(ctx.input(3)), rv(ctx.input(4));
  float *gx = ctx.output(0).data<float>(), *gw = ctx.output(1).data<float>(), *gb = ctx.output(2).data<float>();
  const int64_t M = ch.count();
  for (int64_t c = 0; c < ch.C; ++c) {
    double mu, var;
    if (batch) ch.stats(x.get(), c, mu, var);
    else { mu = rm[c]; var = rv[c]; }
    const double r = 1.0 / std::sqrt(var + eps), wc = w[c];
    double sg = 0, sgx = 0;
    ch.each(c, [&](int64_t f) {
      sg += double(g[f]);
      sgx += double(g[f]) * (double(x[f]) - mu) * r;
    });
    gb[c] = float(sg);
    gw[c] = float(sgx);
    const double mg = M ? sg / double(M) : 0.0, mgx = M ? sgx / double(M) : 0.0;
    ch.each(c, [&](int64_t f) {
      const double xh = (double(x[f]) - mu) * r;
      gx[f] = float(batch ? wc * r * (double(g[f]) - mg - xh * mgx) : wc * r * double(g[f]));
    });
  }
}

// ---- softmax, log_softmax: attrs axis; softmax_grad(y, g) along axis ----------------------
// x viewed as [outer, n, inner] with the axis in the middle.

struct AxisGeo {
  int64_t outer = 1, n = 1, inner = 1;
  AxisGeo(const TensorView& x, int64_t axis) {
    if (axis < 0) axis += x.ndim();
    for (int d = 0; d < x.ndim(); ++d) (d < axis ? outer : d == axis ? n : inner) *= x.shape(d);
  }
};

template <bool Log> void softmax(KernelContext& ctx) {
  TensorView xv = ctx.input(0), out = ctx.output(0);
  const AxisGeo g(xv, ctx.attr_int(0));
  const Dense<float> x(xv);
  float* y = out.data<float>();
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t c = 0; c < g.inner; ++c) {
      const int64_t base = o * g.n * g.inner + c;
      auto at = [&](int64_t j) { return base + j * g.inner; };
      float m = -INFINITY;
      for (int64_t j = 0; j < g.n; ++j) m = std::isnan(x[at(j)]) || std::isnan(m) ? NAN : std::max(m, x[at(j)]);
      if (!std::isfinite(m)) m = std::isnan(m) ? m : (m > 0 ? m : 0.0f);  // all -inf rows, +inf entries
      float sum = 0.0f;
      for (int64_t j = 0; j < g.n; ++j) sum += std::exp(x[at(j)] - m);
      const float ls = std::log(sum);
      for (int64_t j = 0; j < g.n; ++j) y[at(j)] = Log ? x[at(j)] - m - ls : std::exp(x[at(j)] - m) / sum;
    }
}

// dx = y (g - sum(g y)).
void softmax_grad(KernelContext& ctx) {
  TensorView yv = ctx.input(0), out = ctx.output(0);
  const AxisGeo g(yv, ctx.attr_int(0));
  const Dense<float> y(yv), gy(ctx.input(1));
  float* dx = out.data<float>();
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t c = 0; c < g.inner; ++c) {
      const int64_t base = o * g.n * g.inner + c;
      float s = 0.0f;
      for (int64_t j = 0; j < g.n; ++j) s += gy[base + j * g.inner] * y[base + j * g.inner];
      for (int64_t j = 0; j < g.n; ++j) {
        const int64_t f = base + j * g.inner;
        dx[f] = y[f] * (gy[f] - s);
      }
    }
}

// ---- softmax cross entropy -----------------------------------------------------------
// in: logits [..., classes], labels [..., 1] (int64 or int32); attrs:
// ignore_index; out: loss [..., 1] and the row's log-sum-exp [..., 1].

template <typename F> void with_labels(const TensorView& lv, F&& f) {
  if (lv.dtype() == oar::ext::kInt64) {
    const Dense<int64_t> l(lv);
    f([&](int64_t r) { return l[r]; });
  } else if (lv.dtype() == oar::ext::kInt32) {
    const Dense<int32_t> l(lv);
    f([&](int64_t r) { return int64_t(l[r]); });
  } else {
    throw Error(OAR_ERROR_UNSUPPORTED, "labels must be int32 or int64 on custom_cpu");
  }
}

void softmax_cross_entropy(KernelContext& ctx) {
  TensorView xv = ctx.input(0), lv = ctx.input(1);
  const int64_t ignore = ctx.attr_int(0);
  const int64_t classes = xv.shape(xv.ndim() - 1), rows = classes ? xv.numel() / classes : lv.numel();
  const Dense<float> x(xv);
  float *loss = ctx.output(0).data<float>(), *lse = ctx.output(1).data<float>();
  with_labels(lv, [&](auto label) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t y = label(r);
      if (y != ignore && (y < 0 || y >= classes))
        throw Error(OAR_ERROR_INVALID_ARGUMENT, "[oar.nn.functional.cross_entropy] labels must be in [0, " +
                                                   std::to_string(classes) + ") or equal ignore_index (" +
                                                   std::to_string(ignore) + "), got " + std::to_string(y));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.get() + r * classes;
      float m = -INFINITY;
      for (int64_t j = 0; j < classes; ++j) m = std::isnan(xr[j]) || std::isnan(m) ? NAN : std::max(m, xr[j]);
      if (!std::isfinite(m)) m = std::isnan(m) ? m : (m > 0 ? m : 0.0f);
      float s = 0.0f;
      for (int64_t j = 0; j < classes; ++j) s += std::exp(xr[j] - m);
      const float l = m + std::log(s);
      lse[r] = l;
      const int64_t y = label(r);
      loss[r] = y == ignore || classes == 0 ? 0.0f : l - xr[y];
    }
  });
}

// in: logits, labels, log-sum-exp, grad of loss; out: grad of logits.
void softmax_cross_entropy_grad(KernelContext& ctx) {
  TensorView xv = ctx.input(0), lv = ctx.input(1), out = ctx.output(0);
  const int64_t ignore = ctx.attr_int(0);
  const int64_t classes = xv.shape(xv.ndim() - 1), rows = classes ? xv.numel() / classes : 0;
  const Dense<float> x(xv), lse(ctx.input(2)), g(ctx.input(3));
  float* dx = out.data<float>();
  with_labels(lv, [&](auto label) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.get() + r * classes;
      float* dr = dx + r * classes;
      const int64_t y = label(r);
      if (y == ignore) {
        std::fill(dr, dr + classes, 0.0f);
        continue;
      }
      const float gr = g[r];
      for (int64_t j = 0; j < classes; ++j) dr[j] = std::exp(xr[j] - lse[r]) * gr;
      dr[y] -= gr;
    }
  });
}

const RegisterKernels reg([] {
  using oar::ext::kFloat32;
  add_kernel("linear", {kFloat32}, linear);
  add_kernel("relu", {kFloat32}, relu);
  add_kernel("exp", {kFloat32}, exp);
  add_kernel("conv", {kFloat32}, conv);
  add_kernel("conv_transpose", {kFloat32}, conv_transpose);
  add_kernel("conv_grad_weight", {kFloat32}, conv_grad_weight);
  add_kernel("max_pool", {kFloat32}, max_pool);
  add_kernel("max_pool_grad", {kFloat32}, max_pool_grad);
  add_kernel("avg_pool", {kFloat32}, avg_pool);
  add_kernel("avg_pool_grad", {kFloat32}, avg_pool_grad);
  add_kernel("batch_norm", {kFloat32}, batch_norm);
  add_kernel("batch_norm_grad", {kFloat32}, batch_norm_grad);
  add_kernel("softmax", {kFloat32}, softmax<false>);
  add_kernel("log_softmax", {kFloat32}, softmax<true>);
  add_kernel("softmax_grad", {kFloat32}, softmax_grad);
  add_kernel("softmax_cross_entropy", {kFloat32}, softmax_cross_entropy);
  add_kernel("softmax_cross_entropy_grad", {kFloat32}, softmax_cross_entropy_grad);
});

}  // namespace
}  // namespace custom_cpu

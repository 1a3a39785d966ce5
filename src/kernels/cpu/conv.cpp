// Convolution kernels. float32 and bfloat16 run on oneDNN; float64 runs on the
// direct loops below, written in gather form so threads never share outputs.
//
// Note [bfloat16 convolution]
// bfloat16 convolutions run oneDNN's native bfloat16 kernels on CPUs with
// AVX512-BF16 and no AMX (about twice the float32 speed on an AMD Zen 4).
// With AMX they convert to float32, run the float32 kernels and round the
// result back: oneDNN 2.6's AMX bfloat16 convolutions gave NaN gradients
// nondeterministically when training a ResNet under autocast (about 1 run in
// 3 after other bfloat16 work in the process; never with AMX off). CPUs with
// neither also go through float32 (oneDNN would emulate bfloat16 there).
// Revisit AMX with a newer oneDNN. (bfloat16 matmul keeps its native kernels.)
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "tensor/autograd_meta.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/handoff.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/winograd.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

using dnnl::memory;
namespace du = dnnl_util;

// Geometry padded to three spatial dims (leading size-1 dims) for the loops.
struct Geo {
  int64_t N, C, O, G, Cg, Og;
  int64_t i[3], o[3], k[3], s[3], p[3], d[3];
  // x: (N, C, *i), w: (O, Cg, *k), y: (N, O, *o)
  Geo(const Dims& xs, const Dims& ws, const Dims& ys, const Attrs& a) {
    N = xs[0]; C = xs[1]; O = ws[0]; G = a.i(4); Cg = C / G; Og = O / G;
    int nsp = int(xs.size()) - 2, off = 3 - nsp;
    for (int j = 0; j < 3; ++j) { i[j] = o[j] = k[j] = s[j] = d[j] = 1; p[j] = 0; }
    for (int j = 0; j < nsp; ++j) {
      i[off + j] = xs[2 + j]; o[off + j] = ys[2 + j]; k[off + j] = ws[2 + j];
      s[off + j] = a.ints(0)[j]; p[off + j] = a.ints(1)[j]; d[off + j] = a.ints(3)[j];
    }
  }
  int64_t isz() const { return i[0] * i[1] * i[2]; }
  int64_t osz() const { return o[0] * o[1] * o[2]; }
  int64_t ksz() const { return k[0] * k[1] * k[2]; }
};

template <typename T> void conv_fwd_loops(const Geo& g, const T* x, const T* w, T* y) {
  parallel_for(g.N * g.O, 1, [&](int64_t b, int64_t e) {
    for (int64_t no = b; no < e; ++no) {
      int64_t n = no / g.O, oc = no % g.O, grp = oc / g.Og;
      T* yp = y + no * g.osz();
      for (int64_t a0 = 0; a0 < g.o[0]; ++a0)
        for (int64_t a1 = 0; a1 < g.o[1]; ++a1)
          for (int64_t a2 = 0; a2 < g.o[2]; ++a2) {
            T acc = 0;
            for (int64_t ic = 0; ic < g.Cg; ++ic) {
              const T* xp = x + (n * g.C + grp * g.Cg + ic) * g.isz();
              const T* wp = w + (oc * g.Cg + ic) * g.ksz();
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                int64_t j0 = a0 * g.s[0] - g.p[0] + k0 * g.d[0];
                if (j0 < 0 || j0 >= g.i[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  int64_t j1 = a1 * g.s[1] - g.p[1] + k1 * g.d[1];
                  if (j1 < 0 || j1 >= g.i[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    int64_t j2 = a2 * g.s[2] - g.p[2] + k2 * g.d[2];
                    if (j2 < 0 || j2 >= g.i[2]) continue;
                    acc += xp[(j0 * g.i[1] + j1) * g.i[2] + j2] * wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
            *yp++ = acc;
          }
    }
  });
}

// Input index along one dim reached from output a with tap k, or -1.
inline int64_t src_of(int64_t j, int64_t k, int64_t s, int64_t p, int64_t d, int64_t osz) {
  int64_t t = j + p - k * d;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < osz ? t : -1;
}

template <typename T> void conv_bwd_data_loops(const Geo& g, const T* gy, const T* w, T* gx) {
  parallel_for(g.N * g.C, 1, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      int64_t n = nc / g.C, c = nc % g.C, grp = c / g.Cg, ic = c % g.Cg;
      T* xp = gx + nc * g.isz();
      for (int64_t j0 = 0; j0 < g.i[0]; ++j0)
        for (int64_t j1 = 0; j1 < g.i[1]; ++j1)
          for (int64_t j2 = 0; j2 < g.i[2]; ++j2) {
            T acc = 0;
            for (int64_t oc = grp * g.Og; oc < (grp + 1) * g.Og; ++oc) {
              const T* yp = gy + (n * g.O + oc) * g.osz();
              const T* wp = w + (oc * g.Cg + ic) * g.ksz();
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                int64_t a0 = src_of(j0, k0, g.s[0], g.p[0], g.d[0], g.o[0]);
                if (a0 < 0) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  int64_t a1 = src_of(j1, k1, g.s[1], g.p[1], g.d[1], g.o[1]);
                  if (a1 < 0) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    int64_t a2 = src_of(j2, k2, g.s[2], g.p[2], g.d[2], g.o[2]);
                    if (a2 < 0) continue;
                    acc += yp[(a0 * g.o[1] + a1) * g.o[2] + a2] * wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
            *xp++ = acc;
          }
    }
  });
}

template <typename T> void conv_bwd_weight_loops(const Geo& g, const T* x, const T* gy, T* gw) {
  parallel_for(g.O * g.Cg, 1, [&](int64_t b, int64_t e) {
    for (int64_t oi = b; oi < e; ++oi) {
      int64_t oc = oi / g.Cg, ic = oi % g.Cg, c = (oc / g.Og) * g.Cg + ic;
      T* wp = gw + oi * g.ksz();
      for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
          for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
            T acc = 0;
            for (int64_t n = 0; n < g.N; ++n) {
              const T* xp = x + (n * g.C + c) * g.isz();
              const T* yp = gy + (n * g.O + oc) * g.osz();
              for (int64_t a0 = 0; a0 < g.o[0]; ++a0) {
                int64_t j0 = a0 * g.s[0] - g.p[0] + k0 * g.d[0];
                if (j0 < 0 || j0 >= g.i[0]) continue;
                for (int64_t a1 = 0; a1 < g.o[1]; ++a1) {
                  int64_t j1 = a1 * g.s[1] - g.p[1] + k1 * g.d[1];
                  if (j1 < 0 || j1 >= g.i[1]) continue;
                  for (int64_t a2 = 0; a2 < g.o[2]; ++a2) {
                    int64_t j2 = a2 * g.s[2] - g.p[2] + k2 * g.d[2];
                    if (j2 < 0 || j2 >= g.i[2]) continue;
                    acc += xp[(j0 * g.i[1] + j1) * g.i[2] + j2] * yp[(a0 * g.o[1] + a1) * g.o[2] + a2];
                  }
                }
              }
            }
            *wp++ = acc;
          }
    }
  });
}

// ---- oneDNN

enum class Kind { Fwd, BwdData, BwdWeight };

memory::dims mdims(const Dims& d) { return memory::dims(d.begin(), d.end()); }

// Weight descriptor: (G, O/G, C/G, *k) when grouped; same bytes as (O, C/G, *k).
memory::desc weight_md(const Dims& ws, int64_t groups, DType dt) {
  if (groups == 1) return du::plain_md(ws, dt);
  Dims gw{groups, ws[0] / groups};
  for (size_t i = 1; i < ws.size(); ++i) gw.push_back(ws[i]);
  return du::plain_md(gw, dt);
}

// Runs the convolution of `kind` on oneDNN. x, w, y are the forward shapes; the
// tensors are (src, weights, dst) data in the roles of that kind.
void onednn_conv(Kind kind, const Tensor& src, const Tensor& wei, const Tensor& dst, const Dims& xs,
                 const Dims& ws, const Dims& ys, const Attrs& a, DType dt) {
  int64_t G = a.i(4);
  Dims dil_m1;
  for (int64_t v : a.ints(3)) dil_m1.push_back(v - 1);
  std::string key = std::to_string(int(kind)) + dtype_name(dt) + du::key_dims(xs) + du::key_dims(ws) +
                    du::key_dims(ys) + du::key_dims(a.ints(0)) + du::key_dims(a.ints(1)) +
                    du::key_dims(a.ints(2)) + du::key_dims(dil_m1) + std::to_string(G);
  memory::desc xmd = du::plain_md(xs, dt), wmd = weight_md(ws, G, dt), ymd = du::plain_md(ys, dt);
  memory::dims st = mdims(a.ints(0)), pl = mdims(a.ints(1)), pr = mdims(a.ints(2)), dl = mdims(dil_m1);
  du::Prim prim = du::cached(key, [&]() -> du::Prim {
    using namespace dnnl;
    auto any = [&](const memory::desc& md) { return memory::desc(md.dims(), du::data_type(dt), memory::format_tag::any); };
    memory::desc xa = any(xmd), wa = any(wmd), ya = any(ymd);
    auto fwd_pd = convolution_forward::primitive_desc(
        convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, xa, wa, ya, st, dl, pl, pr),
        du::attr(), du::engine());
    if (kind == Kind::Fwd)
      return {convolution_forward(fwd_pd), {fwd_pd.src_desc(), fwd_pd.weights_desc(), fwd_pd.dst_desc()}};
    if (kind == Kind::BwdData) {
      auto pd = convolution_backward_data::primitive_desc(
          convolution_backward_data::desc(algorithm::convolution_direct, xa, wa, ya, st, dl, pl, pr), du::attr(),
          du::engine(), fwd_pd);
      return {convolution_backward_data(pd), {pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc()}};
    }
    auto pd = convolution_backward_weights::primitive_desc(
        convolution_backward_weights::desc(algorithm::convolution_direct, xa, wa, ya, st, dl, pl, pr), du::attr(),
        du::engine(), fwd_pd);
    return {convolution_backward_weights(pd), {pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc()}};
  });
  const std::vector<memory::desc>& m = prim.mds;
  if (kind == Kind::Fwd) {
    du::execute(prim, {{DNNL_ARG_SRC, &src, xmd, m[0], false}, {DNNL_ARG_WEIGHTS, &wei, wmd, m[1], false},
                       {DNNL_ARG_DST, &dst, ymd, m[2], true}}, key);
  } else if (kind == Kind::BwdData) {
    du::execute(prim, {{DNNL_ARG_DIFF_SRC, &src, xmd, m[0], true}, {DNNL_ARG_WEIGHTS, &wei, wmd, m[1], false},
                       {DNNL_ARG_DIFF_DST, &dst, ymd, m[2], false}}, key);
  } else {
    du::execute(prim, {{DNNL_ARG_SRC, &src, xmd, m[0], false}, {DNNL_ARG_DIFF_WEIGHTS, &wei, wmd, m[1], true},
                       {DNNL_ARG_DIFF_DST, &dst, ymd, m[2], false}}, key);
  }
}

Tensor to_f32(const Tensor& t) {
  Tensor o = empty_tensor(t.shape(), DType::Float32);
  elementwise<float, bfloat16>(o, [](float v) { return v; }, t);
  return o;
}

// Runs `kind` on tensors in the forward roles (src, wei, dst); the one that
// `kind` computes is written. bfloat16: Note [bfloat16 convolution].
void run_conv(Kind kind, const Tensor& src, const Tensor& wei, const Tensor& dst, const Dims& xs, const Dims& ws,
              const Dims& ys, const Attrs& a) {
  DType dt = src.dtype();
  if (dt == DType::Float64) {
    Geo g(xs, ws, ys, a);
    if (kind == Kind::Fwd) conv_fwd_loops(g, src.data<double>(), wei.data<double>(), dst.data<double>());
    else if (kind == Kind::BwdData) conv_bwd_data_loops(g, dst.data<double>(), wei.data<double>(), src.data<double>());
    else conv_bwd_weight_loops(g, src.data<double>(), dst.data<double>(), wei.data<double>());
    return;
  }
  if (dt == DType::BFloat16 && du::native_bf16() && !du::has_amx()) {  // Note [bfloat16 convolution]
    try {
      onednn_conv(kind, src, wei, dst, xs, ws, ys, a, DType::BFloat16);
    } catch (const dnnl::error& e) {
      fail(ErrorKind::Runtime, "[oar.conv] oneDNN could not run the convolution: ", e.what());
    }
    return;
  }
  if (dt == DType::BFloat16) {
    // Note [bfloat16 convolution]: through float32 (the operand `kind`
    // computes is written, not read: it is not converted).
    auto in_f32 = [&](const Tensor& t, bool written) {
      return written ? empty_tensor(t.shape(), DType::Float32) : to_f32(t);
    };
    Tensor s = in_f32(src, kind == Kind::BwdData), w = in_f32(wei, kind == Kind::BwdWeight),
           d = in_f32(dst, kind == Kind::Fwd);
    try {
      onednn_conv(kind, s, w, d, xs, ws, ys, a, DType::Float32);
    } catch (const dnnl::error& e) {
      fail(ErrorKind::Runtime, "[oar.conv] oneDNN could not run the convolution: ", e.what());
    }
    const Tensor& res = kind == Kind::Fwd ? d : kind == Kind::BwdData ? s : w;
    Tensor out = kind == Kind::Fwd ? dst : kind == Kind::BwdData ? src : wei;
    elementwise<bfloat16, float>(out, [](float v) { return v; }, res);
    return;
  }
  try {
    onednn_conv(kind, src, wei, dst, xs, ws, ys, a, DType::Float32);
  } catch (const dnnl::error& e) {
    fail(ErrorKind::Runtime, "[oar.conv] oneDNN could not run the convolution: ", e.what());
  }
}

bool empty_any(std::initializer_list<const Tensor*> ts) {
  for (auto* t : ts) if (t->numel() == 0) return true;
  return false;
}

void zero_fill(Tensor& t) { if (t.numel()) std::memset(t.raw_data(), 0, size_t(t.numel()) * t.itemsize()); }

void conv_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor &x = in[0], &w = in[1];
  Tensor& y = out[0];
  if (empty_any({&x, &w, &y})) { zero_fill(y); return; }
  run_conv(Kind::Fwd, x, w, y, x.shape(), w.shape(), y.shape(), a);
}

void conv_transpose_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor &gy = in[0], &w = in[1];
  Tensor& gx = out[0];
  if (empty_any({&gy, &w, &gx})) { zero_fill(gx); return; }
  run_conv(Kind::BwdData, gx, w, gy, gx.shape(), w.shape(), gy.shape(), a);
}

void conv_grad_weight_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor &x = in[0], &gy = in[1];
  Tensor& gw = out[0];
  if (empty_any({&x, &gy, &gw})) { zero_fill(gw); return; }
  run_conv(Kind::BwdWeight, x, gw, gy, x.shape(), gw.shape(), gy.shape(), a);
}

// float16 runs through float32: oneDNN has no float16 convolution on most CPUs.
template <KernelFn K> void widen_float16(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (in[0].dtype() != DType::Float16) return K(in, out, a);
  Tensor wide[2] = {ops::cast(in[0], DType::Float32), ops::cast(in[1], DType::Float32)};
  Tensor o = empty_tensor(out[0].shape(), DType::Float32);
  K(std::span<const Tensor>(wide, 2), std::span<Tensor>(&o, 1), a);
  ops::copy_(out[0], o);
}

#define OAR_CONV_DTYPES { DType::Float16, DType::BFloat16, DType::Float32, DType::Float64 }
// ---- fused_conv: act(conv(x, w) + bias + residual) as one oneDNN primitive
// (bias argument, then a sum post-op that adds the residual already in the
// destination, then an eltwise post-op).

thread_local bool t_winograd = false;

// Note [winograd convolution]: float32, one group, 3x3 with stride and
// dilation 1, 32 channels or more in and out, 128 output pixels or more
// over the batch (a 7x7 output at batch 1 is 16 2x2 tiles for 49 pixels).
bool winograd_fits(const Dims& xs, const Dims& ws, const Dims& ys, const Attrs& a, DType dt) {
  return t_winograd && dt == DType::Float32 && a.i(4) == 1 && ws.size() == 4 && ws[2] == 3 && ws[3] == 3 &&
         xs[1] >= 32 && ws[0] >= 32 && ys[0] * ys[2] * ys[3] >= 128 && a.ints(0) == Dims{1, 1} &&
         a.ints(3) == Dims{1, 1};
}

void onednn_fused_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& r, const Tensor& y,
                       const Attrs& a, DType dt) {
  const Dims &xs = x.shape(), &ws = w.shape(), &ys = y.shape();
  const int64_t G = a.i(4);
  Dims dil_m1;
  for (int64_t v : a.ints(3)) dil_m1.push_back(v - 1);
  const std::string& act = a.s(6);
  const bool wino = winograd_fits(xs, ws, ys, a, dt);
  std::string key = std::string(wino ? "fused_wino" : "fused") + dtype_name(dt) + du::key_dims(xs) +
                    du::key_dims(ws) + du::key_dims(ys) + du::key_dims(a.ints(0)) + du::key_dims(a.ints(1)) +
                    du::key_dims(a.ints(2)) + du::key_dims(dil_m1) + std::to_string(G) + (b.defined() ? "b" : "") + (r.defined() ? "r" : "") +
                    act + (act == "clip" ? std::to_string(a.f(7)) + "," + std::to_string(a.f(8)) : std::string());
  memory::desc xmd = du::plain_md(xs, dt), wmd = weight_md(ws, G, dt), ymd = du::plain_md(ys, dt);
  memory::desc bmd = du::plain_md(Dims{ys[1]}, dt);
  du::Prim prim = du::cached(key, [&]() -> du::Prim {
    using namespace dnnl;
    auto any = [&](const memory::desc& md) { return memory::desc(md.dims(), du::data_type(dt), memory::format_tag::any); };
    memory::dims st = mdims(a.ints(0)), pl = mdims(a.ints(1)), pr = mdims(a.ints(2)), dl = mdims(dil_m1);
    auto desc = [&](algorithm alg) {
      return b.defined() ? convolution_forward::desc(prop_kind::forward_inference, alg, any(xmd), any(wmd), bmd,
                                                     any(ymd), st, dl, pl, pr)
                         : convolution_forward::desc(prop_kind::forward_inference, alg, any(xmd), any(wmd), any(ymd),
                                                     st, dl, pl, pr);
    };
    post_ops po;
    if (r.defined()) po.append_sum(1.0f);
    if (!act.empty()) {
      float alpha, beta;
      algorithm alg = du::eltwise_alg(act, float(a.f(7)), float(a.f(8)), &alpha, &beta);
      po.append_eltwise(1.0f, alg, alpha, beta);
    }
    primitive_attr attr = du::attr();
    attr.set_post_ops(po);
    convolution_forward::primitive_desc pd;
    if (wino) {
      try {
        pd = convolution_forward::primitive_desc(desc(algorithm::convolution_winograd), attr, du::engine());
      } catch (const dnnl::error&) {  // no Winograd kernel for this CPU, shape or padding
      }
    }
    if (!pd) pd = convolution_forward::primitive_desc(desc(algorithm::convolution_direct), attr, du::engine());
    return {convolution_forward(pd), {pd.src_desc(), pd.weights_desc(), pd.dst_desc()}};
  });
  const std::vector<memory::desc>& m = prim.mds;
  // The sum post-op reads the destination: it starts as the residual.
  std::vector<du::Arg> args{{DNNL_ARG_SRC, &x, xmd, m[0], false}, {DNNL_ARG_WEIGHTS, &w, wmd, m[1], false},
                            {DNNL_ARG_DST, &y, ymd, m[2], true, r.defined() ? &r : nullptr}};
  if (b.defined()) args.push_back({DNNL_ARG_BIAS, &b, bmd, bmd, false});
  du::execute(prim, args, key);
}

void fused_conv_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor &x = in[0], &w = in[1], &b = in[2], &r = in[3];
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  if (x.numel() == 0 || w.numel() == 0) {  // an empty sum: the output is act(bias + residual)
    if (r.defined()) materialize_layout_handoff(r);
    NoGradGuard ng;
    Tensor z = ops::zeros(y.shape(), y.dtype());
    if (b.defined()) z = ops::add(z, ops::reshape(b, Dims{1, y.shape()[1], 1, 1}));
    if (r.defined()) z = ops::add(z, r);
    const std::string& act = a.s(6);
    if (act == "clip") {
      z = ops::clip(z, std::isfinite(a.f(7)) ? std::optional<Scalar>(a.f(7)) : std::nullopt,
                    std::isfinite(a.f(8)) ? std::optional<Scalar>(a.f(8)) : std::nullopt);
    } else if (!act.empty()) {
      fail(ErrorKind::NotImplemented, "[oar.fused_conv] an empty input with activation '", act, "'");
    }
    ops::copy_(y, z);
    return;
  }
  if (x.dtype() == DType::BFloat16) {
    // Note [bfloat16 convolution]: through float32, on copies that the
    // layout hand-off must not keep.
    LayoutHandoffOff off;
    Tensor yf = empty_tensor(y.shape(), DType::Float32);
    Tensor bf = b.defined() ? to_f32(b) : Tensor(), rf = r.defined() ? to_f32(r) : Tensor();
    try {
      onednn_fused_conv(to_f32(x), to_f32(w), bf, rf, yf, a, DType::Float32);
    } catch (const dnnl::error& e) {
      fail(ErrorKind::Runtime, "[oar.fused_conv] oneDNN could not run the convolution: ", e.what());
    }
    elementwise<bfloat16, float>(y, [](float v) { return v; }, yf);
    return;
  }
  try {
    onednn_fused_conv(x, w, b, r, y, a, DType::Float32);
  } catch (const dnnl::error& e) {
    fail(ErrorKind::Runtime, "[oar.fused_conv] oneDNN could not run the convolution: ", e.what());
  }
}

KernelRegistrar r1("conv", DeviceType::CPU, OAR_CONV_DTYPES, widen_float16<conv_kernel>);
KernelRegistrar r4("fused_conv", DeviceType::CPU, {DType::Float32, DType::BFloat16}, fused_conv_kernel);
KernelRegistrar r2("conv_transpose", DeviceType::CPU, OAR_CONV_DTYPES, widen_float16<conv_transpose_kernel>);
KernelRegistrar r3("conv_grad_weight", DeviceType::CPU, OAR_CONV_DTYPES, widen_float16<conv_grad_weight_kernel>);

}  // namespace

WinogradConvScope::WinogradConvScope(bool on) : prev_(t_winograd) { t_winograd = on; }
WinogradConvScope::~WinogradConvScope() { t_winograd = prev_; }

}  // namespace oar::cpu

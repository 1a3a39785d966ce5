// Convolution and its two adjoints (kernels/cpu/conv.cpp).
//
// Note [conv gradients]
// conv(x, w) is bilinear, so each of its gradients is again one of three
// bilinear ops: conv, conv_transpose (the adjoint in x) and conv_grad_weight
// (the adjoint in w). Every rule below is written with these three, so
// gradients of any order are convolutions with their own fast kernels.
#include "ops/conv.h"
#include "ops/autocast.h"

#include "ops/grad.h"
#include "ops/dispatch.h"

namespace oar {
namespace {

using namespace ops;

ConvParams params_of(const Attrs& a) { return conv_params(a); }

void check_params(const ConvParams& p, size_t nsp, const char* api) {
  OAR_CHECK(p.strides.size() == nsp && p.pads_l.size() == nsp && p.pads_r.size() == nsp &&
                p.dilations.size() == nsp,
            Value, "[", api, "] stride, padding and dilation need ", nsp, " entries each");
  for (size_t i = 0; i < nsp; ++i) {
    OAR_CHECK(p.strides[i] > 0, Value, "[", api, "] stride must be positive, got ", shape_str(p.strides));
    OAR_CHECK(p.dilations[i] > 0, Value, "[", api, "] dilation must be positive, got ", shape_str(p.dilations));
    OAR_CHECK(p.pads_l[i] >= 0 && p.pads_r[i] >= 0, Value, "[", api, "] padding must be non-negative, got ",
              shape_str(p.pads_l), " and ", shape_str(p.pads_r));
  }
  OAR_CHECK(p.groups > 0, Value, "[", api, "] groups must be positive, got ", p.groups);
}

void check_dtypes(const Tensor& a, const Tensor& b, const char* api) {
  OAR_CHECK(a.dtype() == b.dtype(), Type, "[", api, "] input and weight must have the same dtype, got ",
            dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  OAR_CHECK(is_floating(a.dtype()), Type, "[", api, "] supports float16, bfloat16, float32 and float64, got ",
            dtype_name(a.dtype()));
}

// Before dispatch: under autocast the dtypes are made to agree in stage 3, and
// infer_meta checks them afterwards.
void check_api_dtypes(const Tensor& a, const Tensor& b, const char* api) {
  if (!autocast_config().enabled) check_dtypes(a, b, api);
}

// Output spatial shape of conv(x_spatial, k_spatial), with every check.
Dims conv_out_spatial(const Dims& xs, const Dims& ks, const ConvParams& p, const char* api) {
  Dims out;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t ext = (ks[i] - 1) * p.dilations[i] + 1;
    OAR_CHECK(ext <= xs[i] + p.pads_l[i] + p.pads_r[i], Value, "[", api, "] the (dilated) kernel size ", ext,
              " of spatial dim ", i, " is larger than the padded input size ", xs[i] + p.pads_l[i] + p.pads_r[i]);
    out.push_back(conv_out_size(xs[i], ks[i], p.strides[i], p.pads_l[i], p.pads_r[i], p.dilations[i]));
  }
  return out;
}

Dims tail(const Dims& s) { return Dims(s.begin() + 2, s.end()); }

// Shape of conv(x, w); validates everything.
Dims conv_shape(const Dims& xs, const Dims& ws, const ConvParams& p, const char* api) {
  OAR_CHECK(xs.size() >= 3 && xs.size() <= 5, Value, "[", api, "] expects a 3-D, 4-D or 5-D input, got shape ",
            shape_str(xs));
  OAR_CHECK(ws.size() == xs.size(), Value, "[", api, "] weight must have the rank of the input (", xs.size(),
            "), got shape ", shape_str(ws));
  check_params(p, xs.size() - 2, api);
  OAR_CHECK(ws[0] % p.groups == 0, Value, "[", api, "] the number of filters (", ws[0],
            ") must be divisible by groups (", p.groups, ")");
  OAR_CHECK(xs[1] % p.groups == 0, Value, "[", api, "] the number of input channels (", xs[1],
            ") must be divisible by groups (", p.groups, ")");
  OAR_CHECK(xs[1] == ws[1] * p.groups, Value, "[", api, "] input has ", xs[1],
            " channels but weight expects ", ws[1] * p.groups, " (weight.shape[1] = ", ws[1], ", groups = ",
            p.groups, ")");
  for (size_t i = 2; i < ws.size(); ++i)
    OAR_CHECK(ws[i] > 0, Value, "[", api, "] kernel sizes must be positive, got weight shape ", shape_str(ws));
  Dims out{xs[0], ws[0]};
  for (int64_t v : conv_out_spatial(tail(xs), tail(ws), p, api)) {
    OAR_CHECK(v > 0, Value, "[", api, "] output size must be positive, got ", v);
    out.push_back(v);
  }
  return out;
}

Metas conv_meta(std::span<const Tensor> in, const Attrs& a) {
  check_dtypes(in[0], in[1], "oar.conv");
  return {TensorMeta{conv_shape(in[0].shape(), in[1].shape(), params_of(a), "oar.conv"), in[0].dtype()}};
}

// in: gy (N, O, *o), w (O, C/g, *k); out (N, C, *spatial).
Dims transpose_shape(const Dims& gys, const Dims& ws, const Dims& sp, const ConvParams& p, const char* api) {
  OAR_CHECK(gys.size() >= 3 && gys.size() <= 5, Value, "[", api, "] expects a 3-D, 4-D or 5-D input, got shape ",
            shape_str(gys));
  OAR_CHECK(ws.size() == gys.size(), Value, "[", api, "] weight must have the rank of the input (", gys.size(),
            "), got shape ", shape_str(ws));
  OAR_CHECK(sp.size() + 2 == gys.size(), Value, "[", api, "] output size needs ", gys.size() - 2, " entries");
  OAR_CHECK(gys[1] == ws[0], Value, "[", api, "] input has ", gys[1], " channels but weight.shape[0] is ", ws[0]);
  check_params(p, sp.size(), api);
  OAR_CHECK(ws[0] % p.groups == 0, Value, "[", api, "] the number of input channels (", ws[0],
            ") must be divisible by groups (", p.groups, ")");
  Dims xs{gys[0], ws[1] * p.groups};
  for (int64_t v : sp) {
    OAR_CHECK(v > 0, Value, "[", api, "] output size must be positive, got ", shape_str(sp));
    xs.push_back(v);
  }
  Dims o = conv_out_spatial(sp, tail(ws), p, api);
  OAR_CHECK(o == tail(gys), Value, "[", api, "] output size ", shape_str(sp), " is inconsistent with input size ",
            shape_str(tail(gys)), " (a convolution of it would give ", shape_str(o), ")");
  return xs;
}

Metas conv_transpose_meta(std::span<const Tensor> in, const Attrs& a) {
  check_dtypes(in[0], in[1], "oar.conv_transpose");
  return {TensorMeta{transpose_shape(in[0].shape(), in[1].shape(), a.ints(5), params_of(a), "oar.conv_transpose"),
                     in[0].dtype()}};
}

// in: x (N, C, *s), gy (N, O, *o); out (O, C/g, *k).
Dims grad_weight_shape(const Dims& xs, const Dims& gys, const Dims& ks, const ConvParams& p, const char* api) {
  OAR_CHECK(xs.size() >= 3 && xs.size() <= 5 && gys.size() == xs.size() && ks.size() + 2 == xs.size(), Value, "[",
            api, "] rank mismatch: x ", shape_str(xs), ", grad ", shape_str(gys), ", kernel ", shape_str(ks));
  check_params(p, ks.size(), api);
  OAR_CHECK(xs[0] == gys[0], Value, "[", api, "] batch sizes differ: ", xs[0], " and ", gys[0]);
  OAR_CHECK(xs[1] % p.groups == 0 && gys[1] % p.groups == 0, Value, "[", api, "] channels (", xs[1], ", ", gys[1],
            ") must be divisible by groups (", p.groups, ")");
  Dims ws{gys[1], xs[1] / p.groups};
  for (int64_t v : ks) {
    OAR_CHECK(v > 0, Value, "[", api, "] kernel sizes must be positive, got ", shape_str(ks));
    ws.push_back(v);
  }
  Dims o = conv_out_spatial(tail(xs), ks, p, api);
  OAR_CHECK(o == tail(gys), Value, "[", api, "] grad spatial shape ", shape_str(tail(gys)), " should be ",
            shape_str(o));
  return ws;
}

Metas conv_grad_weight_meta(std::span<const Tensor> in, const Attrs& a) {
  check_dtypes(in[0], in[1], "oar.conv_grad_weight");
  return {TensorMeta{grad_weight_shape(in[0].shape(), in[1].shape(), a.ints(5), params_of(a), "oar.conv_grad_weight"),
                     in[0].dtype()}};
}

Tensors conv_grad(const GradCtx& c) {
  ConvParams p = params_of(c.attr());
  const Tensor &x = c.in(0), &w = c.in(1);
  Tensor g = c.grad();
  Tensors r(2);
  if (c.needs_grad(0)) r[0] = conv_transpose(g, w, tail(x.shape()), p);
  if (c.needs_grad(1)) r[1] = conv_grad_weight(x, g, tail(w.shape()), p);
  return r;
}

Tensors conv_transpose_grad(const GradCtx& c) {
  ConvParams p = params_of(c.attr());
  const Tensor &gy = c.in(0), &w = c.in(1);
  Tensor g = c.grad();
  Tensors r(2);
  if (c.needs_grad(0)) r[0] = conv(g, w, p);
  if (c.needs_grad(1)) r[1] = conv_grad_weight(g, gy, tail(w.shape()), p);
  return r;
}

Tensors conv_grad_weight_grad(const GradCtx& c) {
  ConvParams p = params_of(c.attr());
  const Tensor &x = c.in(0), &gy = c.in(1);
  Tensor h = c.grad();
  Tensors r(2);
  if (c.needs_grad(0)) r[0] = conv_transpose(gy, h, tail(x.shape()), p);
  if (c.needs_grad(1)) r[1] = conv(x, h, p);
  return r;
}

OpDef& kConv = OpBuilder("conv")
                   .attrs({"strides", "pads_l", "pads_r", "dilations", "groups", "spatial"})
                   .meta(conv_meta)
                   .grad(conv_grad).amp(CastPolicy::Low);
OpDef& kConvTranspose = OpBuilder("conv_transpose")
                            .attrs({"strides", "pads_l", "pads_r", "dilations", "groups", "spatial"})
                            .meta(conv_transpose_meta)
                            .grad(conv_transpose_grad).amp(CastPolicy::Low);
OpDef& kConvGradWeight = OpBuilder("conv_grad_weight")
                             .attrs({"strides", "pads_l", "pads_r", "dilations", "groups", "spatial"})
                             .meta(conv_grad_weight_meta)
                             .grad(conv_grad_weight_grad);

}  // namespace

namespace ops {

// attrs: strides, pads_l, pads_r, dilations, groups, spatial (the x spatial
// shape for conv_transpose, the kernel spatial shape for conv_grad_weight).
Attrs conv_attrs(const ConvParams& p, const Dims& spatial) {
  return Attrs{p.strides, p.pads_l, p.pads_r, p.dilations, p.groups, spatial};
}
ConvParams conv_params(const Attrs& a) { return ConvParams{a.ints(0), a.ints(1), a.ints(2), a.ints(3), a.i(4)}; }

Dims conv_output_shape(const Dims& x, const Dims& w, const ConvParams& p, const char* api) {
  return conv_shape(x, w, p, api);
}

Tensor conv(const Tensor& x, const Tensor& w, const ConvParams& p, const char* api) {
  check_api_dtypes(x, w, api);
  conv_shape(x.shape(), w.shape(), p, api);
  Tensor in[2] = {contiguous(x), contiguous(w)};
  return dispatch1(kConv, in, conv_attrs(p, {}));
}

Tensor conv_transpose(const Tensor& gy, const Tensor& w, const Dims& x_spatial, const ConvParams& p,
                      const char* api) {
  check_api_dtypes(gy, w, api);
  transpose_shape(gy.shape(), w.shape(), x_spatial, p, api);
  Tensor in[2] = {contiguous(gy), contiguous(w)};
  return dispatch1(kConvTranspose, in, conv_attrs(p, x_spatial));
}

Tensor conv_grad_weight(const Tensor& x, const Tensor& gy, const Dims& k_spatial, const ConvParams& p,
                        const char* api) {
  check_api_dtypes(x, gy, api);
  grad_weight_shape(x.shape(), gy.shape(), k_spatial, p, api);
  Tensor in[2] = {contiguous(x), contiguous(gy)};
  return dispatch1(kConvGradWeight, in, conv_attrs(p, k_spatial));
}

}  // namespace ops
}  // namespace oar

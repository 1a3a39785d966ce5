// Convolution (ops/conv.cpp). Tensors are channel-first: x is (N, C, *spatial)
// and the weight (O, C / groups, *kernel) for 1, 2 or 3 spatial dims; the
// Python layer handles channel-last formats and Paddle's padding forms.
#pragma once
#include "ops/ops.h"

namespace oar::ops {

struct ConvParams {
  Dims strides, pads_l, pads_r, dilations;  // one entry per spatial dim
  int64_t groups = 1;
};

// The shape of conv(x, w) after every check of the arguments (the fused
// convolution of ops/fused.cpp validates with it too).
Dims conv_output_shape(const Dims& x, const Dims& w, const ConvParams& p, const char* api);
// The parameters held in attributes 0-4 of conv and fused_conv, and those
// attributes (the sixth, `spatial`, is empty for a forward convolution).
ConvParams conv_params(const Attrs& a);
Attrs conv_attrs(const ConvParams& p, const Dims& spatial = {});

// y = conv(x, w) (cross-correlation, no bias). `api` names the caller in errors.
Tensor conv(const Tensor& x, const Tensor& w, const ConvParams& p, const char* api = "oar.conv");
// The adjoint of conv with respect to x (transposed convolution): gy is
// (N, O, *out) and the result (N, w.shape[1] * groups, *x_spatial).
Tensor conv_transpose(const Tensor& gy, const Tensor& w, const Dims& x_spatial, const ConvParams& p,
                      const char* api = "oar.conv_transpose");
// The gradient of conv with respect to its weight: (O, C / groups, *k_spatial).
Tensor conv_grad_weight(const Tensor& x, const Tensor& gy, const Dims& k_spatial, const ConvParams& p,
                        const char* api = "oar.conv_grad_weight");

// Spatial output size of conv along one dim (may be <= 0 for invalid input).
inline int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t pl, int64_t pr, int64_t d) {
  return (in + pl + pr - ((k - 1) * d + 1)) / s + 1;
}

}  // namespace oar::ops

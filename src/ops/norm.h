// Normalisation (ops/norm.cpp): batch, layer, group, instance and RMS norm.
// batch_norm, layer_norm and rms_norm run fused kernels (forward, and a
// fused first-order gradient); their composite gradient rules, and the other
// norms, are ops (differentiable to any order).
#pragma once
#include "ops/ops.h"

namespace oar::ops {

// x has channels on `axis`. Undefined weight/bias mean 1/0. With
// use_batch_stats the batch statistics normalise and, when the running
// tensors are defined, update them in place Paddle-style:
// running = momentum * running + (1 - momentum) * batch (biased variance).
Tensor batch_norm(const Tensor& x, Tensor running_mean, Tensor running_var, const Tensor& weight,
                  const Tensor& bias, bool use_batch_stats, double momentum, double eps, int64_t axis,
                  const char* api = "oar.batch_norm");
// Normalises over the trailing dims from begin_axis; weight/bias have those dims' shape.
Tensor layer_norm(const Tensor& x, int64_t begin_axis, const Tensor& weight, const Tensor& bias, double eps,
                  const char* api = "oar.layer_norm");
// x is (N, C, *); statistics per (sample, group of C / groups channels).
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps,
                  const char* api = "oar.group_norm");
// x is (N, C, *); statistics per (sample, channel).
Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps,
                     const char* api = "oar.instance_norm");
// x * rsqrt(mean(x^2 over the trailing dims from begin_axis) + eps) * weight.
Tensor rms_norm(const Tensor& x, int64_t begin_axis, const Tensor& weight, double eps,
                const char* api = "oar.rms_norm");

// The rms_norm and rms_norm_grad ops computed by other ops (Note [rms_norm by
// ops]), as kernels: the fallback of devices without fused ones.
void rms_norm_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a);
void rms_norm_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a);

}  // namespace oar::ops

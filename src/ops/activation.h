// Activation functions (ops/activation.cpp, kernels/cpu/activation.cpp).
// relu, gelu, silu, log_sigmoid, softmax and log_softmax are ops with kernels;
// the rest are composites of other ops, so their gradients come for free.
#pragma once
#include <optional>

#include "ops/op.h"

namespace oar::ops {

Tensor relu(const Tensor& x);
Tensor& relu_(Tensor& x);
// relu_grad's kernel on any device: a comparison, a zero tensor and a select.
void relu_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a);
Tensor relu6(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor selu(const Tensor& x, double scale = 1.0507009873554804934193349852946,
            double alpha = 1.6732632423543772848170429916717);
Tensor gelu(const Tensor& x, bool approximate = false);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor softsign(const Tensor& x);
Tensor log_sigmoid(const Tensor& x);
Tensor hardswish(const Tensor& x);
Tensor hardsigmoid(const Tensor& x, double slope = 0.1666667, double offset = 0.5);
Tensor mish(const Tensor& x);
// Over `axis`; x is cast to `dtype` first when given.
Tensor softmax(const Tensor& x, int64_t axis = -1, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t axis = -1, std::optional<DType> dtype = std::nullopt);

}  // namespace oar::ops

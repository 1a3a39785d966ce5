// float32 linear layers through oneDNN's matmul (kernels/cpu/matmul.cpp).
#pragma once
#include <string>

namespace oar {
class Tensor;
}

namespace oar::cpu {

// out = act(x w + b) for float32 as one oneDNN matmul that adds the bias and
// applies the activation (relu, gelu, gelu_tanh, silu, sigmoid, tanh; "" for
// none) to each tile while it is in cache; weights of a read-only storage (a
// predictor's) are packed once. x is [..., K], w [K, N] (any row or column
// stride), b [N], out [..., N] dense. False, doing nothing, where this does
// not apply (other dtypes, tiny products, odd weight strides).
bool onednn_linear(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& out, const std::string& act);

}  // namespace oar::cpu

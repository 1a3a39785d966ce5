// Fused ops (ops/fused.cpp, kernels/cpu/fused*.cpp): one op for a pattern of
// several, emitted by the graph passes (ir/passes/fuse.cpp) and, for
// attention, by eager code. Each has a fast kernel and a gradient rule that
// rebuilds the unfused ops and chains their own rules (Note [fused gradients]),
// so it differentiates to any order exactly as the pattern it replaces.
#pragma once
#include <string>

#include "ops/conv.h"
#include "ops/ops.h"

namespace oar::ops {

// act(linear(x, w, b)): x [..., K], w [K, N], b [N], one floating dtype.
// act is one of fused_linear_activations().
Tensor fused_linear_act(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& act);
// The activation names fused_linear_act takes, and the op + attributes that
// each stands for ("gelu_tanh" is gelu with approximate=true).
std::span<const char* const> fused_linear_activations();
// The activation name of a unary op with these attributes, or "" if it has none.
std::string activation_of(const OpDef& def, const Attrs& attrs);

// act(conv(x, w) + bias + residual) for 4-D float32/bfloat16 input: bias
// (optional: undefined) holds one value per output channel ([O], [O, 1, 1]
// or [1, O, 1, 1]), residual (optional) has the output's shape, act is "",
// "clip" (to [lo, hi]; +-inf for no bound) or one of fused_linear_activations().
// Runs as one oneDNN convolution with bias and post-ops.
Tensor fused_conv(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& residual, const ConvParams& p,
                  const std::string& act, double lo, double hi);

// softmax(q k^T * scale + mask [+ causal mask]) v over the last two dims.
// q [..., Lq, D], k [..., Lk, D], v [..., Lk, Dv] share their leading dims;
// mask (optional: undefined) broadcasts to [..., Lq, Lk] and is added to the
// scores; causal lets query i see keys j <= i (top-left aligned, as the
// composite in nn.functional.scaled_dot_product_attention).
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                       bool causal);

// Note [fused elementwise program]
// fused_elementwise evaluates a small expression over inputs of one floating
// dtype that broadcast together to the output's shape. The program is a list
// of instructions of three ints each: (code, a, b), where a and b name registers: 0..n_inputs-1 are the inputs,
// n_inputs + k is the result of instruction k (so only earlier ones), and b
// is -1 for unary codes. The last instruction's result is the output. Codes
// index kElementwiseOps in fused.cpp; they are saved in program files, so the
// table only ever grows at its end.
Tensor fused_elementwise(std::span<const Tensor> inputs, const Dims& program);
// The codes, in table order (the kernels switch on them).
enum class EwCode : int {
  Add, Subtract, Multiply, Divide, Maximum, Minimum, Pow, Neg, Exp, Log, Sqrt, Rsqrt, Square, Reciprocal, Sin,
  Cos, Tanh, Sigmoid, Erf, Abs, Relu, Silu, Gelu, GeluTanh, Expm1, Log1p, kCount
};
// A fused_elementwise program whose result is reduced over `axes` (sorted,
// distinct dims of the inputs' broadcast shape, which the program's result
// must have) by the reduction op `reduce_op_of(kind)`: sum, mean, amax or
// amin, keeping the reduced dims as 1 when keepdim.
Tensor fused_reduce(std::span<const Tensor> inputs, const Dims& program, int64_t kind, const Dims& axes,
                    bool keepdim);
const char* reduce_op_of(int64_t kind);  // null for an unknown kind
// fused_reduce's kernel on any device: fused_elementwise, then the reduction
// op (the CPU runs a generated kernel instead where it can).
void fused_reduce_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a);
// fused_attention_grad's kernel on any device: the composite gradient's ops.
void fused_attention_grad_by_ops(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a);
// The fused_elementwise code of an op with these attributes, or -1.
int elementwise_code(const OpDef& def, const Attrs& attrs);
// 1 or 2 for a valid code, 0 otherwise.
int elementwise_arity(int code);

}  // namespace oar::ops

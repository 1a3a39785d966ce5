// Graph passes over a Program (DESIGN.md §2): dead code elimination, common
// subexpression elimination, constant folding, conv + batch-norm folding and
// pattern fusions (linear + activation, attention, hand-written softmax and
// layer norm, elementwise chains), and a
// pass manager that runs them to a fixed point. Each pass returns whether it
// changed anything.
//
// The fusions replace a pattern by one fused op (ops/fused.h) only when the
// pattern's intermediate values have no other users (program outputs and
// region yields count as users), all in one block; ops with regions are never
// part of a pattern. A fused op's gradient is the unfused pattern's, so fused
// programs still train.
//
// Random and side-effect ops (OpTraits::random / side_effect) are never
// removed, merged or folded: a random op advances the generator, so dropping
// or merging one changes every later draw.
#pragma once
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace oar::ir {

// Removes ops none of whose results are used (transitively), in every block.
// Program outputs and region yields are uses, so their producers stay.
bool dead_code_elimination(Program& p);

// Merges ops of one block with the same OpDef, the same operand Values and
// equal attributes into the first of them. No merging across blocks.
bool common_subexpression_elimination(Program& p);

// Parameters are bound to tensors held outside the Program (the tracer's
// bindings(), in program order), so folding takes those tensors with it:
// `bindings[i]` is the tensor of p.parameters()[i]. An op whose operands are
// all auto-named constants (NamedValue::constant; never named parameters,
// whose tensors are trainable and may change between runs, nor constants
// bound to tensors that require grad) is run once and
// replaced by a new auto-named constant appended to both the program and
// `bindings`. Results of ops without tensor operands (full, arange; a traced
// Python scalar is a `full`) count as constants too, but are not folded on
// their own. Constants and such ops that nothing reads any more are then
// dropped. The folded value is computed from the constants' current data.
// Results larger than kMaxFoldedBytes (or with dynamic dims) are not folded.
constexpr int64_t kMaxFoldedBytes = int64_t(64) << 20;
bool constant_folding(Program& p, std::vector<Tensor>& bindings);

// conv (+ bias add) whose only user is an inference-mode batch_norm
// (use_batch_stats=false) becomes one conv with folded weight W * g / sqrt(var
// + eps) and an add of the folded bias (b - mean) * g / sqrt(var + eps) + beta,
// both new auto-named constants appended to the program and `bindings`. The
// weight, bias and statistics must be program parameters (bound tensors).
// This bakes in the parameters' current values, and the folded program no
// longer reads the conv weight and norm parameters: use it for inference
// only, never on a program that is trained or whose parameters change.
bool fold_conv_batch_norm(Program& p, std::vector<Tensor>& bindings);

// A 4-D float32/bfloat16 conv followed by any of: + bias ([C, 1, 1] or
// [1, C, 1, 1]), + residual (the result's type), then relu, clip with
// constant bounds (relu6), gelu, silu, sigmoid or tanh, each the sole reader
// of the one before, becomes one fused_conv (oneDNN post-ops: the bias,
// residual and activation are applied while the output is in cache).
bool fuse_conv_activation(Program& p);

// linear(x, w, b) or matmul(x, w [K, N]) + b [N], followed by relu, gelu
// (either form), silu, sigmoid or tanh, becomes fused_linear_act.
bool fuse_linear_activation(Program& p);

// matmul(q, k, transpose_y) [* or / a scalar] [+ mask] -> softmax(last axis)
// -> matmul(., v) becomes fused_attention; a scalar multiplying q before the
// first matmul (q * d^-0.5) is taken into the scale as well. q, k and v must
// have the same leading dims.
bool fuse_attention(Program& p);

// Hand-written softmax and layer norm over the last axis become the single
// ops: exp(x - amax(x)) / sum(exp(x - amax(x))) (or without the amax) becomes
// softmax, and (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) [* w] [+ b]
// (or the same divided by sqrt) becomes layer_norm. x must be the result of a
// non-view op, as those kernels read dense rows.
bool fuse_softmax_layer_norm(Program& p);

// A tree of at least two elementwise ops (ops/fused.h lists them) of one
// floating dtype and one result type, whose intermediates nothing else reads,
// becomes one fused_elementwise; operands may broadcast. Then a reduction
// (sum, mean, amax, amin) that alone reads such a group, or one elementwise
// op, takes it in as a fused_reduce. Both run as generated kernels
// (src/compiler).
bool fuse_elementwise(Program& p);

// The fusion and folding passes are off by default, so that a plain
// run_passes keeps every op of the program; PassOptions::inference() turns
// them all on (conv + batch-norm folding included).
// Adds auto-named constants (parameters marked constant, with their bound
// tensors appended to `bindings`) to a program, under names that no input
// or parameter has ("const_N"). Shared by the passes that make constants.
class ConstantAdder {
 public:
  ConstantAdder(Program& p, std::vector<Tensor>& bindings);
  Value* add(const Tensor& t);

 private:
  Program& p_;
  std::vector<Tensor>& bindings_;
  std::unordered_set<std::string> names_;
  int next_ = 0;
};

struct PassOptions {
  bool dce = true;
  bool cse = true;
  bool fold = true;
  bool fold_conv_bn = false;  // inference only (see fold_conv_batch_norm)
  bool fuse_softmax_layer_norm = false;
  bool fuse_linear_act = false;
  bool fuse_conv_act = false;
  bool fuse_attention = false;
  bool fuse_elementwise = false;

  static PassOptions inference() {
    PassOptions o;
    o.fold_conv_bn = o.fuse_softmax_layer_norm = o.fuse_linear_act = o.fuse_conv_act = o.fuse_attention =
        o.fuse_elementwise = true;
    return o;
  }
};

// The passes by the names of their functions above ("constant_folding",
// "fuse_attention", ...), in the order run_passes runs them.
const std::vector<std::string_view>& pass_names();
// Turns the named pass on or off; false for a name pass_names() lacks.
bool set_pass(PassOptions& o, std::string_view name, bool on);

// Which passes changed the program.
struct PassResult {
  bool dce = false;
  bool cse = false;
  bool fold = false;
  bool fold_conv_bn = false;
  bool fuse_softmax_layer_norm = false;
  bool fuse_linear_act = false;
  bool fuse_conv_act = false;
  bool fuse_attention = false;
  bool fuse_elementwise = false;
};

// Runs the enabled passes in rounds until none changes the program (at most
// kMaxPassRounds rounds), then verifies it.
constexpr int kMaxPassRounds = 16;
PassResult run_passes(Program& p, std::vector<Tensor>& bindings, const PassOptions& options = {});

// Attribute equality as CSE needs it: same alternative and same value, with
// floating point compared by bit pattern (0.0 and -0.0 differ; a NaN equals
// the identical NaN).
bool attrs_equal(const Attrs& a, const Attrs& b);

}  // namespace oar::ir

// Fusion and conv + batch-norm folding passes on small hand-built programs:
// each pattern is rewritten when it should be, the rewritten program computes
// the same values, and nothing changes when an intermediate has another user,
// a dtype or shape does not fit, or a region op reads the intermediate.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/executor.h"
#include "ir/ir.h"
#include "ir/passes/passes.h"
#include "ir_test_util.h"
#include "ops/ops.h"

namespace oar::ir {
namespace {

using testing::def;

// An op with one region and no infer_meta (stands in for control flow).
OpDef& kFusionRegionOp = OpBuilder("ir_fusion_test.region_op");

Tensor filled(const Dims& shape, float start, float step, DType dt = DType::Float32) {
  Tensor t = empty_tensor(shape, DType::Float32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * float((i * 7) % 11) - 0.3f * float(i % 3);
  return dt == DType::Float32 ? t : ops::cast(t, dt);
}

Value* op1(Block& b, const char* name, std::vector<Value*> in, const Type& t, Attrs a = {}) {
  return b.append(def(name), in, std::move(a), std::span<const Type>(&t, 1))->result(0);
}

Value* scalar(Block& b, double v, DType dt = DType::Float32) {
  const Type t{dt, {}};
  return op1(b, "full", {}, t, Attrs{Dims{}, v, dt});
}

size_t count_ops(const Block& b, const char* name) {
  size_t n = 0;
  for (const auto& op : b.operations()) n += op->name() == name;
  return n;
}

Operation* first_op(const Block& b, const char* name) {
  for (const auto& op : b.operations())
    if (op->name() == name) return op.get();
  return nullptr;
}

double max_diff(const Tensor& a, const Tensor& b) {
  Tensor x = ops::cast(a, DType::Float64), y = ops::cast(b, DType::Float64);
  EXPECT_EQ(x.shape(), y.shape());
  double m = 0;
  for (int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::abs(x.data<double>()[i] - y.data<double>()[i]));
  return m;
}

// Builds the same program twice; runs one as built and the other after
// `pass`, and compares every output.
struct Case {
  std::function<void(Program&, std::vector<Tensor>&, std::vector<Tensor>&)> build;  // program, inputs, bindings

  // Returns the passed program so that the caller can inspect it.
  std::unique_ptr<Program> check(const std::function<bool(Program&, std::vector<Tensor>&)>& pass, bool expect_change,
                                 double tol = 1e-5) {
    Program ref;
    std::vector<Tensor> in, bind;
    build(ref, in, bind);
    EXPECT_NO_THROW(verify(ref));
    Tensors want = run(ref, in, bind);
    auto p = std::make_unique<Program>();
    std::vector<Tensor> in2, bind2;
    build(*p, in2, bind2);
    EXPECT_EQ(pass(*p, bind2), expect_change);
    EXPECT_NO_THROW(verify(*p));
    Tensors got = run(*p, in2, bind2);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) EXPECT_LE(max_diff(got[i], want[i]), tol) << i;
    return p;
  }
};

bool linear_act_pass(Program& p, std::vector<Tensor>&) { return fuse_linear_activation(p); }
bool attention_pass(Program& p, std::vector<Tensor>&) { return fuse_attention(p); }
bool elementwise_pass(Program& p, std::vector<Tensor>&) { return fuse_elementwise(p); }
bool conv_bn_pass(Program& p, std::vector<Tensor>& b) { return fold_conv_batch_norm(p, b); }

// ---------------------------------------------------------------- linear + activation

const Type kX{DType::Float32, {4, 3}}, kW{DType::Float32, {3, 5}}, kB{DType::Float32, {5}},
    kY{DType::Float32, {4, 5}};

Case linear_case(const char* act, Attrs act_attrs, bool extra_use, bool via_matmul, Type bias = kB) {
  return Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>& bind) {
    Value* x = p.add_input("x", kX);
    Value* w = p.add_parameter("w", kW);
    Value* b = p.add_parameter("b", bias);
    in = {filled({4, 3}, -1.f, 0.25f)};
    bind = {filled({3, 5}, 0.5f, -0.125f), filled(bias.shape, 0.1f, 0.05f)};
    Value* h = via_matmul ? op1(p.body(), "add", {op1(p.body(), "matmul", {x, w}, kY, Attrs{false, false}), b}, kY)
                          : op1(p.body(), "linear", {x, w, b}, kY);
    p.add_output("y", op1(p.body(), act, {h}, kY, act_attrs));
    if (extra_use) p.add_output("h", h);
  }};
}

TEST(IrFusion, LinearActivationBecomesOneOp) {
  for (const char* act : {"relu", "silu", "sigmoid", "tanh"}) {
    auto p = linear_case(act, Attrs{}, false, false).check(linear_act_pass, true);
    ASSERT_EQ(p->body().operations().size(), 1u) << act;
    Operation* f = first_op(p->body(), "fused_linear_act");
    ASSERT_TRUE(f) << act;
    EXPECT_EQ(f->attrs().s(0), act);
  }
  auto p = linear_case("gelu", Attrs{true}, false, false).check(linear_act_pass, true);
  EXPECT_EQ(first_op(p->body(), "fused_linear_act")->attrs().s(0), "gelu_tanh");
}

TEST(IrFusion, MatmulBiasActivationBecomesOneOp) {
  auto p = linear_case("gelu", Attrs{false}, false, true).check(linear_act_pass, true);
  ASSERT_EQ(p->body().operations().size(), 1u);
  EXPECT_EQ(first_op(p->body(), "fused_linear_act")->attrs().s(0), "gelu");
}

TEST(IrFusion, LinearActivationKeptWhenNotFusable) {
  // the pre-activation is an output too
  auto p = linear_case("relu", Attrs{}, true, false).check(linear_act_pass, false);
  EXPECT_EQ(count_ops(p->body(), "linear"), 1u);
  // a bias that is not a vector along the last dim
  p = linear_case("relu", Attrs{}, false, true, kY).check(linear_act_pass, false);
  EXPECT_EQ(count_ops(p->body(), "fused_linear_act"), 0u);
  // not an activation the fused op has
  p = linear_case("exp", Attrs{}, false, false).check(linear_act_pass, false);
  EXPECT_EQ(count_ops(p->body(), "linear"), 1u);
}

// ---------------------------------------------------------------- attention

const Type kQ{DType::Float32, {2, 6, 4}}, kK{DType::Float32, {2, 5, 4}}, kV{DType::Float32, {2, 5, 3}},
    kS{DType::Float32, {2, 6, 5}}, kO{DType::Float32, {2, 6, 3}};

struct AttnOpts {
  bool mask = true;
  bool pre_scale = false;   // q * c instead of scores * c
  bool divide = false;      // scores / c
  bool extra_use = false;   // softmax output also an output
  int64_t axis = 2;
  DType mask_dtype = DType::Float32;
};

Case attention_case(AttnOpts o) {
  return Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>&) {
    Block& b = p.body();
    Value* q = p.add_input("q", kQ);
    Value* k = p.add_input("k", kK);
    Value* v = p.add_input("v", kV);
    const Type mt{o.mask_dtype, {6, 5}};
    Value* m = o.mask ? p.add_input("m", mt) : nullptr;
    in = {filled({2, 6, 4}, -1.f, 0.3f), filled({2, 5, 4}, 0.5f, -0.2f), filled({2, 5, 3}, 0.2f, 0.1f)};
    if (o.mask) in.push_back(filled({6, 5}, -0.5f, 0.1f, o.mask_dtype));
    if (o.pre_scale) q = op1(b, "multiply", {q, scalar(b, 0.5)}, kQ);
    Value* s = op1(b, "matmul", {q, k}, kS, Attrs{false, true});
    if (!o.pre_scale) s = op1(b, o.divide ? "divide" : "multiply", {s, scalar(b, o.divide ? 2.0 : 0.5)}, kS);
    if (o.mask) s = op1(b, "add", {s, m}, kS);
    Value* pr = op1(b, "softmax", {s}, kS, Attrs{o.axis});
    p.add_output("o", op1(b, "matmul", {pr, v}, kO, Attrs{false, false}));
    if (o.extra_use) p.add_output("p", pr);
  }};
}

TEST(IrFusion, AttentionBecomesOneOp) {
  for (bool mask : {false, true})
    for (int form = 0; form < 3; ++form) {
      AttnOpts o;
      o.mask = mask;
      o.pre_scale = form == 1;
      o.divide = form == 2;
      auto p = attention_case(o).check(attention_pass, true);
      Operation* f = first_op(p->body(), "fused_attention");
      ASSERT_TRUE(f);
      EXPECT_DOUBLE_EQ(f->attrs().f(0), 0.5);
      EXPECT_FALSE(f->attrs().b(1));
      EXPECT_EQ(f->operand(3) != nullptr, mask);
      EXPECT_EQ(count_ops(p->body(), "softmax") + count_ops(p->body(), "matmul"), 0u);
    }
}

TEST(IrFusion, AttentionKeptWhenNotFusable) {
  AttnOpts used;
  used.extra_use = true;
  attention_case(used).check(attention_pass, false);
  AttnOpts axis;
  axis.axis = 1;
  attention_case(axis).check(attention_pass, false);
}

// ---------------------------------------------------------------- elementwise chains

const Type kE{DType::Float32, {64, 33}};

TEST(IrFusion, ElementwiseChainBecomesOneOp) {
  auto p = Case{[](Program& p, std::vector<Tensor>& in, std::vector<Tensor>&) {
    Block& b = p.body();
    Value* x = p.add_input("x", kE);
    Value* y = p.add_input("y", kE);
    in = {filled({64, 33}, -1.f, 0.2f), filled({64, 33}, 0.3f, 0.1f)};
    Value* e = op1(b, "exp", {x}, kE);
    Value* t = op1(b, "add", {op1(b, "multiply", {e, scalar(b, 2.0)}, kE), y}, kE);
    Value* g = op1(b, "gelu", {op1(b, "tanh", {t}, kE)}, kE, Attrs{true});
    p.add_output("z", op1(b, "divide", {g, op1(b, "sigmoid", {x}, kE)}, kE));
  }}.check(elementwise_pass, true);
  ASSERT_EQ(count_ops(p->body(), "fused_elementwise"), 1u);
  // only the scalar's full stays outside
  EXPECT_EQ(p->body().operations().size(), 2u);
  const Dims& prog = first_op(p->body(), "fused_elementwise")->attrs().ints(0);
  EXPECT_EQ(prog.size(), 7u * 3u);
}

TEST(IrFusion, ElementwiseStopsAtOutsideUsersAndDtypes) {
  auto p = Case{[](Program& p, std::vector<Tensor>& in, std::vector<Tensor>&) {
    Block& b = p.body();
    Value* x = p.add_input("x", kE);
    const Type row{DType::Float32, {33}};
    Value* r = p.add_input("r", row);
    in = {filled({64, 33}, -1.f, 0.2f), filled({33}, 0.5f, 0.1f)};
    Value* e = op1(b, "exp", {x}, kE);
    p.add_output("e", e);  // read outside: exp stays a separate op
    Value* s = op1(b, "sin", {op1(b, "neg", {e}, kE)}, kE);
    Value* bc = op1(b, "add", {s, r}, kE);  // a broadcast operand joins too
    const Type t64{DType::Float64, {64, 33}};
    Value* c = op1(b, "cast", {bc}, t64, Attrs{DType::Float64});
    p.add_output("y", op1(b, "tanh", {c}, t64));  // alone after the cast: nothing to fuse
  }}.check(elementwise_pass, true);
  EXPECT_EQ(count_ops(p->body(), "fused_elementwise"), 1u);
  EXPECT_EQ(count_ops(p->body(), "exp"), 1u);
  EXPECT_EQ(count_ops(p->body(), "tanh"), 1u);
  EXPECT_EQ(count_ops(p->body(), "neg") + count_ops(p->body(), "sin") + count_ops(p->body(), "add"), 0u);
  EXPECT_EQ(first_op(p->body(), "fused_elementwise")->num_operands(), 2u);  // exp's result and r
}

TEST(IrFusion, ElementwiseOverDynamicDims) {
  // a batch dim known only at run time: the fused op broadcasts as the ops did
  Program p;
  const Type dyn{DType::Float32, {-1, 4}};
  Value* x = p.add_input("x", dyn);
  Value* y = p.add_input("y", dyn);
  p.add_output("z", op1(p.body(), "tanh", {op1(p.body(), "add", {op1(p.body(), "exp", {x}, dyn), y}, dyn)}, dyn));
  std::vector<Tensor> bind;
  EXPECT_TRUE(fuse_elementwise(p));
  EXPECT_NO_THROW(verify(p));
  ASSERT_EQ(p.body().operations().size(), 1u);
  for (int64_t bx : {1, 3}) {
    std::vector<Tensor> in = {filled({bx, 4}, -1.f, 0.2f), filled({3, 4}, 0.5f, -0.1f)};
    Tensor got = run(p, in, bind)[0];
    ASSERT_EQ(got.shape(), (Dims{3, 4}));
    for (int64_t i = 0; i < 12; ++i) {
      float xv = in[0].data<float>()[bx == 1 ? i % 4 : i], yv = in[1].data<float>()[i];
      EXPECT_NEAR(got.data<float>()[i], std::tanh(std::exp(xv) + yv), 1e-6);
    }
  }
}

TEST(IrFusion, ElementwiseLeavesRegionOpsAlone) {
  Program p;
  Value* x = p.add_input("x", kE);
  Value* e = op1(p.body(), "exp", {x}, kE);
  Value* in[] = {e};
  Operation* r = p.body().append(kFusionRegionOp, in, Attrs{}, std::span<const Type>(&kE, 1));
  Block& rb = r->add_region();
  Value* a = rb.add_argument(kE, "a");
  // a chain inside the region fuses there
  rb.add_yield(op1(rb, "sin", {op1(rb, "cos", {a}, kE)}, kE));
  p.add_output("y", op1(p.body(), "neg", {e}, kE));
  p.add_output("z", r->result(0));
  EXPECT_TRUE(fuse_elementwise(p));
  // exp is read by the region op, so exp -> neg is not fused
  EXPECT_EQ(count_ops(p.body(), "exp"), 1u);
  EXPECT_EQ(count_ops(p.body(), "neg"), 1u);
  EXPECT_EQ(count_ops(rb, "fused_elementwise"), 1u);
  EXPECT_EQ(rb.operations().size(), 1u);
}

// ---------------------------------------------------------------- decomposed softmax and layer norm

bool softmax_ln_pass(Program& p, std::vector<Tensor>&) { return fuse_softmax_layer_norm(p); }

const Type kR{DType::Float32, {5, 6}}, kR1{DType::Float32, {5, 1}}, kD{DType::Float32, {6}};
const Attrs kLastKeep{Dims{1}, true, DType::Float32};

TEST(IrFusion, DecomposedSoftmaxBecomesSoftmax) {
  for (bool stable : {true, false}) {
    auto p = Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>&) {
      Block& b = p.body();
      Value* x = op1(b, "tanh", {p.add_input("x", kR)}, kR);  // a dense value
      in = {filled({5, 6}, -2.f, 0.4f)};
      Value* d = stable ? op1(b, "subtract", {x, op1(b, "amax", {x}, kR1, kLastKeep)}, kR) : x;
      Value* e = op1(b, "exp", {d}, kR);
      p.add_output("y", op1(b, "divide", {e, op1(b, "sum", {e}, kR1, kLastKeep)}, kR));
    }}.check(softmax_ln_pass, true);
    EXPECT_EQ(p->body().operations().size(), 2u);
    Operation* sm = first_op(p->body(), "softmax");
    ASSERT_TRUE(sm);
    EXPECT_EQ(sm->attrs().i(0), 1);
  }
}

TEST(IrFusion, DecomposedSoftmaxKeptWhenNotFusable) {
  // the exponentials are an output too; a program input may be a strided view
  for (int variant = 0; variant < 2; ++variant)
    Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>&) {
      Block& b = p.body();
      Value* x = p.add_input("x", kR);
      if (variant == 0) x = op1(b, "tanh", {x}, kR);
      in = {filled({5, 6}, -2.f, 0.4f)};
      Value* e = op1(b, "exp", {x}, kR);
      p.add_output("y", op1(b, "divide", {e, op1(b, "sum", {e}, kR1, kLastKeep)}, kR));
      if (variant == 0) p.add_output("e", e);
    }}.check(softmax_ln_pass, false);
}

// form 0: xc * rsqrt(mean(xc * xc) + eps) * w + b; form 1: xc / sqrt(mean(square(xc)) + eps) * w;
// form 2: b + xc * rsqrt(mean(pow(xc, 2)) + eps)
Case layer_norm_case(int form, bool extra_use = false) {
  return Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>& bind) {
    Block& b = p.body();
    Value* x = op1(b, "sin", {p.add_input("x", kR)}, kR);
    Value* w = p.add_parameter("w", kD);
    Value* bias = p.add_parameter("b", kD);
    in = {filled({5, 6}, -2.f, 0.4f)};
    bind = {filled({6}, 0.5f, 0.2f), filled({6}, -0.3f, 0.1f)};
    Value* xc = op1(b, "subtract", {x, op1(b, "mean", {x}, kR1, kLastKeep)}, kR);
    Value* sq = form == 0   ? op1(b, "multiply", {xc, xc}, kR)
                : form == 1 ? op1(b, "square", {xc}, kR)
                            : op1(b, "pow", {xc, scalar(b, 2.0)}, kR);
    Value* ve = op1(b, "add", {op1(b, "mean", {sq}, kR1, kLastKeep), scalar(b, 1e-3)}, kR1);
    Value* y = form == 1 ? op1(b, "divide", {xc, op1(b, "sqrt", {ve}, kR1)}, kR)
                         : op1(b, "multiply", {xc, op1(b, "rsqrt", {ve}, kR1)}, kR);
    if (form != 2) y = op1(b, "multiply", {y, w}, kR);
    if (form != 1) y = op1(b, "add", {bias, y}, kR);
    p.add_output("y", y);
    if (extra_use) p.add_output("xc", xc);
  }};
}

TEST(IrFusion, DecomposedLayerNormBecomesLayerNorm) {
  for (int form = 0; form < 3; ++form) {
    auto p = layer_norm_case(form).check(softmax_ln_pass, true);
    Operation* ln = first_op(p->body(), "layer_norm");
    ASSERT_TRUE(ln) << form;
    EXPECT_EQ(ln->attrs().i(0), 1);
    EXPECT_DOUBLE_EQ(ln->attrs().f(1), 1e-3);
    EXPECT_EQ(count_ops(p->body(), "mean") + count_ops(p->body(), "subtract"), 0u);
    // a missing weight or bias is a full of ones or zeros (the scalars' fulls are left to DCE)
    size_t vectors = 0;
    for (const auto& op : p->body().operations()) vectors += op->name() == "full" && op->attrs().ints(0) == Dims{6};
    EXPECT_EQ(vectors, form == 0 ? 0u : 1u) << form;
  }
}

TEST(IrFusion, DecomposedLayerNormKeptWhenCenteredValueIsRead) {
  layer_norm_case(0, true).check(softmax_ln_pass, false);
}

// ---------------------------------------------------------------- conv + batch norm

struct ConvBnOpts {
  bool bias = true;
  bool batch_stats = false;
  bool extra_use = false;
};

Case conv_bn_case(ConvBnOpts o) {
  return Case{[=](Program& p, std::vector<Tensor>& in, std::vector<Tensor>& bind) {
    Block& b = p.body();
    const Type xt{DType::Float32, {2, 3, 6, 6}}, wt{DType::Float32, {4, 3, 3, 3}}, ct{DType::Float32, {4}},
        yt{DType::Float32, {2, 4, 4, 4}}, bt{DType::Float32, {1, 4, 1, 1}};
    Value* x = p.add_input("x", xt);
    Value* w = p.add_parameter("conv.weight", wt);
    Value* cb = p.add_parameter("conv.bias", ct);
    Value* g = p.add_parameter("bn.weight", ct);
    Value* be = p.add_parameter("bn.bias", ct);
    Value* mean = p.add_parameter("bn.mean", ct, true);
    Value* var = p.add_parameter("bn.var", ct, true);
    in = {filled({2, 3, 6, 6}, -1.f, 0.2f)};
    bind = {filled({4, 3, 3, 3}, 0.3f, -0.05f), filled({4}, 0.1f, 0.2f), filled({4}, 1.5f, -0.3f),
            filled({4}, -0.2f, 0.1f), filled({4}, 0.05f, 0.1f), filled({4}, 0.5f, 0.25f)};
    Value* h = op1(b, "conv", {x, w}, yt, Attrs{Dims{1, 1}, Dims{0, 0}, Dims{0, 0}, Dims{1, 1}, int64_t(1), Dims{}});
    if (o.extra_use) p.add_output("h", h);
    if (o.bias) h = op1(b, "add", {h, op1(b, "reshape", {cb}, bt, Attrs{Dims{1, 4, 1, 1}})}, yt);
    const Type rt[3] = {yt, ct, ct};
    std::vector<Value*> bn_in{h, g, be, mean, var};
    Operation* bn = b.append(def("batch_norm"), bn_in, Attrs{int64_t(1), 1e-5, o.batch_stats}, rt);
    p.add_output("y", op1(b, "relu", {bn->result(0)}, yt));
  }};
}

TEST(IrFusion, ConvBatchNormFolds) {
  for (bool bias : {true, false}) {
    ConvBnOpts o;
    o.bias = bias;
    auto p = conv_bn_case(o).check(conv_bn_pass, true);
    EXPECT_EQ(count_ops(p->body(), "batch_norm"), 0u);
    EXPECT_EQ(count_ops(p->body(), "conv"), 1u);
    // the folded weight and bias are new constants read by the new ops
    Operation* conv = first_op(p->body(), "conv");
    EXPECT_TRUE(conv->operand(1)->is_block_argument());
    bool constant = false;
    for (const NamedValue& n : p->parameters()) constant = constant || (n.value == conv->operand(1) && n.constant);
    EXPECT_TRUE(constant);
  }
}

TEST(IrFusion, ConvBatchNormKeptWhenNotFoldable) {
  ConvBnOpts train;
  train.batch_stats = true;
  conv_bn_case(train).check(conv_bn_pass, false);
  ConvBnOpts used;
  used.bias = false;
  used.extra_use = true;
  conv_bn_case(used).check(conv_bn_pass, false);
}

TEST(IrFusion, FusedOpsRejectMalformedOperandsAndAttributes) {
  // what a damaged program file could hold
  const Type* three[3] = {&kQ, &kK, &kV};
  InferResult r = infer_result_types(def("fused_attention"), three, Attrs{0.5, false});
  EXPECT_FALSE(r.types);
  EXPECT_NE(r.error.find("[oar.fused_attention]"), std::string::npos) << r.error;
  const Type* four[4] = {&kQ, &kK, &kV, nullptr};
  EXPECT_FALSE(infer_result_types(def("fused_attention"), four, Attrs{int64_t(1), false}).types);
  EXPECT_TRUE(infer_result_types(def("fused_attention"), four, Attrs{0.5, false}).types);
  const Type* lin[3] = {&kX, &kW, &kB};
  EXPECT_FALSE(infer_result_types(def("fused_linear_act"), lin, Attrs{int64_t(3)}).types);
  EXPECT_FALSE(infer_result_types(def("fused_linear_act"), lin, Attrs{std::string("softmax")}).types);
  const Type* one[1] = {&kE};
  EXPECT_FALSE(infer_result_types(def("fused_elementwise"), one, Attrs{}).types);
  EXPECT_FALSE(infer_result_types(def("fused_elementwise"), one, Attrs{Dims{8, 1, -1}}).types);
  EXPECT_TRUE(infer_result_types(def("fused_elementwise"), one, Attrs{Dims{8, 0, -1}}).types);
}

TEST(IrFusion, PassManagerFlagsSwitchPasses) {
  Program p;
  std::vector<Tensor> in, bind;
  linear_case("relu", Attrs{}, false, false).build(p, in, bind);
  PassOptions off;
  PassResult r = run_passes(p, bind, off);
  EXPECT_FALSE(r.fuse_linear_act);
  EXPECT_EQ(count_ops(p.body(), "linear"), 1u);
  r = run_passes(p, bind, PassOptions::inference());
  EXPECT_TRUE(r.fuse_linear_act);
  EXPECT_FALSE(r.fuse_attention);
  EXPECT_EQ(count_ops(p.body(), "fused_linear_act"), 1u);
}

}  // namespace
}  // namespace oar::ir

#include <gtest/gtest.h>

#include <cmath>

#include "ir/executor.h"
#include "ir/ir.h"
#include "ir_test_util.h"
#include "ir/passes/passes.h"

namespace oar::ir {
namespace {

using testing::def;

// An op with one region and no infer_meta, as control flow will be.
OpDef& kPassRegionOp = OpBuilder("ir_passes_test.region_op");

Tensor filled(const Dims& shape, float start, float step) {
  Tensor t = empty_tensor(shape, DType::Float32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * float(i);
  return t;
}

const Type kT{DType::Float32, {3}};

Value* op1(Program& p, const char* name, std::initializer_list<Value*> in, Attrs a = {}) {
  std::vector<Value*> v(in);
  return p.body().append(def(name), v, std::move(a), std::span<const Type>(&kT, 1))->result(0);
}

size_t count_ops(const Block& b, const char* name) {
  size_t n = 0;
  for (const auto& op : b.operations()) n += op->name() == name;
  return n;
}

TEST(IrPasses, DceRemovesUnusedChainKeepsRandomAndOutputs) {
  Program p;
  Value* x = p.add_input("x", kT);
  Value* e = op1(p, "exp", {x});
  op1(p, "relu", {e});  // exp -> relu, nothing reads either
  op1(p, "bernoulli", {x}, Attrs{int64_t(1), int64_t(0)});  // unused, but advances the generator
  Value* y = op1(p, "add", {x, x});
  p.add_output("y", y);
  ASSERT_NO_THROW(verify(p));
  EXPECT_TRUE(dead_code_elimination(p));
  EXPECT_EQ(p.body().operations().size(), 2u);
  EXPECT_EQ(count_ops(p.body(), "exp"), 0u);
  EXPECT_EQ(count_ops(p.body(), "relu"), 0u);
  EXPECT_EQ(count_ops(p.body(), "bernoulli"), 1u);
  EXPECT_EQ(count_ops(p.body(), "add"), 1u);
  EXPECT_EQ(p.body().yield(0), y);
  EXPECT_NO_THROW(verify(p));
  EXPECT_FALSE(dead_code_elimination(p));
}

TEST(IrPasses, DceInsideRegionsKeepsYields) {
  Program p;
  Value* x = p.add_input("x", kT);
  Value* in[] = {x};
  Operation* r = p.body().append(kPassRegionOp, in, Attrs{}, std::span<const Type>(&kT, 1));
  Block& b = r->add_region();
  Value* arg = b.add_argument(kT, "a");
  Value* dead_in[] = {arg};
  b.append(def("exp"), dead_in, Attrs{}, std::span<const Type>(&kT, 1));
  Value* live_in[] = {arg, x};
  b.add_yield(b.append(def("add"), live_in, Attrs{}, std::span<const Type>(&kT, 1))->result(0));
  p.add_output("y", r->result(0));
  // An unused region op with no effects inside goes as a whole.
  Operation* unused = p.body().append(kPassRegionOp, in, Attrs{}, std::span<const Type>(&kT, 1));
  Block& ub = unused->add_region();
  ub.add_yield(ub.add_argument(kT, "a"));
  EXPECT_TRUE(dead_code_elimination(p));
  ASSERT_EQ(p.body().operations().size(), 1u);
  EXPECT_EQ(b.operations().size(), 1u);
  EXPECT_EQ(count_ops(b, "add"), 1u);
  EXPECT_NO_THROW(verify(p));
  EXPECT_FALSE(dead_code_elimination(p));
}

TEST(IrPasses, CseMergesIdenticalOpsOnly) {
  Program p;
  Value* x = p.add_input("x", kT);
  Value* w = p.add_parameter("w", kT);
  Value* a1 = op1(p, "add", {x, w});
  Value* a2 = op1(p, "add", {x, w});
  Value* a3 = op1(p, "add", {w, x});  // other operand order: not the same op
  Value* s0 = op1(p, "gelu", {x}, Attrs{false});
  Value* s0b = op1(p, "gelu", {x}, Attrs{false});
  Value* sm = op1(p, "gelu", {x}, Attrs{true});  // other attribute
  Value* r1 = op1(p, "bernoulli", {x}, Attrs{int64_t(1), int64_t(0)});
  Value* r2 = op1(p, "bernoulli", {x}, Attrs{int64_t(1), int64_t(0)});  // random: never merged
  Value* m = op1(p, "multiply", {a1, a2});
  const char* names[] = {"m", "a3", "s0", "s0b", "sm", "r1", "r2"};
  Value* outs[] = {m, a3, s0, s0b, sm, r1, r2};
  for (size_t i = 0; i < 7; ++i) p.add_output(names[i], outs[i]);
  EXPECT_TRUE(common_subexpression_elimination(p));
  EXPECT_EQ(count_ops(p.body(), "add"), 2u);
  EXPECT_EQ(count_ops(p.body(), "gelu"), 2u);
  EXPECT_EQ(count_ops(p.body(), "bernoulli"), 2u);
  Operation* mul = m->defining_op();
  EXPECT_EQ(mul->operand(0), a1);
  EXPECT_EQ(mul->operand(1), a1);
  EXPECT_EQ(p.body().yield(1), a3);
  EXPECT_EQ(p.body().yield(3), s0);  // the duplicate output now reads the first gelu
  EXPECT_EQ(p.body().yield(4), sm);
  EXPECT_NO_THROW(verify(p));
  EXPECT_FALSE(common_subexpression_elimination(p));
}

TEST(IrPasses, CseDoesNotMergeAcrossBlocks) {
  Program p;
  Value* x = p.add_input("x", kT);
  Value* top = op1(p, "exp", {x});
  Value* in[] = {x};
  Operation* r = p.body().append(kPassRegionOp, in, Attrs{}, std::span<const Type>(&kT, 1));
  Block& b = r->add_region();
  b.add_argument(kT, "a");
  Value* e_in[] = {x};
  b.add_yield(b.append(def("exp"), e_in, Attrs{}, std::span<const Type>(&kT, 1))->result(0));
  p.add_output("y", top);
  p.add_output("z", r->result(0));
  EXPECT_FALSE(common_subexpression_elimination(p));
  EXPECT_EQ(b.operations().size(), 1u);
}

TEST(IrPasses, AttrsEqual) {
  EXPECT_TRUE(attrs_equal(Attrs{int64_t(1), 2.5, std::string("a")}, Attrs{int64_t(1), 2.5, std::string("a")}));
  EXPECT_FALSE(attrs_equal(Attrs{int64_t(1)}, Attrs{1.0}));  // same number, other type
  EXPECT_FALSE(attrs_equal(Attrs{0.0}, Attrs{-0.0}));
  EXPECT_TRUE(attrs_equal(Attrs{std::nan("")}, Attrs{std::nan("")}));
  EXPECT_FALSE(attrs_equal(Attrs{Dims{1, 2}}, Attrs{Dims{1, 3}}));
  EXPECT_FALSE(attrs_equal(Attrs{true}, Attrs{true, false}));
  EXPECT_TRUE(attrs_equal(Attrs{DType::Int32}, Attrs{DType::Int32}));
}

// x input; c1, c2, cp constants; w a named parameter.
//   y = exp(c1 + c2) * x, u = c1 + w, r = bernoulli(cp)
struct FoldProgram {
  Program p;
  Value *x, *c1, *c2, *w, *cp, *y, *u, *r;
  std::vector<Tensor> bindings;
  FoldProgram() {
    x = p.add_input("x", kT);
    c1 = p.add_parameter("const_0", kT, true);
    c2 = p.add_parameter("const_1", kT, true);
    w = p.add_parameter("w", kT);
    cp = p.add_parameter("const_2", kT, true);
    bindings = {filled({3}, 0.5f, 0.25f), filled({3}, -1.f, 0.5f), filled({3}, 2.f, 1.f), filled({3}, 0.f, 0.5f)};
    y = op1(p, "multiply", {op1(p, "exp", {op1(p, "add", {c1, c2})}), x});
    u = op1(p, "add", {c1, w});
    r = op1(p, "bernoulli", {cp}, Attrs{int64_t(3), int64_t(0)});
    p.add_output("y", y);
    p.add_output("u", u);
    p.add_output("r", r);
  }
};

TEST(IrPasses, FoldingReplacesConstantArithmetic) {
  FoldProgram f;
  ASSERT_NO_THROW(verify(f.p));
  EXPECT_TRUE(constant_folding(f.p, f.bindings));
  EXPECT_NO_THROW(verify(f.p));
  // add and exp over constants are gone; the multiply reads the input and
  // stays, as do the op over a named parameter and the random op.
  EXPECT_EQ(f.p.body().operations().size(), 3u);
  EXPECT_EQ(count_ops(f.p.body(), "exp"), 0u);
  EXPECT_EQ(count_ops(f.p.body(), "add"), 1u);
  EXPECT_EQ(count_ops(f.p.body(), "bernoulli"), 1u);
  EXPECT_EQ(f.u->defining_op()->operand(1), f.w);
  // c2 and the intermediate constant are read by nothing and dropped; c1 is
  // still read by c1 + w.
  ASSERT_EQ(f.p.parameters().size(), f.bindings.size());
  std::vector<std::string> names;
  for (const NamedValue& n : f.p.parameters()) names.push_back(n.name);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0], "const_0");
  EXPECT_EQ(names[1], "w");
  EXPECT_EQ(names[2], "const_2");
  EXPECT_TRUE(f.p.parameters()[3].constant);
  Value* folded = f.y->defining_op()->operand(0);
  EXPECT_EQ(folded, f.p.parameters()[3].value);
  const Tensor& k = f.bindings[3];
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_NEAR(k.data<float>()[i], std::exp((0.5f + 0.25f * float(i)) + (-1.f + 0.5f * float(i))), 1e-6);
  // The folded program computes the same values.
  Tensor xin = filled({3}, 1.f, -2.f);
  std::vector<Tensor> in = {xin};
  Tensors out = run(f.p, in, f.bindings);
  ASSERT_EQ(out.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    float c = (0.5f + 0.25f * float(i)) + (-1.f + 0.5f * float(i));
    EXPECT_NEAR(out[0].data<float>()[i], std::exp(c) * (1.f - 2.f * float(i)), 1e-5);
    EXPECT_NEAR(out[1].data<float>()[i], (0.5f + 0.25f * float(i)) + (2.f + float(i)), 1e-6);
  }
  EXPECT_FALSE(constant_folding(f.p, f.bindings));
}

// full() has no operands: it is evaluated when an op over constants reads it,
// never folded on its own, and dropped only when nothing else reads it.
TEST(IrPasses, FoldingEvaluatesOperandlessSources) {
  Program p;
  Value* x = p.add_input("x", kT);
  Value* c = p.add_parameter("const_0", kT, true);
  std::vector<Tensor> bindings = {filled({3}, 1.f, 1.f)};
  const Type scalar{DType::Float32, {}};
  auto full = [&](double v) {
    return p.body().append(def("full"), {}, Attrs{Dims{}, v, DType::Float32}, std::span<const Type>(&scalar, 1))
        ->result(0);
  };
  Value* two = full(2.0);
  Value* three = full(3.0);
  Value* y = op1(p, "multiply", {c, two});  // folds; `two` then goes
  Value* z = op1(p, "multiply", {x, three});  // reads the input: `three` stays
  p.add_output("y", y);
  p.add_output("z", z);
  ASSERT_NO_THROW(verify(p));
  EXPECT_TRUE(constant_folding(p, bindings));
  EXPECT_NO_THROW(verify(p));
  EXPECT_EQ(count_ops(p.body(), "full"), 1u);
  EXPECT_EQ(count_ops(p.body(), "multiply"), 1u);
  EXPECT_EQ(z->defining_op()->operand(1), three);
  ASSERT_EQ(p.parameters().size(), 1u);
  ASSERT_EQ(bindings.size(), 1u);
  EXPECT_EQ(p.body().yield(0), p.parameters()[0].value);
  for (int64_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(bindings[0].data<float>()[i], 2.f * (1.f + float(i)));
  EXPECT_FALSE(constant_folding(p, bindings));
}

TEST(IrPasses, FoldingChecksBindings) {
  FoldProgram f;
  std::vector<Tensor> few = {f.bindings[0]};
  EXPECT_THROW(constant_folding(f.p, few), Error);
}

TEST(IrPasses, RunPassesToFixedPointAndOptionsOff) {
  auto build = [](FoldProgram& f) {
    // A duplicate of c1 + c2 and an unused exp(x) on top of FoldProgram.
    op1(f.p, "add", {f.c1, f.c2});
    op1(f.p, "exp", {f.x});
  };
  FoldProgram off;
  build(off);
  const size_t n = off.p.body().operations().size();
  PassResult none = run_passes(off.p, off.bindings, PassOptions{false, false, false});
  EXPECT_FALSE(none.dce || none.cse || none.fold);
  EXPECT_EQ(off.p.body().operations().size(), n);

  FoldProgram f;
  build(f);
  PassResult r = run_passes(f.p, f.bindings);
  EXPECT_TRUE(r.dce);
  EXPECT_TRUE(r.cse);
  EXPECT_TRUE(r.fold);
  EXPECT_EQ(f.p.body().operations().size(), 3u);
  EXPECT_EQ(f.p.parameters().size(), f.bindings.size());
  PassResult again = run_passes(f.p, f.bindings);
  EXPECT_FALSE(again.dce || again.cse || again.fold);
}

}  // namespace
}  // namespace oar::ir

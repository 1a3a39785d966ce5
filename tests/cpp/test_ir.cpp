#include <gtest/gtest.h>

#include <cmath>

#include "autograd/autograd.h"
#include "ir/executor.h"
#include "ir/ir.h"
#include "ir_test_util.h"
#include "ir/tracer.h"
#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::ir {
namespace {

using testing::def;

// An op with regions and no infer_meta (the verifier checks only its structure).
OpDef& kTestRegionOp = OpBuilder("ir_test.region_op");

Tensor filled(const Dims& shape, float start) {
  Tensor t = empty_tensor(shape, DType::Float32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + 0.25f * float(i % 7) - 0.5f * float(i % 3);
  return t;
}

// Throws an oar::Error whose message contains every piece.
template <typename F> void expect_error(F&& f, std::initializer_list<const char*> pieces) {
  try {
    f();
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    for (const char* p : pieces) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// x: float32[-1,4], w: [4,3], b: [3];  out = relu(matmul(x, w) + b)
struct Mlp {
  Program p;
  Value *x, *w, *b, *mm, *sum, *act;
  Operation *mm_op, *add_op;
  Mlp() {
    x = p.add_input("x", Type{DType::Float32, {-1, 4}});
    w = p.add_parameter("w", Type{DType::Float32, {4, 3}});
    b = p.add_parameter("b", Type{DType::Float32, {3}});
    Value* mm_in[] = {x, w};
    Type t{DType::Float32, {-1, 3}};
    mm_op = p.body().append(def("matmul"), mm_in, Attrs{false, false}, std::span<const Type>(&t, 1));
    mm = mm_op->result(0);
    Value* add_in[] = {mm, b};
    add_op = p.body().append(def("add"), add_in, Attrs{}, std::span<const Type>(&t, 1));
    sum = add_op->result(0);
    Value* relu_in[] = {sum};
    act = p.body().append(def("relu"), relu_in, Attrs{}, std::span<const Type>(&t, 1))->result(0);
    p.add_output("y", act);
  }
};

float reference(const Tensor& x, const Tensor& w, const Tensor& b, int64_t i, int64_t j) {
  float s = b.data<float>()[j];
  for (int64_t k = 0; k < 4; ++k) s += x.data<float>()[i * 4 + k] * w.data<float>()[k * 3 + j];
  return s > 0 ? s : 0;
}

TEST(IrProgram, BuildVerifyPrint) {
  Mlp m;
  EXPECT_NO_THROW(verify(m.p));
  std::string s = to_string(m.p);
  EXPECT_NE(s.find("input %0 \"x\": float32[-1,4]"), std::string::npos) << s;
  EXPECT_NE(s.find("param %1 \"w\": float32[4,3]"), std::string::npos) << s;
  EXPECT_NE(s.find("%3: float32[-1,3] = matmul(%0, %1) {transpose_x=false, transpose_y=false}"), std::string::npos)
      << s;
  EXPECT_NE(s.find("%4: float32[-1,3] = add(%3, %2)"), std::string::npos) << s;
  EXPECT_NE(s.find("output \"y\" = %5"), std::string::npos) << s;
}

TEST(IrProgram, UseLists) {
  Mlp m;
  ASSERT_EQ(m.mm->uses().size(), 1u);
  EXPECT_EQ(m.mm->uses()[0].op, m.add_op);
  EXPECT_EQ(m.mm->uses()[0].index, 0);
  ASSERT_EQ(m.act->uses().size(), 1u);  // the program output
  EXPECT_EQ(m.act->uses()[0].op, nullptr);
  EXPECT_EQ(m.act->uses()[0].block, &m.p.body());
  // An op whose results are still used cannot be erased.
  expect_error([&] { m.p.body().erase(m.mm_op); }, {"still has 1 use"});
  // Bypass the add: relu reads the matmul directly; the add can then go.
  m.sum->replace_all_uses_with(m.mm);
  EXPECT_EQ(m.mm->uses().size(), 2u);
  EXPECT_FALSE(m.sum->has_uses());
  EXPECT_EQ(m.b->uses().size(), 1u);
  m.p.body().erase(m.add_op);
  EXPECT_FALSE(m.b->has_uses());
  EXPECT_EQ(m.p.body().operations().size(), 2u);
  EXPECT_NO_THROW(verify(m.p));
}

TEST(IrVerify, WrongResultType) {
  Mlp m;
  m.mm->set_type(Type{DType::Float32, {-1, 5}});
  expect_error([&] { verify(m.p); }, {"[oar.ir.verify]", "'matmul'", "float32[-1,5]", "float32[-1,3]"});
  Mlp m2;
  m2.mm->set_type(Type{DType::Float64, {-1, 3}});
  expect_error([&] { verify(m2.p); }, {"'matmul'", "float64[-1,3]"});
  // A dim that depends on the dynamic input dim may not be declared static.
  Mlp m3;
  m3.mm->set_type(Type{DType::Float32, {2, 3}});
  expect_error([&] { verify(m3.p); }, {"'matmul'", "float32[2,3]", "float32[-1,3]"});
}

TEST(IrVerify, InvalidDims) {
  Mlp m;
  m.x->set_type(Type{DType::Float32, {-2, 4}});
  expect_error([&] { verify(m.p); }, {"argument 0 of the program's body", "float32[-2,4]", "-1 for a dynamic dim"});
}

TEST(IrVerify, OperandTypesRejected) {
  Program p;
  Value* x = p.add_input("x", Type{DType::Float32, {2, 4}});
  Value* w = p.add_input("w", Type{DType::Float32, {5, 3}});
  Value* in[] = {x, w};
  Type t{DType::Float32, {2, 3}};
  p.body().append(def("matmul"), in, Attrs{false, false}, std::span<const Type>(&t, 1));
  expect_error([&] { verify(p); }, {"'matmul'", "rejects the operand types", "float32[2,4]", "[oar.matmul]"});
}

TEST(IrVerify, UseBeforeDefinition) {
  Mlp m;
  // The matmul now reads the relu's result, which is defined after it.
  m.mm_op->set_operand(0, m.act);
  expect_error([&] { verify(m.p); }, {"'matmul'", "operand 0 (%5)", "before it is defined"});
}

TEST(IrVerify, ValueOfAnotherProgram) {
  Mlp m, other;
  m.mm_op->set_operand(1, other.w);
  expect_error([&] { verify(m.p); }, {"'matmul'", "operand 1", "not visible"});
  m.mm_op->set_operand(1, m.w);
  EXPECT_EQ(other.w->uses().size(), 1u);  // only its own program's matmul
}

TEST(IrProgram, DestroyedOperandLeavesNoDanglingPointer) {
  Mlp m;
  {
    Mlp other;
    m.mm_op->set_operand(1, other.w);
  }
  EXPECT_EQ(m.mm_op->operand(1), nullptr);
}

TEST(IrPrinter, Attributes) {
  EXPECT_EQ(attr_str(AttrValue(3.0)), "3.0");
  EXPECT_EQ(attr_str(AttrValue(0.25)), "0.25");
  EXPECT_EQ(attr_str(AttrValue(int64_t(-2))), "-2");
  EXPECT_EQ(attr_str(AttrValue(true)), "true");
  EXPECT_EQ(attr_str(AttrValue(DType::BFloat16)), "bfloat16");
  EXPECT_EQ(attr_str(AttrValue(std::string("a\"b"))), "\"a\\\"b\"");
  EXPECT_EQ(attr_str(AttrValue(Dims{1, -1})), "[1,-1]");
  EXPECT_EQ(attr_str(AttrValue(std::complex<double>(1, -2))), "(1.0-2.0j)");
  EXPECT_EQ(attr_str(AttrValue()), "none");
}

TEST(IrVerify, TooManyAttributes) {
  Mlp m;
  m.mm_op->set_attrs(Attrs{false, false, true});
  expect_error([&] { verify(m.p); }, {"'matmul'", "3 attribute(s)", "declares 2"});
}

TEST(IrVerify, ProgramSignature) {
  Program p;
  p.add_input("x", Type{DType::Float32, {3}});
  p.add_parameter("x", Type{DType::Float32, {3}});
  expect_error([&] { verify(p); }, {"'x'", "more than one"});
  Program q;
  q.body().add_argument(Type{DType::Float32, {3}}, "stray");
  expect_error([&] { verify(q); }, {"1 argument(s)", "0 input(s)"});
}

// region_op(%c) with two regions, each yielding a value.
struct WithRegions {
  Program p;
  Value *x, *inner, *res;
  Operation* op;
  WithRegions() {
    x = p.add_input("x", Type{DType::Float32, {3}});
    Value* in[] = {x};
    Type t{DType::Float32, {3}};
    op = p.body().append(kTestRegionOp, in, Attrs{}, std::span<const Type>(&t, 1));
    res = op->result(0);
    for (int r = 0; r < 2; ++r) {
      Block& b = op->add_region();
      Value* arg = b.add_argument(t, "a");
      Value* ein[] = {arg, x};  // reads its own argument and a value of the enclosing block
      inner = b.append(def("add"), ein, Attrs{}, std::span<const Type>(&t, 1))->result(0);
      b.add_yield(inner);
    }
    Value* rin[] = {res};
    p.add_output("y", p.body().append(def("relu"), rin, Attrs{}, std::span<const Type>(&t, 1))->result(0));
  }
};

TEST(IrRegions, WellFormedVerifiesAndPrintsIndented) {
  WithRegions w;
  EXPECT_NO_THROW(verify(w.p));
  std::string s = to_string(w.p);
  EXPECT_NE(s.find("  %1: float32[3] = ir_test.region_op(%0)\n    region 0 (%2: float32[3]) {\n"
                   "      %3: float32[3] = add(%2, %0)\n      yield %3\n    }\n    region 1"),
            std::string::npos)
      << s;
  // The executor does not run control flow yet.
  Tensor x = filled({3}, 1.f);
  try {
    run(w.p, std::span<const Tensor>(&x, 1), {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
  }
}

TEST(IrRegions, ValueOfARegionIsNotVisibleOutside) {
  WithRegions w;
  // The relu after the region op reads a value defined inside region 1.
  Operation* relu = w.p.body().operations().back().get();
  relu->set_operand(0, w.inner);
  expect_error([&] { verify(w.p); }, {"'relu'", "not visible"});
}

TEST(IrRegions, YieldOfASiblingRegion) {
  WithRegions w;
  Value* first = w.op->region(0).yield(0);
  w.op->region(1).set_yield(0, first);
  expect_error([&] { verify(w.p); }, {"yield 0 of region 1", "'ir_test.region_op'", "not defined"});
}

TEST(IrRegions, ArgumentOwnership) {
  WithRegions w;
  // An op inside region 0 reading region 1's argument.
  Operation* add0 = w.op->region(0).operations().front().get();
  add0->set_operand(0, w.op->region(1).argument(0));
  expect_error([&] { verify(w.p); }, {"'add'", "not visible"});
}

TEST(IrExecutor, RunsWithDynamicBatch) {
  Mlp m;
  Tensor w = filled({4, 3}, -0.3f), b = filled({3}, 0.1f);
  Tensor params[] = {w, b};
  for (int64_t batch : {2, 5}) {
    Tensor x = filled({batch, 4}, 0.2f);
    Tensors out = run(m.p, std::span<const Tensor>(&x, 1), params);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), (Dims{batch, 3}));
    Tensor y = ops::contiguous(out[0]);
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(y.data<float>()[i * 3 + j], reference(x, w, b, i, j), 1e-5);
  }
  Tensor bad = filled({2, 5}, 0.f);
  expect_error([&] { run(m.p, std::span<const Tensor>(&bad, 1), params); },
               {"[oar.ir.run]", "'x'", "float32[-1,4]", "float32[2,5]"});
  Tensor x = filled({2, 4}, 0.f);
  expect_error([&] { run(m.p, std::span<const Tensor>(&x, 1), std::span<const Tensor>(params, 1)); },
               {"2 parameter(s), got 1"});
}

TEST(IrTracer, CapturesOpsAndDynamicDims) {
  Tensor w = filled({4, 3}, -0.3f), b = filled({3}, 0.1f), x = filled({2, 4}, 0.2f);
  std::unique_ptr<Program> p;
  std::vector<Tensor> bound;
  Tensor eager;
  {
    Tracer tr;
    EXPECT_TRUE(is_tracing());
    tr.name_parameter("w", w);
    tr.add_input("x", x, Dims{0});
    eager = ops::relu(ops::add(ops::matmul(x, w), b));
    tr.add_output("y", eager);
    bound = tr.bindings();
    p = tr.finish();
  }
  EXPECT_FALSE(is_tracing());
  EXPECT_FALSE(dispatch_state().tracing);
  verify(*p);
  std::string s = to_string(*p);
  EXPECT_NE(s.find("param %1 \"w\": float32[4,3]"), std::string::npos) << s;
  EXPECT_NE(s.find("const %2 \"const_0\": float32[3]"), std::string::npos) << s;  // b was not named
  EXPECT_NE(s.find("= matmul(%0, %1)"), std::string::npos) << s;
  EXPECT_EQ(p->outputs()[0].value->type(), (Type{DType::Float32, {-1, 3}}));
  ASSERT_EQ(bound.size(), 2u);
  EXPECT_TRUE(bound[0].same(w));
  EXPECT_TRUE(bound[1].same(b));
  // Eager results were computed while tracing.
  for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(eager.data<float>()[j], reference(x, w, b, 0, j), 1e-5);
  Tensor x5 = filled({5, 4}, 0.7f);
  Tensors out = run(*p, std::span<const Tensor>(&x5, 1), std::span<const Tensor>(bound.data(), bound.size()));
  Tensor y = ops::contiguous(out[0]);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(y.data<float>()[i * 3 + j], reference(x5, w, b, i, j), 1e-5);
}

TEST(IrTracer, NestedTracersBothRecord) {
  Tensor x = filled({3}, 1.f);
  Tracer outer;
  outer.add_input("x", x);
  Tensor y = ops::relu(x);
  {
    Tracer inner;
    inner.add_input("y", y);
    Tensor z = ops::relu(y);
    inner.add_output("z", z);
    std::unique_ptr<Program> pi = inner.finish();
    EXPECT_EQ(pi->body().operations().size(), 1u);
    outer.add_output("z", z);
  }
  EXPECT_TRUE(dispatch_state().tracing);
  std::unique_ptr<Program> po = outer.finish();
  EXPECT_EQ(po->body().operations().size(), 2u);
  verify(*po);
}

TEST(IrTracer, DetachedAliasesMapToTheSameValue) {
  Tensor x = filled({2, 3}, 1.f), w = filled({2, 3}, 0.5f);
  Tracer tr;
  tr.add_input("x", x);
  tr.name_parameter("w", w);
  Tensor y = ops::relu(x);
  // detach() makes a new tensor over the same data without dispatch.
  Tensor z = ops::add(detach(y), detach(w));
  tr.add_output("z", z);
  std::unique_ptr<Program> p = tr.finish();
  verify(*p);
  std::string s = to_string(*p);
  EXPECT_NE(s.find("param %1 \"w\""), std::string::npos) << s;
  EXPECT_NE(s.find("= add(%2, %1)"), std::string::npos) << s;
  EXPECT_TRUE(p->parameters().size() == 1 && !p->parameters()[0].constant);
}

TEST(IrTracer, UntracedViewOfTracedDataIsRejected) {
  Tensor x = filled({2, 3}, 1.f);
  Tracer tr;
  tr.add_input("x", x);
  Tensor y = ops::relu(x);
  Tensor v = make_view(y, Dims{3}, Dims{1}, 3);  // a view no op made: the trace cannot follow it
  expect_error([&] { ops::relu(v); }, {"[oar.ir.trace] 'relu'", "shares memory with a traced value"});
}

TEST(IrTracer, UntracedViewOfAParameterIsAnotherParameter) {
  Tensor x = filled({3}, 1.f), w = filled({2, 3}, 0.5f);
  Tensor w_row = make_view(w, Dims{3}, Dims{1}, 3);  // e.g. a tied weight made before tracing
  Tracer tr;
  tr.add_input("x", x);
  tr.name_parameter("w", w);
  tr.name_parameter("w_row", w_row);
  Tensor wt = ops::transpose(w, Dims{1, 0});  // a traced view of the weight
  Tensor y = ops::add(ops::add(x, w_row), ops::sum(wt, Dims{1}, false, std::nullopt));
  tr.add_output("y", y);
  std::unique_ptr<Program> p = tr.finish();
  verify(*p);
  ASSERT_EQ(p->parameters().size(), 2u);
  EXPECT_EQ(p->parameters()[1].name, "w_row");
}

TEST(IrTracer, InPlaceWriteToTracedValueIsRecorded) {
  Tensor x = filled({3}, 1.f), one = filled({3}, 1.f);
  Tracer tr;
  tr.add_input("x", x);
  Tensor y = ops::relu(x);
  ops::copy_(y, one);  // recorded out of place; y now stands for its result
  Tensor z = ops::relu(y);
  tr.add_output("z", z);
  std::unique_ptr<Program> p = tr.finish();
  ASSERT_EQ(p->body().operations().size(), 3u);
  const Operation& last = *p->body().operations().back();
  EXPECT_EQ(last.operand(0), std::next(p->body().operations().begin())->get()->result(0));
  EXPECT_NO_THROW(verify(*p));
}

TEST(IrTracer, InPlaceWriteToBoundDataIsAStateUpdate) {
  Tensor x = filled({3}, 1.f), w = filled({3}, 2.f), one = filled({3}, 1.f);
  Tracer tr;
  tr.add_input("x", x);
  Tensor y = ops::add(x, w);  // w becomes a bound parameter
  ops::copy_(w, one);         // recorded as cast(one), the parameter's new value
  tr.add_output("y", ops::add(y, w));
  std::unique_ptr<Program> p = tr.finish();
  ASSERT_EQ(p->state_updates().size(), 1u);
  EXPECT_EQ(p->state_updates()[0].parameter, p->parameters()[0].value);
  EXPECT_FALSE(p->parameters()[0].constant);
  EXPECT_NO_THROW(verify(*p));
}

TEST(IrTracer, InPlaceWriteThroughAViewOfBoundDataIsRejectedAtTheNextRead) {
  Tensor x = filled({3}, 1.f), w = filled({2, 3}, 2.f), one = filled({3}, 1.f);
  Tensor row = make_view(w, Dims{3}, Dims{1}, 0);  // made outside the trace
  Tracer tr;
  tr.add_input("x", x);
  Tensor y = ops::add(x, w);  // w becomes a bound parameter
  ops::copy_(row, one);       // a write through a view of it: not captured
  expect_error([&] { ops::add(y, w); }, {"modified in place"});
}

TEST(IrTracer, ReshapeWithTracedSizeKeepsConcreteDims) {
  Tensor x = filled({2, 6}, 1.f);
  Tracer tr;
  tr.add_input("x", x, Dims{0});
  Tensor y = ops::reshape(x, Dims{2, 3, 2});  // the batch size is baked into the attribute
  tr.add_output("y", y);
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_EQ(p->outputs()[0].value->type(), (Type{DType::Float32, {2, 3, 2}}));
  ASSERT_EQ(p->notes().size(), 1u);
  EXPECT_NE(p->notes()[0].find("reshape"), std::string::npos);
  EXPECT_TRUE(p->body().operations().front()->example_shapes());
  EXPECT_NO_THROW(verify(*p));
}

TEST(IrVerify, DynamicOperandsRejectedUnlessShapesComeFromTheExample) {
  // add(x: [-1,4], y: [5,4]) holds only when the dynamic dim is 5 (or 1).
  Program p;
  Value* x = p.add_input("x", Type{DType::Float32, {-1, 4}});
  Value* y = p.add_input("y", Type{DType::Float32, {5, 4}});
  Value* in[] = {x, y};
  Type t{DType::Float32, {5, 4}};
  Operation* op = p.body().append(def("add"), in, Attrs{}, std::span<const Type>(&t, 1));
  p.add_output("z", op->result(0));
  expect_error([&] { verify(p); }, {"'add'", "rejects the operand types", "probed as 97 and 101"});
  op->mark_example_shapes("traced with x of shape [5,4]");
  EXPECT_NO_THROW(verify(p));
  // The dtype is still checked.
  op->result(0)->set_type(Type{DType::Float64, {5, 4}});
  expect_error([&] { verify(p); }, {"'add'", "float64[5,4]"});
}

}  // namespace
}  // namespace oar::ir

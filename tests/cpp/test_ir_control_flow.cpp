// Control flow in the IR (cond, while_loop, switch_case): capture by the
// tracer, the verifier's region rules, the executor, the printer and the
// model format; and state updates (in-place writes to bound parameters).
#include <gtest/gtest.h>

#include "autograd/autograd.h"
#include "ir/executor.h"
#include "ir/ir.h"
#include "ir/serialize.h"
#include "ir/tracer.h"
#include "ops/control_flow.h"
#include "ops/dispatch.h"
#include "ops/manip.h"
#include "ops/ops.h"

namespace oar::ir {
namespace {

Tensor vec(std::initializer_list<float> v) {
  Tensor t = empty_tensor(Dims{int64_t(v.size())}, DType::Float32);
  size_t i = 0;
  for (float x : v) t.data<float>()[i++] = x;
  return t;
}

Tensor vec64(std::initializer_list<double> v) {
  Tensor t = empty_tensor(Dims{int64_t(v.size())}, DType::Float64);
  size_t i = 0;
  for (double x : v) t.data<double>()[i++] = x;
  return t;
}

std::vector<float> values(const Tensor& t) {
  Tensor c = ops::contiguous(ops::cast(t, DType::Float32));
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

template <typename F> void expect_error(F&& f, ErrorKind kind, std::initializer_list<const char*> pieces) {
  try {
    f();
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const char* p : pieces) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

Tensor positive_sum(const Tensor& x) { return ops::greater_than(ops::sum(x), ops::full({}, 0.0, x.dtype())); }

// y = x * 2 if sum(x) > 0 else x - 1
std::unique_ptr<Program> traced_cond(const Tensor& example) {
  Tracer tr;
  tr.add_input("x", example);
  Tensor p = positive_sum(example);
  Tensors y = trace_cond(
      p, [&] { return Tensors{ops::scale(example, 2.0)}; },
      [&] { return Tensors{ops::subtract(example, ops::full({}, 1.0, example.dtype()))}; });
  tr.add_output("y", y[0]);
  return tr.finish();
}

TEST(IrControlFlow, CondRecordsBothBranchesAndRunsTheSelectedOne) {
  std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
  EXPECT_NO_THROW(verify(*p));
  const Operation& c = *p->body().operations().back();
  EXPECT_EQ(c.name(), "cond");
  ASSERT_EQ(c.num_regions(), 2u);
  EXPECT_EQ(c.region(0).num_yields(), 1u);
  EXPECT_TRUE(c.def().traits.side_effect);
  Tensor pos = vec({1.f, 2.f}), neg = vec({-3.f, 1.f});
  EXPECT_EQ(values(run(*p, std::span<const Tensor>(&pos, 1), {})[0]), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(values(run(*p, std::span<const Tensor>(&neg, 1), {})[0]), (std::vector<float>{-4.f, 0.f}));
  std::string s = to_string(*p);
  EXPECT_NE(s.find("= cond(%"), std::string::npos) << s;
  EXPECT_NE(s.find("    region 0 () {\n"), std::string::npos) << s;
  EXPECT_NE(s.find("      yield %"), std::string::npos) << s;
}

TEST(IrControlFlow, GradientsFlowThroughTheExecutedBranch) {
  std::unique_ptr<Program> p = traced_cond(vec64({1.0, 2.0}));
  for (bool positive : {true, false}) {
    Tensor x = positive ? vec64({1.0, 2.0}) : vec64({-1.0, -2.0});
    x.autograd_meta().stop_gradient = false;
    Tensors y = run(*p, std::span<const Tensor>(&x, 1), {});
    Tensor s = ops::sum(y[0]);
    Tensor seed = ops::ones({}, DType::Float64);
    Tensors g = run_backward(std::span<const Tensor>(&s, 1), std::span<const Tensor>(&seed, 1), false, false,
                             std::span<const Tensor>(&x, 1));
    EXPECT_EQ(values(g[0]), (positive ? std::vector<float>{2.f, 2.f} : std::vector<float>{1.f, 1.f}));
  }
}

TEST(IrControlFlow, BranchResultDimsThatDifferAreDynamic) {
  Tracer tr;
  Tensor x = vec({1.f, 2.f, 3.f});
  tr.add_input("x", x);
  Tensor two = vec({5.f, 6.f});
  Tensors y = trace_cond(positive_sum(x), [&] { return Tensors{x}; }, [&] { return Tensors{two}; });
  tr.add_output("y", y[0]);
  std::vector<Tensor> bound = tr.bindings();
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_EQ(p->outputs()[0].value->type(), (Type{DType::Float32, {-1}}));
  EXPECT_NO_THROW(verify(*p));
  Tensor neg = vec({-1.f, 0.f, 0.f});
  EXPECT_EQ(values(run(*p, std::span<const Tensor>(&neg, 1), bound)[0]), (std::vector<float>{5.f, 6.f}));
}

TEST(IrControlFlow, WhileLoopMakesGrowingDimsDynamicAndRunsUntilFalse) {
  // while sum(a) < limit: a = concat(a, a * 2)
  Tracer tr;
  Tensor a = vec({1.f}), limit = ops::full({}, 10.0, DType::Float32);
  tr.add_input("a", a);
  tr.add_input("limit", limit);
  Tensors out = trace_while_loop(
      [&](const Tensors& v) { return ops::less_than(ops::sum(v[0]), limit); },
      [&](const Tensors& v) {
        Tensor parts[] = {v[0], ops::scale(v[0], 2.0)};
        return Tensors{ops::concat(parts, 0)};
      },
      Tensors{a});
  EXPECT_EQ(values(out[0]), (std::vector<float>{1.f, 2.f, 2.f, 4.f, 2.f, 4.f, 4.f, 8.f}));
  tr.add_output("a", out[0]);
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_NO_THROW(verify(*p));
  const Operation& w = *p->body().operations().back();
  EXPECT_EQ(w.name(), "while_loop");
  EXPECT_EQ(w.result(0)->type(), (Type{DType::Float32, {-1}}));
  EXPECT_EQ(w.region(1).argument(0)->type(), (Type{DType::Float32, {-1}}));
  Tensor in[] = {vec({1.f}), ops::full({}, 2.0, DType::Float32)};
  EXPECT_EQ(values(run(*p, in, {})[0]), (std::vector<float>{1.f, 2.f}));
  Tensor in0[] = {vec({5.f}), ops::full({}, 2.0, DType::Float32)};  // zero iterations
  EXPECT_EQ(values(run(*p, in0, {})[0]), (std::vector<float>{5.f}));
}

TEST(IrControlFlow, WhileLoopIterationGuard) {
  Tracer tr;
  Tensor i = ops::full({}, int64_t(0), DType::Int64), n = ops::full({}, int64_t(3), DType::Int64);
  tr.add_input("n", n);
  Tensors out = trace_while_loop([&](const Tensors& v) { return ops::less_than(v[0], n); },
                                 [&](const Tensors& v) { return Tensors{ops::add(v[0], ops::ones({}, DType::Int64))}; },
                                 Tensors{i});
  tr.add_output("i", out[0]);
  std::unique_ptr<Program> p = tr.finish();
  const int64_t old = max_loop_iterations();
  set_max_loop_iterations(5);
  Tensor big = ops::full({}, int64_t(9), DType::Int64), ok = ops::full({}, int64_t(5), DType::Int64);
  EXPECT_EQ(values(run(*p, std::span<const Tensor>(&ok, 1), {})[0]), (std::vector<float>{5.f}));
  expect_error([&] { run(*p, std::span<const Tensor>(&big, 1), {}); }, ErrorKind::Runtime,
               {"[oar.ir.run] while_loop ran 5 iterations", "set_max_loop_iterations"});
  set_max_loop_iterations(old);
  expect_error([&] { set_max_loop_iterations(0); }, ErrorKind::Value, {"must be positive"});
}

TEST(IrControlFlow, SwitchCasePicksTheKeyOrTheDefault) {
  Tracer tr;
  Tensor idx = ops::full({}, int64_t(3), DType::Int64), x = vec({1.f, 2.f});
  tr.add_input("i", idx);
  tr.add_input("x", x);
  BranchFn fns[] = {[&] { return Tensors{ops::scale(x, 10.0)}; }, [&] { return Tensors{ops::scale(x, 30.0)}; },
                    [&] { return Tensors{ops::neg(x)}; }};
  Tensors y = trace_switch_case(idx, Dims{1, 3}, fns);
  EXPECT_EQ(values(y[0]), (std::vector<float>{30.f, 60.f}));
  tr.add_output("y", y[0]);
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_NO_THROW(verify(*p));
  for (auto [k, want] : {std::pair<int64_t, float>{1, 10.f}, {3, 30.f}, {2, -1.f}, {-7, -1.f}}) {
    Tensor in[] = {ops::full({}, k, DType::Int64), vec({1.f, 1.f})};
    EXPECT_EQ(values(run(*p, in, {})[0]), (std::vector<float>{want, want})) << k;
  }
  expect_error([&] {
    Tracer t2;
    t2.add_input("x", x);
    trace_switch_case(idx, Dims{1, 1}, fns);
  }, ErrorKind::Value, {"appears twice"});
}

TEST(IrControlFlow, NestedCondInsideWhileLoop) {
  // while i < n: acc = acc * 0.5 if sum(acc) > 10 else acc + x; i += 1
  Tracer tr;
  Tensor x = vec({1.f, 2.f}), n = ops::full({}, int64_t(3), DType::Int64);
  tr.add_input("x", x);
  tr.add_input("n", n);
  Tensors out = trace_while_loop(
      [&](const Tensors& v) { return ops::less_than(v[0], n); },
      [&](const Tensors& v) {
        Tensor acc = v[1];
        Tensor big = ops::greater_than(ops::sum(acc), ops::full({}, 10.0, DType::Float32));
        Tensors c = trace_cond(big, [&] { return Tensors{ops::scale(acc, 0.5)}; },
                               [&] { return Tensors{ops::add(acc, x)}; });
        return Tensors{ops::add(v[0], ops::ones({}, DType::Int64)), c[0]};
      },
      Tensors{ops::zeros({}, DType::Int64), x});
  EXPECT_EQ(values(out[1]), (std::vector<float>{4.f, 8.f}));
  tr.add_output("acc", out[1]);
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_NO_THROW(verify(*p));
  // acc: [1,2] -> [2,4] -> [3,6] -> [4,8] -> [2,4] -> [3,6] -> [4,8]
  Tensor in[] = {vec({1.f, 2.f}), ops::full({}, int64_t(6), DType::Int64)};
  EXPECT_EQ(values(run(*p, in, {})[0]), (std::vector<float>{4.f, 8.f}));
  // The nested op sits in the loop body's block.
  const Operation& w = *p->body().operations().back();
  bool nested = false;
  for (const auto& op : w.region(1).operations()) nested = nested || op->name() == "cond";
  EXPECT_TRUE(nested);
}

TEST(IrControlFlow, TraceErrors) {
  Tensor x = vec({1.f, 2.f});
  {
    Tracer tr;
    tr.add_input("x", x);
    Tensor inner;
    trace_cond(positive_sum(x), [&] { inner = ops::scale(x, 2.0); return Tensors{inner}; },
               [&] { return Tensors{x}; });
    // The branch's own tensor is closed after the region: reading it would bake in example data.
    expect_error([&] { ops::add(inner, x); }, ErrorKind::NotImplemented, {"inside a control-flow region"});
  }
  {
    Tracer tr;
    tr.add_input("x", x);
    expect_error([&] {
      trace_cond(positive_sum(x), [&] { return Tensors{x}; }, [&] { return Tensors{ops::cast(x, DType::Float64)}; });
    }, ErrorKind::Value, {"[oar.static.nn.cond] output 0 is float32[2] in true_fn but float64[2] in false_fn"});
    expect_error([&] {
      trace_cond(positive_sum(x), [&] { return Tensors{x}; }, [&] { return Tensors{x, x}; });
    }, ErrorKind::Value, {"false_fn returns 2 tensor(s) but true_fn returns 1"});
    expect_error([&] { trace_cond(x, [&] { return Tensors{x}; }, [&] { return Tensors{x}; }); }, ErrorKind::Value,
                 {"[oar.static.nn.cond] pred must have dtype bool"});
    Tensor y = ops::scale(x, 3.0);
    expect_error([&] {
      trace_cond(positive_sum(x), [&] { ops::binary_("add", y, x); return Tensors{y}; }, [&] { return Tensors{x}; });
    }, ErrorKind::NotImplemented, {"defined outside it"});
    // A failed capture leaves the program well formed.
    tr.add_output("y", ops::add(x, x));
    std::unique_ptr<Program> p = tr.finish();
    EXPECT_NO_THROW(verify(*p));
    for (const auto& op : p->body().operations()) EXPECT_NE(op->name(), "cond");
  }
  {
    Tracer tr;
    tr.add_input("x", x);
    expect_error([&] {
      trace_while_loop([&](const Tensors& v) { return positive_sum(v[0]); },
                       [&](const Tensors& v) { return Tensors{ops::cast(v[0], DType::Float64)}; }, Tensors{x});
    }, ErrorKind::Value, {"body must keep the dtype and rank"});
  }
}

// ---- the verifier's region rules --------------------------------------------

TEST(IrControlFlow, VerifierRejectsMalformedRegions) {
  {
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    c.region(0).add_yield(p->inputs()[0].value);
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"region 0 yields 2 value(s) but the op has 1 result(s)"});
  }
  {
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    c.result(0)->set_type(Type{DType::Float64, {2}});
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"region 0 yields float32[2]", "float64[2]"});
  }
  {
    // A value defined inside region 0 read after the op.
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    Value* inner = c.region(0).yield(0);
    p->add_output("leak", inner);
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"is not defined in this block or an enclosing one"});
  }
  {
    // ... or by a sibling region.
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    c.region(1).set_yield(0, c.region(0).yield(0));
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"is not defined in this block or an enclosing one"});
  }
  {
    // A predicate that is not bool or has more than one element.
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    c.set_operand(0, p->inputs()[0].value);
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"the predicate", "must have dtype bool"});
  }
  {
    std::unique_ptr<Program> p = traced_cond(vec({1.f, 2.f}));
    Operation& c = *p->body().operations().back();
    c.add_region();
    expect_error([&] { verify(*p); }, ErrorKind::Value, {"needs 2 regions (then, else), has 3"});
  }
}

// ---- the model format ---------------------------------------------------------

TEST(IrControlFlow, JsonRoundTripOfRegions) {
  Tracer tr;
  Tensor x = vec({1.f, 2.f}), n = ops::full({}, int64_t(3), DType::Int64);
  tr.add_input("x", x);
  tr.add_input("n", n);
  Tensors out = trace_while_loop(
      [&](const Tensors& v) { return ops::less_than(v[0], n); },
      [&](const Tensors& v) {
        Tensors c = trace_cond(positive_sum(v[1]), [&] { return Tensors{ops::scale(v[1], -1.0)}; },
                               [&] { return Tensors{ops::add(v[1], x)}; });
        return Tensors{ops::add(v[0], ops::ones({}, DType::Int64)), c[0]};
      },
      Tensors{ops::zeros({}, DType::Int64), x});
  tr.add_output("acc", out[1]);
  std::unique_ptr<Program> p = tr.finish();
  std::string js = to_json(*p);
  EXPECT_NE(js.find("\"version\": 2"), std::string::npos);
  EXPECT_NE(js.find("\"regions\""), std::string::npos);
  std::unique_ptr<Program> q = from_json(js, "loop.json");
  EXPECT_EQ(to_string(*q), to_string(*p));
  EXPECT_EQ(to_json(*q), js);
  Tensor in[] = {vec({1.f, 2.f}), ops::full({}, int64_t(4), DType::Int64)};
  EXPECT_EQ(values(run(*q, in, {})[0]), values(run(*p, in, {})[0]));
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(IrControlFlow, JsonVersionOneStillLoadsAndMalformedRegionsAreRejected) {
  // A version 1 document (no regions, no state updates).
  const std::string v1 =
      "{\"format\": \"oar.program\", \"version\": 1, \"inputs\": [{\"name\": \"x\", \"id\": 0, \"dtype\": "
      "\"float32\", \"shape\": [2]}], \"parameters\": [], \"ops\": [{\"op\": \"relu\", \"operands\": [0], "
      "\"results\": [{\"id\": 1, \"dtype\": \"float32\", \"shape\": [2]}], \"attrs\": []}], \"outputs\": "
      "[{\"name\": \"y\", \"id\": 1}], \"notes\": []}";
  std::unique_ptr<Program> p1 = from_json(v1, "v1.json");
  Tensor x = vec({-1.f, 2.f});
  EXPECT_EQ(values(run(*p1, std::span<const Tensor>(&x, 1), {})[0]), (std::vector<float>{0.f, 2.f}));

  const std::string js = to_json(*traced_cond(vec({1.f, 2.f})));
  auto rejected = [&](const std::string& doc, const char* piece) {
    expect_error([&] { from_json(doc, "bad.json"); }, ErrorKind::Value, {"[oar.jit.load] bad.json: ", piece});
  };
  rejected(replace_once(js, "\"version\": 2", "\"version\": 1"), "need format version 2");
  rejected(replace_once(js, "\"yields\": [", "\"yields\": [99, "), "refers to the id 99");
  rejected(replace_once(js, "{\"arguments\": [], ", "{"), "has no \"arguments\"");
  rejected(replace_once(js, "{\"arguments\": [], ", "{\"arguments\": [], \"extra\": 1, "), "unknown key \"extra\"");
  rejected(replace_once(js, "\"regions\": [", "\"regions\": [7, "), "must be an object");
  rejected(replace_once(js, "\"regions\": [", "\"regions\": [{\"arguments\": [], \"ops\": [], \"yields\": []}, "),
           "does not verify");
  rejected(replace_once(js, "\"op\": \"sum\"", "\"op\": \"sum\", \"regions\": []"), "takes no regions");
}

// ---- state updates --------------------------------------------------------------

TEST(IrControlFlow, StateUpdatesAreWrittenAtTheEndOfARun) {
  // stat = 0.5 * stat + 0.5 * mean(x), as batch_norm's running statistics.
  Tensor stat = vec({0.f, 10.f});
  Tracer tr;
  tr.name_parameter("stat", stat);
  Tensor x = vec({2.f, 4.f});
  tr.add_input("x", x);
  Tensor y = ops::multiply(x, stat);
  ops::copy_(stat, ops::add(ops::scale(stat, 0.5), ops::scale(x, 0.5)));
  tr.add_output("y", y);
  std::vector<Tensor> bound = tr.bindings();
  std::unique_ptr<Program> p = tr.finish();
  EXPECT_NO_THROW(verify(*p));
  ASSERT_EQ(p->state_updates().size(), 1u);
  EXPECT_NE(to_string(*p).find("update \"stat\" = %"), std::string::npos) << to_string(*p);
  EXPECT_EQ(values(stat), (std::vector<float>{1.f, 7.f}));  // the eager write at trace time
  Tensor in = vec({4.f, 6.f});
  Tensors out = run(*p, std::span<const Tensor>(&in, 1), bound);
  EXPECT_EQ(values(out[0]), (std::vector<float>{4.f, 42.f}));  // reads the value before the update
  EXPECT_EQ(values(stat), (std::vector<float>{2.5f, 6.5f}));
  // The model format keeps the update.
  std::unique_ptr<Program> q = from_json(to_json(*p), "bn.json");
  ASSERT_EQ(q->state_updates().size(), 1u);
  EXPECT_EQ(to_string(*q), to_string(*p));
  run(*q, std::span<const Tensor>(&in, 1), bound);
  EXPECT_EQ(values(stat), (std::vector<float>{3.25f, 6.25f}));
  // An update is a use: its producer is kept, and the parameter cannot be erased.
  expect_error([&] { p->erase_parameter(0); }, ErrorKind::Value, {"updated by the program"});
}

TEST(IrControlFlow, StateUpdateInsideABranchIsRejected) {
  Tensor stat = vec({0.f, 0.f}), x = vec({1.f, 2.f});
  Tracer tr;
  tr.add_input("x", x);
  expect_error([&] {
    trace_cond(positive_sum(x), [&] { ops::copy_(stat, x); return Tensors{x}; }, [&] { return Tensors{x}; });
  }, ErrorKind::NotImplemented, {"inside a control-flow region"});
}

TEST(IrControlFlow, ControlFlowOpsCannotBeDispatched) {
  Tensor x = vec({1.f});
  expect_error([&] { dispatch(kCond, std::span<const Tensor>(&x, 1)); }, ErrorKind::NotImplemented,
               {"run only through its executor"});
}

}  // namespace
}  // namespace oar::ir

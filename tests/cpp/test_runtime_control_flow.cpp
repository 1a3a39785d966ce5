// The inference runtime on programs with control flow (Note [control flow in
// the runtime], runtime/control_flow.h): traced cond, switch_case and
// while_loop programs, nested and with growing shapes, go through the model
// format into the runtime and must give what ir::run gives; the plan keeps
// captured values live across their step; errors are typed and name the API.
#include <cmath>
#include <gtest/gtest.h>

#include <cstring>

#include "ir/executor.h"
#include "ir/ir.h"
#include "ir/serialize.h"
#include "ir/tracer.h"
#include "ir_test_util.h"
#include "ops/control_flow.h"
#include "ops/manip.h"
#include "ops/ops.h"
#include "runtime/control_flow.h"
#include "runtime/executor.h"
#include "runtime/model.h"

namespace oar {
namespace {

Tensor vec(std::initializer_list<float> v) {
  Tensor t = empty_tensor(Dims{int64_t(v.size())}, DType::Float32);
  size_t i = 0;
  for (float x : v) t.data<float>()[i++] = x;
  return t;
}

Tensor scalar64(int64_t v) { return ops::full({}, v, DType::Int64); }

std::vector<double> values(const Tensor& t) {
  Tensor c = ops::contiguous(ops::cast(t, DType::Float64));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
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

// The program through the model format (no weights), as the predictor loads it.
std::shared_ptr<const runtime::Model> load(const ir::Program& p, bool ir_optim) {
  const std::string header = "{}";
  std::string weights(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(weights.data(), &n, 8);
  weights += header;
  runtime::ModelOptions opt;
  opt.ir_optim = ir_optim;
  return runtime::load_model_from_memory(ir::to_json(p), std::span<const char>(weights.data(), weights.size()), opt,
                                         "oar.test");
}

// Runs `p` in the runtime in every mode and with ir::run, for each input set.
void expect_matches_ir_run(const ir::Program& p, const std::vector<std::vector<Tensor>>& cases) {
  for (bool ir_optim : {true, false}) {
    auto model = load(p, ir_optim);
    for (bool memory_optim : {true, false}) {
      runtime::Executor ex(model, memory_optim, 1, false);
      for (const std::vector<Tensor>& in : cases) {
        Tensors want = ir::run(p, std::span<const Tensor>(in.data(), in.size()), {});
        std::vector<Tensor> got = ex.run(in, "oar.test");
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].shape(), want[i].shape()) << "ir_optim=" << ir_optim << " memory_optim=" << memory_optim;
          EXPECT_EQ(got[i].dtype(), want[i].dtype());
          // ir_optim fuses elementwise groups into generated kernels, whose
          // vector math may differ from the op-by-op kernels in the last bit.
          const std::vector<double> g = values(got[i]), w = values(want[i]);
          ASSERT_EQ(g.size(), w.size());
          for (size_t k = 0; k < g.size(); ++k)
            EXPECT_NEAR(g[k], w[k], 1e-6 * (1 + std::abs(w[k])))
                << "element " << k << " ir_optim=" << ir_optim << " memory_optim=" << memory_optim;
        }
      }
    }
  }
}

Tensor positive_sum(const Tensor& x) { return ops::greater_than(ops::sum(x), ops::full({}, 0.0, x.dtype())); }

TEST(RuntimeControlFlow, CondReadsValuesFromBeforeItAndFeedsLaterOps) {
  // h = exp(x); y = h * 2 if sum(x) > 0 else h - x; out = y + tanh(x) * 3
  ir::Tracer tr;
  Tensor x = vec({1.f, 2.f, 3.f});
  tr.add_input("x", x);
  Tensor h = ops::exp(x);
  Tensors y = ir::trace_cond(positive_sum(x), [&] { return Tensors{ops::scale(h, 2.0)}; },
                             [&] { return Tensors{ops::subtract(h, x)}; });
  tr.add_output("out", ops::add(y[0], ops::scale(ops::tanh(x), 3.0)));
  std::unique_ptr<ir::Program> p = tr.finish();
  expect_matches_ir_run(*p, {{vec({1.f, 2.f, 3.f})}, {vec({-1.f, -2.f, 0.5f})}});

  // The plan: exp(x) is read only inside the branches, so it must stay live
  // through the cond step; the cond's result is not in the arena.
  auto model = load(*p, false);
  size_t cond_step = 0;
  while (!model->steps[cond_step].control) ++cond_step;
  const runtime::Step& st = model->steps[cond_step];
  ASSERT_FALSE(st.captures.empty());
  runtime::SlotPlan plan = runtime::make_plan(*model, {Dims{3}});
  for (int c : st.captures)
    for (size_t s = 0; s < cond_step; ++s)
      for (int r : plan.release[s]) EXPECT_NE(r, c) << "captured slot " << c << " released at step " << s;
  EXPECT_EQ(plan.offset[size_t(st.out[0])], -1);
}

TEST(RuntimeControlFlow, SwitchCasePicksTheKeyOrTheDefault) {
  ir::Tracer tr;
  Tensor idx = scalar64(3), x = vec({1.f, 2.f});
  tr.add_input("i", idx);
  tr.add_input("x", x);
  ir::BranchFn fns[] = {[&] { return Tensors{ops::scale(x, 10.0)}; }, [&] { return Tensors{ops::scale(x, 30.0)}; },
                        [&] { return Tensors{ops::neg(x)}; }};
  tr.add_output("y", ir::trace_switch_case(idx, Dims{1, 3}, fns)[0]);
  std::unique_ptr<ir::Program> p = tr.finish();
  std::vector<std::vector<Tensor>> cases;
  for (int64_t k : {1, 3, 2, -7}) cases.push_back({scalar64(k), vec({1.5f, -2.f})});
  expect_matches_ir_run(*p, cases);
}

// while sum(a) < limit: a = concat(a, a * 2): a's dim is -1.
std::unique_ptr<ir::Program> growing_loop() {
  ir::Tracer tr;
  Tensor a = vec({1.f}), limit = ops::full({}, 10.0, DType::Float32);
  tr.add_input("a", a);
  tr.add_input("limit", limit);
  Tensors out = ir::trace_while_loop(
      [&](const Tensors& v) { return ops::less_than(ops::sum(v[0]), limit); },
      [&](const Tensors& v) {
        Tensor parts[] = {v[0], ops::scale(v[0], 2.0)};
        return Tensors{ops::concat(parts, 0)};
      },
      Tensors{a});
  tr.add_output("a", ops::add(out[0], ops::ones({}, DType::Float32)));
  return tr.finish();
}

TEST(RuntimeControlFlow, WhileLoopGrowsATensor) {
  std::unique_ptr<ir::Program> p = growing_loop();
  EXPECT_EQ(p->body().operations().back()->result(0)->type().shape, (Dims{-1}));
  std::vector<std::vector<Tensor>> cases;
  for (double limit : {0.5, 2.0, 10.0, 300.0}) cases.push_back({vec({1.f}), ops::full({}, limit, DType::Float32)});
  expect_matches_ir_run(*p, cases);
  runtime::Executor ex(load(*p, true), true, 1, false);
  EXPECT_EQ(ex.run({vec({1.f}), ops::full({}, 300.0, DType::Float32)}, "oar.test")[0].numel(), 64);  // sums 1, 3, 9, ..., 729
}

TEST(RuntimeControlFlow, NestedLoopsAndBranches) {
  // while i < n: acc = (acc * 0.5 if sum(acc) > 10 else acc + x); i += 1
  // then: out = (loop halving acc while sum > 1) if sum(acc) > 5 else switch(i % 3)
  ir::Tracer tr;
  Tensor x = vec({1.f, 2.f}), n = scalar64(3);
  tr.add_input("x", x);
  tr.add_input("n", n);
  Tensors out = ir::trace_while_loop(
      [&](const Tensors& v) { return ops::less_than(v[0], n); },
      [&](const Tensors& v) {
        Tensor acc = v[1];
        Tensor big = ops::greater_than(ops::sum(acc), ops::full({}, 10.0, DType::Float32));
        Tensors c = ir::trace_cond(big, [&] { return Tensors{ops::scale(acc, 0.5)}; },
                                   [&] { return Tensors{ops::add(acc, x)}; });
        return Tensors{ops::add(v[0], ops::ones({}, DType::Int64)), c[0]};
      },
      Tensors{ops::zeros({}, DType::Int64), x});
  Tensor acc = out[1], i = out[0];
  Tensor big = ops::greater_than(ops::sum(acc), ops::full({}, 5.0, DType::Float32));
  Tensors y = ir::trace_cond(
      big,
      [&] {
        return ir::trace_while_loop(
            [&](const Tensors& v) { return ops::greater_than(ops::sum(v[0]), ops::full({}, 1.0, DType::Float32)); },
            [&](const Tensors& v) { return Tensors{ops::scale(v[0], 0.5)}; }, Tensors{acc});
      },
      [&] {
        ir::BranchFn fns[] = {[&] { return Tensors{ops::neg(acc)}; }, [&] { return Tensors{ops::add(acc, x)}; }};
        return ir::trace_switch_case(ops::remainder(i, scalar64(3)), Dims{1}, fns);
      });
  tr.add_output("y", y[0]);
  tr.add_output("i", i);
  std::unique_ptr<ir::Program> p = tr.finish();
  std::vector<std::vector<Tensor>> cases;
  for (int64_t k : {0, 1, 2, 4, 6, 9}) cases.push_back({vec({1.f, 2.f}), scalar64(k)});
  cases.push_back({vec({-3.f, 0.5f}), scalar64(2)});
  expect_matches_ir_run(*p, cases);
}

TEST(RuntimeControlFlow, LoopGuardIsTheExecutorsLimit) {
  std::unique_ptr<ir::Program> p = growing_loop();
  runtime::Executor ex(load(*p, true), true, 1, false);
  const int64_t old = ir::max_loop_iterations();
  ir::set_max_loop_iterations(3);
  EXPECT_EQ(ex.run({vec({1.f}), ops::full({}, 20.0, DType::Float32)}, "oar.test")[0].numel(), 8);  // 3 iterations
  expect_error([&] { ex.run({vec({1.f}), ops::full({}, 40.0, DType::Float32)}, "oar.test"); }, ErrorKind::Runtime,
               {"[oar.test] while_loop ran 3 iterations", "set_max_loop_iterations"});
  ir::set_max_loop_iterations(old);
}

// A model built by hand from a program that does not verify, for errors a
// loaded file cannot reach (the loader verifies programs).
std::shared_ptr<runtime::Model> unverified(std::unique_ptr<ir::Program> p) {
  auto m = std::make_shared<runtime::Model>();
  runtime::SlotNumbering n;
  for (const ir::NamedValue& nv : p->inputs()) {
    m->input_slots.push_back(n.number(nv.value));
    m->input_types.push_back(nv.value->type());
    m->input_names.push_back(nv.name);
  }
  for (const auto& op : p->body().operations()) m->steps.push_back(runtime::make_step(*op, n, "oar.test", "t.json"));
  m->num_slots = n.count;
  for (const ir::NamedValue& nv : p->outputs()) {
    m->output_slots.push_back(n.slot.at(nv.value));
    m->output_names.push_back(nv.name);
  }
  m->program = std::move(p);
  return m;
}

TEST(RuntimeControlFlow, SelectorOfSeveralElementsIsValueError) {
  // cond(x > x) where x has two elements, its result mistyped as one element.
  auto p = std::make_unique<ir::Program>();
  ir::Value* x = p->add_input("x", ir::Type{DType::Float32, {2}});
  ir::Value* xx[] = {x, x};
  ir::Type pred_t{DType::Bool, {}};
  ir::Value* pred =
      p->body().append(ir::testing::def("greater_than"), xx, Attrs{}, std::span<const ir::Type>(&pred_t, 1))->result(0);
  ir::Value* operands[] = {pred};
  ir::Operation* c = p->body().append(kCond, operands, Attrs{}, {});
  c->add_region().add_yield(x);
  c->add_region().add_yield(x);
  p->add_output("y", c->add_result(ir::Type{DType::Float32, {2}}));
  runtime::Executor ex(unverified(std::move(p)), true, 1, false);
  expect_error([&] { ex.run({vec({1.f, 2.f})}, "oar.test"); }, ErrorKind::Value,
               {"[oar.test] the selector of 'cond' must hold exactly one element, got shape [2]"});
}

TEST(RuntimeControlFlow, BranchResultOfTheWrongTypeIsValueError) {
  // A branch that yields float32[2] for a result typed float32[3].
  auto p = std::make_unique<ir::Program>();
  ir::Value* x = p->add_input("x", ir::Type{DType::Float32, {2}});
  ir::Value* b = p->add_input("b", ir::Type{DType::Bool, {}});
  ir::Value* operands[] = {b};
  ir::Operation* c = p->body().append(kCond, operands, Attrs{}, {});
  c->add_region().add_yield(x);
  c->add_region().add_yield(x);
  p->add_output("y", c->add_result(ir::Type{DType::Float32, {3}}));
  runtime::Executor ex(unverified(std::move(p)), true, 1, false);
  Tensor t = ops::full({}, 1.0, DType::Bool);
  expect_error([&] { ex.run({vec({1.f, 2.f}), t}, "oar.test"); }, ErrorKind::Value,
               {"[oar.test] a branch of 'cond' gives float32[2] for result 0, which has type float32[3]"});
}

TEST(RuntimeControlFlow, MalformedRegionsAreRejectedWhenLoading) {
  auto p = std::make_unique<ir::Program>();
  ir::Value* b = p->add_input("b", ir::Type{DType::Bool, {}});
  ir::Value* operands[] = {b};
  ir::Operation* c = p->body().append(kCond, operands, Attrs{}, {});
  c->add_region().add_yield(b);  // one region only
  p->add_output("y", c->add_result(ir::Type{DType::Bool, {}}));
  expect_error([&] { unverified(std::move(p)); }, ErrorKind::Value,
               {"[oar.test] t.json: 'cond' has 1 region(s) and 1 operand(s), expected 2 region(s)"});
}

}  // namespace
}  // namespace oar

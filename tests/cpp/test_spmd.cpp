// SPMD data model and rules on fake meshes (no processes). Every expected
// spec below is derived by hand from the rule's definition (Note [einsum
// sharding propagation], Note [reshape sharding]) or from Paddle's documented
// results for the same inputs.
#include <gtest/gtest.h>

#include <limits>

#include "ops/spmd.h"

namespace oar {
namespace {

ProcessMesh mesh4() { return ProcessMesh(Dims{4}, {0, 1, 2, 3}); }
ProcessMesh mesh22() { return ProcessMesh(Dims{2, 2}, {0, 1, 2, 3}, {"dp", "mp"}); }
ProcessMesh mesh23() { return ProcessMesh(Dims{2, 3}, {0, 1, 2, 3, 4, 5}, {"x", "y"}); }

DistSpec S(Dims shape, Dims dm, uint64_t partial = 0, ReduceType r = ReduceType::Sum) {
  DistSpec s = DistSpec::sharded(std::move(shape), std::move(dm));
  s.partial_mask = partial;
  s.partial_type = r;
  return s;
}

// Compares the sharding of a spec: dims_mapping, partial mesh dims and type.
::testing::AssertionResult Is(const DistSpec& got, Dims dm, uint64_t partial = 0, ReduceType r = ReduceType::Sum) {
  DistSpec want = S(got.shape, std::move(dm), partial, r);
  if (got.same_placement(want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got.to_string() << ", want " << want.to_string();
}

SpmdInfo fwd(const char* op, const ProcessMesh& mesh, std::initializer_list<DistSpec> in, const Attrs& a = {}) {
  const OpDef* d = find_op(op);
  EXPECT_NE(d, nullptr) << op;
  SpmdFn f = spmd_rule_of(*d);
  EXPECT_NE(f, nullptr) << op;
  std::vector<DistSpec> v(in);
  return f(mesh, std::span<const DistSpec>(v.data(), v.size()), a);
}

SpmdInfo rev(const char* op, const ProcessMesh& mesh, std::initializer_list<DistSpec> in,
             std::initializer_list<DistSpec> out, const Attrs& a = {}) {
  const OpDef* d = find_op(op);
  EXPECT_NE(d, nullptr) << op;
  SpmdReverseFn f = spmd_reverse_rule_of(*d);
  EXPECT_NE(f, nullptr) << op;
  std::vector<DistSpec> vi(in), vo(out);
  return f(mesh, std::span<const DistSpec>(vi.data(), vi.size()), std::span<const DistSpec>(vo.data(), vo.size()), a);
}

template <typename F> void expect_error(F&& f, ErrorKind kind, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

constexpr uint64_t P0 = 1, P1 = 2;

std::string dims_str(const Dims& d) {
  std::string s;
  for (int64_t v : d) s += std::to_string(v) + " ";
  return s;
}

// ---------------------------------------------------------------- mesh

TEST(SpmdMesh, ShapeAndCoordinates) {
  ProcessMesh m = mesh23();
  EXPECT_EQ(m.ndim(), 2);
  EXPECT_EQ(m.size(), 6);
  EXPECT_EQ(m.dim_size(0), 2);
  EXPECT_EQ(m.dim_size(-1), 3);
  EXPECT_EQ(m.dim_index("y"), 1);
  EXPECT_EQ(m.dim_index("z"), -1);
  EXPECT_EQ(m.coord_of(4), (Dims{1, 1}));
  EXPECT_EQ(m.coord_of(2), (Dims{0, 2}));
  EXPECT_TRUE(m.coord_of(6).empty());
  EXPECT_FALSE(m.contains(7));
  EXPECT_EQ(mesh4().dim_names(), (std::vector<std::string>{"d0"}));
  EXPECT_EQ(m.to_string(), "ProcessMesh(shape=[2, 3], process_ids=[0, 1, 2, 3, 4, 5], dim_names=[x, y])");
}

TEST(SpmdMesh, GroupsAlongADim) {
  ProcessMesh m = mesh23();
  // ranks differing only along "x" (columns of the 2x3 grid) and along "y" (rows)
  EXPECT_EQ(m.process_ids_along(0, Dims{0, 2}), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(m.process_ids_along(1, Dims{1, 0}), (std::vector<int64_t>{3, 4, 5}));
  ProcessMesh p(Dims{2, 2}, {7, 3, 5, 1});  // ids need not be ordered
  EXPECT_EQ(p.coord_of(5), (Dims{1, 0}));
  EXPECT_EQ(p.process_ids_along(0, p.coord_of(1)), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(p.process_ids_along(1, p.coord_of(1)), (std::vector<int64_t>{5, 1}));
  expect_error([&] { m.process_ids_along(2, Dims{0, 0}); }, ErrorKind::Index, "[oar.distributed.ProcessMesh]");
  expect_error([&] { m.process_ids_along(0, Dims{0, 3}); }, ErrorKind::Index, "[oar.distributed.ProcessMesh]");
}

TEST(SpmdMesh, Validation) {
  const std::string api = "[oar.distributed.ProcessMesh]";
  expect_error([] { ProcessMesh(Dims{2, 2}, {0, 1, 2}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{2}, {0, 0}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{2}, {0, -1}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{2, 1}, {0, 1}, {"x"}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{2, 1}, {0, 1}, {"x", "x"}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{0}, {}); }, ErrorKind::Value, api);
  expect_error([] { ProcessMesh(Dims{}, {}); }, ErrorKind::Value, api);
  expect_error([] { mesh4().dim_size(1); }, ErrorKind::Index, api);
  EXPECT_EQ(mesh22(), mesh22());
  EXPECT_NE(mesh22(), ProcessMesh(Dims{2, 2}, {0, 1, 2, 3}));  // other dim names
}

// ---------------------------------------------------------------- placements

TEST(SpmdPlacement, StringsAndEquality) {
  EXPECT_EQ(Placement::shard(0).to_string(), "Shard(dim=0)");
  EXPECT_EQ(Placement::replicate().to_string(), "Replicate()");
  EXPECT_EQ(Placement::partial().to_string(), "Partial(reduce_type=sum)");
  EXPECT_EQ(Placement::partial(ReduceType::Avg).to_string(), "Partial(reduce_type=avg)");
  EXPECT_EQ(Placement::shard(1), Placement::shard(1));
  EXPECT_NE(Placement::shard(1), Placement::shard(0));
  EXPECT_NE(Placement::partial(ReduceType::Max), Placement::partial(ReduceType::Min));
  EXPECT_NE(Placement::replicate(), Placement::partial());
  EXPECT_EQ(placements_str({Placement::shard(0), Placement::replicate()}), "[Shard(dim=0), Replicate()]");
}

TEST(SpmdPlacement, DimsMappingRoundTrip) {
  Placements p{Placement::replicate(), Placement::shard(0), Placement::partial(ReduceType::Max)};
  Dims dm = to_dims_mapping(p, 3);
  EXPECT_EQ(dm, (Dims{1, -1, -1}));
  PartialDims pd = partial_dims(p);
  ASSERT_EQ(pd.size(), 1u);
  EXPECT_EQ(pd[0].first, 2);
  EXPECT_EQ(pd[0].second, ReduceType::Max);
  EXPECT_EQ(to_placements(dm, pd, 3), p);

  DistSpec s = spec_of(Dims{8, 4, 2}, p);
  EXPECT_TRUE(Is(s, {1, -1, -1}, 0b100, ReduceType::Max));
  EXPECT_EQ(placements_of(s, 3), p);

  Placements q{Placement::shard(1), Placement::shard(0)};
  EXPECT_EQ(to_dims_mapping(q, 2), (Dims{1, 0}));
  EXPECT_EQ(to_placements(Dims{1, 0}, {}, 2), q);
}

TEST(SpmdPlacement, DimsMappingErrors) {
  expect_error([] { to_dims_mapping({Placement::shard(0), Placement::shard(0)}, 2); }, ErrorKind::NotImplemented,
               "[oar.distributed]");
  expect_error([] { to_dims_mapping({Placement::shard(2)}, 2); }, ErrorKind::Index, "[oar.distributed]");
  expect_error([] { to_placements(Dims{0, 0}, {}, 2); }, ErrorKind::Value, "[oar.distributed]");
  expect_error([] { to_placements(Dims{0}, {{0, ReduceType::Sum}}, 2); }, ErrorKind::Value, "[oar.distributed]");
  expect_error([] { to_placements(Dims{2}, {}, 2); }, ErrorKind::Index, "[oar.distributed]");
  expect_error([] { spec_of(Dims{4}, {Placement::partial(ReduceType::Sum), Placement::partial(ReduceType::Max)}); },
               ErrorKind::NotImplemented, "[oar.distributed]");
}

TEST(SpmdPlacement, DistAttr) {
  auto m = std::make_shared<const ProcessMesh>(mesh22());
  DistAttr a(m, {Placement::shard(1), Placement::partial()}, Dims{4, 6});
  EXPECT_EQ(a.dims_mapping(), (Dims{-1, 0}));
  EXPECT_TRUE(a.is_partial());
  EXPECT_TRUE(Is(spec_of(a), {-1, 0}, P1));
  expect_error([&] { DistAttr(m, {Placement::shard(0)}, Dims{4}); }, ErrorKind::Value, "[oar.distributed]");
  expect_error([&] { DistAttr(m, {Placement::shard(2), Placement::replicate()}, Dims{4, 4}); }, ErrorKind::Index,
               "[oar.distributed]");
}

// ---------------------------------------------------------------- local pieces

TEST(SpmdLocal, UnevenSplitLikeArraySplit) {
  ProcessMesh m = mesh4();
  Placements p{Placement::shard(0)};
  // numpy.array_split(range(10), 4) -> sizes 3, 3, 2, 2 at 0, 3, 6, 8
  int64_t sizes[] = {3, 3, 2, 2}, offs[] = {0, 3, 6, 8};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(local_shape(Dims{10, 5}, m, p, r), (Dims{sizes[r], 5}));
    EXPECT_EQ(local_offset(Dims{10, 5}, m, p, r), (Dims{offs[r], 0}));
  }
  // fewer rows than pieces: 1, 1, 0, 0
  EXPECT_EQ(local_shape(Dims{2}, m, p, 3), (Dims{0}));
  EXPECT_EQ(local_offset(Dims{2}, m, p, 3), (Dims{2}));
  EXPECT_EQ(local_shape(Dims{10, 5}, m, {Placement::partial()}, 1), (Dims{10, 5}));
  expect_error([&] { local_shape(Dims{10}, m, p, 9); }, ErrorKind::Value, "[oar.distributed]");
}

TEST(SpmdLocal, TwoDimMesh) {
  ProcessMesh m = mesh23();
  Placements p{Placement::shard(1), Placement::shard(0)};  // x splits dim 1 in 2, y splits dim 0 in 3
  // rank 5 = (1, 2): dim 0 of 7 in 3 -> piece 2 of [3, 2, 2] at 5; dim 1 of 5 in 2 -> piece 1 of [3, 2] at 3
  EXPECT_EQ(local_shape(Dims{7, 5}, m, p, 5), (Dims{2, 2}));
  EXPECT_EQ(local_offset(Dims{7, 5}, m, p, 5), (Dims{5, 3}));
  EXPECT_EQ(local_shape(Dims{7, 5}, m, p, 0), (Dims{3, 3}));
  // both mesh dims splitting dim 0: 10 -> [5, 5] along x, then each in 3 along y
  Placements q{Placement::shard(0), Placement::shard(0)};
  EXPECT_EQ(local_shape(Dims{10}, m, q, 4), (Dims{2}));   // (1, 1): 5 + [2, 2, 1] -> 2 at 7
  EXPECT_EQ(local_offset(Dims{10}, m, q, 4), (Dims{7}));
  EXPECT_EQ(local_shape(Dims{10}, m, q, 5), (Dims{1}));
  EXPECT_EQ(local_offset(Dims{10}, m, q, 5), (Dims{9}));
}

// ---------------------------------------------------------------- cost

TEST(SpmdCost, PerConversionFormulas) {
  ProcessMesh m = mesh4();
  Dims shape{8, 4};  // 32 float32 = 128 bytes, a quarter is 32 bytes
  auto cost = [&](Placement a, Placement b) { return reshard_cost({a}, {b}, m, shape, 4); };
  EXPECT_DOUBLE_EQ(cost(Placement::shard(0), Placement::replicate()), 96);           // all_gather: 3 x 32
  EXPECT_DOUBLE_EQ(cost(Placement::partial(), Placement::replicate()), 192);         // all_reduce: 2 x 3/4 x 128
  EXPECT_DOUBLE_EQ(cost(Placement::partial(), Placement::shard(0)), 96);             // reduce_scatter: 3/4 x 128
  EXPECT_DOUBLE_EQ(cost(Placement::shard(0), Placement::shard(1)), 24);              // all_to_all: 3/4 x 32
  EXPECT_DOUBLE_EQ(cost(Placement::replicate(), Placement::shard(1)), 0);
  EXPECT_DOUBLE_EQ(cost(Placement::replicate(), Placement::partial()), 0);
  EXPECT_DOUBLE_EQ(cost(Placement::shard(0), Placement::shard(0)), 0);
  // 2x2: gather along mp a [4, 2] piece (32 bytes) of [8, 4] split along both: (2 - 1) x 32
  ProcessMesh m2 = mesh22();
  EXPECT_DOUBLE_EQ(reshard_cost({Placement::shard(0), Placement::shard(1)}, {Placement::shard(0), Placement::replicate()},
                                m2, shape, 4),
                   32);
  EXPECT_DOUBLE_EQ(reshard_cost(S({8, 4}, {0, -1}), S({8, 4}, {-1, -1}), m), 96);
}

// ---------------------------------------------------------------- elementwise

TEST(SpmdElementwise, DefaultRuleFromTraits) {
  const OpDef* add = find_op("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->spmd, nullptr);  // no rule of its own ...
  EXPECT_EQ(spmd_rule_of(*add), &spmd::elementwise);  // ... the elementwise default
  const OpDef* argsort = find_op("argsort");
  ASSERT_NE(argsort, nullptr);
  EXPECT_EQ(spmd_rule_of(*argsort), nullptr);
}

// Ops name their rules where they are defined; every named rule is some op's.
TEST(SpmdRules, NamedAtTheOpDefinition) {
  const OpDef* sum = find_op("sum");
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(find_spmd_rule("reduce_sum"), nullptr);
  EXPECT_EQ(sum->spmd, find_spmd_rule("reduce_sum")->fwd);
  EXPECT_EQ(sum->spmd_reverse, find_spmd_rule("reduce_sum")->rev);
  EXPECT_EQ(find_spmd_rule("no_such_rule"), nullptr);
  for (std::string_view name : spmd_rule_names()) {
    const SpmdRule* rule = find_spmd_rule(name);
    bool used = false;
    for (const OpDef* op : all_ops()) used |= op->spmd == rule->fwd && op->spmd_reverse == rule->rev;
    EXPECT_TRUE(used) << "no op uses the SPMD rule " << name;
  }
}

TEST(SpmdElementwise, ShardAndReplicate) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("add", m, {S({4, 6}, {0, -1}), S({4, 6}, {-1, -1})});
  ASSERT_EQ(r.inputs.size(), 2u);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 6}));
  EXPECT_DOUBLE_EQ(r.comm_bytes, 0);  // slicing a replicated input is free
  r = fwd("multiply", m, {S({4, 6}, {-1, -1}), S({4, 6}, {1, 0})});
  EXPECT_TRUE(Is(r.inputs[0], {1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {1, 0}));
  r = fwd("relu", m, {S({4, 6}, {-1, 1})});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}));
}

TEST(SpmdElementwise, Conflicts) {
  ProcessMesh m = mesh22();
  // one dim split along two mesh dims: the first input wins
  SpmdInfo r = fwd("add", m, {S({4, 6}, {0, -1}), S({4, 6}, {1, -1})});
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  // one mesh dim splitting two dims: the first merged dim keeps it
  r = fwd("add", m, {S({4, 6}, {0, -1}), S({4, 6}, {-1, 0})});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  // y goes from [-1, 0] to [0, -1] on a 2-way dim: all_to_all of its 48-byte piece: 24 bytes
  EXPECT_DOUBLE_EQ(r.comm_bytes, 24);
}

TEST(SpmdElementwise, Broadcast) {
  ProcessMesh m = mesh22();
  // y [6] broadcasts over x's rows; y's split of dim 0 lines up with x's dim 1
  SpmdInfo r = fwd("add", m, {S({4, 6}, {0, -1}), S({6}, {1})});
  EXPECT_TRUE(Is(r.inputs[0], {0, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
  // a size-1 dim broadcast against 4 is never split
  r = fwd("add", m, {S({1, 6}, {0, -1}), S({4, 6}, {-1, -1})});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 6}));
  // 0-D operand
  r = fwd("add", m, {S({}, {}), S({4, 6}, {-1, 0})});
  EXPECT_TRUE(Is(r.inputs[0], {}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 0}));
}

TEST(SpmdElementwise, PartialInputsAreReduced) {
  ProcessMesh m = mesh4();
  SpmdInfo r = fwd("add", m, {S({8, 4}, {-1, -1}, P0), S({8, 4}, {-1, -1})});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1}));
  EXPECT_DOUBLE_EQ(r.comm_bytes, 192);  // one all_reduce of 128 bytes on 4
}

TEST(SpmdElementwise, ThreeInputsAndOptional) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("where", m, {S({4, 6}, {-1, 1}), S({4, 6}, {0, -1}), S({1}, {-1})});
  EXPECT_TRUE(Is(r.inputs[0], {0, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, 1}));
  EXPECT_TRUE(Is(r.inputs[2], {-1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
  DistSpec none;
  none.defined = false;
  r = fwd("clip", m, {S({4, 6}, {1, -1}), none, S({}, {})});
  EXPECT_FALSE(r.inputs[1].defined);
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}));
}

TEST(SpmdElementwise, Reverse) {
  ProcessMesh m = mesh22();
  SpmdInfo r = rev("add", m, {S({4, 6}, {-1, -1}), S({6}, {-1})}, {S({4, 6}, {1, 0})});
  EXPECT_TRUE(Is(r.inputs[0], {1, 0}));
  EXPECT_TRUE(Is(r.inputs[1], {0}));
  EXPECT_TRUE(Is(r.outputs[0], {1, 0}));
}

// ---------------------------------------------------------------- matmul

// Paddle's matmul rule cases (2x3 mesh, x [64, 32], y [32, 48]).
TEST(SpmdMatmul, PaddleCases) {
  ProcessMesh m = mesh23();
  Attrs nt{false, false};
  // mk[1, -1], kn[-1, -1] -> mn[1, -1]
  SpmdInfo r = fwd("matmul", m, {S({64, 32}, {1, -1}), S({32, 48}, {-1, -1})}, nt);
  EXPECT_TRUE(Is(r.inputs[0], {1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{64, 48}));
  // mk[-1, -1], kn[-1, 0] -> mn[-1, 0]
  r = fwd("matmul", m, {S({64, 32}, {-1, -1}), S({32, 48}, {-1, 0})}, nt);
  EXPECT_TRUE(Is(r.outputs[0], {-1, 0}));
  // mk[1, 0], kn[-1, -1] -> kn[0, -1], mn[1, -1] partial on mesh dim 0
  r = fwd("matmul", m, {S({64, 32}, {1, 0}), S({32, 48}, {-1, -1})}, nt);
  EXPECT_TRUE(Is(r.inputs[0], {1, 0}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}, P0));
  // mk[-1, -1], kn[1, 0] -> mk[-1, 1], mn[-1, 0] partial on mesh dim 1
  r = fwd("matmul", m, {S({64, 32}, {-1, -1}), S({32, 48}, {1, 0})}, nt);
  EXPECT_TRUE(Is(r.inputs[0], {-1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 0}, P1));
  // abmk[0, 1, -1, -1], kn[1, -1]: mesh dim 1 already splits b, so k is replicated
  r = fwd("matmul", m, {S({512, 48, 64, 32}, {0, 1, -1, -1}), S({32, 48}, {1, -1})}, nt);
  EXPECT_TRUE(Is(r.inputs[0], {0, 1, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, 1, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{512, 48, 64, 48}));
  // mk[1, 0], kn[0, -1] -> mn[1, -1] partial on 0
  r = fwd("matmul", m, {S({64, 32}, {1, 0}), S({32, 48}, {0, -1})}, nt);
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}, P0));
  // abmk[1, -1, -1, 0], kn[-1, -1] -> kn[0, -1], abmn[1, -1, -1, -1] partial on 0
  r = fwd("matmul", m, {S({512, 48, 64, 32}, {1, -1, -1, 0}), S({32, 48}, {-1, -1})}, nt);
  EXPECT_TRUE(Is(r.inputs[0], {1, -1, -1, 0}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1, -1, -1}, P0));
  // trans_x: abkm[1, -1, -1, 0] -> abmn[1, -1, 0, -1], nothing partial
  r = fwd("matmul", m, {S({512, 48, 32, 64}, {1, -1, -1, 0}), S({32, 48}, {-1, -1})}, Attrs{true, false});
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1, 0, -1}));
  // trans_y: abmk[-1, -1, -1, -1], nk[1, 0] -> abmk[-1, -1, -1, 0], abmn[-1, -1, -1, 1] partial on 0
  r = fwd("matmul", m, {S({512, 48, 64, 32}, {-1, -1, -1, -1}), S({48, 32}, {1, 0})}, Attrs{false, true});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, -1, 0}));
  EXPECT_TRUE(Is(r.inputs[1], {1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, -1, 1}, P0));
  // both: abkm[-1, -1, 0, 1], nk[1, 0]: mesh dim 1 is taken by m, so n is replicated
  Attrs tt{true, true};
  r = fwd("matmul", m, {S({512, 48, 32, 64}, {-1, -1, 0, 1}), S({48, 32}, {1, 0})}, tt);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, 0, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, 1, -1}, P0));
  // abkm[-1, -1, 1, 0], nk[1, 0]: k split along 1 in x and along 0 in y. Paddle raises here;
  // oar keeps x's split (the first input) and reshards y.
  r = fwd("matmul", m, {S({512, 48, 32, 64}, {-1, -1, 1, 0}), S({48, 32}, {1, 0})}, tt);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, 1, 0}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, 0, -1}, P1));
}

TEST(SpmdMatmul, Transposed) {
  ProcessMesh m = mesh23();
  // x^T: x is [k, m] = [32, 64] split [0, 1]; y [32, 48] replicated -> out [64, 48]: m on 1, partial on 0
  SpmdInfo r = fwd("matmul", m, {S({32, 64}, {0, 1}), S({32, 48}, {-1, -1})}, Attrs{true, false});
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}, P0));
  EXPECT_EQ(r.outputs[0].shape, (Dims{64, 48}));
  // y^T: y is [n, k] = [48, 32] split [1, 0]; x [64, 32] -> x's k on 0, out n on 1, partial on 0
  r = fwd("matmul", m, {S({64, 32}, {-1, -1}), S({48, 32}, {1, 0})}, Attrs{false, true});
  EXPECT_TRUE(Is(r.inputs[0], {-1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}, P0));
  EXPECT_EQ(r.outputs[0].shape, (Dims{64, 48}));
}

TEST(SpmdMatmul, BatchBroadcast) {
  ProcessMesh m = mesh22();
  // x [2, 1, 4, 8] with a batch dim of 1 broadcast against y's 3
  SpmdInfo r = fwd("matmul", m, {S({2, 1, 4, 8}, {0, 1, -1, -1}), S({3, 8, 5}, {-1, -1, -1})}, Attrs{false, false});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{2, 3, 4, 5}));
  // y's batch dim splits the output's
  r = fwd("matmul", m, {S({4, 8}, {-1, -1}), S({3, 8, 5}, {1, -1, -1})}, Attrs{false, false});
  EXPECT_TRUE(Is(r.outputs[0], {1, -1, -1}));
}

TEST(SpmdMatmul, Reverse) {
  ProcessMesh m = mesh22();
  SpmdInfo r = rev("matmul", m, {S({8, 4}, {-1, 0}), S({4, 6}, {-1, -1})}, {S({8, 6}, {0, 1})}, Attrs{false, false});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));  // k is in no output: replicated
  EXPECT_TRUE(Is(r.inputs[1], {-1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
}

TEST(SpmdMatmul, LinearKeepsKReplicated) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("linear", m, {S({8, 4}, {0, 1}), S({4, 6}, {-1, -1}), S({6}, {-1})});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  r = fwd("linear", m, {S({8, 4}, {0, -1}), S({4, 6}, {-1, 1}), S({6}, {-1})});
  EXPECT_TRUE(Is(r.inputs[2], {1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
}

// ---------------------------------------------------------------- reductions

TEST(SpmdReduce, SumAndKeepdim) {
  ProcessMesh m = mesh22();
  Attrs a0{Dims{0}, false, DType::Float32};
  SpmdInfo r = fwd("sum", m, {S({4, 6}, {0, 1})}, a0);
  EXPECT_TRUE(Is(r.inputs[0], {0, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {1}, P0, ReduceType::Sum));
  EXPECT_EQ(r.outputs[0].shape, (Dims{6}));
  r = fwd("sum", m, {S({4, 6}, {0, 1})}, Attrs{Dims{0}, true, DType::Float32});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}, P0));
  EXPECT_EQ(r.outputs[0].shape, (Dims{1, 6}));
  r = fwd("sum", m, {S({4, 6}, {0, 1})}, Attrs{Dims{0, 1}, false, DType::Float32});
  EXPECT_TRUE(Is(r.outputs[0], {}, P0 | P1));
  r = fwd("sum", m, {S({4, 6}, {0, -1})}, Attrs{Dims{1}, false, DType::Float32});
  EXPECT_TRUE(Is(r.outputs[0], {0}));
}

TEST(SpmdReduce, ReduceTypes) {
  ProcessMesh m = mesh4();
  Attrs a{Dims{0}, false, DType::Float32};
  EXPECT_TRUE(Is(fwd("mean", m, {S({8, 3}, {0, -1})}, a).outputs[0], {-1}, P0, ReduceType::Avg));
  EXPECT_TRUE(Is(fwd("prod", m, {S({8, 3}, {0, -1})}, a).outputs[0], {-1}, P0, ReduceType::Prod));
  EXPECT_TRUE(Is(fwd("amax", m, {S({8, 3}, {0, -1})}, a).outputs[0], {-1}, P0, ReduceType::Max));
  EXPECT_TRUE(Is(fwd("amin", m, {S({8, 3}, {0, -1})}, a).outputs[0], {-1}, P0, ReduceType::Min));
  // a mean over uneven pieces (10 rows on 4) is not an average of the pieces' means: gather first
  SpmdInfo r = fwd("mean", m, {S({10, 3}, {0, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1}));
  EXPECT_GT(r.comm_bytes, 0);
  // a sum does not care
  EXPECT_TRUE(Is(fwd("sum", m, {S({10, 3}, {0, -1})}, a).outputs[0], {-1}, P0));
}

TEST(SpmdReduce, Reverse) {
  ProcessMesh m = mesh22();
  SpmdInfo r = rev("sum", m, {S({4, 6, 8}, {0, -1, 1})}, {S({4, 8}, {1, 0})}, Attrs{Dims{1}, false, DType::Float32});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {1, 0}));
}

// ---------------------------------------------------------------- softmax, layer_norm, loss

TEST(SpmdSoftmax, AxisReplicated) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("softmax", m, {S({4, 6}, {0, 1})}, Attrs{int64_t(1)});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  // gather [2, 3] pieces along mp: 24 bytes x 1
  EXPECT_DOUBLE_EQ(r.comm_bytes, 24);
  r = fwd("log_softmax", m, {S({4, 6}, {0, 1})}, Attrs{int64_t(0)});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}));
  r = fwd("softmax", m, {S({}, {})}, Attrs{int64_t(0)});
  EXPECT_TRUE(Is(r.outputs[0], {}));
  r = rev("softmax", m, {S({4, 6}, {-1, -1})}, {S({4, 6}, {1, 0})}, Attrs{int64_t(1)});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1}));
  r = fwd("softmax_grad", m, {S({4, 6}, {0, -1}), S({4, 6}, {-1, 1})}, Attrs{int64_t(1)});
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
}

TEST(SpmdFft, TransformedAxesReplicated) {
  ProcessMesh m = mesh22();
  // c2c over axis 1 of [4, 6, 8] split on axes 0 and 1: axis 1 is gathered.
  SpmdInfo r = fwd("fft_c2c", m, {S({4, 6, 8}, {0, 1, -1})}, Attrs{Dims{1}, std::string("backward"), true});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 6, 8}));
  EXPECT_GT(r.comm_bytes, 0);
  // An untransformed axis keeps its split, at no cost.
  r = fwd("fft_c2c", m, {S({4, 6, 8}, {-1, 1, -1})}, Attrs{Dims{0, 2}, std::string("ortho"), false});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1, -1}));
  EXPECT_DOUBLE_EQ(r.comm_bytes, 0);
  // r2c onesided: n/2 + 1 bins on the last transformed axis.
  r = fwd("fft_r2c", m, {S({4, 10}, {0, 1})}, Attrs{Dims{1}, std::string("backward"), true, true});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 6}));
  // c2r: last_dim_size on the last transformed axis.
  r = fwd("fft_c2r", m, {S({4, 6}, {1, 0})}, Attrs{Dims{0, 1}, std::string("backward"), false, int64_t(10)});
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 10}));
  // Reverse: a wanted split of a transformed axis is not honoured.
  r = rev("fft_c2c", m, {S({4, 6}, {-1, -1})}, {S({4, 6}, {1, 0})}, Attrs{Dims{1}, std::string("backward"), true});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1}));
}

TEST(SpmdLayerNorm, NormalizedDimsReplicated) {
  ProcessMesh m = mesh22();
  Attrs a{int64_t(1), 1e-5};
  SpmdInfo r = fwd("layer_norm", m, {S({4, 8, 16}, {0, 1, -1}), S({8, 16}, {-1, 0}), S({8, 16}, {-1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.inputs[2], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  r = fwd("layer_norm", m, {S({4, 8, 16}, {1, 0, -1}), S({16}, {-1}), S({16}, {-1})}, Attrs{int64_t(2), 1e-5});
  EXPECT_TRUE(Is(r.outputs[0], {1, 0, -1}));
  r = rev("layer_norm", m, {S({4, 8, 16}, {-1, -1, -1}), S({16}, {-1}), S({16}, {-1})}, {S({4, 8, 16}, {0, -1, 1})},
          Attrs{int64_t(2), 1e-5});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
}

TEST(SpmdCrossEntropy, ClassAxisReplicated) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("softmax_cross_entropy", m, {S({8, 10}, {0, 1}), S({8, 1}, {-1, -1})}, Attrs{int64_t(-100)});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[1], {0, -1}));
  EXPECT_EQ(r.outputs[1].shape, (Dims{8, 1}));
  r = fwd("softmax_cross_entropy", m, {S({2, 8, 10}, {-1, -1, -1}), S({2, 8, 1}, {1, 0, -1})}, Attrs{int64_t(-100)});
  EXPECT_TRUE(Is(r.inputs[0], {1, 0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {1, 0, -1}));
}

// ---------------------------------------------------------------- embedding (gather_nd)

TEST(SpmdEmbedding, ThreeParallelisms) {
  ProcessMesh m = mesh22();
  // weight [10, 8], ids [4, 5] as gather_nd's index [4, 5, 1]
  // ids split (data parallel) -> output split alike
  SpmdInfo r = fwd("gather_nd", m, {S({10, 8}, {-1, -1}), S({4, 5, 1}, {0, -1, -1})});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 5, 8}));
  EXPECT_EQ(r.local, LocalRun::Same);
  // row-split table (vocab parallel) -> Partial(sum), masked lookup
  r = fwd("gather_nd", m, {S({10, 8}, {1, -1}), S({4, 5, 1}, {-1, -1, -1})});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, -1}, P1));
  EXPECT_EQ(r.local, LocalRun::MaskedRowGather);
  // column-split table -> last dim split
  r = fwd("gather_nd", m, {S({10, 8}, {-1, 1}), S({4, 5, 1}, {0, -1, -1})});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, 1}));
  // ids and table rows on one mesh dim: the ids keep it
  r = fwd("gather_nd", m, {S({10, 8}, {0, -1}), S({4, 5, 1}, {0, -1, -1})});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  EXPECT_EQ(r.local, LocalRun::Same);
  // the coordinate dim is never split
  r = fwd("gather_nd", m, {S({10, 8}, {-1, -1}), S({4, 1}, {-1, 0})});
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  // reverse: the wanted output split goes to the ids and the table's columns
  r = rev("gather_nd", m, {S({10, 8}, {-1, -1}), S({4, 5, 1}, {-1, -1, -1})}, {S({4, 5, 8}, {0, -1, 1})});
  EXPECT_TRUE(Is(r.inputs[0], {-1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1, -1}));
}

// ---------------------------------------------------------------- reshape, transpose

TEST(SpmdReshape, MergeAndSplit) {
  ProcessMesh m = mesh22();
  // merge [4, 6] -> [24]: the leading dim keeps its split
  SpmdInfo r = fwd("reshape", m, {S({4, 6}, {0, -1})}, Attrs{Dims{24}});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{24}));
  EXPECT_EQ(r.local, LocalRun::LocalShapeAttr);
  // a non-leading dim of a merge loses it
  r = fwd("reshape", m, {S({4, 6}, {-1, 0})}, Attrs{Dims{-1}});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1}));
  EXPECT_GT(r.comm_bytes, 0);
  // split [24] -> [4, 6]: the leading factor takes the split
  r = fwd("reshape", m, {S({24}, {1})}, Attrs{Dims{4, 6}});
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}));
  // [2, 12, 5] -> [2, 3, 4, 5] keeps dims that map one to one (x2) and splits 12
  r = fwd("reshape", m, {S({2, 12, 5}, {0, 1, -1})}, Attrs{Dims{2, 3, 4, -1}});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1, -1}));  // 3 is not divisible by 2: 12 gathered
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  r = fwd("reshape", m, {S({2, 12, 5}, {-1, 1, 0})}, Attrs{Dims{-2, 6, 2, 5}});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1, -1, 0}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{2, 6, 2, 5}));
  // a mixed group [6, 4] -> [2, 12]: leading dims 6 and 2 both divisible by 2
  r = fwd("reshape", m, {S({6, 4}, {0, -1})}, Attrs{Dims{2, 12}});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  // uneven pieces survive only a one-to-one dim ([5, 4] -> [5, 2, 2])
  ProcessMesh m4 = mesh4();
  r = fwd("reshape", m4, {S({5, 4}, {0, -1})}, Attrs{Dims{5, 2, 2}});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  r = fwd("reshape", m4, {S({5, 4}, {0, -1})}, Attrs{Dims{20}});
  EXPECT_TRUE(Is(r.outputs[0], {-1}));
  // size-1 dims
  r = fwd("reshape", m, {S({1, 8}, {-1, 1})}, Attrs{Dims{8, 1}});
  EXPECT_TRUE(Is(r.outputs[0], {1, -1}));
  r = fwd("unsqueeze", m, {S({4, 6}, {1, 0})}, Attrs{Dims{0, 2}});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1, -1, 0}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{1, 4, 1, 6}));
  EXPECT_EQ(r.local, LocalRun::Same);
}

// Paddle's reshape rule cases (2x3 mesh); Paddle's 0 ("copy the dim") is oar's -2.
TEST(SpmdReshape, PaddleCases) {
  ProcessMesh m = mesh23();
  struct Case { Dims in, dm, shape, want_in, want_out; };
  const Case cases[] = {
      {{6, 12, 48, 24}, {0, -1, 1, -1}, {1, 72, 48, 4, 6}, {0, -1, 1, -1}, {-1, 0, 1, -1, -1}},
      {{6, 12, 48, 24}, {-1, 0, -1, 1}, {1, 72, 48, 4, 6}, {-1, -1, -1, -1}, {-1, -1, -1, -1, -1}},
      {{6, 12, 48, 24}, {1, -1, -1, 0}, {1, 72, 48, 4, 6}, {1, -1, -1, 0}, {-1, 1, -1, 0, -1}},
      {{6, 12, 48, 24}, {0, 1, -1, -1}, {3, 24, 6, 8, 24}, {-1, -1, -1, -1}, {-1, -1, -1, -1, -1}},
      {{6, 12, 48, 24}, {1, -1, -1, 0}, {3, 24, 6, 8, 24}, {1, -1, -1, 0}, {1, -1, -1, -1, 0}},
      {{6, 12, 48, 24}, {-1, -1, 0, 1}, {3, 24, 6, -1, 24}, {-1, -1, 0, 1}, {-1, -1, 0, -1, 1}},
      {{6, 12, 48, 24}, {1, -1, -1, 0}, {1, 72, -2, 4, 6}, {1, -1, -1, 0}, {-1, 1, -1, 0, -1}},
      {{6, 12, 48, 24}, {-1, -1, 0, 1}, {6, 12, 48, 24}, {-1, -1, 0, 1}, {-1, -1, 0, 1}},
      {{6, 12, 48, 24}, {0, -1, 1, -1}, {72, 3, 16, 24}, {0, -1, 1, -1}, {0, 1, -1, -1}},
      {{6, 12, 48, 24}, {1, -1, 0, -1}, {72, 3, 16, 24}, {1, -1, -1, -1}, {1, -1, -1, -1}},
      {{1, 72, 48, 4, 6}, {-1, 1, -1, 0, -1}, {6, 12, 48, 24}, {-1, 1, -1, 0, -1}, {1, -1, -1, 0}},
      {{8, 1024, 3072}, {0, 1, -1}, {-2, -2, -1, 192}, {0, 1, -1}, {0, 1, -1, -1}},
      {{8, 1024, 3072}, {0, -1, 1}, {-2, -2, -1, 192}, {0, -1, -1}, {0, -1, -1, -1}},
      {{8, 1024, 3072}, {1, -1, 0}, {-2, -2, -1, 192}, {1, -1, 0}, {1, -1, 0, -1}},
      {{1, 2048, 12288}, {0, -1, 1}, {-2, -2, 6, 2048}, {0, -1, 1}, {0, -1, 1, -1}},
  };
  for (const Case& c : cases) {
    SpmdInfo r = fwd("reshape", m, {S(c.in, c.dm)}, Attrs{c.shape});
    EXPECT_TRUE(Is(r.inputs[0], c.want_in)) << dims_str(c.shape);
    EXPECT_TRUE(Is(r.outputs[0], c.want_out)) << dims_str(c.shape);
  }
  expect_error([&] { fwd("reshape", m, {S({6, 12, 48, 24}, {0, 1, -1, -1})}, Attrs{Dims{3, 24, 6, -1, -1}}); },
               ErrorKind::Value, "[oar.reshape]");
  // reverse: [6, 12, 48, 24] -> [1, 72, 48, 4, 6] with the output wanted as [-1, 1, -1, 0, -1]
  SpmdInfo r = rev("reshape", m, {S({6, 12, 48, 24}, {-1, -1, -1, -1})}, {S({1, 72, 48, 4, 6}, {-1, 1, -1, 0, -1})},
                   Attrs{Dims{1, 72, 48, 4, 6}});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1, -1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1, -1, 0, -1}));
  r = rev("reshape", m, {S({6, 12, 48, 24}, {-1, -1, -1, -1})}, {S({1, 72, 48, 4, 6}, {-1, 0, 1, -1, -1})},
          Attrs{Dims{1, 72, 48, 4, 6}});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, 1, -1}));
}

TEST(SpmdReshape, Reverse) {
  ProcessMesh m = mesh22();
  SpmdInfo r = rev("reshape", m, {S({24}, {-1})}, {S({4, 6}, {0, -1})}, Attrs{Dims{4, 6}});
  EXPECT_TRUE(Is(r.inputs[0], {0}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  r = rev("reshape", m, {S({24}, {-1})}, {S({4, 6}, {-1, 0})}, Attrs{Dims{4, 6}});
  EXPECT_TRUE(Is(r.inputs[0], {-1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1}));
}

TEST(SpmdTranspose, PermutesMapping) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("transpose", m, {S({2, 3, 4}, {0, -1, 1})}, Attrs{Dims{2, 0, 1}});
  EXPECT_TRUE(Is(r.outputs[0], {1, 0, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 2, 3}));
  r = rev("transpose", m, {S({2, 3, 4}, {-1, -1, -1})}, {S({4, 2, 3}, {-1, 1, 0})}, Attrs{Dims{2, 0, 1}});
  EXPECT_TRUE(Is(r.inputs[0], {1, 0, -1}));
}

// ---------------------------------------------------------------- concat, split

TEST(SpmdConcatSplit, AxisReplicated) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("concat", m, {S({4, 6}, {0, -1}), S({2, 6}, {-1, 1})}, Attrs{int64_t(0)});
  EXPECT_TRUE(Is(r.inputs[0], {-1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{6, 6}));
  r = fwd("split", m, {S({4, 6}, {0, 1})}, Attrs{int64_t(1), Dims{2, 4}});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_TRUE(Is(r.outputs[0], {0, -1}));
  EXPECT_TRUE(Is(r.outputs[1], {0, -1}));
  EXPECT_EQ(r.outputs[1].shape, (Dims{4, 4}));
  r = rev("split", m, {S({4, 6}, {-1, -1})}, {S({4, 2}, {1, -1}), S({4, 4}, {-1, -1})}, Attrs{int64_t(1), Dims{2, 4}});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1}));
  EXPECT_TRUE(Is(r.outputs[1], {1, -1}));
}

// ---------------------------------------------------------------- layer_norm_grad, fused_attention

TEST(SpmdLayerNormGrad, WeightGradsPartialOverSplitRows) {
  ProcessMesh m = mesh22();
  Attrs a{int64_t(2), 1e-5};
  SpmdInfo r = fwd("layer_norm_grad", m, {S({4, 8, 16}, {0, 1, -1}), S({16}, {-1}), S({4, 8, 16}, {0, -1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, 1, -1}));
  EXPECT_TRUE(Is(r.inputs[2], {0, 1, -1}));
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_TRUE(Is(r.outputs[0], {0, 1, -1}));
  // dweight and dbias sum over both split leading dims
  EXPECT_TRUE(Is(r.outputs[1], {-1}, P0 | P1));
  EXPECT_TRUE(Is(r.outputs[2], {-1}, P0 | P1));
  EXPECT_EQ(r.outputs[1].shape, (Dims{16}));
  // a split normalized dim is gathered; nothing is partial then
  r = fwd("layer_norm_grad", m, {S({4, 8, 16}, {-1, -1, 1}), S({16}, {1}), S({4, 8, 16}, {-1, -1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1}));
  EXPECT_TRUE(Is(r.outputs[1], {-1}));
}

TEST(SpmdRmsNorm, NormalizedDimsReplicated) {
  ProcessMesh m = mesh22();
  DistSpec none;
  none.defined = false;
  SpmdInfo r = fwd("rms_norm", m, {S({4, 8, 16}, {0, 1, -1}), S({8, 16}, {-1, 0})}, Attrs{int64_t(1), 1e-6});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  // without a weight, leading splits stay
  r = fwd("rms_norm", m, {S({4, 8, 16}, {1, 0, -1}), none}, Attrs{int64_t(2), 1e-6});
  EXPECT_TRUE(Is(r.outputs[0], {1, 0, -1}));
  r = rev("rms_norm", m, {S({4, 8, 16}, {-1, -1, -1}), S({16}, {-1})}, {S({4, 8, 16}, {0, -1, 1})},
          Attrs{int64_t(2), 1e-6});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
}

TEST(SpmdRmsNormGrad, WeightGradPartialOverSplitRows) {
  ProcessMesh m = mesh22();
  Attrs a{int64_t(2), 1e-6, true};
  SpmdInfo r = fwd("rms_norm_grad", m, {S({4, 8, 16}, {0, 1, -1}), S({16}, {-1}), S({4, 8, 16}, {0, -1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, 1, -1}));
  EXPECT_TRUE(Is(r.inputs[2], {0, 1, -1}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_TRUE(Is(r.outputs[0], {0, 1, -1}));
  EXPECT_TRUE(Is(r.outputs[1], {-1}, P0 | P1));
  EXPECT_EQ(r.outputs[1].shape, (Dims{16}));
  // no weight gradient asked for: dweight is an empty [0]
  r = fwd("rms_norm_grad", m, {S({4, 8, 16}, {0, 1, -1}), S({16}, {-1}), S({4, 8, 16}, {0, 1, -1})},
          Attrs{int64_t(2), 1e-6, false});
  EXPECT_EQ(r.outputs[1].shape, (Dims{0}));
  // a split normalized dim is gathered
  r = fwd("rms_norm_grad", m, {S({4, 8, 16}, {-1, -1, 1}), S({16}, {1}), S({4, 8, 16}, {-1, -1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[1], {-1}));
}

TEST(SpmdFusedAttention, LeadingDimsSplit) {
  ProcessMesh m = mesh22();
  DistSpec none;
  none.defined = false;
  Attrs a{0.25, true};
  // [batch, heads, L, D]: batch and heads keep their splits; k and v follow q
  SpmdInfo r = fwd("fused_attention", m, {S({2, 4, 8, 16}, {0, 1, -1, -1}), S({2, 4, 6, 16}, {-1, -1, -1, -1}),
                                          S({2, 4, 6, 12}, {-1, -1, -1, -1}), none}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, 1, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, 1, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[2], {0, 1, -1, -1}));
  EXPECT_FALSE(r.inputs[3].defined);
  EXPECT_TRUE(Is(r.outputs[0], {0, 1, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{2, 4, 8, 12}));
  // sequence and feature splits are gathered
  r = fwd("fused_attention", m, {S({2, 4, 8, 16}, {-1, -1, 0, 1}), S({2, 4, 6, 16}, {-1, -1, 1, -1}),
                                 S({2, 4, 6, 12}, {-1, -1, -1, 0}), none}, a);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Is(r.inputs[size_t(i)], {-1, -1, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, -1, -1}));
  // a broadcast mask follows the scores' leading splits, never a broadcast dim
  r = fwd("fused_attention", m, {S({2, 4, 8, 16}, {0, 1, -1, -1}), S({2, 4, 6, 16}, {0, 1, -1, -1}),
                                 S({2, 4, 6, 12}, {0, 1, -1, -1}), S({2, 1, 8, 6}, {-1, -1, -1, 1})}, a);
  EXPECT_TRUE(Is(r.inputs[3], {0, -1, -1, -1}));
  r = fwd("fused_attention", m, {S({2, 4, 8, 16}, {0, -1, -1, -1}), S({2, 4, 6, 16}, {-1, -1, -1, -1}),
                                 S({2, 4, 6, 12}, {-1, -1, -1, -1}), S({8, 6}, {1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[3], {-1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1, -1}));
  // three inputs (no mask argument at all)
  r = fwd("fused_attention", m, {S({2, 8, 16}, {1, -1, -1}), S({2, 6, 16}, {-1, -1, -1}), S({2, 6, 16}, {-1, -1, -1})},
          a);
  EXPECT_TRUE(Is(r.outputs[0], {1, -1, -1}));
  // reverse: a wanted head split goes to q, k and v
  r = rev("fused_attention", m, {S({2, 4, 8, 16}, {-1, -1, -1, -1}), S({2, 4, 6, 16}, {-1, -1, -1, -1}),
                                 S({2, 4, 6, 12}, {-1, -1, -1, -1}), none}, {S({2, 4, 8, 12}, {-1, 1, 0, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[2], {-1, 1, -1, -1}));
}

// ---------------------------------------------------------------- strided_slice, slice_scatter, squeeze

TEST(SpmdSlice, SlicedAxesReplicated) {
  ProcessMesh m = mesh22();
  constexpr int64_t kEnd = std::numeric_limits<int64_t>::max(), kBegin = std::numeric_limits<int64_t>::min();
  // x[:, :-1]
  Attrs a{Dims{1}, Dims{0}, Dims{-1}, Dims{1}};
  SpmdInfo r = fwd("strided_slice", m, {S({4, 8, 6}, {0, 1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 7, 6}));
  // x[..., 1::2] and x[..., ::-1] (omitted bounds)
  r = fwd("strided_slice", m, {S({4, 8, 6}, {0, -1, 1})}, Attrs{Dims{2}, Dims{1}, Dims{kEnd}, Dims{2}});
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 8, 3}));
  r = fwd("strided_slice", m, {S({4, 8, 6}, {-1, 0, 1})}, Attrs{Dims{-1}, Dims{kEnd}, Dims{kBegin}, Dims{-1}});
  EXPECT_TRUE(Is(r.outputs[0], {-1, 0, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 8, 6}));
  // out-of-range bounds clamp; an empty slice
  r = fwd("strided_slice", m, {S({4, 8}, {0, -1})}, Attrs{Dims{1}, Dims{5}, Dims{100}, Dims{1}});
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 3}));
  r = fwd("strided_slice", m, {S({4, 8}, {0, -1})}, Attrs{Dims{1}, Dims{6}, Dims{2}, Dims{1}});
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 0}));
  // reverse: the sliced axis cannot take the wanted split
  r = rev("strided_slice", m, {S({4, 8, 6}, {-1, -1, -1})}, {S({4, 7, 6}, {0, 1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
}

TEST(SpmdSlice, SliceScatterValueFollowsX) {
  ProcessMesh m = mesh22();
  Attrs a{Dims{1}, Dims{2}, Dims{3}, Dims{1}};  // x[:, 2:3] = value
  SpmdInfo r = fwd("slice_scatter", m, {S({4, 8, 6}, {0, -1, 1}), S({4, 1, 6}, {-1, -1, -1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {0, -1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {0, -1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, 1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 8, 6}));
  // a broadcast value ([6], or a 0-D scalar) and a split sliced axis
  r = fwd("slice_scatter", m, {S({4, 8, 6}, {-1, 0, 1}), S({6}, {-1})}, a);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {1}));
  r = fwd("slice_scatter", m, {S({4, 8, 6}, {0, -1, -1}), S({}, {})}, Attrs{Dims{1}, Dims{0}, Dims{8}, Dims{2}});
  EXPECT_TRUE(Is(r.outputs[0], {0, -1, -1}));
  // a value dim of size 1 against a larger slice is broadcast, never split
  r = fwd("slice_scatter", m, {S({4, 8, 6}, {-1, -1, -1}), S({1, 4, 6}, {0, -1, 1})}, Attrs{Dims{1}, Dims{0}, Dims{4},
                                                                                          Dims{1}});
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1, 1}));
}

TEST(SpmdSqueeze, DroppedDimsReplicated) {
  ProcessMesh m = mesh22();
  SpmdInfo r = fwd("squeeze", m, {S({4, 1, 6}, {0, -1, 1})}, Attrs{Dims{1}});
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 6}));
  r = fwd("squeeze", m, {S({4, 1, 6}, {-1, 0, 1})}, Attrs{Dims{-2}});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}));
  // a listed dim that is not size 1 stays
  r = fwd("squeeze", m, {S({4, 1, 6}, {0, -1, 1})}, Attrs{Dims{0, 1}});
  EXPECT_TRUE(Is(r.outputs[0], {0, 1}));
  // no axes: every dim is gathered (a piece of one element would drop too)
  r = fwd("squeeze", m, {S({4, 1, 2}, {0, -1, 1})}, Attrs{Dims{}});
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1, -1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, -1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{4, 2}));
  r = rev("squeeze", m, {S({4, 1, 6}, {-1, -1, -1})}, {S({4, 6}, {1, 0})}, Attrs{Dims{1}});
  EXPECT_TRUE(Is(r.inputs[0], {1, -1, 0}));
}

TEST(SpmdScatterNd, TrailingDimsSplit) {
  ProcessMesh m = mesh22();
  // the embedding gradient: scatter_nd(zeros [10, 8], ids [4, 5, 1], grad [4, 5, 8])
  SpmdInfo r = fwd("scatter_nd", m, {S({10, 8}, {-1, 1}), S({4, 5, 1}, {0, -1, -1}), S({4, 5, 8}, {0, -1, 1})},
                   Attrs{false});
  EXPECT_TRUE(Is(r.inputs[0], {-1, 1}));
  EXPECT_TRUE(Is(r.inputs[1], {-1, -1, -1}));
  EXPECT_TRUE(Is(r.inputs[2], {-1, -1, 1}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 1}));
  EXPECT_EQ(r.outputs[0].shape, (Dims{10, 8}));
  // indexed rows are gathered; the updates' split follows x's columns
  r = fwd("scatter_nd", m, {S({10, 8}, {0, -1}), S({4, 5, 1}, {-1, -1, -1}), S({4, 5, 8}, {-1, -1, 0})}, Attrs{true});
  EXPECT_TRUE(Is(r.inputs[0], {-1, 0}));
  EXPECT_TRUE(Is(r.inputs[2], {-1, -1, 0}));
  EXPECT_TRUE(Is(r.outputs[0], {-1, 0}));
  expect_error([&] { fwd("scatter_nd", m, {S({10}, {-1}), S({4, 2}, {-1, -1}), S({4}, {-1})}, Attrs{false}); },
               ErrorKind::Value, "[oar.scatter_nd] SPMD rule");
}

// ---------------------------------------------------------------- registry

TEST(SpmdRegistry, RulesAreOnRealOps) {
  for (const char* name : {"matmul", "linear", "sum", "mean", "prod", "amax", "amin", "softmax", "log_softmax",
                           "softmax_grad", "layer_norm", "softmax_cross_entropy", "transpose", "concat", "split",
                           "gather_nd", "reshape", "unsqueeze", "bernoulli", "layer_norm_grad", "fused_attention",
                           "strided_slice", "slice_scatter", "squeeze", "scatter_nd", "fft_c2c", "fft_r2c",
                           "fft_c2r"}) {
    const OpDef* d = find_op(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_NE(d->infer_meta, nullptr) << name << " is not a defined op";
    EXPECT_NE(d->spmd, nullptr) << name;
    EXPECT_NE(d->spmd_reverse, nullptr) << name;
  }
}

TEST(SpmdRegistry, ReplicateAll) {
  ProcessMesh m = mesh4();
  DistSpec none;
  none.defined = false;
  std::vector<DistSpec> in{S({8, 4}, {0, -1}), none, S({4}, {-1}, P0)};
  SpmdInfo r = replicate_all(m, std::span<const DistSpec>(in.data(), in.size()), Attrs{});
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_TRUE(Is(r.inputs[0], {-1, -1}));
  EXPECT_FALSE(r.inputs[1].defined);
  EXPECT_TRUE(Is(r.inputs[2], {-1}));
  EXPECT_TRUE(r.outputs.empty());
  EXPECT_DOUBLE_EQ(r.comm_bytes, 96 + 24);  // all_gather 3 x 32 + all_reduce 2 x 3/4 x 16
}

TEST(SpmdRegistry, BadSpecsRaise) {
  ProcessMesh m = mesh22();
  expect_error([&] { fwd("add", m, {S({4, 6}, {0}), S({4, 6}, {-1, -1})}); }, ErrorKind::Value, "[oar.distributed]");
  expect_error([&] { fwd("add", m, {S({4, 6}, {2, -1}), S({4, 6}, {-1, -1})}); }, ErrorKind::Index,
               "[oar.distributed]");
  expect_error([&] { fwd("add", m, {S({4, 6}, {0, 0}), S({4, 6}, {-1, -1})}); }, ErrorKind::Value,
               "[oar.distributed]");
  expect_error([&] { fwd("add", m, {S({4, 6}, {0, -1}, P0), S({4, 6}, {-1, -1})}); }, ErrorKind::Value,
               "[oar.distributed]");
  expect_error([&] { fwd("matmul", m, {S({4, 6}, {-1, -1}), S({6, 2}, {-1, -1}), S({2}, {-1})}, Attrs{false, false}); },
               ErrorKind::Value, "[oar.distributed]");
  expect_error([&] { rev("reshape", m, {S({24}, {-1})}, {S({4, 5}, {0, -1})}, Attrs{Dims{4, 6}}); }, ErrorKind::Value,
               "[oar.reshape]");
}

}  // namespace
}  // namespace oar

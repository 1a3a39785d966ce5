// SPMD rules (DESIGN.md §1, §5): for each op, the shardings its inputs must
// be in and the shardings its outputs come out in, on a process mesh, with the
// communication the inputs' resharding costs. Pure metadata: unit-tested on
// fake meshes with no processes (tests/cpp/test_spmd.cpp).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op.h"
#include "tensor/dist_attr.h"

namespace oar {

// Note [SPMD rule contract]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A DistSpec describes one tensor argument: its GLOBAL shape, a dims_mapping
// (per tensor dim: the mesh dim it is split along, or -1), the mesh dims on
// which it is partial (bit m of partial_mask; one reduce type for all of
// them) and its item size (for the cost). `defined` is false for an optional
// input left out (its other fields are then ignored).
//
// A forward rule `SpmdInfo rule(mesh, in, attrs)` gets one DistSpec per op
// input (same order as the op's inputs, attrs exactly as the op receives
// them, with global sizes) and returns
//   - inputs:  one spec per input, the sharding the local op needs. Required
//              specs are never partial: a partial input is reduced first.
//   - outputs: one spec per op output, with the global output shape, the
//              sharding and the partial mesh dims the local op's results have.
//   - comm_bytes: the per-device bytes that resharding `in` to `inputs`
//              moves (sum of reshard_cost over the inputs).
//   - local:   how the local call differs from the global op (LocalRun).
// A reverse rule (OpDef::spmd_reverse) gets the inputs' specs and the wanted
// output specs and returns the same structure: the input shardings that
// produce outputs as close to the wanted ones as the op allows (outputs holds
// what they produce). Rules never throw for a valid op call; shapes that the
// op itself would reject are the op's infer_meta's to report.
//
// The distributed dispatch stage (dispatch_hooks().distributed) is meant to:
//   1. build a DistSpec per input from its DistAttr (spec_of(dist_attr,
//      itemsize)); a local tensor mixed with dist tensors counts as
//      replicated on the same mesh;
//   2. rule = spmd_rule_of(op); if null, call replicate_all (and warn once);
//   3. reshard every input whose spec differs from info.inputs[i]
//      (placements_of(info.inputs[i], mesh.ndim()) gives the target
//      placements; reshard_cost is the same cost model);
//   4. run the op on the local pieces: with info.local == LocalShapeAttr,
//      first replace attr 0 (the global output shape) by the output's local
//      shape (local_shape(outputs[0].shape, mesh, placements, rank));
//      with MaskedRowGather see LocalRun;
//   5. wrap each local output in a DistAttr from info.outputs[i]
//      (placements_of, global shape outputs[i].shape).
// Random ops (traits.random: uniform, bernoulli, dropout built on them) get
// ordinary rules, but on a sharded tensor each piece must draw the numbers
// of its own global positions: the hook has to offset the generator per
// piece (local_offset), or draw replicated and slice, or the pieces repeat.
//
// Where rules live: spmd.cpp defines them under names ("reduce_sum",
// "matmul", "reshape", ...); an op names its rule where it is defined
// (OpBuilder("sum")...spmd("reduce_sum")), so the op's one definition says
// how it shards. Ops with traits.elementwise and no rule of their own get the
// broadcasting elementwise rule through spmd_rule_of, so new elementwise ops
// need nothing.

struct DistSpec {
  Dims shape;              // global shape
  Dims dims_mapping;       // per tensor dim: mesh dim or -1
  uint64_t partial_mask = 0;  // bit m: partial on mesh dim m
  ReduceType partial_type = ReduceType::Sum;
  int64_t itemsize = 4;    // bytes per element, for the cost model
  bool defined = true;

  // Replicated on every mesh dim.
  static DistSpec replicated(Dims shape, int64_t itemsize = 4);
  // A spec with the given dims_mapping and no partial dims.
  static DistSpec sharded(Dims shape, Dims dims_mapping, int64_t itemsize = 4);
  int64_t ndim() const { return int64_t(shape.size()); }
  bool is_partial() const { return partial_mask != 0; }
  // Same sharding (shape and itemsize are not compared).
  bool same_placement(const DistSpec& o) const;
  bool operator==(const DistSpec& o) const;
  // "{shape=[4, 6], dims_mapping=[0, -1], partial=[1:sum]}"
  std::string to_string() const;
};

// How the local call differs from the global op's.
enum class LocalRun : uint8_t {
  Same,            // the same op and attrs on the local pieces
  LocalShapeAttr,  // attr 0 is the output shape: pass the local output shape
  // gather_nd (embedding) on a table split along its rows: each piece looks up
  // only the ids in its row range (id - piece offset), gives zero rows for the
  // others, and the output is Partial(sum) over that mesh dim.
  MaskedRowGather,
};

struct SpmdInfo {
  SmallVector<DistSpec, 4> inputs;   // required input specs
  SmallVector<DistSpec, 2> outputs;  // produced output specs
  double comm_bytes = 0;             // per device, to reshard the inputs
  LocalRun local = LocalRun::Same;
};

struct SpmdRule {
  SpmdFn fwd;
  SpmdReverseFn rev;
};
// The rule of that name, or null; and every name (for tests and tools).
const SpmdRule* find_spmd_rule(std::string_view name);
std::vector<std::string_view> spmd_rule_names();

// The rule the distributed stage uses for `op`: its own, else the
// broadcasting elementwise rule for elementwise ops, else null.
SpmdFn spmd_rule_of(const OpDef& op);
SpmdReverseFn spmd_reverse_rule_of(const OpDef& op);

// Fallback for ops without a rule: every input replicated (not partial);
// outputs is left empty, meaning every output is replicated.
SpmdInfo replicate_all(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& attrs);

// Per-device bytes moved to turn a tensor of global `shape` placed as `from`
// into `to` (both one Placement per mesh dim), one mesh dim at a time in
// mesh-dim order: all_gather (n-1) x piece, all_reduce 2 (n-1)/n x piece,
// reduce_scatter and all_to_all (n-1)/n x piece, slicing and making a
// partial from a replicated value 0.
double reshard_cost(const Placements& from, const Placements& to, const ProcessMesh& mesh, const Dims& shape,
                    int64_t itemsize);
double reshard_cost(const DistSpec& from, const DistSpec& to, const ProcessMesh& mesh);

// DistSpec <-> DistAttr/placements. spec_of raises NotImplemented for a tensor
// partial with two different reduce types or split along two mesh dims.
DistSpec spec_of(const Dims& global_shape, const Placements& p, int64_t itemsize = 4);
DistSpec spec_of(const DistAttr& a, int64_t itemsize = 4);
Placements placements_of(const DistSpec& s, int64_t mesh_ndim);

// The rules, also callable directly (tests, the planner).
namespace spmd {
SpmdInfo elementwise(const ProcessMesh& mesh, std::span<const DistSpec> in, const Attrs& attrs);
SpmdInfo elementwise_reverse(const ProcessMesh& mesh, std::span<const DistSpec> in, std::span<const DistSpec> out,
                             const Attrs& attrs);
}  // namespace spmd

}  // namespace oar

// Placements of a tensor on a process mesh (DESIGN.md §5), following Paddle
// 3.x semi-automatic parallelism: ProcessMesh, Shard(dim), Replicate(),
// Partial(reduce_type). Pure data: no communication, no MPI.
//
// Two views of one sharding are used. Placements hold one entry per mesh dim
// (what users write). A dims_mapping holds one entry per tensor dim: the mesh
// dim it is split along, or -1; the partial mesh dims are kept beside it.
// The SPMD rules (ops/spmd.h) work on the second view.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/small_vector.h"
#include "tensor/tensor.h"

namespace oar {

// How the values of a Partial tensor combine across its mesh dim.
enum class ReduceType : uint8_t { Sum, Avg, Max, Min, Prod };
// "sum", "avg", "max", "min", "prod" (Paddle's spelling in placement strings).
const char* reduce_type_name(ReduceType r);

// An n-d grid of process ids (row-major). dim_names default to d0, d1, ...
struct ProcessMesh {
  ProcessMesh(Dims shape, std::vector<int64_t> process_ids, std::vector<std::string> dim_names = {});

  const Dims& shape() const { return shape_; }
  const std::vector<int64_t>& process_ids() const { return ids_; }
  const std::vector<std::string>& dim_names() const { return names_; }
  int64_t ndim() const { return int64_t(shape_.size()); }
  int64_t size() const { return int64_t(ids_.size()); }
  int64_t dim_size(int64_t dim) const;          // dim may be negative (from the end)
  int64_t dim_index(const std::string& name) const;  // -1 if no dim has that name
  bool contains(int64_t rank) const { return index_of(rank) >= 0; }
  // Coordinates of process `rank` in the mesh; empty if it is not in the mesh.
  Dims coord_of(int64_t rank) const;
  // The ranks whose coordinates equal `coord` except along `dim`, in order
  // along `dim`: the group a collective along that mesh dim runs in.
  std::vector<int64_t> process_ids_along(int64_t dim, const Dims& coord) const;
  bool operator==(const ProcessMesh& o) const {
    return shape_ == o.shape_ && ids_ == o.ids_ && names_ == o.names_;
  }
  bool operator!=(const ProcessMesh& o) const { return !(*this == o); }
  // "ProcessMesh(shape=[2, 2], process_ids=[0, 1, 2, 3], dim_names=[x, y])"
  std::string to_string() const;

 private:
  int64_t index_of(int64_t rank) const;
  Dims shape_;
  std::vector<int64_t> ids_;
  std::vector<std::string> names_;
};

struct Placement {
  enum class Kind : uint8_t { Replicate, Shard, Partial };
  Kind kind = Kind::Replicate;
  int64_t dim = -1;                       // the tensor dim, for Shard
  ReduceType reduce = ReduceType::Sum;    // for Partial

  static Placement replicate() { return {}; }
  static Placement shard(int64_t d) { return {Kind::Shard, d, ReduceType::Sum}; }
  static Placement partial(ReduceType r = ReduceType::Sum) { return {Kind::Partial, -1, r}; }
  bool is_replicate() const { return kind == Kind::Replicate; }
  bool is_shard() const { return kind == Kind::Shard; }
  bool is_shard(int64_t d) const { return kind == Kind::Shard && dim == d; }
  bool is_partial() const { return kind == Kind::Partial; }
  bool operator==(const Placement& o) const {
    return kind == o.kind && (kind != Kind::Shard || dim == o.dim) && (kind != Kind::Partial || reduce == o.reduce);
  }
  bool operator!=(const Placement& o) const { return !(*this == o); }
  // "Replicate()", "Shard(dim=0)", "Partial(reduce_type=sum)"
  std::string to_string() const;
};
using Placements = SmallVector<Placement, 4>;
std::string placements_str(const Placements& p);  // "[Shard(dim=0), Replicate()]"

// Mesh dims on which a tensor is partial, with their reduce types.
using PartialDims = SmallVector<std::pair<int64_t, ReduceType>, 4>;

// placements -> dims_mapping (one entry per tensor dim). Raises
// NotImplemented when two mesh dims split one tensor dim (a dims_mapping
// cannot say that) and Index for a Shard dim outside the tensor.
Dims to_dims_mapping(const Placements& p, int64_t tensor_ndim);
PartialDims partial_dims(const Placements& p);
// dims_mapping + partial mesh dims -> placements (one per mesh dim).
Placements to_placements(const Dims& dims_mapping, const PartialDims& partial, int64_t mesh_ndim);

// The sizes of `n` split into `parts` pieces as numpy.array_split and Paddle
// do: the first n % parts pieces get one more.
int64_t split_piece_size(int64_t n, int64_t parts, int64_t index);
int64_t split_piece_offset(int64_t n, int64_t parts, int64_t index);

// Shape and offset (per tensor dim, in elements of the global tensor) of
// `rank`'s piece of a tensor of `global_shape` placed by `p`. Mesh dims that
// split the same tensor dim split it one after the other, in mesh-dim order.
// Raises Value if `rank` is not in the mesh (callers test mesh.contains()).
Dims local_shape(const Dims& global_shape, const ProcessMesh& mesh, const Placements& p, int64_t rank);
Dims local_offset(const Dims& global_shape, const ProcessMesh& mesh, const Placements& p, int64_t rank);

// The placement of a distributed tensor (TensorImpl::dist). The TensorImpl's
// own shape is the global one (what ops, gradient rules and users see); this
// rank's piece is `local` (Note [distributed tensor] in dist/dist_tensor.h).
struct DistAttr {
  DistAttr(std::shared_ptr<const ProcessMesh> mesh, Placements placements, Dims global_shape);

  std::shared_ptr<const ProcessMesh> mesh;
  Placements placements;  // one per mesh dim
  Dims global_shape;
  Tensor local;  // this rank's piece: a plain tensor (no dist, no autograd)

  Dims dims_mapping() const { return to_dims_mapping(placements, int64_t(global_shape.size())); }
  bool is_partial() const;
  bool operator==(const DistAttr& o) const {
    return *mesh == *o.mesh && placements == o.placements && global_shape == o.global_shape;
  }
  std::string to_string() const;
};

}  // namespace oar

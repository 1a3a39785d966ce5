#include "tensor/dist_attr.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"

namespace oar {
namespace {

constexpr const char* kMeshApi = "[oar.distributed.ProcessMesh]";

template <typename C> std::string list_str(const C& c) {
  std::ostringstream os;
  os << '[';
  bool first = true;
  for (const auto& v : c) {
    if (!first) os << ", ";
    os << v;
    first = false;
  }
  os << ']';
  return os.str();
}

}  // namespace

const char* reduce_type_name(ReduceType r) {
  switch (r) {
    case ReduceType::Sum: return "sum";
    case ReduceType::Avg: return "avg";
    case ReduceType::Max: return "max";
    case ReduceType::Min: return "min";
    case ReduceType::Prod: return "prod";
  }
  return "?";
}

// ---------------------------------------------------------------- ProcessMesh

ProcessMesh::ProcessMesh(Dims shape, std::vector<int64_t> process_ids, std::vector<std::string> dim_names)
    : shape_(std::move(shape)), ids_(std::move(process_ids)), names_(std::move(dim_names)) {
  // 63 mesh dims at most: the SPMD rules keep partial mesh dims in a 64-bit mask.
  OAR_CHECK(!shape_.empty() && shape_.size() <= 63, Value, kMeshApi, " mesh must have 1 to 63 dims, got shape ",
            list_str(shape_));
  int64_t n = 1;
  for (int64_t d : shape_) {
    OAR_CHECK(d > 0, Value, kMeshApi, " mesh dims must be positive, got shape ", list_str(shape_));
    OAR_CHECK(!__builtin_mul_overflow(n, d, &n), Value, kMeshApi, " mesh shape ", list_str(shape_), " overflows");
  }
  OAR_CHECK(int64_t(ids_.size()) == n, Value, kMeshApi, " shape ", list_str(shape_), " holds ", n,
            " processes but ", ids_.size(), " process_ids were given");
  std::vector<int64_t> sorted = ids_;
  std::sort(sorted.begin(), sorted.end());
  OAR_CHECK(sorted.empty() || sorted[0] >= 0, Value, kMeshApi, " process_ids must be non-negative, got ",
            list_str(ids_));
  OAR_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), Value, kMeshApi,
            " process_ids must be unique, got ", list_str(ids_));
  if (names_.empty())
    for (size_t i = 0; i < shape_.size(); ++i) names_.push_back(str_cat('d', i));
  OAR_CHECK(names_.size() == shape_.size(), Value, kMeshApi, " dim_names ", list_str(names_), " must name each of the ",
            shape_.size(), " mesh dims");
  for (size_t i = 0; i < names_.size(); ++i)
    for (size_t j = i + 1; j < names_.size(); ++j)
      OAR_CHECK(names_[i] != names_[j], Value, kMeshApi, " dim_names must be unique, got ", list_str(names_));
}

int64_t ProcessMesh::dim_size(int64_t dim) const {
  int64_t nd = ndim();
  OAR_CHECK(dim >= -nd && dim < nd, Index, kMeshApi, " mesh dim ", dim, " is out of range for a ", nd, "-D mesh");
  return shape_[dim < 0 ? dim + nd : dim];
}

int64_t ProcessMesh::dim_index(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return int64_t(i);
  return -1;
}

int64_t ProcessMesh::index_of(int64_t rank) const {
  auto it = std::find(ids_.begin(), ids_.end(), rank);
  return it == ids_.end() ? -1 : int64_t(it - ids_.begin());
}

Dims ProcessMesh::coord_of(int64_t rank) const {
  int64_t idx = index_of(rank);
  if (idx < 0) return {};
  Dims c(shape_.size());
  for (int64_t d = ndim() - 1; d >= 0; --d) {
    c[d] = idx % shape_[d];
    idx /= shape_[d];
  }
  return c;
}

std::vector<int64_t> ProcessMesh::process_ids_along(int64_t dim, const Dims& coord) const {
  int64_t nd = ndim();
  OAR_CHECK(dim >= 0 && dim < nd, Index, kMeshApi, " mesh dim ", dim, " is out of range for a ", nd, "-D mesh");
  OAR_CHECK(int64_t(coord.size()) == nd, Value, kMeshApi, " a coordinate needs ", nd, " entries, got ",
            list_str(coord));
  int64_t base = 0, stride = 1;
  for (int64_t d = nd - 1; d >= 0; --d) {
    OAR_CHECK(coord[d] >= 0 && coord[d] < shape_[d], Index, kMeshApi, " coordinate ", list_str(coord),
              " is outside the mesh of shape ", list_str(shape_));
    if (d != dim) base += coord[d] * stride;
    stride *= shape_[d];
  }
  int64_t step = 1;
  for (int64_t d = nd - 1; d > dim; --d) step *= shape_[d];
  std::vector<int64_t> out;
  for (int64_t i = 0; i < shape_[dim]; ++i) out.push_back(ids_[base + i * step]);
  return out;
}

std::string ProcessMesh::to_string() const {
  return str_cat("ProcessMesh(shape=", list_str(shape_), ", process_ids=", list_str(ids_),
                 ", dim_names=", list_str(names_), ")");
}

// ---------------------------------------------------------------- Placement

std::string Placement::to_string() const {
  switch (kind) {
    case Kind::Replicate: return "Replicate()";
    case Kind::Shard: return str_cat("Shard(dim=", dim, ")");
    case Kind::Partial: return str_cat("Partial(reduce_type=", reduce_type_name(reduce), ")");
  }
  return "?";
}

std::string placements_str(const Placements& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + p[i].to_string();
  return s + "]";
}

Dims to_dims_mapping(const Placements& p, int64_t tensor_ndim) {
  Dims dm(size_t(tensor_ndim), -1);
  for (size_t m = 0; m < p.size(); ++m) {
    if (!p[m].is_shard()) continue;
    int64_t d = p[m].dim;
    OAR_CHECK(d >= 0 && d < tensor_ndim, Index, "[oar.distributed] Shard(dim=", d, ") on mesh dim ", m,
              " is out of range for a ", tensor_ndim, "-D tensor");
    OAR_CHECK(dm[d] == -1, NotImplemented, "[oar.distributed] tensor dim ", d, " is split along mesh dims ", dm[d],
              " and ", m, "; one mesh dim per tensor dim is supported");
    dm[d] = int64_t(m);
  }
  return dm;
}

PartialDims partial_dims(const Placements& p) {
  PartialDims out;
  for (size_t m = 0; m < p.size(); ++m)
    if (p[m].is_partial()) out.push_back({int64_t(m), p[m].reduce});
  return out;
}

Placements to_placements(const Dims& dims_mapping, const PartialDims& partial, int64_t mesh_ndim) {
  Placements p(size_t(mesh_ndim), Placement::replicate());
  for (size_t d = 0; d < dims_mapping.size(); ++d) {
    int64_t m = dims_mapping[d];
    if (m == -1) continue;
    OAR_CHECK(m >= 0 && m < mesh_ndim, Index, "[oar.distributed] dims_mapping ", list_str(dims_mapping),
              " names mesh dim ", m, " of a ", mesh_ndim, "-D mesh");
    OAR_CHECK(p[m].is_replicate(), Value, "[oar.distributed] dims_mapping ", list_str(dims_mapping),
              " uses mesh dim ", m, " twice");
    p[m] = Placement::shard(int64_t(d));
  }
  for (const auto& [m, r] : partial) {
    OAR_CHECK(m >= 0 && m < mesh_ndim, Index, "[oar.distributed] partial mesh dim ", m, " is out of range for a ",
              mesh_ndim, "-D mesh");
    OAR_CHECK(p[m].is_replicate(), Value, "[oar.distributed] mesh dim ", m, " is both sharded and partial");
    p[m] = Placement::partial(r);
  }
  return p;
}

// ---------------------------------------------------------------- local pieces

int64_t split_piece_size(int64_t n, int64_t parts, int64_t index) {
  return n / parts + (index < n % parts ? 1 : 0);
}

int64_t split_piece_offset(int64_t n, int64_t parts, int64_t index) {
  return index * (n / parts) + std::min(index, n % parts);
}

namespace {
void local_piece(const Dims& global_shape, const ProcessMesh& mesh, const Placements& p, int64_t rank, Dims& shape,
                 Dims& offset) {
  OAR_CHECK(int64_t(p.size()) == mesh.ndim(), Value, "[oar.distributed] ", p.size(), " placements given for a ",
            mesh.ndim(), "-D mesh");
  Dims c = mesh.coord_of(rank);
  OAR_CHECK(!c.empty(), Value, "[oar.distributed] rank ", rank, " is not in ", mesh.to_string());
  shape = global_shape;
  offset.assign(global_shape.size(), 0);
  for (size_t m = 0; m < p.size(); ++m) {
    if (!p[m].is_shard()) continue;
    int64_t d = p[m].dim;
    OAR_CHECK(d >= 0 && d < int64_t(shape.size()), Index, "[oar.distributed] Shard(dim=", d,
              ") is out of range for a ", shape.size(), "-D tensor");
    int64_t parts = mesh.shape()[m];
    offset[d] += split_piece_offset(shape[d], parts, c[m]);
    shape[d] = split_piece_size(shape[d], parts, c[m]);
  }
}
}  // namespace

Dims local_shape(const Dims& global_shape, const ProcessMesh& mesh, const Placements& p, int64_t rank) {
  Dims s, o;
  local_piece(global_shape, mesh, p, rank, s, o);
  return s;
}

Dims local_offset(const Dims& global_shape, const ProcessMesh& mesh, const Placements& p, int64_t rank) {
  Dims s, o;
  local_piece(global_shape, mesh, p, rank, s, o);
  return o;
}

// ---------------------------------------------------------------- DistAttr

DistAttr::DistAttr(std::shared_ptr<const ProcessMesh> m, Placements pl, Dims shape)
    : mesh(std::move(m)), placements(std::move(pl)), global_shape(std::move(shape)) {
  OAR_CHECK(mesh != nullptr, Value, "[oar.distributed] a distributed tensor needs a process mesh");
  OAR_CHECK(int64_t(placements.size()) == mesh->ndim(), Value, "[oar.distributed] placements ",
            placements_str(placements), " must have one entry per mesh dim (", mesh->ndim(), ")");
  for (const Placement& q : placements)
    if (q.is_shard())
      OAR_CHECK(q.dim >= 0 && q.dim < int64_t(global_shape.size()), Index, "[oar.distributed] ", q.to_string(),
                " is out of range for a tensor of shape ", list_str(global_shape));
}

bool DistAttr::is_partial() const {
  for (const Placement& q : placements)
    if (q.is_partial()) return true;
  return false;
}

std::string DistAttr::to_string() const {
  return str_cat("DistAttr(mesh=", mesh->to_string(), ", placements=", placements_str(placements),
                 ", global_shape=", list_str(global_shape), ")");
}

}  // namespace oar

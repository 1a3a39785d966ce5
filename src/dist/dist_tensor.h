// Distributed tensors (semi-automatic parallelism, DESIGN.md §1 stage 2, §5).
//
// Note [distributed tensor]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A distributed tensor is an ordinary TensorImpl holding this rank's piece
// (its shape, strides and storage are the local ones) with a DistAttr: the
// mesh, one placement per mesh dim and the global shape. Kernels never see
// one: dispatch stage 2 (dist_stage) runs the op's SPMD rule, reshards the
// inputs the rule asks for, runs the op on the local pieces with autograd
// off, and wraps the results. Autograd records the op on the distributed
// tensors themselves, so a gradient rule, written with ops, runs through
// stage 2 again: gradients come out with the placements their SPMD rules
// give (a replicated weight used on a batch-sharded input gets a
// Partial(sum) gradient). Resharding is an op too ("dist_reshard"), whose
// gradient reshards back to where its input was (Partial becomes Replicate:
// every partial piece receives the whole gradient).
//
// A rank outside a tensor's mesh holds an empty piece (shape [0, ...]).
#pragma once
#include <memory>

#include "tensor/dist_attr.h"
#include "tensor/tensor.h"

namespace oar::dist {

using MeshPtr = std::shared_ptr<const ProcessMesh>;

// This process's rank in the job (0 before init_parallel_env).
int64_t world_rank();

// Wraps `local` (this rank's piece, shared, not copied) as a distributed
// tensor. Validates the piece's shape against global_shape and placements.
Tensor make_dist(const Tensor& local, MeshPtr mesh, const Placements& placements, const Dims& global_shape);
// The piece of `global` (the same full value on every rank) that this rank
// holds under `placements` (Paddle's shard_tensor).
Tensor shard_tensor(const Tensor& global, MeshPtr mesh, const Placements& placements);
// The same logical tensor placed on `mesh` by `placements`, communicating as
// needed; differentiable.
Tensor reshard(const Tensor& x, MeshPtr mesh, const Placements& placements);
// This rank's piece, without placements or autograd history (shares storage).
Tensor local_value(const Tensor& x);
// Differentiable crossings (Paddle's dtensor_from_local / dtensor_to_local):
// the gradient of a piece is the piece of the gradient, with Partial
// placements taken as Replicate (every partial piece gets the whole gradient).
Tensor from_local(const Tensor& local, MeshPtr mesh, const Placements& placements, const Dims& global_shape);
Tensor to_local(const Tensor& x);

}  // namespace oar::dist

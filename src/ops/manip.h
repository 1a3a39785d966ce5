// The C++ API of the shape-manipulation family (manip.cpp): joining,
// splitting, repeating, reordering and padding tensors, and the diagonal and
// triangular helpers. Functions follow Paddle 3.x semantics; axes are
// validated here (IndexError) and shapes in the ops' infer_meta (ValueError).
#pragma once
#include <span>
#include <string>

#include "ops/ops.h"

namespace oar::ops {

// Joins along an existing axis; dtypes promote to a common one.
Tensor concat(std::span<const Tensor> xs, int64_t axis = 0);
// Joins along a new axis; every input must have the same shape.
Tensor stack(std::span<const Tensor> xs, int64_t axis = 0);
// Splits into `sections` sizes along axis (one entry may be -1: the rest). Views.
Tensors split(const Tensor& x, const Dims& sections, int64_t axis = 0);
// Splits into `num` equal parts (the axis size must divide by num). Views.
Tensors split_equal(const Tensor& x, int64_t num, int64_t axis = 0);
// Paddle chunk: `chunks` equal parts.
Tensors chunk(const Tensor& x, int64_t chunks, int64_t axis = 0);
// Removes `axis`, returning its slices (views).
Tensors unbind(const Tensor& x, int64_t axis = 0);
Tensor tile(const Tensor& x, const Dims& repeat_times);
// Each element repeated `repeats` times along axis; axis < 0 after flattening
// is requested with flatten = true.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t axis, bool flatten);
// Per-element repeat counts (repeats.size() == size along axis).
Tensor repeat_interleave(const Tensor& x, const Dims& repeats, int64_t axis, bool flatten);
Tensor flip(const Tensor& x, const Dims& axes);
// Empty `axes` rolls the flattened tensor by shifts[0].
Tensor roll(const Tensor& x, const Dims& shifts, const Dims& axes);
// pad: (before, after) per entry of `axes`. mode: "constant", "reflect", "replicate", "circular".
Tensor pad(const Tensor& x, const Dims& axes, const Dims& before, const Dims& after, const std::string& mode,
           double value);
// A view of the diagonal of the (axis1, axis2) planes, appended as the last dim.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// 1-D -> square matrix with x on the `offset` diagonal, elsewhere padding_value;
// 2-D -> the `offset` diagonal as a 1-D tensor.
Tensor diag(const Tensor& x, int64_t offset = 0, double padding_value = 0);
Tensor diagflat(const Tensor& x, int64_t offset = 0);
// 'ij' indexing: output i varies along axis i. Inputs are 0-D or 1-D.
Tensors meshgrid(std::span<const Tensor> xs);

}  // namespace oar::ops

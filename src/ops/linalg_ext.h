// Linear-algebra extras (bmm, dot, outer, kron, cross, einsum) and a few
// elementwise/creation leftovers (lerp, nan_to_num, logspace). All are
// composites of existing ops, so their gradients (of any order) come from the
// ops they are built from.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ops/ops.h"

namespace oar::ops {

Tensor bmm(const Tensor& x, const Tensor& y);
Tensor mm(const Tensor& x, const Tensor& y);
// 1-D: a 0-D result; 2-D: row-wise dot products, shape [N]. No conjugation.
Tensor dot(const Tensor& x, const Tensor& y);
Tensor outer(const Tensor& x, const Tensor& y);
// Transpose of a tensor of rank <= 2 (`t` in Python).
Tensor t(const Tensor& x);
Tensor kron(const Tensor& x, const Tensor& y);
// axis == 9 (Paddle's default) means the first axis of size 3.
Tensor cross(const Tensor& x, const Tensor& y, int64_t axis = 9);
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

Tensor lerp(const Tensor& x, const Tensor& y, const Tensor& weight);
Tensor nan_to_num(const Tensor& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor logspace(double start, double stop, int64_t num, double base, DType dtype);

}  // namespace oar::ops

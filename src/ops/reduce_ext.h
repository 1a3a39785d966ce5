// The reductions and scans beyond sum/mean/prod/amax/amin: value and index
// extremes, logical reductions, moments, median, logsumexp, norms and
// cumulative ops. Where an op is a composite of other ops it is written here
// as one; the rest have kernels in kernels/cpu/reduce_ext.cpp.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "ops/ops.h"

namespace oar::ops {

// Empty `axes` means every axis, as for sum.
Tensor max(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor min(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
// No axis: the index into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdim = false,
              DType dtype = DType::Int64);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdim = false,
              DType dtype = DType::Int64);
Tensor all(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor any(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor var(const Tensor& x, const Dims& axes = {}, bool unbiased = true, bool keepdim = false);
Tensor stddev(const Tensor& x, const Dims& axes = {}, bool unbiased = true, bool keepdim = false);
// mode "avg" (mean of the two middle values) or "min" (the lower one). The
// second result holds the indices for mode "min" with an axis, else undefined.
std::pair<Tensor, Tensor> median(const Tensor& x, std::optional<int64_t> axis = std::nullopt,
                                 bool keepdim = false, const std::string& mode = "avg");
Tensor logsumexp(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
// Paddle's norm: no axis or one axis is a vector norm of order p (inf, -inf
// and 0 included); two axes a matrix norm ("fro", 1, -1, inf, -inf).
Tensor norm(const Tensor& x, double p, std::optional<Dims> axes = std::nullopt, bool keepdim = false);
Tensor norm(const Tensor& x, const std::string& p, std::optional<Dims> axes = std::nullopt, bool keepdim = false);
// Scans. No axis: over the flattened tensor (the result is 1-D).
Tensor cumsum(const Tensor& x, std::optional<int64_t> axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
              bool reverse = false);
Tensor cumprod(const Tensor& x, std::optional<int64_t> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
// (values, indices).
std::pair<Tensor, Tensor> cummax(const Tensor& x, std::optional<int64_t> axis = std::nullopt,
                                 DType dtype = DType::Int64);
std::pair<Tensor, Tensor> cummin(const Tensor& x, std::optional<int64_t> axis = std::nullopt,
                                 DType dtype = DType::Int64);

// out[.., j, ..] = x[.., idx[.., j, ..], ..] along `axis`; idx is int64 with
// x's shape except at `axis`.
Tensor pick_along_axis(const Tensor& x, const Tensor& idx, int64_t axis);
// zeros(shape) with src added at idx along `axis` (the gradient of pick_along_axis).
Tensor put_add_along_axis(const Tensor& src, const Tensor& idx, int64_t axis, const Dims& shape);

}  // namespace oar::ops

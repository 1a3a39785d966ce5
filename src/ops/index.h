// Indexing, gathering, scattering, sorting and searching (ops/index.cpp).
// Index tensors are int32 or int64; negative entries count from the end of
// their axis and out-of-range entries raise IndexError before any work.
#pragma once
#include <tuple>

#include "ops/ops.h"

namespace oar::ops {

// out = x with axis `axis` replaced by the 1-D `index` entries.
Tensor index_select(const Tensor& x, const Tensor& index, int64_t axis);
// out = x; out[..., index[i], ...] += value[..., i, ...] along `axis`.
Tensor index_add(const Tensor& x, const Tensor& index, int64_t axis, const Tensor& value);
// Paddle gather: a 0-D index drops the axis, a 1-D index keeps it.
Tensor gather(const Tensor& x, const Tensor& index, int64_t axis);
Tensor gather_nd(const Tensor& x, const Tensor& index);
// out = x with the slices named by index[..., K] overwritten by (overwrite)
// or increased by updates.
Tensor scatter_nd(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite);
// In-place overwrite form used by Tensor.__setitem__ (x keeps its storage).
Tensor& scatter_nd_(Tensor& x, const Tensor& index, const Tensor& updates);
Tensor scatter_nd_add(const Tensor& x, const Tensor& index, const Tensor& updates);
// Paddle scatter along axis 0 with a 1-D index.
Tensor scatter(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite);
Tensor take_along_axis(const Tensor& arr, const Tensor& indices, int64_t axis, bool broadcast = true);
// How put_along_axis combines the values written to one position (the op's
// `reduce` attr; the kernel and the gradient rule switch on it).
enum class PutReduce : int64_t { Assign = 0, Add = 1, Mul = 2, Mean = 3, Amin = 4, Amax = 5 };
// Paddle put_along_axis. reduce: "assign", "add", "mul"/"multiply", "mean",
// "amin" or "amax"; include_self=false leaves arr's own value out of the
// reduction at the positions written to. broadcast: indices (and values)
// broadcast against arr except along axis; otherwise indices may be smaller
// than arr in the other dims and values larger than indices (Paddle's
// broadcast=False rule), the corner they cover being written.
Tensor put_along_axis(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                      const std::string& reduce = "assign", bool include_self = true, bool broadcast = true);
Tensor put_along_axis(const Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                      PutReduce reduce, bool include_self = true, bool broadcast = true);
// In-place form (arr keeps its storage).
Tensor& put_along_axis_(Tensor& arr, const Tensor& indices, const Tensor& values, int64_t axis,
                        const std::string& reduce = "assign", bool include_self = true, bool broadcast = true);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& x, const Tensor& mask);
// [count, x.dim()] int64 coordinates of the non-zero elements, in row-major order.
Tensor nonzero(const Tensor& x);
Tensor argsort(const Tensor& x, int64_t axis, bool descending, bool stable);
Tensor sort(const Tensor& x, int64_t axis, bool descending, bool stable);
// (values, indices)
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis, bool largest, bool sorted);
// Sorted unique values (of the flattened x, or of the slices along `axis` when
// has_axis) with (out, index, inverse, counts).
std::tuple<Tensor, Tensor, Tensor, Tensor> unique(const Tensor& x, bool has_axis, int64_t axis, DType index_dtype);
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right, bool out_int32);

}  // namespace oar::ops

// The C++ op API: every function here goes through dispatch(), so calling it
// from a gradient rule, a graph or a distributed program runs the same op.
// Front-end functions promote dtypes and normalise arguments once; the op's
// infer_meta validates; kernels receive valid inputs.
#pragma once
#include <optional>
#include <string>

#include "ops/op.h"
#include "ops/scalar.h"

namespace oar::ops {

// ---- helpers (common.cpp)
std::string shape_str(const Dims& s);
// Maps axis in [-ndim, ndim) to [0, ndim); IndexError naming `api` otherwise.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* api);
// Normalised, sorted, de-duplicated; empty `axes` with all_if_empty means every axis.
Dims normalize_axes(const Dims& axes, int64_t ndim, const char* api, bool all_if_empty = true);
Dims broadcast_shapes(const Dims& a, const Dims& b, const char* api);
// Shape after reducing the (normalised, sorted) axes, with or without keepdim.
Dims reduced_shape(const Dims& in, const Dims& axes, bool keepdim);
// Result dtype of a binary op between a tensor and a Python number (the
// number never widens the tensor within its category).
DType result_type(const Tensor& a, const Scalar& s);
AttrValue scalar_attr(const Scalar& s);
Scalar attr_scalar(const AttrValue& a);
// A 0-D tensor holding `s` with dtype `dt`.
Tensor scalar_tensor(const Scalar& s, DType dt);

// ---- creation (creation.cpp)
Tensor full(const Dims& shape, const Scalar& value, DType dtype);
Tensor zeros(const Dims& shape, DType dtype = DType::Float32);
Tensor ones(const Dims& shape, DType dtype = DType::Float32);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor full_like(const Tensor& x, const Scalar& value, std::optional<DType> dtype = std::nullopt);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype);
Tensor linspace(double start, double stop, int64_t num, DType dtype);
Tensor eye(int64_t n, int64_t m, DType dtype);

// ---- copy and cast (copy.cpp)
Tensor cast(const Tensor& x, DType dtype);
Tensor clone(const Tensor& x);
Tensor contiguous(const Tensor& x);  // x itself when already contiguous
// Writes src (broadcast, cast) into dst in place.
Tensor& copy_(Tensor& dst, const Tensor& src);
// A copy of x on `device` (x itself when it is there already), made with the
// devices' own copy functions; the result is contiguous and has no history.
// x on `device` (x itself when it is there), differentiable. A non-blocking
// copy from the host is queued on the device's current stream.
Tensor to_device(const Tensor& x, Device device, bool blocking = true);

// ---- elementwise (unary.cpp, elementwise.cpp)
// The declared unary and binary ops (src/ops/elementwise.toml): exp(x),
// add(x, y), ... (real and conj return real inputs unchanged; imag needs a
// complex input).
#include "gen/ops/api.inc"

// Binary ops by name with a Python number on either side ("add", "multiply", ...).
Tensor binary(const std::string& op, const Tensor& x, const Tensor& y);
Tensor binary_scalar(const std::string& op, const Tensor& x, const Scalar& s, bool scalar_first);
// In-place binary: x op= y (y broadcast to x, cast to x's dtype).
Tensor& binary_(const std::string& op, Tensor& x, const Tensor& y);
// The same with the op looked up once by name (binary_op raises for an
// unknown name), for callers that run it many times.
struct BinaryOp;
const BinaryOp& binary_op(const std::string& name);
Tensor binary(const BinaryOp& op, const Tensor& x, const Tensor& y);
Tensor binary_scalar(const BinaryOp& op, const Tensor& x, const Scalar& s, bool scalar_first);
Tensor& binary_(const BinaryOp& op, Tensor& x, const Tensor& y);

// Unary ops by name: "exp", "sin", ... (the list is in elementwise.cpp).
Tensor unary(const std::string& op, const Tensor& x);
Tensor& unary_(const std::string& op, Tensor& x);
Tensor complex(const Tensor& re, const Tensor& im);
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
Tensor clip(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor scale(const Tensor& x, double s);  // x * s in x's dtype

// ---- reductions (reduce.cpp)
Tensor sum(const Tensor& x, const Dims& axes = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const Dims& axes = {}, bool keepdim = false);
// Sums x over broadcast dims so that it has `shape` (gradient of broadcasting).
Tensor sum_to(const Tensor& x, const Dims& shape);

// ---- shape and views (shape.cpp)
// In `shape`, -1 is inferred from the element count and kReshapeCopyDim copies
// the input's dim at that position (Paddle's 0).
constexpr int64_t kReshapeCopyDim = -2;
Tensor reshape(const Tensor& x, const Dims& shape);
Tensor transpose(const Tensor& x, const Dims& perm);
Tensor swapaxes(const Tensor& x, int64_t a, int64_t b);
Tensor expand(const Tensor& x, const Dims& shape);
Tensor squeeze(const Tensor& x, const Dims& axes = {});
Tensor unsqueeze(const Tensor& x, const Dims& axes);
// Strided slice along `axes` (Python slice semantics per axis, steps may be negative).
Tensor strided_slice(const Tensor& x, const Dims& axes, const Dims& starts, const Dims& ends, const Dims& steps);
// In-place form: x[slice] = src (x keeps its storage; autograd records slice_scatter).
Tensor& slice_scatter_(Tensor& x, const Tensor& src, const Dims& axes, const Dims& starts, const Dims& ends,
                       const Dims& steps);
Tensor flatten(const Tensor& x, int64_t start_axis = 0, int64_t stop_axis = -1);
// out = base with the strided slice replaced by src (the gradient of strided_slice,
// and __setitem__).
Tensor slice_scatter(const Tensor& base, const Tensor& src, const Dims& axes, const Dims& starts,
                     const Dims& ends, const Dims& steps);

// ---- linear algebra (linalg.cpp)
Tensor matmul(const Tensor& x, const Tensor& y, bool transpose_x = false, bool transpose_y = false);
// x [..., K] @ w [K, N] + b [N], floating dtypes, all three of one dtype.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);

}  // namespace oar::ops

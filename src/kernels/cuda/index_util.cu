// Host side of kernels/cuda/index_util.cuh: index checks and device copies.
#include <algorithm>
#include <climits>

#include "kernels/cuda/index_util.cuh"

namespace oar::cuda {
namespace {

// The entries of a dense index tensor, of `k` columns (the last dim for the
// nd ops, else 1). An entry of column d must lie in [-size[d], size[d])
// (negative) or [0, size[d]). Entries are ranked in the order the CPU checks
// them: the element at (o, j, i) of the index viewed as [outer, len, inner]
// has rank (o * inner + i) * len + j (len = inner = 1: memory order).
struct IndexRule {
  int k = 1;
  int64_t size[kMaxRank];
  bool negative = true;
  int64_t len = 1, inner = 1;

  __host__ __device__ int64_t rank(int64_t t) const {
    const int64_t i = t % inner, q = t / inner, j = q % len, o = q / len;
    return (o * inner + i) * len + j;
  }
  __host__ __device__ int64_t element(int64_t r) const {  // the inverse of rank
    const int64_t j = r % len, q = r / len, i = q % inner, o = q / inner;
    return (o * len + j) * inner + i;
  }
};

// Marks the rank of the first bad entry; int32 indices are also widened into `wide`.
template <typename I>
__global__ void find_bad_index(const I* idx, int64_t n, IndexRule rule, unsigned long long* first, int64_t* wide) {
  OAR_GRID_LOOP(t, n) {
    const int64_t v = int64_t(idx[t]), size = rule.size[t % rule.k];
    if (v >= size || v < (rule.negative ? -size : 0)) atomicMin(first, (unsigned long long)rule.rank(t));
    if constexpr (!std::is_same_v<I, int64_t>) wide[t] = v;
  }
}

// The dense int64 form of idx_in (idx_in itself when it is one), after
// checking it: the first bad entry, at element t with value v, raises through
// raise(t, v).
template <typename Raise>
Tensor checked(const Tensor& idx_in, const IndexRule& rule, const char* api, Raise&& raise) {
  Tensor idx = dense(idx_in);
  const int64_t n = idx.numel();
  const bool is64 = idx.dtype() == DType::Int64;
  Tensor wide = is64 ? idx : empty_tensor(idx.shape(), DType::Int64, idx.device());
  if (n == 0) return wide;
  DeviceGuard guard(idx.device().index);
  Tensor flag = empty_tensor({}, DType::Int64, idx.device());
  auto* fp = static_cast<unsigned long long*>(flag.raw_data());
  cuda_check(cudaMemsetAsync(fp, 0xFF, sizeof(unsigned long long), cudaStreamLegacy), api, "cudaMemsetAsync");
  if (is64) launch(api, n, find_bad_index<int64_t>, idx.data<int64_t>(), n, rule, fp, nullptr);
  else launch(api, n, find_bad_index<int32_t>, idx.data<int32_t>(), n, rule, fp, wide.data<int64_t>());
  unsigned long long r = 0;
  cuda_check(cudaMemcpy(&r, fp, sizeof(r), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
  if (r != ULLONG_MAX) {
    const int64_t t = rule.element(int64_t(r));
    int64_t v = 0;
    cuda_check(cudaMemcpy(&v, wide.data<int64_t>() + t, sizeof(v), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
    raise(t, v);
  }
  return wide;
}

[[noreturn]] void out_of_bounds(const char* api, int64_t v, int64_t axis, int64_t size) {
  fail(ErrorKind::Index, "[", api, "] index ", v, " is out of bounds for axis ", axis, " with size ", size);
}

}  // namespace

Tensor zeroed(int64_t n, DType dtype, Device dev, const char* api) {
  Tensor t = empty_tensor({n}, dtype, dev);
  if (n > 0) {
    DeviceGuard guard(dev.index);
    cuda_check(cudaMemsetAsync(t.raw_data(), 0, size_t(n) * t.itemsize(), cudaStreamLegacy), api, "cudaMemsetAsync");
  }
  return t;
}

void device_copy(const Tensor& src, Tensor& dst) {
  static const OpDef& cast = op_def("cast");
  KernelFn k = cast.kernels[int(DeviceType::CUDA)][int(src.dtype())];
  OAR_CHECK(k, Runtime, "[oar.cast] has no CUDA kernel for ", dtype_name(src.dtype()));
  Attrs a{dst.dtype()};
  k(std::span<const Tensor>(&src, 1), std::span<Tensor>(&dst, 1), a);
}

void copy_base(const Tensor& src, Tensor& dst, const char* api) {
  if (src.raw_data() == dst.raw_data() || dst.numel() == 0) return;
  DeviceGuard guard(dst.device().index);
  cuda_check(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), size_t(dst.numel()) * dst.itemsize(),
                             cudaMemcpyDeviceToDevice, cudaStreamLegacy),
             api, "cudaMemcpyAsync");
}

Tensor check_index(const Tensor& idx, int64_t size, int64_t axis, const char* api) {
  IndexRule rule;
  rule.size[0] = size;
  return checked(idx, rule, api, [&](int64_t, int64_t v) { out_of_bounds(api, v, axis, size); });
}

Tensor check_index_nd(const Tensor& idx, const Dims& shape, const char* api) {
  IndexRule rule;
  rule.k = int(idx.shape().back());
  if (rule.k == 0) return dense(idx);
  for (int d = 0; d < rule.k; ++d) rule.size[d] = shape[size_t(d)];
  return checked(idx, rule, api, [&](int64_t t, int64_t v) {
    out_of_bounds(api, v, t % rule.k, shape[size_t(t % rule.k)]);
  });
}

Tensor check_index_range(const Tensor& idx, int64_t axis, int64_t limit, const char* api) {
  IndexRule rule;
  rule.size[0] = limit;
  rule.negative = false;
  rule.len = std::max<int64_t>(idx.shape()[size_t(axis)], 1);
  for (int64_t d = axis + 1; d < idx.dim(); ++d) rule.inner *= idx.shape()[size_t(d)];
  rule.inner = std::max<int64_t>(rule.inner, 1);
  return checked(idx, rule, api, [&](int64_t, int64_t v) {
    fail(ErrorKind::Index, "[", api, "] index ", v, " is out of range for an axis of size ", limit);
  });
}

}  // namespace oar::cuda

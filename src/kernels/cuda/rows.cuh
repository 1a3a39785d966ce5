// What the CUDA kernels that reduce along rows share (softmax, cross entropy,
// the norms, attention): typed element access, rounding to a storage type,
// warp and block reductions, the launch shape of a row kernel, and dense
// copies of strided inputs.
//
// Note [CUDA row kernels]
// A row of n elements is reduced either by one warp (n <= kWarpRowMax; a
// block then holds blockDim.y rows, one per warp) or by a whole block
// (blockDim.y == 1). The threads of a row stride over its elements, and
// row_reduce combines their partial results so that every thread of the row
// gets the total. The combination order is fixed by the launch shape, so a
// result does not vary from run to run.
#pragma once
#include <cstdint>

#include "kernels/cuda/loops.cuh"

namespace oar::cuda {

// ------------------------------------------------------------ element access

// p[i] of storage type T as its compute value (float for the 16-bit floats).
template <typename T> __device__ __forceinline__ compute_t<T> ld(const T* p, int64_t i) {
  return load<T>(reinterpret_cast<const char*>(p + i));
}
// p[i] = v, rounded to nearest even for the 16-bit floats.
template <typename T, typename V> __device__ __forceinline__ void st(T* p, int64_t i, V v) {
  store<T>(reinterpret_cast<char*>(p + i), v);
}
// v rounded to T and widened back: what storing v in a T tensor and reading it
// again gives (the CPU kernels round some intermediates this way).
template <typename T, typename V> __device__ __forceinline__ V round_to(V v) {
  if constexpr (std::is_same_v<T, float16>) return V(__half2float(__float2half_rn(float(v))));
  else if constexpr (std::is_same_v<T, bfloat16>) return V(__bfloat162float(__float2bfloat16_rn(float(v))));
  else return V(T(v));
}

// The accumulator of the row kernels: float for the 16-bit floats and
// float32, double for float64 (as the CPU's).
template <typename T> using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// -------------------------------------------------------------- reductions

struct SumOp {
  template <typename A> __device__ A operator()(A a, A b) const { return a + b; }
};
// The larger of a and b; a NaN in b is skipped (as the CPU's row_max), the
// sums of exponentials that follow still turn the row into NaN.
struct MaxOp {
  template <typename A> __device__ A operator()(A a, A b) const { return a < b ? b : a; }
};

template <typename A, typename Op> __device__ __forceinline__ A warp_reduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The reduction of v over the threads of a row (Note [CUDA row kernels]);
// every thread of the row gets it. `smem` holds 32 values; all threads of the
// block must call this together when a row is a block.
template <typename A, typename Op> __device__ __forceinline__ A row_reduce(A v, Op op, A* smem) {
  v = warp_reduce(v, op);
  if (blockDim.x <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();  // the previous call's readers are done with smem
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  A r = smem[0];
  for (int w = 1; w < warps; ++w) r = op(r, smem[w]);
  return r;
}

// The max of a row made usable for subtracting: an all -inf row keeps 0 (its
// exponentials sum to 0 and the row becomes NaN, as on the CPU), +inf stays.
template <typename A> __device__ __forceinline__ A finite_max(A m) {
  if (isfinite(m) || isnan(m)) return m;
  return m > A(0) ? m : A(0);
}

// ------------------------------------------------------------------ launch

// Rows of up to this many elements are reduced by one warp.
constexpr int64_t kWarpRowMax = 1024;
constexpr int kWarpRowsPerBlock = 4;
constexpr int64_t kMaxGrid = int64_t(1) << 20;  // row loops stride over the grid beyond

struct RowLaunch {
  dim3 grid, block;
};

// Note [CUDA row kernels]: the launch for `rows` rows of n elements.
inline RowLaunch row_launch(int64_t rows, int64_t n) {
  auto cap = [](int64_t b) { return unsigned(b < kMaxGrid ? (b > 0 ? b : 1) : kMaxGrid); };
  if (n <= kWarpRowMax)
    return {dim3(cap((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock)), dim3(32, kWarpRowsPerBlock)};
  return {dim3(cap(rows)), dim3(n >= 8192 ? 1024 : 256)};
}

// The first row of this thread and the step to its next, for a row loop
// `for (int64_t r = row_begin(); r < rows; r += row_step())`. Every thread of
// a block runs the same number of iterations when a row is a block.
__device__ __forceinline__ int64_t row_begin() { return int64_t(blockIdx.x) * blockDim.y + threadIdx.y; }
__device__ __forceinline__ int64_t row_step() { return int64_t(gridDim.x) * blockDim.y; }

inline void check_launch(const char* api) { cuda_check(cudaGetLastError(), api, "kernel launch"); }

// ------------------------------------------------------------ dense inputs

struct CopyBits {
  template <typename U> __device__ U operator()(U v) const { return v; }
};

// t itself when it is contiguous, else a contiguous copy on its device (the
// row kernels walk dense memory; a captured program may hand them a view).
inline Tensor dense(const Tensor& t, const char* api) {
  if (!t.defined() || t.is_contiguous()) return t;
  Tensor d = empty_tensor(t.shape(), t.dtype(), t.device());
  switch (t.itemsize()) {
    case 1: elementwise<uint8_t, uint8_t>(api, d, CopyBits{}, t); break;
    case 2: elementwise<uint16_t, uint16_t>(api, d, CopyBits{}, t); break;
    case 4: elementwise<uint32_t, uint32_t>(api, d, CopyBits{}, t); break;
    case 8: elementwise<uint64_t, uint64_t>(api, d, CopyBits{}, t); break;
    default: elementwise<Pair64, Pair64>(api, d, CopyBits{}, t); break;
  }
  return d;
}

}  // namespace oar::cuda

// The CUDA elementwise iterator: the counterpart of kernels/cpu/loops.h.
// An op's scalar functor (kernels/cpu/scalar_fns.h, compiled here for the
// device) runs over broadcast, strided operands of any real dtype; float16
// and bfloat16 are computed in float, as on the CPU, and rounded to nearest
// even on store, so the two devices agree bit for bit on the conversions.
//
// Note [CUDA operand geometry]
// The host folds the operands' shapes and strides into the fewest dims
// (size-1 dims dropped, adjacent dims merged where every operand is dense
// across them) and passes them by value. A thread maps its linear index to
// each operand's byte offset by division over those dims; when every operand
// is dense the offsets are the index times the item size, with no division.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "base/dtype.h"
#include "device/cuda/cuda_check.h"
#include "ops/op.h"

namespace oar::cuda {

// -------------------------------------------------------------- scalar access

// A complex value on the device (std::complex is host code): the same layout.
template <typename F> struct Cx {
  F re, im;
};
template <typename T> constexpr bool is_cx_v = false;
template <typename F> constexpr bool is_cx_v<Cx<F>> = true;

// The value type a kernel computes in for storage type T: float for the
// 16-bit floats, Cx for complex, T otherwise.
template <typename T> struct value_of { using type = compute_t<T>; };
template <> struct value_of<complex64> { using type = Cx<float>; };
template <> struct value_of<complex128> { using type = Cx<double>; };
template <typename T> using value_t = typename value_of<T>::type;

template <typename T> __device__ __forceinline__ value_t<T> load(const char* p) {
  if constexpr (std::is_same_v<T, float16>) {
    return __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(p)));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return __uint_as_float(uint32_t(*reinterpret_cast<const unsigned short*>(p)) << 16);
  } else {
    return *reinterpret_cast<const value_t<T>*>(p);
  }
}

template <typename T, typename V> __device__ __forceinline__ void store(char* p, V v) {
  if constexpr (std::is_same_v<T, float16>) {
    *reinterpret_cast<unsigned short*>(p) = __half_as_ushort(__float2half_rn(float(v)));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    *reinterpret_cast<unsigned short*>(p) = __bfloat16_as_ushort(__float2bfloat16_rn(float(v)));
  } else if constexpr (is_cx_v<value_t<T>>) {
    *reinterpret_cast<value_t<T>*>(p) = v;
  } else {
    *reinterpret_cast<T*>(p) = T(v);
  }
}

// Element i of a typed array, loaded or stored as above.
template <typename T> __device__ __forceinline__ value_t<T> get(const T* p, int64_t i) {
  return load<T>(reinterpret_cast<const char*>(p + i));
}
template <typename T, typename V> __device__ __forceinline__ void put(T* p, int64_t i, V v) {
  store<T>(reinterpret_cast<char*>(p + i), v);
}

// A grid-stride loop of variable e over [0, n).
#define OAR_GRID_LOOP(e, n) \
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < (n); e += int64_t(gridDim.x) * blockDim.x)

// A 16-byte item moved as is (complex128 in where and copies).
struct alignas(16) Pair64 {
  uint64_t lo, hi;
};

// ------------------------------------------------------------------ geometry

// Byte strides of N operands over the folded dims (Note [CUDA operand geometry]).
template <int N> struct Geometry {
  int ndim = 0;
  bool dense = true;  // every operand dense in the same order: offset = i * itemsize
  int64_t numel = 1;
  int64_t shape[kMaxRank];
  int64_t strides[N][kMaxRank];
  char* base[N];
  int itemsize[N];

  __device__ __forceinline__ void offsets(int64_t i, int64_t* off) const {
    if (dense) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = i * itemsize[k];
      return;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t q = i / shape[d], r = i - q * shape[d];
      i = q;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
    }
  }
};

// Operand 0 is the output: its shape is the iteration space; inputs broadcast
// to it (missing or size-1 dims get stride 0).
template <int N> Geometry<N> make_geometry(std::array<const Tensor*, N> ops) {
  Geometry<N> g;
  const Tensor& out = *ops[0];
  const int nd = int(out.dim());
  int64_t st[N][kMaxRank];
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *ops[k];
    g.itemsize[k] = int(t.itemsize());
    g.base[k] = static_cast<char*>(t.raw_data());
    const int lead = nd - int(t.dim());
    for (int d = 0; d < nd; ++d) {
      int td = d - lead;
      st[k][d] = (td < 0 || t.size(td) == 1) ? 0 : t.strides()[td] * int64_t(t.itemsize());
    }
  }
  // Drop size-1 dims, then merge d into the previous kept dim where every
  // operand steps over both as one.
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    int64_t n = out.size(d);
    g.numel *= n;
    if (n == 1) continue;
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge = merge && g.strides[k][m - 1] == st[k][d] * n;
      if (merge) {
        g.shape[m - 1] *= n;
        for (int k = 0; k < N; ++k) g.strides[k][m - 1] = st[k][d];
        continue;
      }
    }
    g.shape[m] = n;
    for (int k = 0; k < N; ++k) g.strides[k][m] = st[k][d];
    ++m;
  }
  g.ndim = m;
  for (int k = 0; k < N; ++k)
    g.dense = g.dense && (m == 0 || (m == 1 && g.strides[k][0] == g.itemsize[k]));
  return g;
}

// ------------------------------------------------------------------- launch

constexpr int kThreads = 256;

inline int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return int(b < (int64_t(1) << 20) ? b : (int64_t(1) << 20));  // grid-stride beyond
}

template <typename Out, typename... In, typename F, size_t... I>
__device__ __forceinline__ void apply_at(const Geometry<1 + sizeof...(In)>& g, int64_t i, const F& f,
                                         std::index_sequence<I...>) {
  int64_t off[1 + sizeof...(In)];
  g.offsets(i, off);
  store<Out>(g.base[0] + off[0], f(load<In>(g.base[I + 1] + off[I + 1])...));
}

template <typename F, typename Out, typename... In>
__global__ void elementwise_kernel(Geometry<1 + sizeof...(In)> g, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel; i += stride)
    apply_at<Out, In...>(g, i, f, std::index_sequence_for<In...>{});
}

// out = f(ins...) on the current device's default stream (Note [CUDA streams]).
// f is a functor with a __device__ operator() taking compute_t<In>... .
template <typename Out, typename... In, typename F, typename... Ts>
void elementwise(const char* api, Tensor& out, F f, const Ts&... ins) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one dtype per input");
  auto g = make_geometry<1 + sizeof...(In)>({&out, &ins...});
  if (g.numel == 0) return;
  DeviceGuard guard(out.device().index);
  elementwise_kernel<F, Out, In...><<<blocks_for(g.numel), kThreads, 0, cudaStreamLegacy>>>(g, f);
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

}  // namespace oar::cuda

// Helpers shared by the CUDA kernels of the indexing, sorting and scan ops
// (index.cu, sort.cu, scan.cu, manip.cu): typed loads and stores, atomic
// addition for every real and complex dtype, the checks of index tensors, and
// device copies through the cast kernel.
//
// Note [CUDA index checks]
// The CPU kernels raise IndexError for an out-of-range index before they
// write anything (Note [index checks]). The CUDA kernels keep that contract:
// one kernel finds the first bad entry (in the order the CPU reads them) and
// its position is read back, which waits for the device once per index
// tensor. Only then does the gather or scatter run, so it never reads or
// writes out of bounds and an in-place op leaves its tensor untouched on error.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/cpu/wrap.h"
#include "kernels/cuda/loops.cuh"
#include "ops/ops.h"
#include "tensor/autograd_meta.h"

namespace oar::cuda {

// A grid-stride loop over [0, n).

// Launches kernel<<<blocks_for(n), kThreads>>> on the default stream (nothing when n is 0).
template <typename... P, typename... A>
void launch(const char* api, int64_t n, void (*kernel)(P...), A&&... args) {
  if (n <= 0) return;
  kernel<<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(std::forward<A>(args)...);
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

// x itself when contiguous, else a contiguous copy on its device (as the CPU
// kernels' dense()).
inline Tensor dense(const Tensor& t) {
  NoGradGuard ng;
  return ops::contiguous(t);
}

// A zero-filled temporary of n items of dtype on dev.
Tensor zeroed(int64_t n, DType dtype, Device dev, const char* api);
// dst = src (same shape and dtype, any strides) through the CUDA cast kernel.
void device_copy(const Tensor& src, Tensor& dst);
// dst's bytes = src's (both contiguous, same size) unless they are one buffer.
void copy_base(const Tensor& src, Tensor& dst, const char* api);

// Index checks (Note [CUDA index checks]). Each returns the dense int64 form
// of the int32 or int64 index tensor idx (idx itself when it is one), whose
// negative entries the kernels still wrap.
// Every entry in [-size, size): else "[api] index v is out of bounds for axis
// `axis` with size `size`", as the CPU's load_index.
Tensor check_index(const Tensor& idx, int64_t size, int64_t axis, const char* api);
// idx of shape [..., k]: column d in [-shape[d], shape[d]), as the CPU's load_nd.
Tensor check_index_nd(const Tensor& idx, const Dims& shape, const char* api);
// Every entry in [0, limit), taken in the order of the lines along `axis` of
// idx's shape; else "[api] index v is out of range for an axis of size
// limit", as reduce_ext's check_indices (api: "oar.<op>").
Tensor check_index_range(const Tensor& idx, int64_t axis, int64_t limit, const char* api);

// ------------------------------------------------------------ device helpers

template <typename T> __device__ __forceinline__ value_t<T> ld(const T* p) {
  return load<T>(reinterpret_cast<const char*>(p));
}
template <typename T, typename V> __device__ __forceinline__ void st(T* p, V v) {
  store<T>(reinterpret_cast<char*>(p), v);
}

__device__ __forceinline__ int64_t wrap_index(int64_t k, int64_t n) { return k < 0 ? k + n : k; }

// Arithmetic on compute values: integers wrap (kernels/cpu/wrap.h), bool
// adds as `or` and multiplies as `and`, complex values componentwise.
template <typename C> __device__ __forceinline__ C v_add(C a, C b) {
  if constexpr (is_cx_v<C>) return C{a.re + b.re, a.im + b.im};
  else if constexpr (std::is_same_v<C, bool>) return a || b;
  else return cpu::wrap_add(a, b);
}
template <typename C> __device__ __forceinline__ C v_mul(C a, C b) {
  if constexpr (is_cx_v<C>) return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  else return cpu::wrap_mul(a, b);
}

// *p += v for the storage type T (v in T's compute type). The 8- and 16-bit
// integers go through a compare-and-swap of their aligned 32-bit word.
template <typename U> __device__ __forceinline__ void atomic_add_narrow(U* p, U v) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  unsigned* word = reinterpret_cast<unsigned*>(addr & ~uintptr_t(3));
  const unsigned shift = unsigned(addr & 3) * 8;
  const unsigned mask = ((1u << (8 * sizeof(U))) - 1u) << shift;
  unsigned old = *word, seen;
  do {
    seen = old;
    const U cur = U((seen & mask) >> shift);
    const unsigned sum = unsigned(std::make_unsigned_t<U>(cpu::wrap_add(cur, v)));
    old = atomicCAS(word, seen, (seen & ~mask) | ((sum << shift) & mask));
  } while (old != seen);
}

template <typename T> __device__ __forceinline__ void atomic_add(T* p, value_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v) *reinterpret_cast<volatile bool*>(p) = true;  // every writer stores the same value
  } else if constexpr (std::is_same_v<T, float16>) {
    atomicAdd(reinterpret_cast<__half*>(p), __float2half_rn(v));
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __float2bfloat16_rn(v));
  } else if constexpr (is_cx_v<value_t<T>>) {
    auto* q = reinterpret_cast<decltype(v.re)*>(p);
    atomicAdd(q, v.re);
    atomicAdd(q + 1, v.im);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) <= 2, "an 8- or 16-bit integer");
    atomic_add_narrow(p, v);
  }
}

// The lines of a tensor along `axis` (the CPU's AxisLines, usable on the device).
struct AxisLines {
  int nd = 0;
  int64_t shape[kMaxRank], stride[kMaxRank];  // the dims other than the axis
  int64_t len = 1, step = 0;                  // the axis
  int64_t nlines = 1;

  AxisLines(const Dims& sh, const Dims& st, int64_t axis) {
    for (int64_t d = 0; d < int64_t(sh.size()); ++d) {
      if (d == axis) {
        len = sh[size_t(d)];
        step = st[size_t(d)];
        continue;
      }
      shape[nd] = sh[size_t(d)];
      stride[nd] = st[size_t(d)];
      ++nd;
      nlines *= sh[size_t(d)];
    }
  }
  // The element offset of line `line`'s first element.
  __device__ int64_t offset(int64_t line) const {
    int64_t off = 0;
    for (int i = nd - 1; i >= 0; --i) {
      const int64_t q = line / shape[i];
      off += (line - q * shape[i]) * stride[i];
      line = q;
    }
    return off;
  }
};

// An unsigned type of each item size, for moving items of any dtype.
template <typename F> void visit_size(size_t isz, F&& f) {
  switch (isz) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: f(Pair64{}); break;
  }
}

}  // namespace oar::cuda

// CUDA kernels of full, full_like, arange, linspace and eye, with the values
// of the CPU kernels (kernels/cpu/creation.cpp): the fill value is converted
// on the host and written as its bit pattern; sequences are computed in
// double (int64 for integer arange) and converted per element.
#include <cstring>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/ops.h"
#include "ops/scalar.h"

namespace oar::cuda {
namespace {

template <typename U> __global__ void fill_bits(U* p, int64_t n, U v) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

template <typename U> void fill_as(Tensor& out, const void* bits) {
  U v;
  std::memcpy(&v, bits, sizeof(U));
  fill_bits<U><<<blocks_for(out.numel()), kThreads, 0, cudaStreamLegacy>>>(static_cast<U*>(out.raw_data()),
                                                                           out.numel(), v);
}

void fill(const char* api, Tensor& out, const Scalar& s) {
  if (out.numel() == 0) return;
  alignas(16) unsigned char bits[16] = {};
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T v = s.to<T>();
    std::memcpy(bits, &v, sizeof(T));
  });
  DeviceGuard guard(out.device().index);
  bool zero = true;
  for (size_t i = 0; i < out.itemsize(); ++i) zero = zero && bits[i] == 0;
  if (zero) {
    cuda_check(cudaMemsetAsync(out.raw_data(), 0, size_t(out.numel()) * out.itemsize(), cudaStreamLegacy), api,
               "cudaMemsetAsync");
    return;
  }
  switch (out.itemsize()) {
    case 1: fill_as<uint8_t>(out, bits); break;
    case 2: fill_as<uint16_t>(out, bits); break;
    case 4: fill_as<uint32_t>(out, bits); break;
    case 8: fill_as<uint64_t>(out, bits); break;
    default: fill_as<Pair64>(out, bits); break;
  }
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

void full_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  fill("oar.full", out[0], ops::attr_scalar(a[1]));
}
void full_like_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  fill("oar.full_like", out[0], ops::attr_scalar(a[0]));
}

// Sequences: element i of out is f(i).
template <typename T, typename F> __global__ void sequence(char* out, int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    store<T>(out + i * int64_t(sizeof(T)), f(i));
}
template <typename T, typename F> void run_sequence(const char* api, Tensor& out, F f) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device().index);
  sequence<T><<<blocks_for(out.numel()), kThreads, 0, cudaStreamLegacy>>>(static_cast<char*>(out.raw_data()),
                                                                          out.numel(), f);
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

// A real value as storage type T's value (complex: the real part).
template <typename T, typename V> __device__ value_t<T> as_value(V v) {
  if constexpr (is_cx_v<value_t<T>>) {
    using F = decltype(value_t<T>::re);
    return value_t<T>{F(v), F(0)};
  } else {
    return value_t<T>(v);
  }
}

template <typename T, typename V> struct Affine {  // start + i * step
  V start, step;
  __device__ value_t<T> operator()(int64_t i) const { return as_value<T>(V(start + V(i) * step)); }
};
template <typename T> struct Linspace {  // from both ends, so that the last value is `stop`
  double s, e, step;
  int64_t n;
  __device__ value_t<T> operator()(int64_t i) const {
    double v = (n == 1 || i < n / 2) ? s + step * double(i) : e - step * double(n - 1 - i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return value_t<T>(floor(v));
    else return as_value<T>(v);
  }
};
template <typename T> struct Eye {
  int64_t cols;
  __device__ value_t<T> operator()(int64_t i) const { return as_value<T>(i / cols == i % cols ? 1 : 0); }
};

void arange_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || cpu::is_complex_v<T>) {
      run_sequence<T>("oar.arange", out[0],
                      Affine<T, double>{ops::attr_scalar(a[0]).d, ops::attr_scalar(a[1]).d});
    } else {
      if (std::holds_alternative<int64_t>(a[0]))
        run_sequence<T>("oar.arange", out[0], Affine<T, int64_t>{a.i(0), a.i(1)});
      else
        run_sequence<T>("oar.arange", out[0], Affine<T, double>{a.f(0), a.f(1)});
    }
  });
}

void linspace_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  const double s = a.f(0), e = a.f(1);
  const int64_t n = a.i(2);
  const double step = n > 1 ? (e - s) / double(n - 1) : 0.0;
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_sequence<T>("oar.linspace", out[0], Linspace<T>{s, e, step, n});
  });
}

void eye_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_sequence<T>("oar.eye", out[0], Eye<T>{std::max<int64_t>(a.i(1), 1)});
  });
}

const bool r1 = register_all("full", full_kernel, OAR_ALL_DTYPES);
const bool r2 = register_all("full_like", full_like_kernel, OAR_ALL_DTYPES);
const bool r3 = register_all("arange", arange_kernel, OAR_ALL_DTYPES);
const bool r4 = register_all("linspace", linspace_kernel, OAR_ALL_DTYPES);
const bool r5 = register_all("eye", eye_kernel, OAR_ALL_DTYPES);

}  // namespace
}  // namespace oar::cuda

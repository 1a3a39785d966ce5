// CUDA kernels of the elementwise ops: the declared unary and binary ops
// (ops/elementwise.toml) through the same scalar functors as the CPU kernels
// (kernels/cpu/scalar_fns.h), and pow, floor_divide, remainder, where, clip.
// Complex values are computed as CUDA's complex type, which the functors'
// unqualified math calls find by argument-dependent lookup.
#include <cuda/std/complex>

#include <limits>

#include "kernels/cpu/dtype_lists.h"

namespace oar::cpu {
// CUDA's complex type is a complex type to the scalar functions.
template <typename F> constexpr bool is_complex_v<::cuda::std::complex<F>> = true;
}  // namespace oar::cpu

#include "kernels/cpu/scalar_fns.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"

namespace oar::cuda {
namespace {

namespace scalar = oar::cpu::scalar;

// The CPU visitors (kernels/cpu/dtype_lists.h); the generated lists name
// them unqualified, so they are renamed around the includes.
template <typename F> decltype(auto) dev_visit_float(DType t, F&& f) { return cpu::visit_float(t, f); }
template <typename F> decltype(auto) dev_visit_int(DType t, F&& f) { return cpu::visit_int(t, f); }
template <typename F> decltype(auto) dev_visit_real(DType t, F&& f) { return cpu::visit_real(t, f); }
template <typename F> decltype(auto) dev_visit_inexact(DType t, F&& f) { return cpu::visit_inexact(t, f); }
template <typename F> decltype(auto) dev_visit_numeric(DType t, F&& f) { return cpu::visit_numeric(t, f); }
template <typename F> decltype(auto) dev_visit_all(DType t, F&& f) { return oar::visit_dtype(t, f); }

// Values between storage (value_t: Cx for complex) and the functors' math
// (CUDA's complex type for complex).
template <typename V> __device__ __forceinline__ auto to_math(V v) {
  if constexpr (is_cx_v<V>) return ::cuda::std::complex<decltype(v.re)>(v.re, v.im);
  else return v;
}
template <typename R, typename V> __device__ __forceinline__ R from_math(V v) {
  if constexpr (is_cx_v<R>) return R{v.real(), v.imag()};
  else return R(v);
}

// Op::apply on compute values, converted to R.
template <typename Op, typename R> struct Unary {
  template <typename C> __device__ R operator()(C x) const { return from_math<R>(Op::apply(to_math(x))); }
};
template <typename Op, typename R> struct Binary {
  template <typename C> __device__ R operator()(C a, C b) const {
    return from_math<R>(Op::apply(to_math(a), to_math(b)));
  }
};

#define OAR_CUDA_UNARY(NAME, VISIT, OUT, ...)                                                      \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {           \
    VISIT(in[0].dtype(), [&](auto tag) {                                                            \
      using T = decltype(tag);                                                                      \
      using O = OUT;                                                                                \
      elementwise<O, T>("oar." #NAME, out[0], Unary<scalar::op_##NAME, value_t<O>>{}, in[0]);      \
    });                                                                                             \
  }                                                                                                 \
  const bool NAME##_reg = register_all(#NAME, NAME##_kernel, __VA_ARGS__);
#define OAR_UNARY_TO(NAME, VISIT, DTYPES, OUT, EXPR) OAR_CUDA_UNARY(NAME, VISIT, OUT, DTYPES)
#define OAR_UNARY_KERNEL(NAME, VISIT, DTYPES, VEC, EXPR) OAR_CUDA_UNARY(NAME, VISIT, T, DTYPES)

#define OAR_CUDA_BINARY(NAME, VISIT, OUT, ...)                                                     \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {           \
    VISIT(in[0].dtype(), [&](auto tag) {                                                            \
      using T = decltype(tag);                                                                      \
      using O = OUT;                                                                                \
      elementwise<O, T, T>("oar." #NAME, out[0], Binary<scalar::op_##NAME, value_t<O>>{}, in[0],   \
                           in[1]);                                                                  \
    });                                                                                             \
  }                                                                                                 \
  const bool NAME##_reg = register_all(#NAME, NAME##_kernel, __VA_ARGS__);
#define OAR_BINARY_KERNEL(NAME, VISIT, DTYPES, OUT, EXPR) OAR_CUDA_BINARY(NAME, VISIT, OUT, DTYPES)

// real_t<T> in the generated list is the CPU's; for real T it is T.
template <typename T> using real_t = cpu::scalar::real_t<T>;

#define visit_float dev_visit_float
#define visit_int dev_visit_int
#define visit_real dev_visit_real
#define visit_inexact dev_visit_inexact
#define visit_numeric dev_visit_numeric
#define visit_dtype dev_visit_all
#include "gen/kernels/binary.inc"
#include "gen/kernels/unary.inc"
#undef visit_float
#undef visit_int
#undef visit_real
#undef visit_inexact
#undef visit_numeric
#undef visit_dtype

// ------------------------------------------------------------ custom binaries

struct PowFn {
  template <typename C> __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) return scalar::int_pow<C>(a, b);
    else if constexpr (is_cx_v<C>) return from_math<C>(pow(to_math(a), to_math(b)));
    else return C(pow(a, b));
  }
};
void pow_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  dev_visit_numeric(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) fail(ErrorKind::NotImplemented, "[oar.pow] does not support bool tensors");
    else elementwise<T, T, T>("oar.pow", out[0], PowFn{}, in[0], in[1]);
  });
}
const bool pow_reg = register_all("pow", pow_kernel, OAR_NUMERIC_DTYPES);

// Integer division by zero is a user error on the CPU (it would trap); the
// CUDA kernels check it too, with one flag read back.
template <typename T> struct IsZero {
  __device__ bool operator()(compute_t<T> v) const { return v == compute_t<T>(0); }
};
__global__ void any_kernel(const bool* p, int64_t n, int* flag) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (p[i]) *flag = 1;
}
template <typename T> void check_nonzero(const Tensor& y, const char* api) {
  if constexpr (std::is_integral_v<T>) {
    Tensor zero = empty_tensor(y.shape(), DType::Bool, y.device());
    elementwise<bool, T>(api, zero, IsZero<T>{}, y);
    Tensor flag = empty_tensor({}, DType::Int32, y.device());
    cuda_check(cudaMemsetAsync(flag.raw_data(), 0, sizeof(int), cudaStreamLegacy), api, "cudaMemsetAsync");
    if (zero.numel() > 0)
      any_kernel<<<blocks_for(zero.numel()), kThreads, 0, cudaStreamLegacy>>>(zero.data<bool>(), zero.numel(),
                                                                               flag.data<int>());
    int h = 0;
    cuda_check(cudaMemcpy(&h, flag.raw_data(), sizeof(int), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
    OAR_CHECK(!h, Value, "[", api, "] integer division by zero");
  }
}

struct FloorDivFn {
  template <typename C> __device__ C operator()(C a, C b) const { return scalar::floor_div<C>(a, b); }
};
struct ModFn {
  template <typename C> __device__ C operator()(C a, C b) const { return scalar::py_mod<C>(a, b); }
};
void floor_divide_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  dev_visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    check_nonzero<T>(in[1], "oar.floor_divide");
    elementwise<T, T, T>("oar.floor_divide", out[0], FloorDivFn{}, in[0], in[1]);
  });
}
const bool floor_divide_reg = register_real("floor_divide", floor_divide_kernel, OAR_REAL_DTYPES);
void remainder_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  dev_visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    check_nonzero<T>(in[1], "oar.remainder");
    elementwise<T, T, T>("oar.remainder", out[0], ModFn{}, in[0], in[1]);
  });
}
const bool remainder_reg = register_real("remainder", remainder_kernel, OAR_REAL_DTYPES);

// complex(re, im): float32 -> complex64, float64 -> complex128.
struct MakeComplex {
  template <typename F> __device__ Cx<F> operator()(F re, F im) const { return Cx<F>{re, im}; }
};
void complex_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (in[0].dtype() == DType::Float64)
    elementwise<complex128, double, double>("oar.complex", out[0], MakeComplex{}, in[0], in[1]);
  else
    elementwise<complex64, float, float>("oar.complex", out[0], MakeComplex{}, in[0], in[1]);
}
const bool complex_reg = register_all("complex", complex_kernel, {DType::Float32, DType::Float64});

// where on the bit patterns, so one instantiation per item size serves every dtype.
struct WhereFn {
  template <typename U> __device__ U operator()(bool c, U a, U b) const { return c ? a : b; }
};
template <typename U> void where_bits(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& o) {
  elementwise<U, bool, U, U>("oar.where", o, WhereFn{}, c, x, y);
}
void where_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  switch (in[1].itemsize()) {
    case 1: return where_bits<uint8_t>(in[0], in[1], in[2], out[0]);
    case 2: return where_bits<uint16_t>(in[0], in[1], in[2], out[0]);
    case 4: return where_bits<uint32_t>(in[0], in[1], in[2], out[0]);
    case 8: return where_bits<uint64_t>(in[0], in[1], in[2], out[0]);
    default: return where_bits<Pair64>(in[0], in[1], in[2], out[0]);
  }
}
const bool where_reg = register_all("where", where_kernel, OAR_ALL_DTYPES);

template <typename C> struct ClipFn {
  C lo, hi;
  __device__ C operator()(C a) const { return a < lo ? lo : (a > hi ? hi : a); }
};
void clip_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  dev_visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    // The bounds are 0-D tensors on the device: read them back once.
    auto bound = [&](const Tensor& t, C dflt) {
      if (!t.defined()) return dflt;
      T v;
      cuda_check(cudaMemcpy(&v, t.raw_data(), sizeof(T), cudaMemcpyDeviceToHost), "oar.clip", "cudaMemcpy");
      return C(v);
    };
    ClipFn<C> f{bound(in[1], std::numeric_limits<C>::lowest()), bound(in[2], std::numeric_limits<C>::max())};
    elementwise<T, T>("oar.clip", out[0], f, in[0]);
  });
}
const bool clip_reg = register_real("clip", clip_kernel, OAR_REAL_DTYPES);

}  // namespace
}  // namespace oar::cuda

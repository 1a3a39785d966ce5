// custom_cpu's basic kernels: cast (copies and numeric conversions), float32
// add/subtract/multiply/divide with broadcasting, and float32 matmul.
#include <cstring>

#include "custom_cpu.h"
#include "kernel_util.h"

namespace custom_cpu {
namespace {

using oar::ext::DType;
using oar::ext::Error;
using oar::ext::KernelContext;

// ---- cast ---------------------------------------------------------------------
// Same dtype: a strided copy of any dtype (clone, contiguous, copy_). Between
// bool, int32, int64, float32 and float64: a conversion.

template <typename To, typename From>
void convert(const TensorView& x, const TensorView& y) {
  const From* a = x.data<From>();
  To* b = y.data<To>();
  for_each_broadcast<1>(y, {x}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    if constexpr (std::is_same_v<To, bool>) b[i] = a[o[0]] != From(0);
    else b[i] = To(a[o[0]]);
  });
}

template <typename To>
void convert_from(const TensorView& x, const TensorView& y) {
  switch (x.dtype()) {
    case oar::ext::kBool: return convert<To, bool>(x, y);
    case oar::ext::kInt32: return convert<To, int32_t>(x, y);
    case oar::ext::kInt64: return convert<To, int64_t>(x, y);
    case oar::ext::kFloat32: return convert<To, float>(x, y);
    case oar::ext::kFloat64: return convert<To, double>(x, y);
    default: throw Error(OAR_ERROR_UNSUPPORTED, "casting from this dtype is not supported on custom_cpu");
  }
}

void cast(KernelContext& ctx) {
  TensorView x = ctx.input(0), y = ctx.output(0);
  if (y.numel() == 0) return;
  if (x.dtype() == y.dtype()) {
    const size_t w = oar::ext::itemsize(x.dtype());
    if (x.is_contiguous()) {
      std::memcpy(y.raw_data(), x.raw_data(), y.nbytes());
      return;
    }
    const char* a = static_cast<const char*>(x.raw_data());
    char* b = static_cast<char*>(y.raw_data());
    for_each_broadcast<1>(y, {x}, [&](int64_t i, const std::array<int64_t, 1>& o) {
      std::memcpy(b + i * int64_t(w), a + o[0] * int64_t(w), w);
    });
    return;
  }
  switch (y.dtype()) {
    case oar::ext::kBool: return convert_from<bool>(x, y);
    case oar::ext::kInt32: return convert_from<int32_t>(x, y);
    case oar::ext::kInt64: return convert_from<int64_t>(x, y);
    case oar::ext::kFloat32: return convert_from<float>(x, y);
    case oar::ext::kFloat64: return convert_from<double>(x, y);
    default: throw Error(OAR_ERROR_UNSUPPORTED, "casting to this dtype is not supported on custom_cpu");
  }
}

// ---- binary arithmetic ------------------------------------------------------------

template <typename F>
void binary(KernelContext& ctx, F f) {
  TensorView x = ctx.input(0), y = ctx.input(1), out = ctx.output(0);
  const float *a = x.data<float>(), *b = y.data<float>();
  float* c = out.data<float>();
  for_each_broadcast<2>(out, {x, y}, [&](int64_t i, const std::array<int64_t, 2>& o) { c[i] = f(a[o[0]], b[o[1]]); });
}

void add(KernelContext& ctx) { binary(ctx, [](float a, float b) { return a + b; }); }
void subtract(KernelContext& ctx) { binary(ctx, [](float a, float b) { return a - b; }); }
void multiply(KernelContext& ctx) { binary(ctx, [](float a, float b) { return a * b; }); }
void divide(KernelContext& ctx) { binary(ctx, [](float a, float b) { return a / b; }); }

// ---- matmul ------------------------------------------------------------------------
// x [..., M, K] (or [..., K, M] with transpose_x), y [..., K, N] (or
// [..., N, K]); batch dims broadcast; out [..., M, N] contiguous.

void matmul(KernelContext& ctx) {
  TensorView x = ctx.input(0), y = ctx.input(1), out = ctx.output(0);
  const bool tx = ctx.attr_bool(0), ty = ctx.attr_bool(1);
  const int xn = x.ndim(), yn = y.ndim(), on = out.ndim();
  const int64_t M = out.shape(on - 2), N = out.shape(on - 1), K = x.shape(tx ? xn - 2 : xn - 1);
  // Strides of x along m and k, of y along k and n.
  const int64_t xm = x.stride(tx ? xn - 1 : xn - 2), xk = x.stride(tx ? xn - 2 : xn - 1);
  const int64_t yk = y.stride(ty ? yn - 1 : yn - 2), yn_ = y.stride(ty ? yn - 2 : yn - 1);
  // The batch: out's leading dims, with x and y broadcast to them.
  int64_t batch = 1;
  for (int d = 0; d < on - 2; ++d) batch *= out.shape(d);
  const float *a = x.data<float>(), *b = y.data<float>();
  float* c = out.data<float>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t xo = 0, yo = 0, rest = bi;
    for (int d = on - 3; d >= 0; --d) {
      const int64_t i = rest % out.shape(d);
      rest /= out.shape(d);
      const int dx = d - (on - xn), dy = d - (on - yn);
      if (dx >= 0 && x.shape(dx) != 1) xo += i * x.stride(dx);
      if (dy >= 0 && y.shape(dy) != 1) yo += i * y.stride(dy);
    }
    float* cb = c + bi * M * N;
    for (int64_t m = 0; m < M; ++m) {
      float* row = cb + m * N;
      for (int64_t n = 0; n < N; ++n) row[n] = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        const float av = a[xo + m * xm + k * xk];
        const float* bk = b + yo + k * yk;
        for (int64_t n = 0; n < N; ++n) row[n] += av * bk[n * yn_];
      }
    }
  }
}

const RegisterKernels reg([] {
  using namespace oar::ext;
  add_kernel("cast", {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64,
                      kComplex64, kComplex128}, cast);
  add_kernel("add", {kFloat32}, add);
  add_kernel("subtract", {kFloat32}, subtract);
  add_kernel("multiply", {kFloat32}, multiply);
  add_kernel("divide", {kFloat32}, divide);
  add_kernel("matmul", {kFloat32}, matmul);
});

}  // namespace
}  // namespace custom_cpu

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

void fill(Tensor& out, const Scalar& v) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T val = v.to<T>();
    T* p = out.data<T>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, val); });
  });
}

void full_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  fill(out[0], ops::attr_scalar(a[1]));
}
void full_like_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  fill(out[0], ops::attr_scalar(a[0]));
}

void arange_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    int64_t n = out[0].numel();
    if constexpr (is_complex_v<T> || std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < n; ++i) p[i] = T(ops::attr_scalar(a[0]).d + double(i) * ops::attr_scalar(a[1]).d);
    } else if (std::holds_alternative<int64_t>(a[0])) {
      int64_t s = a.i(0), st = a.i(1);
      for (int64_t i = 0; i < n; ++i) p[i] = T(s + i * st);
    } else {
      double s = a.f(0), st = a.f(1);
      for (int64_t i = 0; i < n; ++i) p[i] = T(s + double(i) * st);
    }
  });
}

void linspace_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  double s = a.f(0), e = a.f(1);
  int64_t n = a.i(2);
  double step = n > 1 ? (e - s) / double(n - 1) : 0.0;
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    // Fill from both ends so that the last value is exactly `stop`.
    for (int64_t i = 0; i < n; ++i) {
      double v = (n == 1 || i < n / 2) ? s + step * double(i) : e - step * double(n - 1 - i);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) p[i] = T(std::floor(v));
      else p[i] = T(v);
    }
  });
}

void eye_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  visit_dtype(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    int64_t r = a.i(0), c = a.i(1);
    std::fill(p, p + r * c, T(0));
    for (int64_t i = 0; i < std::min(r, c); ++i) p[i * c + i] = T(1);
  });
}

KernelRegistrar r1("full", DeviceType::CPU, OAR_ALL_DTYPES, full_kernel);
KernelRegistrar r1b("full_like", DeviceType::CPU, OAR_ALL_DTYPES, full_like_kernel);
KernelRegistrar r2("arange", DeviceType::CPU, OAR_ALL_DTYPES, arange_kernel);
KernelRegistrar r3("linspace", DeviceType::CPU, OAR_ALL_DTYPES, linspace_kernel);
KernelRegistrar r4("eye", DeviceType::CPU, OAR_ALL_DTYPES, eye_kernel);

}  // namespace
}  // namespace oar::cpu

// Kernels of the binary elementwise ops (definitions: ops/elementwise.cpp).
#include <cmath>
#include <limits>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/scalar_fns.h"

namespace oar::cpu {
namespace {

using namespace scalar;

// Integer division by zero would trap; it is a user error.
template <typename T> void check_nonzero(const Tensor& y, const char* api) {
  if constexpr (std::is_integral_v<T>) {
    Tensor yc = y;
    bool zero = false;
    Geometry<1> g({&yc});
    g.for_each_run(0, g.numel, [&](const std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) zero = zero || *reinterpret_cast<const T*>(p[0] + i * s[0]) == T(0);
    });
    OAR_CHECK(!zero, Value, "[", api, "] integer division by zero");
  }
}

#define OAR_BINARY_KERNEL(NAME, VISIT, DTYPES, OUT, EXPR)                                       \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {         \
    VISIT(in[0].dtype(), [&](auto tag) {                                                         \
      using T = decltype(tag);                                                                   \
      using C = compute_t<T>;                                                                    \
      using O = OUT;                                                                             \
      elementwise<O, T, T>(out[0], [](C a, C b) { return EXPR; }, in[0], in[1]);                 \
    });                                                                                          \
  }                                                                                              \
  KernelRegistrar NAME##_reg(#NAME, DeviceType::CPU, DTYPES, NAME##_kernel);

// The declared binary ops' kernels (ops/elementwise.toml); pow, floor_divide
// and remainder have their own below.
#include "gen/kernels/binary.inc"

void pow_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_numeric(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (std::is_same_v<C, bool>) {
      fail(ErrorKind::NotImplemented, "[oar.pow] does not support bool tensors");
    } else if constexpr (std::is_integral_v<C>) {
      elementwise<T, T, T>(out[0], [](C a, C b) { return int_pow<C>(a, b); }, in[0], in[1]);
    } else {
      elementwise<T, T, T>(out[0], [](C a, C b) { return C(std::pow(a, b)); }, in[0], in[1]);
    }
  });
}
KernelRegistrar pow_reg("pow", DeviceType::CPU, OAR_NUMERIC_DTYPES, pow_kernel);

void floor_divide_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    check_nonzero<T>(in[1], "oar.floor_divide");
    elementwise<T, T, T>(out[0], [](C a, C b) { return floor_div<C>(a, b); }, in[0], in[1]);
  });
}
KernelRegistrar floor_divide_reg("floor_divide", DeviceType::CPU, OAR_REAL_DTYPES, floor_divide_kernel);

void remainder_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    check_nonzero<T>(in[1], "oar.remainder");
    elementwise<T, T, T>(out[0], [](C a, C b) { return py_mod<C>(a, b); }, in[0], in[1]);
  });
}
KernelRegistrar remainder_reg("remainder", DeviceType::CPU, OAR_REAL_DTYPES, remainder_kernel);

void complex_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  if (in[0].dtype() == DType::Float64)
    elementwise<complex128, double, double>(out[0], [](double a, double b) { return complex128(a, b); }, in[0], in[1]);
  else
    elementwise<complex64, float, float>(out[0], [](float a, float b) { return complex64(a, b); }, in[0], in[1]);
}
KernelRegistrar complex_reg("complex", DeviceType::CPU, {DType::Float32, DType::Float64}, complex_kernel);

// where(cond, x, y); clip(x, lo, hi) with optional bounds.
// The choice is made on the bit patterns (a mask from the condition), so the
// loop has no branch to mispredict on a random condition and vectorises.
template <typename U> void where_bits(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& o) {
  elementwise<U, bool, U, U>(o, [](bool k, U a, U b) {
    U m = U(0) - U(k);
    return U((a & m) | (b & U(~m)));
  }, c, x, y);
}

void where_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  switch (in[1].itemsize()) {
    case 1: return where_bits<uint8_t>(in[0], in[1], in[2], out[0]);
    case 2: return where_bits<uint16_t>(in[0], in[1], in[2], out[0]);
    case 4: return where_bits<uint32_t>(in[0], in[1], in[2], out[0]);
    case 8: return where_bits<uint64_t>(in[0], in[1], in[2], out[0]);
    default: break;
  }
  visit_dtype(in[1].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    elementwise<T, bool, T, T>(out[0], [](bool c, C a, C b) { return c ? a : b; }, in[0], in[1], in[2]);
  });
}
KernelRegistrar where_reg("where", DeviceType::CPU, OAR_ALL_DTYPES, where_kernel);

void clip_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    C lo = in[1].defined() ? C(*in[1].data<T>()) : std::numeric_limits<C>::lowest();
    C hi = in[2].defined() ? C(*in[2].data<T>()) : std::numeric_limits<C>::max();
    elementwise<T, T>(out[0], [lo, hi](C a) { return a < lo ? lo : (a > hi ? hi : a); }, in[0]);
  });
}
KernelRegistrar clip_reg("clip", DeviceType::CPU, OAR_REAL_DTYPES, clip_kernel);

}  // namespace
}  // namespace oar::cpu

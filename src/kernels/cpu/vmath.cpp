// vmath: ISA selection, the portable fallback, and the threaded entry point.
#include "kernels/cpu/vmath.h"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"

namespace oar::cpu::vmath {
namespace {

template <typename S> struct Scalar {
  static S sigmoid(S x) { return S(1) / (S(1) + std::exp(-x)); }
  static S gelu(S x) { return S(0.5) * x * (S(1) + std::erf(x * S(0.70710678118654752440))); }
  static S gelu_tanh(S x) {
    return S(0.5) * x * (S(1) + std::tanh(S(0.79788456080286535588) * (x + S(0.044715) * x * x * x)));
  }
  static S apply(Fn fn, S x) {
    switch (fn) {
      case Fn::Exp: return std::exp(x);
      case Fn::Expm1: return std::expm1(x);
      case Fn::Log: return std::log(x);
      case Fn::Log1p: return std::log1p(x);
      case Fn::Sin: return std::sin(x);
      case Fn::Cos: return std::cos(x);
      case Fn::Tanh: return std::tanh(x);
      case Fn::Erf: return std::erf(x);
      case Fn::Sigmoid: return sigmoid(x);
      case Fn::Silu: return x * sigmoid(x);
      case Fn::Gelu: return gelu(x);
      case Fn::GeluTanh: return gelu_tanh(x);
      case Fn::GeluDeriv:
        return S(0.5) * (S(1) + std::erf(x * S(0.70710678118654752440))) +
               x * S(0.39894228040143267794) * std::exp(S(-0.5) * x * x);
      case Fn::GeluTanhDeriv: {
        S x2 = x * x, k = S(0.79788456080286535588), c = S(0.044715);
        S t = std::tanh(k * (x + c * x2 * x));
        return S(0.5) * (S(1) + t) + S(0.5) * x * (S(1) - t * t) * k * (S(1) + S(3) * c * x2);
      }
      default: return x;
    }
  }
  template <Fn F> static void run(const S* x, S* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = apply(F, x[i]);
  }
};

template <typename Fp, typename S, int... I>
void fill_portable(Fp* t, std::integer_sequence<int, I...>) {
  ((t[I] = &Scalar<S>::template run<Fn(I)>), ...);
}

#ifdef OAR_VMATH_PORTABLE_ONLY
bool cpu_has_avx512() { return false; }
bool cpu_has_avx2() { return false; }
#else
bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"); }
bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
#endif

// Blocks of reduced-precision data are widened to float, computed, narrowed.
template <typename T> void apply_narrow(Fn fn, const T* x, T* y, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float buf[kBlock];
  F32 f = table().f32[int(fn)];
  for (int64_t i = 0; i < n; i += kBlock) {
    int64_t m = std::min(kBlock, n - i);
    detail::widen_block(x + i, buf, m);
    f(buf, buf, m);
    detail::narrow_block(buf, y + i, m);
  }
}

}  // namespace

const Table& table_portable() {
  static const Table t = [] {
    Table r{};
    fill_portable<F32, float>(r.f32, std::make_integer_sequence<int, kNumFns>{});
    fill_portable<F64, double>(r.f64, std::make_integer_sequence<int, kNumFns>{});
    std::copy(std::begin(r.f32), std::end(r.f32), r.f32_stream);
    std::copy(std::begin(r.f64), std::end(r.f64), r.f64_stream);
    r.to_bf16 = [](const float* x, uint16_t* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = bfloat16::from_float(x[i]);
    };
    r.to_f16 = [](const float* x, uint16_t* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = float16::from_float(x[i]);
    };
    r.from_bf16 = [](const uint16_t* x, float* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = bits_f32(uint32_t(x[i]) << 16);
    };
    r.from_f16 = [](const uint16_t* x, float* y, int64_t n) {
      for (int64_t i = 0; i < n; ++i) y[i] = float16::to_float(x[i]);
    };
    r.copy_stream = [](const void* src, void* dst, int64_t bytes) { std::memcpy(dst, src, size_t(bytes)); };
    r.isa = "portable";
    return r;
  }();
  return t;
}

namespace {
const Table* best_table() {
#ifdef OAR_VMATH_PORTABLE_ONLY
  return &table_portable();
#else
  return cpu_has_avx512() ? &table_avx512() : cpu_has_avx2() ? &table_avx2() : &table_portable();
#endif
}
std::atomic<const Table*> g_table{nullptr};
}  // namespace

const Table& table() {
  const Table* t = g_table.load(std::memory_order_acquire);
  if (!t) {
    t = best_table();
    g_table.store(t, std::memory_order_release);
  }
  return *t;
}

bool select_isa(const char* isa) {
  std::string_view name(isa);
  const Table* t = nullptr;
  if (name == "best") t = best_table();
  else if (name == "portable") t = &table_portable();
#ifndef OAR_VMATH_PORTABLE_ONLY
  else if (name == "avx2" && cpu_has_avx2()) t = &table_avx2();
  else if (name == "avx512" && cpu_has_avx512()) t = &table_avx512();
#endif
  if (!t) return false;
  g_table.store(t, std::memory_order_release);
  return true;
}

int64_t stream_threshold() {
  static const int64_t bytes = [] {
    const char* e = std::getenv("OAR_STREAM_BYTES");
    return e ? std::atoll(e) : int64_t(8) << 20;
  }();
  return bytes;
}

bool apply(Fn fn, const Tensor& x, Tensor& y) {
  if (!x.is_contiguous() || !y.is_contiguous() || x.numel() != y.numel() || x.dtype() != y.dtype()) return false;
  const int64_t n = x.numel();
  switch (x.dtype()) {
    case DType::Float32: {
      const float* xp = x.data<float>();
      float* yp = y.data<float>();
      F32 f = (n * 4 >= stream_threshold() ? table().f32_stream : table().f32)[int(fn)];
      parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) { f(xp + b, yp + b, e - b); });
      return true;
    }
    case DType::Float64: {
      const double* xp = x.data<double>();
      double* yp = y.data<double>();
      F64 f = (n * 8 >= stream_threshold() ? table().f64_stream : table().f64)[int(fn)];
      parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) { f(xp + b, yp + b, e - b); });
      return true;
    }
    case DType::Float16:
    case DType::BFloat16:
      visit_float(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
          const T* xp = x.data<T>();
          T* yp = y.data<T>();
          parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) { apply_narrow(fn, xp + b, yp + b, e - b); });
        }
      });
      return true;
    default:
      return false;
  }
}

}  // namespace oar::cpu::vmath

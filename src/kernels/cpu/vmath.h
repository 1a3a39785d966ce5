// Vectorised math over contiguous arrays. The instruction set (AVX-512, AVX2
// or portable code) is picked once at run time; the vector bodies come from
// SLEEF. Elementwise kernels take this path when their operands are dense and
// fall back to the scalar iterator (loops.h) otherwise.
#pragma once
#include <cstdint>


namespace oar {
class Tensor;
}

// Only <cstdint> here: this header is included by the per-ISA files.
namespace oar::cpu::vmath {

// GeluDeriv/GeluTanhDeriv: the derivatives of the two gelu forms.
enum class Fn : int {
  Exp, Expm1, Log, Log1p, Sin, Cos, Tanh, Erf, Sigmoid, Silu, Gelu, GeluTanh, GeluDeriv, GeluTanhDeriv, kCount
};
constexpr int kNumFns = int(Fn::kCount);

using F32 = void (*)(const float* x, float* y, int64_t n);
using F64 = void (*)(const double* x, double* y, int64_t n);
// Conversions between float and the 16-bit float formats (raw bits),
// rounding to nearest even; NaN stays NaN.
using Narrow = void (*)(const float* x, uint16_t* y, int64_t n);
using Widen = void (*)(const uint16_t* x, float* y, int64_t n);
struct Table {
  F32 f32[kNumFns];
  F64 f64[kNumFns];
  // The same with streaming (cache-bypassing) stores, for outputs much larger
  // than the caches.
  F32 f32_stream[kNumFns];
  F64 f64_stream[kNumFns];
  Narrow to_bf16, to_f16;
  Widen from_bf16, from_f16;
  // Copies `bytes` from src to dst (not overlapping) with streaming stores.
  void (*copy_stream)(const void* src, void* dst, int64_t bytes);
  const char* isa;
};

// Outputs of at least this many bytes are written with streaming stores
// (f32_stream, copy_stream): they cannot stay in the per-core caches anyway,
// and skipping the read-for-ownership of each output line saves a third of
// the memory traffic of a unary op and a quarter of a binary one.
int64_t stream_threshold();

// The table in use: the best for this CPU unless select_isa chose another.
const Table& table();
// Uses the named table ("avx512", "avx2", "portable" or "best"); returns false
// if this CPU cannot run it. For tests and benchmarks of each code path.
bool select_isa(const char* name);

// Per-ISA tables, defined in vmath_<isa>.cpp; each is compiled with its own
// target flags and must only be called when the CPU supports it.
const Table& table_avx512();
const Table& table_avx2();
const Table& table_portable();

// y = fn(x) elementwise, threaded; x and y dense with equal shapes (they may
// alias). Returns false, doing nothing, when the operands are not dense or the
// dtype is not float16/bfloat16/float32/float64, so the caller falls back.
bool apply(Fn fn, const Tensor& x, Tensor& y);

// In-place on a raw float buffer on the calling thread (for fused kernels).
inline void apply_f32(Fn fn, const float* x, float* y, int64_t n) { table().f32[int(fn)](x, y, n); }
inline void apply_f64(Fn fn, const double* x, double* y, int64_t n) { table().f64[int(fn)](x, y, n); }

}  // namespace oar::cpu::vmath

// CUDA kernels of the random ops (ops/random.cpp): uniform, gaussian,
// randint, bernoulli, multinomial, randperm.
//
// Note [CUDA random numbers]
// The device runs the CPU's generator (kernels/cpu/random.cpp): Philox-4x32-10,
// block b of a stream is philox(counter = b, key = seed), and an op starting
// at word `offset` (both attrs, from the one generator of ops/random.cpp)
// gives element i the words [offset + i * wpe, offset + (i + 1) * wpe). Each
// thread computes whole Philox blocks, and every value is made from its
// words by the CPU's formula, so a seed gives the same numbers on both
// devices:
// - uniform, randint, bernoulli, randperm and multinomial with replacement
//   bit for bit (integer and exactly rounded arithmetic only; the few
//   double operations are written as _rn intrinsics so that nvcc does not
//   contract them into fused multiply-adds, which the CPU build never uses);
// - gaussian and multinomial without replacement up to the rounding of the
//   device's log, cos and sqrt (a few units in the last place of each value;
//   multinomial's order could differ only between two categories whose
//   keys tie within that rounding).
// bernoulli and multinomial check their probabilities as the CPU does, with
// one value read back (a synchronisation) to raise the CPU's error.
#include <cub/device/device_radix_sort.cuh>

#include <cmath>
#include <limits>
#include <utility>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/philox.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/ops.h"
#include "tensor/autograd_meta.h"

namespace oar::cuda {
namespace {

using Words = random::PhiloxBlock;
using random::philox;
using random::unit;
using random::unit53;

// Calls f(i, words) for i in [0, n), words pointing at WPE 32-bit words;
// one thread per Philox block.
template <int WPE, typename F> __global__ void draw_kernel(F f, int64_t n, uint64_t seed, uint64_t base) {
  constexpr int64_t kPer = 4 / WPE;
  const int64_t blocks = (n + kPer - 1) / kPer;
  OAR_GRID_LOOP(blk, blocks) {
    const Words r = philox(base + uint64_t(blk), seed);
#pragma unroll
    for (int64_t k = 0; k < kPer; ++k) {
      const int64_t i = blk * kPer + k;
      if (i < n) f(i, r.w + k * WPE);
    }
  }
}

template <int WPE, typename F> void for_each_draw(F f, int64_t n, const Attrs& a, size_t seed_attr, const char* api) {
  static_assert(WPE == 1 || WPE == 2 || WPE == 4);
  if (n == 0) return;
  const uint64_t seed = uint64_t(a.i(seed_attr)), base = uint64_t(a.i(seed_attr + 1)) / 4;
  const int64_t blocks = (n + 4 / WPE - 1) / (4 / WPE);
  draw_kernel<WPE><<<blocks_for(blocks), kThreads, 0, cudaStreamLegacy>>>(f, n, seed, base);
  cuda_check(cudaGetLastError(), api, "kernel launch");
}


// d rounded to T and back, as the CPU's T(d): the 16-bit floats through float.
template <typename T> __device__ __forceinline__ value_t<T> round_to(double d) {
  if constexpr (std::is_same_v<T, double>) return d;
  else if constexpr (std::is_same_v<T, float16>) return __half2float(__float2half_rn(float(d)));
  else if constexpr (std::is_same_v<T, bfloat16>) return __bfloat162float(__float2bfloat16_rn(float(d)));
  else return float(d);
}

Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  NoGradGuard ng;
  return ops::contiguous(t);
}

// ------------------------------------------------------------------ uniform

template <typename T> struct UniformFn {
  T* p;
  double lo, hi;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    value_t<T> v = round_to<T>(__dadd_rn(lo, __dmul_rn(unit<T>(w), __dsub_rn(hi, lo))));
    // Rounding in T can reach `hi`; keep the interval half-open.
    if (double(v) >= hi && hi > lo) v = round_to<T>(lo);
    put(p, i, v);
  }
};

void uniform_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  DeviceGuard guard(out[0].device().index);
  cpu::visit_float(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    UniformFn<T> f{out[0].data<T>(), a.f(2), a.f(3)};
    if constexpr (std::is_same_v<T, double>) for_each_draw<2>(f, out[0].numel(), a, 4, "oar.uniform");
    else for_each_draw<1>(f, out[0].numel(), a, 4, "oar.uniform");
  });
}

// ----------------------------------------------------------------- gaussian

// Box-Muller, the cosine branch only (the CPU's formula and order of operations).
struct GaussianF64 {
  double* p;
  double mean, sd;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    constexpr double kTwoPi = 6.283185307179586;
    const double u1 = __dsub_rn(1.0, unit53(w)), u2 = unit53(w + 2);
    const double r = sqrt(__dmul_rn(-2.0, log(u1)));
    p[i] = __dadd_rn(mean, __dmul_rn(__dmul_rn(sd, r), cos(__dmul_rn(kTwoPi, u2))));
  }
};

template <typename T> struct GaussianF32 {
  T* p;
  float mean, sd;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    constexpr float kTwoPi = float(6.283185307179586);
    const float r = __fsub_rn(1.0f, __fmul_rn(float(w[0] >> 8), 0x1.0p-24f));  // (0, 1]
    const float c = __fmul_rn(kTwoPi, __fmul_rn(float(w[1] >> 8), 0x1.0p-24f));
    const float s = sqrtf(__fmul_rn(-2.0f, logf(r)));
    put(p, i, __fadd_rn(mean, __fmul_rn(__fmul_rn(sd, s), cosf(c))));
  }
};

void gaussian_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  DeviceGuard guard(out[0].device().index);
  const int64_t n = out[0].numel();
  cpu::visit_float(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double>)
      for_each_draw<4>(GaussianF64{out[0].data<double>(), a.f(2), a.f(3)}, n, a, 4, "oar.normal");
    else
      for_each_draw<2>(GaussianF32<T>{out[0].data<T>(), float(a.f(2)), float(a.f(3))}, n, a, 4, "oar.normal");
  });
}

// ------------------------------------------------------------------ randint

template <typename T> struct RandintFn {
  T* p;
  int64_t lo;
  uint64_t range;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    const uint64_t x = (uint64_t(w[0]) << 32) | w[1];
    // Multiply-shift maps 64 random bits onto [0, range); bias <= range / 2^64.
    p[i] = T(int64_t(uint64_t(lo) + __umul64hi(x, range)));
  }
};

void randint_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  DeviceGuard guard(out[0].device().index);
  const int64_t lo = a.i(2), n = out[0].numel();
  const uint64_t range = uint64_t(a.i(3)) - uint64_t(lo);
  if (out[0].dtype() == DType::Int32)
    for_each_draw<2>(RandintFn<int32_t>{out[0].data<int32_t>(), lo, range}, n, a, 4, "oar.randint");
  else
    for_each_draw<2>(RandintFn<int64_t>{out[0].data<int64_t>(), lo, range}, n, a, 4, "oar.randint");
}

// ---------------------------------------------------------------- bernoulli

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();

// The least flat index where p is not in [0, 1] (NaN included), into *first.
template <typename T> __global__ void bernoulli_check_kernel(const T* x, int64_t n, unsigned long long* first) {
  OAR_GRID_LOOP(i, n) {
    const double v = double(get(x, i));
    if (!(v >= 0.0 && v <= 1.0)) atomicMin(first, (unsigned long long)i);
  }
}

template <typename T> struct BernoulliFn {
  const T* x;
  T* p;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    put(p, i, unit<T>(w) < double(get(x, i)) ? value_t<T>(1) : value_t<T>(0));
  }
};

// One value of a device tensor, as the host's double.
template <typename T> double read_back(const T* p, int64_t i, const char* api) {
  T v;
  cuda_check(cudaMemcpy(&v, p + i, sizeof(T), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
  return double(compute_t<T>(v));
}

unsigned long long* reset_flag(const Tensor& flag, const char* api) {
  cuda_check(cudaMemsetAsync(flag.raw_data(), 0xff, sizeof(unsigned long long), cudaStreamLegacy), api,
             "cudaMemsetAsync");
  return static_cast<unsigned long long*>(flag.raw_data());
}
unsigned long long read_flag(const Tensor& flag, const char* api) {
  unsigned long long h = 0;
  cuda_check(cudaMemcpy(&h, flag.raw_data(), sizeof(h), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
  return h;
}

void bernoulli_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]);
  const int64_t n = x.numel();
  if (n == 0) return;
  constexpr const char* api = "oar.bernoulli";
  DeviceGuard guard(x.device().index);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor flag = empty_tensor(Dims{}, DType::Int64, x.device());
    bernoulli_check_kernel<T><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(x.data<T>(), n, reset_flag(flag, api));
    cuda_check(cudaGetLastError(), api, "kernel launch");
    const unsigned long long bad = read_flag(flag, api);
    if (bad != kNone)
      fail(ErrorKind::Value, "[oar.bernoulli] probabilities must be in [0, 1], got ", read_back(x.data<T>(), int64_t(bad), api),
           " at flat index ", int64_t(bad));
    BernoulliFn<T> f{x.data<T>(), out[0].data<T>()};
    if constexpr (std::is_same_v<T, double>) for_each_draw<2>(f, n, a, 0, api);
    else for_each_draw<1>(f, n, a, 0, api);
  });
}

// ----------------------------------------------------------------- sorting

// Stable sort of (key, value) pairs by the key's bits [0, end_bit).
void sort_pairs(const uint64_t* keys_in, uint64_t* keys_out, const int64_t* vals_in, int64_t* vals_out, int64_t n,
                int end_bit, Device dev, const char* api) {
  size_t bytes = 0;
  cuda_check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit,
                                             cudaStreamLegacy),
             api, "cub::DeviceRadixSort::SortPairs");
  Tensor temp = empty_tensor(Dims{int64_t(bytes) + 1}, DType::UInt8, dev);
  cuda_check(cub::DeviceRadixSort::SortPairs(temp.raw_data(), bytes, keys_in, keys_out, vals_in, vals_out, n, 0,
                                             end_bit, cudaStreamLegacy),
             api, "cub::DeviceRadixSort::SortPairs");
}

int bits_for(uint64_t max_value) {
  int b = 1;
  while (b < 64 && (max_value >> b) != 0) ++b;
  return b;
}

// -------------------------------------------------------------- multinomial

// Draw d of the op: words [4 * base + 2d, 4 * base + 2d + 2), as the CPU.
__device__ __forceinline__ double draw(int64_t d, uint64_t seed, uint64_t base) {
  const Words b = philox(base + uint64_t(d / 2), seed);
  return unit53(b.w + (d % 2) * 2);
}

// One thread per row, in the CPU's order: the checks (code 1: a value not
// finite or negative, at info; 2: a zero sum; 3: fewer non-zero entries
// than samples, info of them), the running sums (with replacement) and the
// last category of non-zero probability.
template <typename T>
__global__ void multinomial_rows_kernel(const T* x, int64_t rows, int64_t cats, int64_t ns, bool repl, double* acc,
                                        int64_t* last, int64_t* status, unsigned long long* first_bad) {
  OAR_GRID_LOOP(r, rows) {
    double total = 0;
    int64_t nonzero = 0, bad = -1, lastpos = -1;
    for (int64_t j = 0; j < cats; ++j) {
      const double v = double(get(x, r * cats + j));
      if (bad < 0 && !(isfinite(v) && v >= 0)) bad = j;
      total += v;
      if (repl) acc[r * cats + j] = total;
      nonzero += v > 0;
      if (v > 0) lastpos = j;
    }
    const int64_t code = bad >= 0 ? 1 : !(total > 0) ? 2 : (!repl && nonzero < ns) ? 3 : 0;
    status[2 * r] = code;
    status[2 * r + 1] = code == 1 ? bad : nonzero;
    last[r] = lastpos;
    if (code) atomicMin(first_bad, (unsigned long long)r);
  }
}

// With replacement: inverse-CDF sampling, the first category whose running
// sum exceeds u * total (upper_bound), never past the last non-zero one.
__global__ void multinomial_repl_kernel(const double* acc, const int64_t* last, int64_t rows, int64_t cats,
                                        int64_t ns, uint64_t seed, uint64_t base, int64_t* out) {
  OAR_GRID_LOOP(e, rows * ns) {
    const int64_t r = e / ns;
    const double* row = acc + r * cats;
    const double t = draw(e, seed, base) * row[cats - 1];
    int64_t lo = 0, hi = cats;  // first index with row[j] > t
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (row[mid] > t) hi = mid;
      else lo = mid + 1;
    }
    out[e] = lo < last[r] ? lo : last[r];
  }
}

// Without replacement: the exponential race, key E_j / w_j per category as
// sortable bits (non-negative doubles order as their bit patterns), and its
// flat index as the value.
template <typename T>
__global__ void multinomial_keys_kernel(const T* x, int64_t n, uint64_t seed, uint64_t base, uint64_t* keys,
                                        int64_t* vals) {
  OAR_GRID_LOOP(e, n) {
    const double w = double(get(x, e));
    const double ex = -log(__dsub_rn(1.0, draw(e, seed, base)));
    double key = w > 0 ? __ddiv_rn(ex, w) : INFINITY;
    if (key == 0.0) key = 0.0;  // -0.0 (a draw of exactly 0) sorts as +0.0, as the CPU compares
    keys[e] = uint64_t(__double_as_longlong(key));
    vals[e] = e;
  }
}

__global__ void row_of_kernel(const int64_t* vals, int64_t n, int64_t cats, uint64_t* rows) {
  OAR_GRID_LOOP(e, n) rows[e] = uint64_t(vals[e] / cats);
}

__global__ void multinomial_take_kernel(const int64_t* sorted, int64_t rows, int64_t cats, int64_t ns, int64_t* out) {
  OAR_GRID_LOOP(e, rows * ns) {
    const int64_t r = e / ns, s = e % ns;
    out[e] = sorted[r * cats + s] - r * cats;
  }
}

void multinomial_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  constexpr const char* api = "oar.multinomial";
  const Tensor x = dense(in[0]);
  const int64_t cats = x.shape()[size_t(x.dim() - 1)], rows = x.dim() == 2 ? x.shape()[0] : 1;
  const int64_t ns = a.i(0);
  const bool repl = a.b(1);
  const uint64_t seed = uint64_t(a.i(2)), base = uint64_t(a.i(3)) / 4;
  if (rows == 0) return;
  const Device dev = x.device();
  DeviceGuard guard(dev.index);
  int64_t* o = out[0].data<int64_t>();
  const int64_t n = rows * cats;
  Tensor acc = repl ? empty_tensor(Dims{n}, DType::Float64, dev) : Tensor();
  Tensor last = empty_tensor(Dims{rows}, DType::Int64, dev), status = empty_tensor(Dims{2 * rows}, DType::Int64, dev);
  Tensor flag = empty_tensor(Dims{}, DType::Int64, dev);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    multinomial_rows_kernel<T><<<blocks_for(rows), kThreads, 0, cudaStreamLegacy>>>(
        x.data<T>(), rows, cats, ns, repl, repl ? acc.data<double>() : nullptr, last.data<int64_t>(),
        status.data<int64_t>(), reset_flag(flag, api));
    cuda_check(cudaGetLastError(), api, "kernel launch");
    const unsigned long long bad = read_flag(flag, api);
    if (bad != kNone) {
      const int64_t r = int64_t(bad);
      int64_t st[2];
      cuda_check(cudaMemcpy(st, status.data<int64_t>() + 2 * r, sizeof(st), cudaMemcpyDeviceToHost), api,
                 "cudaMemcpy");
      if (st[0] == 1)
        fail(ErrorKind::Value, "[oar.multinomial] probabilities must be finite and non-negative, got ",
             read_back(x.data<T>(), r * cats + st[1], api));
      if (st[0] == 2) fail(ErrorKind::Value, "[oar.multinomial] the probabilities of row ", r, " sum to zero");
      fail(ErrorKind::Value, "[oar.multinomial] row ", r, " has ", st[1],
           " non-zero probabilities, fewer than num_samples (", ns, ") without replacement");
    }
    if (repl) {
      multinomial_repl_kernel<<<blocks_for(rows * ns), kThreads, 0, cudaStreamLegacy>>>(
          acc.data<double>(), last.data<int64_t>(), rows, cats, ns, seed, base, o);
      cuda_check(cudaGetLastError(), api, "kernel launch");
      return;
    }
    // Sorted by key, then (stably) by row: each row's categories in key
    // order, ties by category, as the CPU's partial sort.
    Tensor keys = empty_tensor(Dims{n}, DType::Int64, dev), keys2 = empty_tensor(Dims{n}, DType::Int64, dev);
    Tensor vals = empty_tensor(Dims{n}, DType::Int64, dev), vals2 = empty_tensor(Dims{n}, DType::Int64, dev);
    auto* k1 = static_cast<uint64_t*>(keys.raw_data());
    auto* k2 = static_cast<uint64_t*>(keys2.raw_data());
    multinomial_keys_kernel<T><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(x.data<T>(), n, seed, base, k1,
                                                                                 vals.data<int64_t>());
    cuda_check(cudaGetLastError(), api, "kernel launch");
    sort_pairs(k1, k2, vals.data<int64_t>(), vals2.data<int64_t>(), n, 64, dev, api);
    if (rows > 1) {
      row_of_kernel<<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(vals2.data<int64_t>(), n, cats, k1);
      cuda_check(cudaGetLastError(), api, "kernel launch");
      sort_pairs(k1, k2, vals2.data<int64_t>(), vals.data<int64_t>(), n, bits_for(uint64_t(rows - 1)), dev, api);
      std::swap(vals, vals2);
    }
    multinomial_take_kernel<<<blocks_for(rows * ns), kThreads, 0, cudaStreamLegacy>>>(vals2.data<int64_t>(), rows,
                                                                                      cats, ns, o);
    cuda_check(cudaGetLastError(), api, "kernel launch");
  });
}

// ----------------------------------------------------------------- randperm

// A random 64-bit key per position (two words), then the positions sorted by
// key, ties by position (the radix sort is stable).
struct PermKeyFn {
  uint64_t* keys;
  int64_t* vals;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    keys[i] = (uint64_t(w[0]) << 32) | w[1];
    vals[i] = i;
  }
};

template <typename T> __global__ void perm_store_kernel(const int64_t* idx, T* p, int64_t n) {
  OAR_GRID_LOOP(i, n) put(p, i, value_t<T>(idx[i]));
}

void randperm_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  constexpr const char* api = "oar.randperm";
  const int64_t n = a.i(0);
  if (n == 0) return;
  const Device dev = out[0].device();
  DeviceGuard guard(dev.index);
  Tensor keys = empty_tensor(Dims{n}, DType::Int64, dev), keys2 = empty_tensor(Dims{n}, DType::Int64, dev);
  Tensor vals = empty_tensor(Dims{n}, DType::Int64, dev), vals2 = empty_tensor(Dims{n}, DType::Int64, dev);
  auto* k1 = static_cast<uint64_t*>(keys.raw_data());
  auto* k2 = static_cast<uint64_t*>(keys2.raw_data());
  for_each_draw<2>(PermKeyFn{k1, vals.data<int64_t>()}, n, a, 2, api);
  sort_pairs(k1, k2, vals.data<int64_t>(), vals2.data<int64_t>(), n, 64, dev, api);
  cpu::visit_real(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    perm_store_kernel<T><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(vals2.data<int64_t>(), out[0].data<T>(), n);
  });
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

const bool uniform_reg = register_real("uniform", uniform_kernel, OAR_FLOAT_DTYPES);
const bool gaussian_reg = register_real("gaussian", gaussian_kernel, OAR_FLOAT_DTYPES);
const bool randint_reg = register_real("randint", randint_kernel, {DType::Int32, DType::Int64});
const bool bernoulli_reg = register_real("bernoulli", bernoulli_kernel, OAR_FLOAT_DTYPES);
const bool multinomial_reg = register_real("multinomial", multinomial_kernel, OAR_FLOAT_DTYPES);
const bool randperm_reg = register_real("randperm", randperm_kernel,
                                        {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,
                                         DType::Float16, DType::BFloat16, DType::Float32, DType::Float64});

}  // namespace
}  // namespace oar::cuda

// Kernels of the random ops (definitions: ops/random.cpp), on Philox-4x32-10
// (kernels/cpu/philox.h): block b of a stream is philox(counter = b, key =
// seed), four 32-bit words.
// An op starting at word `offset` gives element i the words
// [offset + i * wpe, offset + (i + 1) * wpe) (wpe = words per element), so
// values do not depend on how the elements are split among threads.
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/philox.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

using Block = random::PhiloxBlock;
using random::philox;
using random::unit;
using random::unit53;

// Calls f(i, words) for i in [0, n), words pointing at WPE 32-bit words.
template <int WPE, typename F> void for_each_draw(int64_t n, const Attrs& a, size_t seed_attr, F&& f) {
  static_assert(WPE == 1 || WPE == 2 || WPE == 4);
  constexpr int64_t kPer = 4 / WPE;
  uint64_t seed = uint64_t(a.i(seed_attr)), base = uint64_t(a.i(seed_attr + 1)) / 4;
  int64_t blocks = (n + kPer - 1) / kPer;
  parallel_for(blocks, 2048, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      Block r = philox(base + uint64_t(blk), seed);
      for (int64_t k = 0; k < kPer; ++k) {
        int64_t i = blk * kPer + k;
        if (i < n) f(i, r.data() + k * WPE);
      }
    }
  });
}


void uniform_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  double lo = a.f(2), hi = a.f(3);
  visit_float(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    auto f = [&](int64_t i, const uint32_t* w) {
      T v = T(lo + unit<T>(w) * (hi - lo));
      // Rounding in T can reach `hi`; keep the interval half-open.
      if (double(compute_t<T>(v)) >= hi && hi > lo) v = T(lo);
      p[i] = v;
    };
    if constexpr (std::is_same_v<T, double>) for_each_draw<2>(out[0].numel(), a, 4, f);
    else for_each_draw<1>(out[0].numel(), a, 4, f);
  });
}

// Box-Muller, keeping the cosine branch only so each element owns its words
// (and the result does not depend on how elements split across threads).
void gaussian_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  double mean = a.f(2), sd = a.f(3);
  constexpr double kTwoPi = 2 * std::numbers::pi;
  visit_float(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    if constexpr (std::is_same_v<T, double>) {
      for_each_draw<4>(out[0].numel(), a, 4, [&](int64_t i, const uint32_t* w) {
        double u1 = 1.0 - unit53(w), u2 = unit53(w + 2);
        p[i] = mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
      });
    } else {
      // Draw into float scratch, then log and cos over dense blocks (vmath).
      const int64_t n = out[0].numel();
      std::vector<float> r(static_cast<size_t>(n)), c(static_cast<size_t>(n));
      for_each_draw<2>(n, a, 4, [&](int64_t i, const uint32_t* w) {
        r[i] = 1.0f - float(w[0] >> 8) * 0x1.0p-24f;  // (0, 1]
        c[i] = float(kTwoPi) * (float(w[1] >> 8) * 0x1.0p-24f);
      });
      parallel_for(n, 4096, [&](int64_t b, int64_t e) {
        vmath::apply_f32(vmath::Fn::Log, r.data() + b, r.data() + b, e - b);
        vmath::apply_f32(vmath::Fn::Cos, c.data() + b, c.data() + b, e - b);
        const float m = float(mean), s = float(sd);
        for (int64_t i = b; i < e; ++i) p[i] = T(m + s * std::sqrt(-2.0f * r[i]) * c[i]);
      });
    }
  });
}

void randint_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  int64_t lo = a.i(2);
  uint64_t range = uint64_t(a.i(3)) - uint64_t(lo);
  auto run = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for_each_draw<2>(out[0].numel(), a, 4, [&](int64_t i, const uint32_t* w) {
      uint64_t x = (uint64_t(w[0]) << 32) | w[1];
      // Multiply-shift maps 64 random bits onto [0, range); bias <= range / 2^64.
      uint64_t k = uint64_t((unsigned __int128)x * range >> 64);
      p[i] = T(int64_t(uint64_t(lo) + k));
    });
  };
  if (out[0].dtype() == DType::Int32) run(out[0].data<int32_t>());
  else run(out[0].data<int64_t>());
}

void bernoulli_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in[0].data<T>();  // contiguous (ops::bernoulli)
    int64_t n = in[0].numel();
    for (int64_t i = 0; i < n; ++i) {
      double v = double(compute_t<T>(x[i]));
      OAR_CHECK(v >= 0.0 && v <= 1.0, Value, "[oar.bernoulli] probabilities must be in [0, 1], got ", v,
                " at flat index ", i);
    }
    T* p = out[0].data<T>();
    auto f = [&](int64_t i, const uint32_t* w) { p[i] = T(unit<T>(w) < double(compute_t<T>(x[i])) ? 1 : 0); };
    if constexpr (std::is_same_v<T, double>) for_each_draw<2>(n, a, 0, f);
    else for_each_draw<1>(n, a, 0, f);
  });
}

// Per row: with replacement, inverse-CDF sampling; without, the exponential
// race (the categories sorted by E_j / w_j, E_j ~ Exp(1), come out in the
// order sequential sampling without replacement would draw them).
void multinomial_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t cats = x.shape()[x.dim() - 1], rows = x.dim() == 2 ? x.shape()[0] : 1;
  int64_t ns = a.i(0);
  bool repl = a.b(1);
  std::vector<double> w(static_cast<size_t>(rows * cats));
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();  // contiguous (ops::multinomial)
    for (int64_t i = 0; i < rows * cats; ++i) w[size_t(i)] = double(compute_t<T>(p[i]));
  });
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t j = 0; j < cats; ++j) {
      double v = w[size_t(r * cats + j)];
      OAR_CHECK(std::isfinite(v) && v >= 0, Value,
                "[oar.multinomial] probabilities must be finite and non-negative, got ", v);
      total += v;
      nonzero += v > 0;
    }
    OAR_CHECK(total > 0, Value, "[oar.multinomial] the probabilities of row ", r, " sum to zero");
    OAR_CHECK(repl || nonzero >= ns, Value, "[oar.multinomial] row ", r, " has ", nonzero,
              " non-zero probabilities, fewer than num_samples (", ns, ") without replacement");
  }
  int64_t* o = out[0].data<int64_t>();
  uint64_t seed = uint64_t(a.i(2)), base = uint64_t(a.i(3)) / 4;
  // Draw d of the op uses words [4 * base + 2d, 4 * base + 2d + 2).
  auto draw = [&](int64_t d) {
    Block b = philox(base + uint64_t(d / 2), seed);
    return unit53(b.data() + (d % 2) * 2);
  };
  parallel_for(rows, std::max<int64_t>(1, 4096 / std::max(cats, ns)), [&](int64_t rb, int64_t re) {
    std::vector<double> acc(static_cast<size_t>(cats));
    std::vector<int64_t> idx(static_cast<size_t>(cats));
    for (int64_t r = rb; r < re; ++r) {
      const double* wr = w.data() + r * cats;
      if (repl) {
        std::partial_sum(wr, wr + cats, acc.begin());
        int64_t last = cats - 1;
        while (wr[last] <= 0) --last;
        for (int64_t s = 0; s < ns; ++s) {
          double t = draw(r * ns + s) * acc[size_t(cats - 1)];
          int64_t j = std::upper_bound(acc.begin(), acc.end(), t) - acc.begin();
          o[r * ns + s] = std::min(j, last);
        }
      } else {
        for (int64_t j = 0; j < cats; ++j) {
          double e = -std::log(1.0 - draw(r * cats + j));
          acc[size_t(j)] = wr[j] > 0 ? e / wr[j] : INFINITY;
        }
        std::iota(idx.begin(), idx.end(), int64_t(0));
        std::partial_sort(idx.begin(), idx.begin() + ns, idx.end(), [&](int64_t p, int64_t q) {
          return acc[size_t(p)] < acc[size_t(q)] || (acc[size_t(p)] == acc[size_t(q)] && p < q);
        });
        for (int64_t s = 0; s < ns; ++s) o[r * ns + s] = idx[size_t(s)];
      }
    }
  });
}

// A random 64-bit key per position, then the positions sorted by key.
void randperm_kernel(std::span<const Tensor>, std::span<Tensor> out, const Attrs& a) {
  int64_t n = a.i(0);
  std::vector<uint64_t> key(static_cast<size_t>(n));
  for_each_draw<2>(n, a, 2, [&](int64_t i, const uint32_t* w) { key[size_t(i)] = (uint64_t(w[0]) << 32) | w[1]; });
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), int64_t(0));
  std::sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
    return key[size_t(p)] < key[size_t(q)] || (key[size_t(p)] == key[size_t(q)] && p < q);
  });
  visit_real(out[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = out[0].data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = T(compute_t<T>(idx[size_t(i)]));
  });
}

KernelRegistrar r1("uniform", DeviceType::CPU, OAR_FLOAT_DTYPES, uniform_kernel);
KernelRegistrar r2("gaussian", DeviceType::CPU, OAR_FLOAT_DTYPES, gaussian_kernel);
KernelRegistrar r3("randint", DeviceType::CPU, {DType::Int32, DType::Int64}, randint_kernel);
KernelRegistrar r4("bernoulli", DeviceType::CPU, OAR_FLOAT_DTYPES, bernoulli_kernel);
KernelRegistrar r5("multinomial", DeviceType::CPU, OAR_FLOAT_DTYPES, multinomial_kernel);
KernelRegistrar r6("randperm", DeviceType::CPU,
                   {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Float16,
                    DType::BFloat16, DType::Float32, DType::Float64},
                   randperm_kernel);

}  // namespace
}  // namespace oar::cpu

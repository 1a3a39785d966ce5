// CUDA kernels of the pooling ops (ops/pool.cpp): max_pool (with its int32
// mask of flat indices into each (N, C) plane), avg_pool, and the gradients
// avg_pool_grad, max_pool_grad and max_pool_gather. Direct kernels rather
// than cuDNN's pooling, which lacks Paddle's options (ceil_mode windows,
// exclusive counts, adaptive windows, the mask).
//
// Note [CUDA pooling]
// Windows, divisors and tie rules are those of kernels/cpu/pool.cpp: fixed
// windows are clipped to the input, adaptive ones are
// [floor(a*I/O), ceil((a+1)*I/O)). A max window is read in order (dim 0,
// then 1, then 2) and an element replaces the best so far when it is larger,
// or a NaN over a number: the first maximum wins, and the first NaN. An
// empty window gives 0 and mask -1. One thread computes one output (the
// forwards, max_pool_gather) or one input element (avg_pool_grad, in gather
// form over the outputs whose windows hold it, in the CPU's order of
// outputs), so these match the CPU bit for bit. max_pool_grad knows only
// the mask, not the windows: it scatters with atomic adds (in float for the
// 16-bit floats, then rounded once, as the CPU accumulates), so where
// windows overlap the sums may differ from the CPU's in the last bits.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/ops.h"
#include "tensor/autograd_meta.h"

namespace oar::cuda {
namespace {

// Geometry padded to three spatial dims (leading size-1 dims), as the CPU's PoolGeo.
struct PoolGeo {
  int64_t planes;
  int64_t i[3], o[3], k[3], s[3], p[3];
  bool adaptive, exclusive;

  __device__ int64_t isz() const { return i[0] * i[1] * i[2]; }
  __device__ int64_t osz() const { return o[0] * o[1] * o[2]; }
  __device__ void window(int j, int64_t a, int64_t& st, int64_t& en) const {
    if (adaptive) {
      st = a * i[j] / o[j];
      en = ((a + 1) * i[j] + o[j] - 1) / o[j];
    } else {
      st = a * s[j] - p[j];
      en = st + k[j] < i[j] ? st + k[j] : i[j];
      st = st > 0 ? st : 0;
    }
  }
  __device__ double divisor(const int64_t* st, const int64_t* en) const {
    if (adaptive || exclusive) {
      int64_t n = 1;
      for (int j = 0; j < 3; ++j) n *= en[j] > st[j] ? en[j] - st[j] : 0;
      return double(n);
    }
    return double(k[0] * k[1] * k[2]);
  }
  // The outputs along dim j whose windows may hold input index x: a range
  // one wider on each side than the exact one, checked against window().
  __device__ void covering(int j, int64_t x, int64_t& lo, int64_t& hi) const {
    if (adaptive) {
      lo = x * o[j] / i[j];
      hi = ((x + 1) * o[j] + i[j] - 1) / i[j] - 1;
    } else {
      const int64_t t = x + p[j] - k[j] + 1;  // a * s >= t
      lo = t > 0 ? (t + s[j] - 1) / s[j] : 0;
      hi = (x + p[j]) / s[j];
    }
    lo = lo - 1 > 0 ? lo - 1 : 0;
    hi = hi + 1 < o[j] - 1 ? hi + 1 : o[j] - 1;
  }
};

// xs: input shape (N, C, *i), ys: output shape (N, C, *o); attrs as ops/pool.cpp.
PoolGeo make_geo(const Dims& xs, const Dims& ys, const Attrs& a) {
  PoolGeo g;
  g.planes = xs[0] * xs[1];
  g.adaptive = a.b(5);
  g.exclusive = a.b(6);
  const int nsp = int(xs.size()) - 2, off = 3 - nsp;
  for (int j = 0; j < 3; ++j) {
    g.i[j] = g.o[j] = g.k[j] = g.s[j] = 1;
    g.p[j] = 0;
  }
  for (int j = 0; j < nsp; ++j) {
    g.i[off + j] = xs[2 + size_t(j)];
    g.o[off + j] = ys[2 + size_t(j)];
    if (!g.adaptive) {
      g.k[off + j] = a.ints(0)[size_t(j)];
      g.s[off + j] = a.ints(1)[size_t(j)];
      g.p[off + j] = a.ints(2)[size_t(j)];
    }
  }
  return g;
}

// Splits an output index into its plane and window bounds.
__device__ __forceinline__ int64_t out_window(const PoolGeo& g, int64_t e, int64_t* st, int64_t* en) {
  int64_t r = e;
  for (int j = 2; j >= 0; --j) {
    g.window(j, r % g.o[j], st[j], en[j]);
    r /= g.o[j];
  }
  return r;
}

// ------------------------------------------------------------- forwards

template <typename T> __global__ void max_pool_kernel(PoolGeo g, const T* x, T* y, int32_t* mask) {
  using C = value_t<T>;
  const int64_t n = g.planes * g.osz(), isz = g.isz();
  OAR_GRID_LOOP(e, n) {
    int64_t st[3], en[3];
    const int64_t xb = out_window(g, e, st, en) * isz;
    C best = C(0);
    int64_t arg = -1;
    for (int64_t j0 = st[0]; j0 < en[0]; ++j0)
      for (int64_t j1 = st[1]; j1 < en[1]; ++j1) {
        const int64_t row = (j0 * g.i[1] + j1) * g.i[2];
        for (int64_t j2 = st[2]; j2 < en[2]; ++j2) {
          const C v = get(x, xb + row + j2);
          if (arg < 0 || v > best || (v != v && best == best)) {
            best = v;
            arg = row + j2;
          }
        }
      }
    put(y, e, arg < 0 ? C(0) : best);
    mask[e] = int32_t(arg);
  }
}

template <typename T> __global__ void avg_pool_kernel(PoolGeo g, const T* x, T* y) {
  using C = value_t<T>;
  const int64_t n = g.planes * g.osz(), isz = g.isz();
  OAR_GRID_LOOP(e, n) {
    int64_t st[3], en[3];
    const int64_t xb = out_window(g, e, st, en) * isz;
    C acc = 0;
    for (int64_t j0 = st[0]; j0 < en[0]; ++j0)
      for (int64_t j1 = st[1]; j1 < en[1]; ++j1)
        for (int64_t j2 = st[2]; j2 < en[2]; ++j2) acc += get(x, xb + (j0 * g.i[1] + j1) * g.i[2] + j2);
    const double d = g.divisor(st, en);
    put(y, e, d > 0 ? acc / C(d) : C(0));
  }
}

// ------------------------------------------------------------- gradients

// gx[x] = sum over the outputs o whose windows hold x, in output order, of gy[o] / divisor(o).
template <typename T> __global__ void avg_pool_grad_kernel(PoolGeo g, const T* gy, T* gx) {
  using C = value_t<T>;
  const int64_t isz = g.isz(), osz = g.osz(), n = g.planes * isz;
  OAR_GRID_LOOP(e, n) {
    int64_t x[3], r = e;
    for (int j = 2; j >= 0; --j) {
      x[j] = r % g.i[j];
      r /= g.i[j];
    }
    const int64_t yb = r * osz;
    int64_t lo[3], hi[3];
    for (int j = 0; j < 3; ++j) g.covering(j, x[j], lo[j], hi[j]);
    C acc = 0;
    int64_t st[3], en[3];
    for (int64_t a0 = lo[0]; a0 <= hi[0]; ++a0) {
      g.window(0, a0, st[0], en[0]);
      if (x[0] < st[0] || x[0] >= en[0]) continue;
      for (int64_t a1 = lo[1]; a1 <= hi[1]; ++a1) {
        g.window(1, a1, st[1], en[1]);
        if (x[1] < st[1] || x[1] >= en[1]) continue;
        for (int64_t a2 = lo[2]; a2 <= hi[2]; ++a2) {
          g.window(2, a2, st[2], en[2]);
          if (x[2] < st[2] || x[2] >= en[2]) continue;
          const double d = g.divisor(st, en);
          if (d <= 0) continue;
          acc += get(gy, yb + (a0 * g.o[1] + a1) * g.o[2] + a2) / C(d);
        }
      }
    }
    put(gx, e, acc);
  }
}

// acc[plane, mask[o]] += gy[o] (Note [CUDA pooling]); acc starts at zero.
template <typename T, typename A>
__global__ void max_pool_scatter_kernel(const T* gy, const int32_t* mask, A* acc, int64_t n, int64_t osz, int64_t isz) {
  OAR_GRID_LOOP(e, n) {
    const int32_t m = mask[e];
    if (m >= 0 && m < isz) atomicAdd(acc + (e / osz) * isz + m, A(get(gy, e)));
  }
}

template <typename T> __global__ void round_kernel(const float* acc, T* out, int64_t n) {
  OAR_GRID_LOOP(e, n) put(out, e, acc[e]);
}

template <typename T>
__global__ void max_pool_gather_kernel(const T* g, const int32_t* mask, T* out, int64_t n, int64_t osz, int64_t isz) {
  using C = value_t<T>;
  OAR_GRID_LOOP(e, n) {
    const int32_t m = mask[e];
    put(out, e, (m >= 0 && m < isz) ? get(g, (e / osz) * isz + m) : C(0));
  }
}

// ------------------------------------------------------------- the kernels

Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  NoGradGuard ng;
  return ops::contiguous(t);
}

void launched(const char* api) { cuda_check(cudaGetLastError(), api, "kernel launch"); }

void max_pool_k(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]);
  Tensor &y = out[0], &mask = out[1];
  if (y.numel() == 0) return;
  const PoolGeo g = make_geo(x.shape(), y.shape(), a);
  DeviceGuard guard(y.device().index);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    max_pool_kernel<T><<<blocks_for(y.numel()), kThreads, 0, cudaStreamLegacy>>>(g, x.data<T>(), y.data<T>(),
                                                                                 mask.data<int32_t>());
  });
  launched("oar.max_pool");
}

void avg_pool_k(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0]);
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  const PoolGeo g = make_geo(x.shape(), y.shape(), a);
  DeviceGuard guard(y.device().index);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_kernel<T><<<blocks_for(y.numel()), kThreads, 0, cudaStreamLegacy>>>(g, x.data<T>(), y.data<T>());
  });
  launched("oar.avg_pool");
}

void avg_pool_grad_k(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor gy = dense(in[0]);
  Tensor& gx = out[0];
  if (gx.numel() == 0) return;
  const PoolGeo g = make_geo(gx.shape(), gy.shape(), a);
  DeviceGuard guard(gx.device().index);
  cpu::visit_float(gy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_grad_kernel<T><<<blocks_for(gx.numel()), kThreads, 0, cudaStreamLegacy>>>(g, gy.data<T>(), gx.data<T>());
  });
  launched("oar.avg_pool_grad");
}

void max_pool_grad_k(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor gy = dense(in[0]), mask = dense(in[1]);
  Tensor& gx = out[0];
  if (gx.numel() == 0) return;
  const int64_t planes = gx.shape()[0] * gx.shape()[1];
  const int64_t isz = gx.numel() / planes, osz = gy.numel() / planes, n = gy.numel();
  DeviceGuard guard(gx.device().index);
  cpu::visit_float(gy.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = value_t<T>;  // float for the 16-bit floats
    Tensor acc = std::is_same_v<A, T> ? gx : empty_tensor(gx.shape(), DType::Float32, gx.device());
    cuda_check(cudaMemsetAsync(acc.raw_data(), 0, size_t(acc.numel()) * acc.itemsize(), cudaStreamLegacy),
               "oar.max_pool_grad", "cudaMemsetAsync");
    if (n > 0)
      max_pool_scatter_kernel<T, A><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(
          gy.data<T>(), mask.data<int32_t>(), acc.data<A>(), n, osz, isz);
    if constexpr (!std::is_same_v<A, T>)
      round_kernel<T><<<blocks_for(gx.numel()), kThreads, 0, cudaStreamLegacy>>>(acc.data<float>(), gx.data<T>(),
                                                                                 gx.numel());
  });
  launched("oar.max_pool_grad");
}

void max_pool_gather_k(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor g = dense(in[0]), mask = dense(in[1]);
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  const int64_t planes = g.shape()[0] * g.shape()[1];
  const int64_t isz = g.numel() / planes, osz = mask.numel() / planes;
  DeviceGuard guard(o.device().index);
  cpu::visit_float(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    max_pool_gather_kernel<T><<<blocks_for(o.numel()), kThreads, 0, cudaStreamLegacy>>>(
        g.data<T>(), mask.data<int32_t>(), o.data<T>(), o.numel(), osz, isz);
  });
  launched("oar.max_pool_gather");
}

const bool max_pool_reg = register_real("max_pool", max_pool_k, OAR_FLOAT_DTYPES);
const bool avg_pool_reg = register_real("avg_pool", avg_pool_k, OAR_FLOAT_DTYPES);
const bool avg_pool_grad_reg = register_real("avg_pool_grad", avg_pool_grad_k, OAR_FLOAT_DTYPES);
const bool max_pool_grad_reg = register_real("max_pool_grad", max_pool_grad_k, OAR_FLOAT_DTYPES);
const bool max_pool_gather_reg = register_real("max_pool_gather", max_pool_gather_k, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

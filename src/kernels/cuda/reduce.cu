// CUDA kernels of sum, mean, prod, amax and amin over any set of axes of a
// strided tensor, with the accumulators of the CPU kernels (kernels/cpu/
// reduce.cpp): float for the 16-bit floats, int64 for integers, the complex
// type itself for complex sum/mean/prod, NaN wins in amax/amin.
//
// Note [CUDA reduction layout]
// As on the CPU (Note [reduction layout]) the kept dims index the outputs and
// the reduced dims, merged where contiguous, are walked for each output. Two
// shapes of launch cover the cases:
// - outputs adjacent in memory and many of them (a bias gradient: leading
//   axes reduced, a dense trailing block kept): one thread per output, so
//   neighbouring threads read neighbouring elements;
// - otherwise a block per output (and, when there are few outputs over many
//   elements, several blocks per output writing partial results that a second
//   pass combines): threads stride over the reduced range and combine through
//   shared memory.
#include <cmath>
#include <limits>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/wrap.h"
#include "kernels/cuda/index_util.cuh"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"

namespace oar::cuda {
namespace {

struct RGeom {
  int nk = 0, nr = 0;
  int64_t kshape[kMaxRank], kstride[kMaxRank], ostride[kMaxRank];
  int64_t rshape[kMaxRank], rstride[kMaxRank];
  int64_t nout = 1, nred = 1;

  // Element offset of linear index o over dims (shape, stride)[0, n).
  __device__ static int64_t offset(int64_t o, int n, const int64_t* shape, const int64_t* stride) {
    int64_t off = 0;
    for (int i = n - 1; i >= 0; --i) {
      int64_t q = o / shape[i];
      off += (o - q * shape[i]) * stride[i];
      o = q;
    }
    return off;
  }
  __device__ int64_t in_offset(int64_t o) const { return offset(o, nk, kshape, kstride); }  // output o's first input
  __device__ int64_t out_offset(int64_t o) const { return offset(o, nk, kshape, ostride); }
  __device__ int64_t red_offset(int64_t r) const { return offset(r, nr, rshape, rstride); }
};

RGeom make_rgeom(const Tensor& x, const Tensor& out, const Dims& axes) {
  RGeom g;
  Dims ostr = contiguous_strides(out.shape());
  size_t k = 0;
  int od = 0;
  const bool keepdim = out.dim() == x.dim();
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool red = k < axes.size() && axes[k] == d;
    if (red) {
      ++k;
      if (x.shape()[d] != 1) {
        g.rshape[g.nr] = x.shape()[d];
        g.rstride[g.nr] = x.strides()[d];
        ++g.nr;
      }
      if (keepdim) ++od;
    } else {
      if (x.shape()[d] != 1) {
        g.kshape[g.nk] = x.shape()[d];
        g.kstride[g.nk] = x.strides()[d];
        g.ostride[g.nk] = ostr[od];
        ++g.nk;
      }
      ++od;
    }
  }
  int m = 0;
  for (int i = 0; i < g.nr; ++i) {
    if (m > 0 && g.rstride[m - 1] == g.rstride[i] * g.rshape[i]) {
      g.rshape[m - 1] *= g.rshape[i];
      g.rstride[m - 1] = g.rstride[i];
    } else {
      g.rshape[m] = g.rshape[i];
      g.rstride[m] = g.rstride[i];
      ++m;
    }
  }
  g.nr = m;
  for (int i = 0; i < g.nk; ++i) g.nout *= g.kshape[i];
  for (int i = 0; i < g.nr; ++i) g.nred *= g.rshape[i];
  if (x.numel() == 0) g.nred = 0;
  return g;
}

// ---------------------------------------------------------------- reducers

template <typename A> struct SumR {
  using Acc = A;
  __device__ Acc init() const { return Acc(0); }
  __device__ Acc step(Acc a, Acc x) const { return cpu::wrap_add(a, x); }
  __device__ Acc finish(Acc a, int64_t) const { return a; }
};
template <typename A> struct MeanR : SumR<A> {
  __device__ A finish(A a, int64_t n) const { return a / A(double(n)); }
};
template <typename A> struct ProdR {
  using Acc = A;
  __device__ Acc init() const { return Acc(1); }
  __device__ Acc step(Acc a, Acc x) const { return cpu::wrap_mul(a, x); }
  __device__ Acc finish(Acc a, int64_t) const { return a; }
};
template <typename A, bool Max> struct ExtremeR {
  using Acc = A;
  __device__ Acc init() const {
    if constexpr (std::is_floating_point_v<Acc>) return Max ? -INFINITY : INFINITY;
    else return Max ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  __device__ Acc step(Acc a, Acc x) const {
    if (a != a) return a;  // NaN wins (never true for integers)
    if (x != x) return x;
    return Max ? (x > a ? x : a) : (x < a ? x : a);
  }
  __device__ Acc finish(Acc a, int64_t) const { return a; }
};

// Complex sum/mean/prod accumulate in the storage layout (Cx), which is
// trivially constructible, so it may sit in the shared buffer of block_combine.
template <typename F> struct CxSumR {
  using Acc = Cx<F>;
  bool mean;
  __device__ Acc init() const { return {F(0), F(0)}; }
  __device__ Acc step(Acc a, Acc x) const { return v_add(a, x); }
  __device__ Acc finish(Acc a, int64_t n) const { return mean ? Acc{a.re / F(n), a.im / F(n)} : a; }
};
template <typename F> struct CxProdR {
  using Acc = Cx<F>;
  __device__ Acc init() const { return {F(1), F(0)}; }
  __device__ Acc step(Acc a, Acc x) const { return v_mul(a, x); }
  __device__ Acc finish(Acc a, int64_t) const { return a; }
};

constexpr int kBlock = 256;

template <typename T, typename R>
__device__ typename R::Acc block_combine(typename R::Acc acc, const R& r) {
  using Acc = typename R::Acc;
  __shared__ Acc sh[kBlock];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) sh[threadIdx.x] = r.step(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  return sh[0];
}

// One thread per output.
template <typename T, typename O, typename R>
__global__ void reduce_per_thread(RGeom g, const char* x, char* out, R r) {
  using Acc = typename R::Acc;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.nout; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = g.in_offset(o);
    Acc acc = r.init();
    for (int64_t i = 0; i < g.nred; ++i) acc = r.step(acc, Acc(load<T>(x + (base + g.red_offset(i)) * sizeof(T))));
    store<O>(out + g.out_offset(o) * sizeof(O), r.finish(acc, g.nred));
  }
}

// `splits` blocks per output; split s of output o covers a slice of the
// reduced range. With one split the block writes the finished output,
// otherwise its partial accumulator to part[o * splits + s].
template <typename T, typename O, typename R>
__global__ void reduce_per_block(RGeom g, const char* x, char* out, typename R::Acc* part, int splits, R r) {
  using Acc = typename R::Acc;
  for (int64_t b = blockIdx.x; b < g.nout * splits; b += gridDim.x) {
    const int64_t o = b / splits, s = b - o * splits;
    const int64_t chunk = (g.nred + splits - 1) / splits, lo = s * chunk;
    const int64_t hi = lo + chunk < g.nred ? lo + chunk : g.nred;
    const int64_t base = g.in_offset(o);
    Acc acc = r.init();
    if (g.nr == 1) {
      const int64_t st = g.rstride[0];
      for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) acc = r.step(acc, Acc(load<T>(x + (base + i * st) * sizeof(T))));
    } else {
      for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        acc = r.step(acc, Acc(load<T>(x + (base + g.red_offset(i)) * sizeof(T))));
    }
    acc = block_combine<T>(acc, r);
    if (threadIdx.x == 0) {
      if (splits == 1) store<O>(out + g.out_offset(o) * sizeof(O), r.finish(acc, g.nred));
      else part[b] = acc;
    }
    __syncthreads();  // the shared buffer is reused by the next output
  }
}

template <typename O, typename R>
__global__ void combine_splits(RGeom g, const typename R::Acc* part, int splits, char* out, R r) {
  using Acc = typename R::Acc;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < g.nout; o += int64_t(gridDim.x) * blockDim.x) {
    Acc acc = r.init();
    for (int s = 0; s < splits; ++s) acc = r.step(acc, part[o * splits + s]);
    store<O>(out + g.out_offset(o) * sizeof(O), r.finish(acc, g.nred));
  }
}

template <typename T, typename O, typename R>
void run_reduce(const char* api, const Tensor& x, Tensor& out, const Dims& axes, const R& r) {
  using Acc = typename R::Acc;
  RGeom g = make_rgeom(x, out, axes);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device().index);
  const char* xp = static_cast<const char*>(x.raw_data());
  char* op = static_cast<char*>(out.raw_data());
  const bool adjacent = g.nk >= 1 && g.kstride[g.nk - 1] == 1 && g.ostride[g.nk - 1] == 1;
  if (g.nred == 0 || (adjacent && g.nout >= 2048) || g.nred <= 16) {
    reduce_per_thread<T, O><<<blocks_for(g.nout), kThreads, 0, cudaStreamLegacy>>>(g, xp, op, r);
    cuda_check(cudaGetLastError(), api, "kernel launch");
    return;
  }
  // Few outputs over many elements: split each output's range so that about
  // 1024 blocks run, each over at least 4096 elements.
  int64_t want = std::max<int64_t>(1, 1024 / std::max<int64_t>(g.nout, 1));
  int splits = int(std::min<int64_t>({want, (g.nred + 4095) / 4096, 1024}));
  if (splits <= 1) {
    int grid = int(std::min<int64_t>(g.nout, 1 << 20));
    reduce_per_block<T, O><<<grid, kBlock, 0, cudaStreamLegacy>>>(g, xp, op, static_cast<Acc*>(nullptr), 1, r);
  } else {
    Tensor part = empty_tensor({int64_t(g.nout * splits * int64_t(sizeof(Acc)))}, DType::UInt8, out.device());
    Acc* pp = reinterpret_cast<Acc*>(part.raw_data());
    int grid = int(std::min<int64_t>(g.nout * splits, 1 << 20));
    reduce_per_block<T, O><<<grid, kBlock, 0, cudaStreamLegacy>>>(g, xp, op, pp, splits, r);
    combine_splits<O><<<blocks_for(g.nout), kThreads, 0, cudaStreamLegacy>>>(g, pp, splits, op, r);
  }
  cuda_check(cudaGetLastError(), api, "kernel launch");
}

template <typename T> using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, compute_t<T>>;

void sum_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  cpu::visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      if (out[0].dtype() == DType::Int64) return run_reduce<T, int64_t>("oar.sum", in[0], out[0], a.ints(0), SumR<int64_t>{});
    }
    OAR_CHECK(out[0].dtype() == in[0].dtype(), Runtime, "[oar.sum] unsupported dtype pair");
    run_reduce<T, T>("oar.sum", in[0], out[0], a.ints(0), SumR<acc_t<T>>{});
  });
}
void mean_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>("oar.mean", in[0], out[0], a.ints(0), MeanR<compute_t<T>>{});
  });
}
void prod_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  cpu::visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>("oar.prod", in[0], out[0], a.ints(0), ProdR<acc_t<T>>{});
  });
}
template <bool Max> void extreme_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  cpu::visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>(Max ? "oar.amax" : "oar.amin", in[0], out[0], a.ints(0), ExtremeR<compute_t<T>, Max>{});
  });
}

// sum, mean (Mean) and prod (Prod) of complex64/complex128.
template <bool Mean, bool Prod> void complex_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = Prod ? "oar.prod" : Mean ? "oar.mean" : "oar.sum";
  auto go = [&](auto tag) {
    using T = decltype(tag);
    using F = decltype(value_t<T>{}.re);
    if constexpr (Prod) run_reduce<T, T>(api, in[0], out[0], a.ints(0), CxProdR<F>{});
    else run_reduce<T, T>(api, in[0], out[0], a.ints(0), CxSumR<F>{Mean});
  };
  if (in[0].dtype() == DType::Complex64) go(complex64{});
  else go(complex128{});
}

const bool c1 = register_all("sum", complex_kernel<false, false>, {DType::Complex64, DType::Complex128});
const bool c2 = register_all("mean", complex_kernel<true, false>, {DType::Complex64, DType::Complex128});
const bool c3 = register_all("prod", complex_kernel<false, true>, {DType::Complex64, DType::Complex128});
const bool r1 = register_real("sum", sum_kernel, OAR_ALL_DTYPES);
const bool r2 = register_real("mean", mean_kernel, OAR_INEXACT_DTYPES);
const bool r3 = register_real("prod", prod_kernel, OAR_NUMERIC_DTYPES);
const bool r4 = register_real("amax", extreme_kernel<true>, OAR_REAL_DTYPES);
const bool r5 = register_real("amin", extreme_kernel<false>, OAR_REAL_DTYPES);

}  // namespace
}  // namespace oar::cuda

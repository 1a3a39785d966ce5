// CUDA kernels of the single-axis reductions and scans of
// kernels/cpu/reduce_ext.cpp: argmax/argmin, cumsum/cumprod and
// cummax/cummin, over strided inputs, for the real dtypes and, for
// cumsum/cumprod, complex.
//
// Note [CUDA line kernels]
// As on the CPU, each kernel walks "lines": the elements along the axis for
// one index of the other dims. Two launch shapes cover the cases:
// - one thread per line, walking it in order exactly as the CPU kernel does:
//   when the lines are many (neighbouring threads then read neighbouring
//   elements when the axis is not the innermost) or short;
// - one block per line (long lines along the innermost axis, or few long
//   lines): scans use cub::BlockScan tile by tile with a running prefix,
//   argmax/argmin a cub::BlockReduce. The results are those of the CPU:
//   integers exactly, cumsum/cumprod of floats up to the order of rounding.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/index_util.cuh"
#include "kernels/cuda/registry.h"

namespace oar::cuda {
namespace {

AxisLines in_lines(const Tensor& x, int64_t axis) { return AxisLines(x.shape(), x.strides(), axis); }
AxisLines out_lines(const Tensor& o, int64_t axis) { return AxisLines(o.shape(), contiguous_strides(o.shape()), axis); }

// Whether a block per line beats a thread per line (Note [CUDA line kernels]).
bool block_per_line(const AxisLines& g) { return g.len >= 128 && (g.step == 1 || g.nlines < 2048); }

constexpr int kBlock = 256;

// The real dtypes but bool.
template <typename F> void visit_ordered(DType t, F&& f) {
  switch (t) {
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float16: return f(float16{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Float32: return f(float{});
    default: return f(double{});
  }
}

template <typename A> __device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}

// --------------------------------------------------------------- scans

// A scan: combine(a, b) with a before b along the line; identity() is the
// empty prefix; write stores the running result at element offset `at`.
template <typename T> struct SumProd {  // cumsum / cumprod
  using Acc = std::conditional_t<std::is_integral_v<T>, T, value_t<T>>;
  bool prod;
  __device__ Acc identity() const {
    if constexpr (is_cx_v<Acc>) return Acc{decltype(Acc{}.re)(prod ? 1 : 0), 0};
    else return prod ? Acc(1) : Acc(0);
  }
  __device__ Acc lift(const T* p, int64_t) const { return Acc(ld(p)); }
  __device__ Acc combine(Acc a, Acc b) const { return prod ? v_mul(a, b) : v_add(a, b); }
  __device__ void write(T* vo, int64_t*, int64_t at, Acc a) const { st(vo + at, a); }
};

// cummax / cummin: the running extreme and its index. A tie or a NaN moves
// the index forward (Paddle's rule); once NaN is seen it stays. This picks
// the greatest element in the order "NaN above all, then by value (reversed
// for min), then by position", so it is associative.
template <typename T> struct Extreme {
  using A = compute_t<T>;
  struct Acc {
    A v;
    int64_t i;  // -1: the empty prefix
  };
  bool max;
  __device__ Acc identity() const { return Acc{A(0), -1}; }
  __device__ Acc lift(const T* p, int64_t i) const { return Acc{ld(p), i}; }
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool take = is_nan(b.v) || (!is_nan(a.v) && (max ? b.v >= a.v : b.v <= a.v));
    return take ? b : a;
  }
  __device__ void write(T* vo, int64_t* io, int64_t at, Acc a) const {
    st(vo + at, a.v);
    io[at] = a.i;
  }
};

template <typename T, typename S>
__global__ void scan_serial(const T* x, AxisLines gi, T* vo, int64_t* io, AxisLines go, bool reverse, S s) {
  OAR_GRID_LOOP(l, gi.nlines) {
    const T* p = x + gi.offset(l);
    const int64_t ob = go.offset(l);
    auto acc = s.identity();
    for (int64_t k = 0; k < gi.len; ++k) {
      const int64_t i = reverse ? gi.len - 1 - k : k;
      acc = s.combine(acc, s.lift(p + i * gi.step, i));
      s.write(vo, io, ob + i * go.step, acc);
    }
  }
}

template <typename S> struct Combine {
  S s;
  template <typename A> __device__ A operator()(const A& a, const A& b) const { return s.combine(a, b); }
};
// The running prefix of the tiles before the current one (cub's
// BlockPrefixCallbackOp; called by the first warp with the tile's total).
template <typename S, typename A> struct RunningPrefix {
  S s;
  A run;
  __device__ A operator()(A tile) {
    A before = run;
    run = s.combine(run, tile);
    return before;
  }
};

template <typename T, typename S>
__global__ void scan_block(const T* x, AxisLines gi, T* vo, int64_t* io, AxisLines go, bool reverse, S s) {
  using Acc = decltype(s.identity());
  using Scan = cub::BlockScan<Acc, kBlock>;
  __shared__ typename Scan::TempStorage tmp;
  for (int64_t l = blockIdx.x; l < gi.nlines; l += gridDim.x) {
    const T* p = x + gi.offset(l);
    const int64_t ob = go.offset(l);
    RunningPrefix<S, Acc> prefix{s, s.identity()};
    for (int64_t k0 = 0; k0 < gi.len; k0 += kBlock) {
      const int64_t k = k0 + threadIdx.x, i = reverse ? gi.len - 1 - k : k;
      Acc v = k < gi.len ? s.lift(p + i * gi.step, i) : s.identity();
      Scan(tmp).InclusiveScan(v, v, Combine<S>{s}, prefix);
      __syncthreads();  // tmp is reused by the next tile
      if (k < gi.len) s.write(vo, io, ob + i * go.step, v);
    }
  }
}

template <typename T, typename S>
void run_scan(const char* api, const Tensor& x, Tensor& vals, int64_t* idx, int64_t axis, bool reverse, S s) {
  AxisLines gi = in_lines(x, axis), go = out_lines(vals, axis);
  if (vals.numel() == 0) return;
  DeviceGuard guard(vals.device().index);
  const T* xp = x.data<T>();
  T* vp = vals.data<T>();
  if (block_per_line(gi)) {
    const int grid = int(std::min<int64_t>(gi.nlines, 1 << 20));
    scan_block<T, S><<<grid, kBlock, 0, cudaStreamLegacy>>>(xp, gi, vp, idx, go, reverse, s);
    cuda_check(cudaGetLastError(), api, "kernel launch");
  } else {
    launch(api, gi.nlines, scan_serial<T, S>, xp, gi, vp, idx, go, reverse, s);
  }
}

// attrs: axis, reverse.
template <bool Prod> void cumsum_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  auto go = [&](auto tag) {
    using T = decltype(tag);
    run_scan<T>(Prod ? "oar.cumprod" : "oar.cumsum", in[0], out[0], nullptr, a.i(0), a.b(1), SumProd<T>{Prod});
  };
  if (in[0].dtype() == DType::Complex64) go(complex64{});
  else if (in[0].dtype() == DType::Complex128) go(complex128{});
  else visit_ordered(in[0].dtype(), go);
}

// attrs: axis; outputs values and int64 indices.
template <bool Max> void cumext_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_ordered(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_scan<T>(Max ? "oar.cummax" : "oar.cummin", in[0], out[0], out[1].data<int64_t>(), a.i(0), false,
                Extreme<T>{Max});
  });
}

// ------------------------------------------------------- argmax / argmin

// The first NaN wins, else the first extreme, like NumPy.
template <typename A> struct Arg {
  A v;
  int64_t i;  // -1: no element
};
template <typename A> struct ArgBetter {
  bool max;
  // Independent of the order of a and b: any reduction tree gives the CPU's answer.
  __device__ Arg<A> operator()(const Arg<A>& a, const Arg<A>& b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return an && bn ? (a.i < b.i ? a : b) : (an ? a : b);
    if (a.v == b.v) return a.i < b.i ? a : b;
    return (max ? b.v > a.v : b.v < a.v) ? b : a;
  }
};

template <typename T, typename O> __global__ void arg_serial(const T* x, AxisLines g, O* out, bool max) {
  using A = compute_t<T>;
  OAR_GRID_LOOP(l, g.nlines) {
    const T* p = x + g.offset(l);
    A best = ld(p);
    int64_t bi = 0;
    if (!is_nan(best)) {
      for (int64_t i = 1; i < g.len; ++i) {
        const A v = ld(p + i * g.step);
        if (is_nan(v)) {
          bi = i;
          break;
        }
        if (max ? v > best : v < best) {
          best = v;
          bi = i;
        }
      }
    }
    out[l] = O(bi);
  }
}

template <typename T, typename O> __global__ void arg_block(const T* x, AxisLines g, O* out, bool max) {
  using A = compute_t<T>;
  using Reduce = cub::BlockReduce<Arg<A>, kBlock>;
  __shared__ typename Reduce::TempStorage tmp;
  const ArgBetter<A> better{max};
  for (int64_t l = blockIdx.x; l < g.nlines; l += gridDim.x) {
    const T* p = x + g.offset(l);
    Arg<A> mine{A(0), -1};
    for (int64_t i = threadIdx.x; i < g.len; i += kBlock) {
      mine = better(mine, Arg<A>{ld(p + i * g.step), i});
      if (is_nan(mine.v)) break;  // this thread's later elements cannot win
    }
    const Arg<A> best = Reduce(tmp).Reduce(mine, better);
    if (threadIdx.x == 0) out[l] = O(best.i);
    __syncthreads();  // tmp is reused by the next line
  }
}

// attrs: axis, keepdim, dtype.
template <bool Max> void arg_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = Max ? "oar.argmax" : "oar.argmin";
  const Tensor& x = in[0];
  AxisLines g = in_lines(x, a.i(0));
  if (g.nlines == 0) return;
  DeviceGuard guard(out[0].device().index);
  visit_ordered(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto run = [&](auto* o) {
      using O = std::remove_pointer_t<decltype(o)>;
      if (block_per_line(g)) {
        const int grid = int(std::min<int64_t>(g.nlines, 1 << 20));
        arg_block<T, O><<<grid, kBlock, 0, cudaStreamLegacy>>>(x.data<T>(), g, o, Max);
        cuda_check(cudaGetLastError(), api, "kernel launch");
      } else {
        launch(api, g.nlines, arg_serial<T, O>, x.data<T>(), g, o, Max);
      }
    };
    if (out[0].dtype() == DType::Int32) run(out[0].data<int32_t>());
    else run(out[0].data<int64_t>());
  });
}

const bool r1 = register_real("argmax", arg_kernel<true>, OAR_REAL_DTYPES);
const bool r2 = register_real("argmin", arg_kernel<false>, OAR_REAL_DTYPES);
const bool r3 = register_all("cumsum", cumsum_kernel<false>, OAR_NUMERIC_DTYPES);
const bool r4 = register_all("cumprod", cumsum_kernel<true>, OAR_NUMERIC_DTYPES);
const bool r5 = register_real("cummax", cumext_kernel<true>, OAR_REAL_DTYPES);
const bool r6 = register_real("cummin", cumext_kernel<false>, OAR_REAL_DTYPES);

}  // namespace
}  // namespace oar::cuda

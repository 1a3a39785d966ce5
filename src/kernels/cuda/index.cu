// CUDA kernels of the indexing ops (kernels/cpu/index.cpp): index_select,
// index_add, take_along_axis, put_along_axis, gather_nd and scatter_nd, and
// of pick_along_axis / put_add_along_axis (kernels/cpu/reduce_ext.cpp).
// Gathers and assignments move items of any dtype, complex included;
// accumulating scatters are typed (every dtype of the CPU kernel, complex
// included). Index tensors are checked first (Note [CUDA index checks]).
//
// Note [CUDA scatter order]
// The CPU applies repeated indices in index order. Here:
// - assignments (put_along_axis 'assign', scatter_nd with overwrite) give the
//   CPU's result exactly: a first pass marks, for each target, the last update
//   that writes it (atomicMax), and only that update is written;
// - additions use atomicAdd (float16 and bfloat16 in their own type, so each
//   addition rounds as on the CPU): integer sums are exact, floating-point
//   sums may round in another order than the CPU's;
// - put_along_axis's other reductions (mul, mean, amin, amax, or
//   include_self=False), whose results depend on the order, walk each index
//   line serially in one thread as the CPU does; so do its additions when the
//   lines are many or short (the gradient of take_along_axis in a
//   cross-entropy), which keeps them deterministic.
#include <algorithm>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/index_util.cuh"
#include "kernels/cuda/registry.h"
#include "ops/index.h"

namespace oar::cuda {
namespace {

using ops::PutReduce;

// x viewed as [outer, n, inner] around `axis`.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  Lines(const Dims& s, int64_t axis) {
    for (int64_t d = 0; d < int64_t(s.size()); ++d) {
      if (d < axis) outer *= s[size_t(d)];
      else if (d == axis) n = s[size_t(d)];
      else inner *= s[size_t(d)];
    }
  }
};

// ------------------------------------------------------------- row gathers

// dst row r (`width` units) = the src row starting at unit off(r).
template <typename U, typename Off>
__global__ void gather_rows_wide(U* dst, const U* src, int64_t rows, int64_t width, Off off) {
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const U* s = src + off(r);
    U* d = dst + r * width;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < width; i += int64_t(gridDim.x) * blockDim.x)
      d[i] = s[i];
  }
}
template <typename U, typename Off>
__global__ void gather_rows_narrow(U* dst, const U* src, int64_t rows, int64_t width, Off off) {
  OAR_GRID_LOOP(t, rows * width) {
    const int64_t r = t / width;
    dst[t] = src[off(r) + (t - r * width)];
  }
}

// Row r of an index_select: (o, j) = (r / k, r % k) reads x row o * n + idx[j].
struct SelectOff {
  const int64_t* idx;
  int64_t k, n, width;
  __device__ int64_t operator()(int64_t r) const {
    const int64_t o = r / k, j = r - o * k;
    return (o * n + wrap_index(idx[j], n)) * width;
  }
};
// Row r of a gather_nd: a precomputed offset, in units.
struct TableOff {
  const int64_t* off;
  __device__ int64_t operator()(int64_t r) const { return off[r]; }
};

// The widest unit (16, 8, 4, 2 or 1 bytes) that divides a row and aligns both buffers.
int row_unit(int64_t row_bytes, const void* a, const void* b) {
  for (int u : {16, 8, 4, 2})
    if (row_bytes % u == 0 && reinterpret_cast<uintptr_t>(a) % u == 0 && reinterpret_cast<uintptr_t>(b) % u == 0)
      return u;
  return 1;
}

// Copies `rows` rows of row_bytes bytes from src into dense dst, moving
// `unit` bytes at a time; make_off(width) gives the functor of the source
// rows' offsets, in units, for rows of `width` units.
template <typename MakeOff>
void gather_rows(const char* api, char* dst, const char* src, int64_t rows, int64_t row_bytes, int unit,
                 MakeOff make_off) {
  const int64_t width = row_bytes / unit;
  if (rows == 0 || width == 0) return;
  visit_size(size_t(unit), [&](auto tag) {
    using U = decltype(tag);
    auto off = make_off(width);
    U* d = reinterpret_cast<U*>(dst);
    const U* s = reinterpret_cast<const U*>(src);
    if (width >= 128) {
      dim3 grid(unsigned(std::min<int64_t>((width + kThreads - 1) / kThreads, 1024)),
                unsigned(std::min<int64_t>(rows, 65535)));
      gather_rows_wide<U><<<grid, kThreads, 0, cudaStreamLegacy>>>(d, s, rows, width, off);
      cuda_check(cudaGetLastError(), api, "kernel launch");
    } else {
      launch(api, rows * width, gather_rows_narrow<U, decltype(off)>, d, s, rows, width, off);
    }
  });
}

// ------------------------------------------------------------ index_select

void index_select_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.index_select";
  Tensor x = dense(in[0]);
  const int64_t axis = a.i(0);
  Lines L(x.shape(), axis);
  Tensor idx = check_index(in[1], L.n, axis, api);
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  DeviceGuard guard(o.device().index);
  const int64_t k = idx.numel();
  const int64_t row_bytes = L.inner * int64_t(x.itemsize());
  const int unit = row_unit(row_bytes, x.raw_data(), o.raw_data());
  const int64_t* ip = idx.data<int64_t>();
  gather_rows(api, static_cast<char*>(o.raw_data()), static_cast<const char*>(x.raw_data()), L.outer * k,
              row_bytes, unit, [&](int64_t width) { return SelectOff{ip, k, L.n, width}; });
}

// --------------------------------------------------------------- index_add

template <typename T>
__global__ void index_add_atomic(T* o, const T* v, const int64_t* idx, int64_t total, int64_t k, int64_t n,
                                 int64_t inner) {
  OAR_GRID_LOOP(t, total) {
    const int64_t q = t / inner, i = t - q * inner, oo = q / k, j = q - oo * k;
    atomic_add(o + (oo * n + wrap_index(idx[j], n)) * inner + i, ld(v + t));
  }
}

void index_add_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.index_add";
  Tensor x = dense(in[0]), v = dense(in[2]);
  const int64_t axis = a.i(0);
  Lines L(x.shape(), axis);
  Tensor idx = check_index(in[1], L.n, axis, api);
  Tensor& o = out[0];
  DeviceGuard guard(o.device().index);
  copy_base(x, o, api);
  cpu::visit_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch(api, v.numel(), index_add_atomic<T>, o.data<T>(), v.data<T>(), idx.data<int64_t>(), v.numel(),
           idx.numel(), L.n, L.inner);
  });
}

// ---------------------------------------------------------- take_along_axis

template <typename U>
__global__ void take_items(U* dst, const U* src, const int64_t* idx, int64_t total, int64_t in_n, int64_t inner,
                           int64_t n) {
  OAR_GRID_LOOP(t, total) {
    const int64_t i = t % inner, o = t / (inner * in_n);
    dst[t] = src[(o * n + wrap_index(idx[t], n)) * inner + i];
  }
}

void take_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.take_along_axis";
  Tensor x = dense(in[0]);
  const int64_t axis = a.i(0);
  Lines L(x.shape(), axis), I(in[1].shape(), axis);
  Tensor idx = check_index(in[1], L.n, axis, api);
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  DeviceGuard guard(o.device().index);
  visit_size(x.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    launch(api, o.numel(), take_items<U>, static_cast<U*>(o.raw_data()), static_cast<const U*>(x.raw_data()),
           idx.data<int64_t>(), o.numel(), I.n, I.inner, L.n);
  });
}

// ----------------------------------------------------------- put_along_axis

// The index viewed as [outer, n, inner] around the axis; its lines may cover
// only a corner of arr in the other dims, so each line (oo, i) is mapped to
// its start in the dense arr, as the CPU's PutGeometry does.
struct PutGeom {
  int nd = 0, axis = 0;
  int64_t ishape[kMaxRank], xstride[kMaxRank];
  int64_t n = 1, inner = 1;  // the index's extent along the axis and after it
  int64_t xn = 1, step = 1;  // arr's size and stride along the axis

  __device__ int64_t line_start(int64_t oo, int64_t i) const {
    int64_t off = 0;
    for (int d = axis - 1; d >= 0; --d) {
      const int64_t q = oo / ishape[d];
      off += (oo - q * ishape[d]) * xstride[d];
      oo = q;
    }
    for (int d = nd - 1; d > axis; --d) {
      const int64_t q = i / ishape[d];
      off += (i - q * ishape[d]) * xstride[d];
      i = q;
    }
    return off;
  }
  // The arr element written by index element t, and t's position j along the axis.
  __device__ int64_t target(const int64_t* idx, int64_t t, int64_t& j) const {
    const int64_t q = t / inner, i = t - q * inner, oo = q / n;
    j = q - oo * n;
    return line_start(oo, i) + wrap_index(idx[t], xn) * step;
  }
};

PutGeom put_geom(const Tensor& x, const Tensor& idx, int64_t axis) {
  PutGeom g;
  g.nd = int(idx.dim());
  g.axis = int(axis);
  Dims xs = contiguous_strides(x.shape());
  for (int d = 0; d < g.nd; ++d) {
    g.ishape[d] = idx.shape()[size_t(d)];
    g.xstride[d] = xs[size_t(d)];
  }
  Lines I(idx.shape(), axis);
  g.n = I.n;
  g.inner = I.inner;
  g.xn = x.shape()[size_t(axis)];
  g.step = xs[size_t(axis)];
  return g;
}

// One step of the reduction into *d (put_combine of the CPU kernel).
template <typename T> __device__ void put_combine(PutReduce r, T* d, const T* s) {
  using C = value_t<T>;
  const C dv = ld(d), sv = ld(s);
  switch (r) {
    case PutReduce::Mul: st(d, v_mul(dv, sv)); break;
    case PutReduce::Amin:
      if constexpr (!is_cx_v<C>) if (sv < dv) st(d, sv);  // a NaN in d stays, as on the CPU
      break;
    case PutReduce::Amax:
      if constexpr (!is_cx_v<C>) if (sv > dv) st(d, sv);
      break;
    default: st(d, v_add(dv, sv));  // Add; Mean (divided at the end)
  }
}

// Each thread walks whole index lines in order, as the CPU kernel. cnt (one
// counter per arr element, zero on entry and on exit) is given for the
// general reductions; without it `mode` is Assign or Add.
template <typename T>
__global__ void put_lines(T* o, const T* v, const int64_t* idx, PutGeom g, int64_t lines, PutReduce mode, bool self,
                          int* cnt) {
  OAR_GRID_LOOP(p, lines) {
    const int64_t oo = p / g.inner, i = p - oo * g.inner;
    const int64_t base = g.line_start(oo, i);
    for (int64_t j = 0; j < g.n; ++j) {
      const int64_t t = (oo * g.n + j) * g.inner + i, at = base + wrap_index(idx[t], g.xn) * g.step;
      if (mode == PutReduce::Assign) st(o + at, ld(v + t));
      else if (!cnt) st(o + at, v_add(ld(o + at), ld(v + t)));
      else if (cnt[at]++ == 0 && !self) st(o + at, ld(v + t));
      else put_combine(mode, o + at, v + t);
    }
    if (!cnt) continue;
    for (int64_t j = 0; j < g.n; ++j) {  // finish each written element once, resetting its count
      const int64_t at = base + wrap_index(idx[(oo * g.n + j) * g.inner + i], g.xn) * g.step;
      if (cnt[at] == 0) continue;
      if constexpr (!std::is_same_v<T, bool>) {
        if (mode == PutReduce::Mean) {
          const int64_t c = cnt[at] + (self ? 1 : 0);
          using C = value_t<T>;
          const C s = ld(o + at);
          // Integer means truncate toward zero, as the CPU kernel.
          if constexpr (is_cx_v<C>) st(o + at, C{s.re / decltype(s.re)(c), s.im / decltype(s.re)(c)});
          else if constexpr (std::is_integral_v<C>) st(o + at, C(int64_t(s) / c));
          else st(o + at, C(s / C(c)));
        }
      }
      cnt[at] = 0;
    }
  }
}

// Assignment with repeated indices: the last write along each line wins
// (Note [CUDA scatter order]).
__global__ void put_mark(const int64_t* idx, PutGeom g, int64_t total, unsigned* win) {
  OAR_GRID_LOOP(t, total) {
    int64_t j;
    const int64_t at = g.target(idx, t, j);
    atomicMax(win + at, unsigned(j + 1));
  }
}
template <typename U>
__global__ void put_marked(U* o, const U* v, const int64_t* idx, PutGeom g, int64_t total, const unsigned* win) {
  OAR_GRID_LOOP(t, total) {
    int64_t j;
    const int64_t at = g.target(idx, t, j);
    if (win[at] == unsigned(j + 1)) o[at] = v[t];
  }
}
template <typename T> __global__ void put_add_atomic(T* o, const T* v, const int64_t* idx, PutGeom g, int64_t total) {
  OAR_GRID_LOOP(t, total) {
    int64_t j;
    atomic_add(o + g.target(idx, t, j), ld(v + t));
  }
}

void put_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.put_along_axis";
  Tensor x = dense(in[0]), v = dense(in[2]);
  const int64_t axis = a.i(0);
  const auto mode = PutReduce(a.i(1));
  const bool self = a.b(2);
  PutGeom g = put_geom(x, in[1], axis);
  Tensor idx = check_index(in[1], g.xn, axis, api);
  Tensor& o = out[0];
  DeviceGuard guard(o.device().index);
  // The in-place form may target a strided tensor: work on a dense copy, then write back.
  Tensor dst = o.is_contiguous() ? o : empty_tensor(o.shape(), o.dtype(), o.device());
  copy_base(x, dst, api);
  const int64_t total = idx.numel(), lines = total / std::max<int64_t>(g.n, 1);
  const int64_t* ip = idx.data<int64_t>();
  if (total > 0) {
    if (mode == PutReduce::Assign && g.n > 1 && g.n < int64_t(UINT32_MAX)) {
      Tensor win = zeroed(dst.numel(), DType::Int32, dst.device(), api);
      unsigned* wp = static_cast<unsigned*>(win.raw_data());
      launch(api, total, put_mark, ip, g, total, wp);
      visit_size(x.itemsize(), [&](auto tag) {
        using U = decltype(tag);
        launch(api, total, put_marked<U>, static_cast<U*>(dst.raw_data()), static_cast<const U*>(v.raw_data()), ip,
               g, total, static_cast<const unsigned*>(wp));
      });
    } else {
      const bool plain = mode == PutReduce::Assign || (mode == PutReduce::Add && self);
      const bool serial = !plain || mode == PutReduce::Assign || lines >= 4096 || g.n <= 4;
      Tensor cnt = plain ? Tensor() : zeroed(dst.numel(), DType::Int32, dst.device(), api);
      int* cp = plain ? nullptr : cnt.data<int>();
      cpu::visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if (serial) launch(api, lines, put_lines<T>, dst.data<T>(), v.data<T>(), ip, g, lines, mode, self, cp);
        else launch(api, total, put_add_atomic<T>, dst.data<T>(), v.data<T>(), ip, g, total);
      });
    }
  }
  if (!dst.same(o)) device_copy(dst, o);
}

// ------------------------------------------------------ gather_nd / scatter_nd

// The element offset (divided by `per`) of the slice each row of a [m, k]
// index selects, in a dense tensor of the given contiguous strides.
struct NdStrides {
  int k = 0;
  int64_t shape[kMaxRank], stride[kMaxRank];
};
__global__ void nd_offsets(const int64_t* idx, int64_t m, NdStrides s, int64_t per, int64_t* off) {
  OAR_GRID_LOOP(r, m) {
    int64_t o = 0;
    for (int d = 0; d < s.k; ++d) o += wrap_index(idx[r * s.k + d], s.shape[d]) * s.stride[d];
    off[r] = o / per;
  }
}

// Row offsets of an index [..., k] into x, in units of `per` elements.
Tensor nd_offsets_of(const Tensor& x, const Tensor& idx, int64_t m, int64_t per, const char* api) {
  NdStrides s;
  s.k = int(idx.shape().back());
  Dims st = contiguous_strides(x.shape());
  for (int d = 0; d < s.k; ++d) {
    s.shape[d] = x.shape()[size_t(d)];
    s.stride[d] = st[size_t(d)];
  }
  Tensor off = empty_tensor({m}, DType::Int64, x.device());
  launch(api, m, nd_offsets, idx.data<int64_t>(), m, s, per, off.data<int64_t>());
  return off;
}

// Rows of an index [..., k]: the number of slices it selects, and each slice's size.
std::pair<int64_t, int64_t> nd_rows(const Tensor& x, const Tensor& idx) {
  const int64_t k = idx.shape().back();
  int64_t m = 1, slice = 1;
  for (size_t d = 0; d + 1 < idx.shape().size(); ++d) m *= idx.shape()[d];
  for (int64_t d = k; d < x.dim(); ++d) slice *= x.shape()[size_t(d)];
  return {m, slice};
}

void gather_nd_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const char* api = "oar.gather_nd";
  Tensor x = dense(in[0]);
  Tensor idx = check_index_nd(in[1], x.shape(), api);
  Tensor& o = out[0];
  auto [m, slice] = nd_rows(x, idx);
  if (o.numel() == 0) return;
  DeviceGuard guard(o.device().index);
  const int64_t row_bytes = slice * int64_t(x.itemsize());
  const int unit = row_unit(row_bytes, x.raw_data(), o.raw_data());
  Tensor off = nd_offsets_of(x, idx, m, unit / int64_t(x.itemsize()), api);
  const int64_t* op = off.data<int64_t>();
  gather_rows(api, static_cast<char*>(o.raw_data()), static_cast<const char*>(x.raw_data()), m, row_bytes, unit,
              [&](int64_t) { return TableOff{op}; });
}

// Overwrite with repeated rows: the last update of each target row wins
// (Note [CUDA scatter order]); rows of x are numbered by offset / slice.
__global__ void scatter_mark(const int64_t* off, int64_t m, int64_t slice, unsigned long long* win) {
  OAR_GRID_LOOP(j, m) atomicMax(win + off[j] / slice, (unsigned long long)(j + 1));
}
template <typename U>
__global__ void scatter_marked(U* o, const U* u, const int64_t* off, int64_t m, int64_t slice,
                               const unsigned long long* win) {
  OAR_GRID_LOOP(t, m * slice) {
    const int64_t j = t / slice;
    if (win[off[j] / slice] == (unsigned long long)(j + 1)) o[off[j] + (t - j * slice)] = u[t];
  }
}
template <typename T>
__global__ void scatter_add_atomic(T* o, const T* u, const int64_t* off, int64_t m, int64_t slice) {
  OAR_GRID_LOOP(t, m * slice) {
    const int64_t j = t / slice;
    atomic_add(o + off[j] + (t - j * slice), ld(u + t));
  }
}

void scatter_nd_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.scatter_nd";
  Tensor x = dense(in[0]), u = dense(in[2]);
  Tensor idx = check_index_nd(in[1], x.shape(), api);
  Tensor& o = out[0];
  DeviceGuard guard(o.device().index);
  // The in-place form may target a strided tensor: work on a dense copy, then write back.
  Tensor dst = o.is_contiguous() ? o : empty_tensor(o.shape(), o.dtype(), o.device());
  copy_base(x, dst, api);
  auto [m, slice] = nd_rows(x, idx);
  if (m > 0 && slice > 0) {
    Tensor off = nd_offsets_of(x, idx, m, 1, api);
    const int64_t* op = off.data<int64_t>();
    if (!a.b(0)) {
      cpu::visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        launch(api, m * slice, scatter_add_atomic<T>, dst.data<T>(), u.data<T>(), op, m, slice);
      });
    } else {
      Tensor win = zeroed(x.numel() / slice, DType::Int64, x.device(), api);
      auto* wp = static_cast<unsigned long long*>(win.raw_data());
      launch(api, m, scatter_mark, op, m, slice, wp);
      visit_size(x.itemsize(), [&](auto tag) {
        using U = decltype(tag);
        launch(api, m * slice, scatter_marked<U>, static_cast<U*>(dst.raw_data()),
               static_cast<const U*>(u.raw_data()), op, m, slice, static_cast<const unsigned long long*>(wp));
      });
    }
  }
  if (!dst.same(o)) device_copy(dst, o);
}

// ------------------------------------------- pick_along_axis / put_add_along_axis

// Three operands over the index's shape: `a` is indexed along `axis` by the
// index (b), c is walked with the index. Strides in elements; the index is dense.
struct AlongAxis {
  int nd = 0, axis = 0;
  int64_t shape[kMaxRank], a[kMaxRank], c[kMaxRank];

  // Offsets of element t of the index (row-major over its shape), a's without the axis term.
  __device__ void offsets(int64_t t, int64_t& oa, int64_t& oc) const {
    oa = 0;
    oc = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t q = t / shape[d], r = t - q * shape[d];
      t = q;
      if (d != axis) oa += r * a[d];
      oc += r * c[d];
    }
  }
};

AlongAxis along_axis(const Tensor& idx, const Dims& astr, const Dims& cstr, int64_t axis) {
  AlongAxis g;
  g.nd = int(idx.dim());
  g.axis = int(axis);
  for (int d = 0; d < g.nd; ++d) {
    g.shape[d] = idx.shape()[size_t(d)];
    g.a[d] = astr[size_t(d)];
    g.c[d] = cstr[size_t(d)];
  }
  return g;
}

// out (contiguous, the index's shape) = x picked at the index along the axis.
template <typename U> __global__ void pick_items(U* o, const U* x, const int64_t* idx, AlongAxis g, int64_t total) {
  OAR_GRID_LOOP(t, total) {
    int64_t ox, unused;
    g.offsets(t, ox, unused);
    o[t] = x[ox + idx[t] * g.a[g.axis]];
  }
}

void pick_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.pick_along_axis";
  const Tensor& x = in[0];
  const int64_t axis = a.i(0);
  Tensor idx = check_index_range(in[1], axis, x.shape()[size_t(axis)], api);
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  DeviceGuard guard(o.device().index);
  AlongAxis g = along_axis(idx, x.strides(), x.strides(), axis);
  visit_size(x.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    launch(api, o.numel(), pick_items<U>, static_cast<U*>(o.raw_data()), static_cast<const U*>(x.raw_data()),
           idx.data<int64_t>(), g, o.numel());
  });
}

// out (zeros) += src at the index along the axis: atomically per element, or
// serially along each index line (g.c: src's strides; lines enumerate the
// index's dims other than the axis).
template <typename T>
__global__ void add_along_atomic(T* o, const T* src, const int64_t* idx, AlongAxis g, int64_t total) {
  OAR_GRID_LOOP(t, total) {
    int64_t oo, os;
    g.offsets(t, oo, os);
    atomic_add(o + oo + idx[t] * g.a[g.axis], ld(src + os));
  }
}
template <typename T>
__global__ void add_along_lines(T* o, const T* src, const int64_t* idx, AlongAxis g, int64_t lines, int64_t inner) {
  const int64_t len = g.shape[g.axis];
  OAR_GRID_LOOP(l, lines) {
    const int64_t q = l / inner, t0 = q * len * inner + (l - q * inner);  // the line's element at j = 0
    int64_t oo, os;
    g.offsets(t0, oo, os);
    for (int64_t j = 0; j < len; ++j) {
      T* d = o + oo + idx[t0 + j * inner] * g.a[g.axis];
      st(d, v_add(ld(d), ld(src + os + j * g.c[g.axis])));
    }
  }
}

void put_add_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.put_add_along_axis";
  const Tensor& src = in[0];
  const int64_t axis = a.i(0);
  Tensor& o = out[0];
  Tensor idx = check_index_range(in[1], axis, o.shape()[size_t(axis)], api);
  DeviceGuard guard(o.device().index);
  if (o.numel() > 0)
    cuda_check(cudaMemsetAsync(o.raw_data(), 0, size_t(o.numel()) * o.itemsize(), cudaStreamLegacy), api,
               "cudaMemsetAsync");
  const int64_t total = idx.numel();
  if (total == 0) return;
  AlongAxis g = along_axis(idx, contiguous_strides(o.shape()), src.strides(), axis);
  const int64_t len = idx.shape()[size_t(axis)], lines = total / len;
  const int64_t inner = Lines(idx.shape(), axis).inner;
  cpu::visit_numeric(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const int64_t* ip = idx.data<int64_t>();
    if (lines >= 4096 || len <= 4)
      launch(api, lines, add_along_lines<T>, o.data<T>(), src.data<T>(), ip, g, lines, inner);
    else
      launch(api, total, add_along_atomic<T>, o.data<T>(), src.data<T>(), ip, g, total);
  });
}

const bool r1 = register_all("index_select", index_select_kernel, OAR_ALL_DTYPES);
const bool r2 = register_all("index_add", index_add_kernel, OAR_ALL_DTYPES);
const bool r3 = register_all("take_along_axis", take_kernel, OAR_ALL_DTYPES);
const bool r4 = register_all("put_along_axis", put_kernel, OAR_ALL_DTYPES);
const bool r5 = register_all("gather_nd", gather_nd_kernel, OAR_ALL_DTYPES);
const bool r6 = register_all("scatter_nd", scatter_nd_kernel, OAR_ALL_DTYPES);
const bool r7 = register_all("pick_along_axis", pick_kernel, OAR_ALL_DTYPES);
const bool r8 = register_all("put_add_along_axis", put_add_kernel, OAR_NUMERIC_DTYPES);

}  // namespace
}  // namespace oar::cuda

// Kernels of the indexing ops (ops/index.cpp). Gathers and assignments move
// bytes (one kernel for every dtype); accumulating scatters are typed.
//
// Note [index checks]
// Every kernel reads its index tensor into a normalised int64 buffer first,
// raising IndexError for an out-of-range entry, and only then starts the
// (possibly parallel) loop, which therefore never throws.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "tensor/autograd_meta.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "ops/dispatch.h"
#include "ops/index.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

Tensor dense(const Tensor& t) {
  NoGradGuard ng;
  return ops::contiguous(t);
}

// x viewed as [outer, n, inner] around `axis`.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  Lines(const Dims& s, int64_t axis) {
    for (int64_t d = 0; d < int64_t(s.size()); ++d) {
      if (d < axis) outer *= s[d];
      else if (d == axis) n = s[d];
      else inner *= s[d];
    }
  }
};

[[noreturn]] void out_of_bounds(const char* api, int64_t v, int64_t axis, int64_t size) {
  fail(ErrorKind::Index, "[", api, "] index ", v, " is out of bounds for axis ", axis, " with size ", size);
}

// Reads an int32/int64 index tensor, normalising negatives; see Note [index checks].
std::vector<int64_t> load_index(const Tensor& idx_in, int64_t size, int64_t axis, const char* api) {
  Tensor idx = dense(idx_in);
  std::vector<int64_t> v(size_t(idx.numel()));
  auto fill = [&](const auto* p) {
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t k = int64_t(p[i]);
      if (k < -size || k >= size) out_of_bounds(api, k, axis, size);
      v[i] = k < 0 ? k + size : k;
    }
  };
  if (idx.dtype() == DType::Int32) fill(idx.data<int32_t>());
  else fill(idx.data<int64_t>());
  return v;
}

// A storage type of each item size, for moving elements without knowing the dtype.
struct Bytes16 { uint64_t a, b; };
template <typename F> void visit_size(size_t isz, F&& f) {
  switch (isz) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: f(Bytes16{}); break;
  }
}

template <typename T> inline void add_to(T& dst, T v) {
  if constexpr (std::is_same_v<T, bool>) dst = dst || v;
  else dst = T(compute_t<T>(dst) + compute_t<T>(v));
}

// Copies `src` into the fresh output (the in-place forms already share it).
void copy_base(const Tensor& src, Tensor& out) {
  if (src.raw_data() == out.raw_data() && src.strides() == out.strides()) return;
  std::memcpy(out.raw_data(), src.raw_data(), size_t(out.numel()) * out.itemsize());
}

// ---- index_select / index_add
void index_select_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor x = dense(in[0]);
  int64_t axis = a.i(0);
  Lines L(x.shape(), axis);
  std::vector<int64_t> idx = load_index(in[1], L.n, axis, "oar.index_select");
  int64_t k = int64_t(idx.size());
  size_t row = size_t(L.inner) * x.itemsize();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  parallel_for(L.outer * k, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(L.inner, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   int64_t o = t / k, j = t % k;
                   std::memcpy(dst + size_t(t) * row, src + size_t(o * L.n + idx[j]) * row, row);
                 }
               });
}

void index_add_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor x = dense(in[0]), v = dense(in[2]);
  int64_t axis = a.i(0);
  Lines L(x.shape(), axis);
  std::vector<int64_t> idx = load_index(in[1], L.n, axis, "oar.index_add");
  copy_base(x, out[0]);
  int64_t k = int64_t(idx.size());
  visit_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out[0].data<T>();
    const T* vp = v.data<T>();
    // Each (outer, inner) position is owned by one thread, so repeated indices never race.
    parallel_for(L.outer * L.inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(k, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     int64_t oo = p / L.inner, i = p % L.inner;
                     for (int64_t j = 0; j < k; ++j)
                       add_to(o[(oo * L.n + idx[j]) * L.inner + i], vp[(oo * k + j) * L.inner + i]);
                   }
                 });
  });
}

// ---- take_along_axis / put_along_axis
void take_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor x = dense(in[0]);
  int64_t axis = a.i(0);
  Lines L(x.shape(), axis), I(in[1].shape(), axis);
  std::vector<int64_t> idx = load_index(in[1], L.n, axis, "oar.take_along_axis");
  visit_size(x.itemsize(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(x.raw_data());
    T* dst = static_cast<T*>(out[0].raw_data());
    parallel_for(int64_t(idx.size()), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        int64_t i = t % I.inner, o = t / (I.inner * I.n);
        dst[t] = src[(o * L.n + idx[t]) * L.inner + i];
      }
    });
  });
}

// One step of put_along_axis's reduction into d (the value already there).
template <typename T> inline void put_combine(ops::PutReduce r, T& d, T s) {
  using C = compute_t<T>;
  switch (r) {
    case ops::PutReduce::Mul:
      if constexpr (std::is_same_v<T, bool>) d = d && s;
      else d = T(C(d) * C(s));
      break;
    case ops::PutReduce::Amin:
      if constexpr (!is_complex_v<T>) d = C(s) < C(d) ? s : d;  // Paddle's comparison: a NaN in d stays
      break;
    case ops::PutReduce::Amax:
      if constexpr (!is_complex_v<T>) d = C(s) > C(d) ? s : d;
      break;
    default: add_to(d, s);  // Add, Mean (divided afterwards)
  }
}

// Indices may cover only a corner of x in the dims other than axis, so each
// index line (fixed coordinates off the axis) is mapped to its start in x.
struct PutGeometry {
  Dims ishape, xstrides;
  int64_t axis;
  Lines I;
  PutGeometry(const Tensor& x, const Tensor& idx, int64_t ax)
      : ishape(idx.shape()), xstrides(contiguous_strides(x.shape())), axis(ax), I(idx.shape(), ax) {}
  int64_t line_start(int64_t oo, int64_t i) const {
    int64_t off = 0;
    for (int64_t d = axis - 1; d >= 0; --d) {
      off += (oo % ishape[d]) * xstrides[d];
      oo /= ishape[d];
    }
    for (int64_t d = int64_t(ishape.size()) - 1; d > axis; --d) {
      off += (i % ishape[d]) * xstrides[d];
      i /= ishape[d];
    }
    return off;
  }
};

// Every index line is handled by one thread, serially along the axis, so the
// result is deterministic: later duplicates win ('assign') or are reduced in
// index order.
// The writes of put_along_axis into dst (arr's dense copy).
void run_put(const Tensor& x, const Tensor& v, const std::vector<int64_t>& idx, const Lines& L, const PutGeometry& G,
             ops::PutReduce mode, bool self, Tensor& dst) {
  if (idx.empty()) return;
  const Lines& I = G.I;
  int64_t lines = I.outer * I.inner, step = L.inner;
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(I.n, 1));
  auto fast = [&](auto tag, auto op) {
    using T = decltype(tag);
    T* o = static_cast<T*>(dst.raw_data());
    const T* vp = static_cast<const T*>(v.raw_data());
    parallel_for(lines, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        int64_t oo = p / I.inner, i = p % I.inner;
        T* base = o + G.line_start(oo, i);
        for (int64_t j = 0; j < I.n; ++j) {
          int64_t t = (oo * I.n + j) * I.inner + i;
          op(base[idx[t] * step], vp[t]);
        }
      }
    });
  };
  if (mode == ops::PutReduce::Assign)
    return visit_size(x.itemsize(), [&](auto tag) { fast(tag, [](auto& d, auto s) { d = s; }); });
  if (mode == ops::PutReduce::Add && self)
    return visit_numeric(x.dtype(), [&](auto tag) { fast(tag, [](auto& d, auto s) { add_to(d, s); }); });

  // General path: per-position counts of the values written along the line
  // (the first one replaces arr's value when !self; mean divides by them).
  // One scratch row per thread, allocated here since the parallel region must
  // not throw; a serial run (nested in another parallel region) uses one row.
  int nslots = std::max(1, omp_get_max_threads());
  std::vector<int64_t> scratch(size_t(nslots) * size_t(L.n), 0);
  visit_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    T* o = static_cast<T*>(dst.raw_data());
    const T* vp = static_cast<const T*>(v.raw_data());
    parallel_for(lines, grain, [&](int64_t b, int64_t e) {
      int slot = std::min(omp_in_parallel() ? omp_get_thread_num() : 0, nslots - 1);
      int64_t* cnt = scratch.data() + size_t(slot) * size_t(L.n);
      for (int64_t p = b; p < e; ++p) {
        int64_t oo = p / I.inner, i = p % I.inner;
        T* base = o + G.line_start(oo, i);
        for (int64_t j = 0; j < I.n; ++j) {
          int64_t t = (oo * I.n + j) * I.inner + i, k = idx[t];
          if (cnt[k]++ == 0 && !self) base[k * step] = vp[t];
          else put_combine(mode, base[k * step], vp[t]);
        }
        for (int64_t j = 0; j < I.n; ++j) {  // finish each written position once, resetting its count
          int64_t k = idx[(oo * I.n + j) * I.inner + i];
          if (cnt[k] == 0) continue;
          if constexpr (!std::is_same_v<T, bool>) {
            // Integer means truncate toward zero, like Paddle's C++ division.
            int64_t n = cnt[k] + (self ? 1 : 0);
            if (mode == ops::PutReduce::Mean) {
              if constexpr (std::is_integral_v<T>) base[k * step] = T(int64_t(base[k * step]) / n);
              else base[k * step] = T(C(base[k * step]) / C(n));
            }
          }
          cnt[k] = 0;
        }
      }
    });
  });
}

void put_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor x = dense(in[0]), v = dense(in[2]);
  int64_t axis = a.i(0);
  auto mode = ops::PutReduce(a.i(1));
  bool self = a.b(2);
  Lines L(x.shape(), axis);
  PutGeometry G(x, in[1], axis);
  std::vector<int64_t> idx = load_index(in[1], L.n, axis, "oar.put_along_axis");
  // The in-place form may target a strided tensor: work on a dense copy, then write back.
  Tensor dst = out[0].is_contiguous() ? out[0] : empty_tensor(out[0].shape(), out[0].dtype(), out[0].device());
  copy_base(x, dst);
  run_put(x, v, idx, L, G, mode, self, dst);
  if (!dst.same(out[0])) {
    KernelFn copy = op_def("cast").kernels[int(DeviceType::CPU)][int(dst.dtype())];
    Attrs ca{dst.dtype()};
    copy(std::span<const Tensor>(&dst, 1), out.subspan(0, 1), ca);
  }
}

// ---- gather_nd / scatter_nd: index [M, K] selects slices of x.shape[K:]
struct NdIndex {
  std::vector<int64_t> offset;  // element offset of each selected slice
  int64_t slice = 1;
};
NdIndex load_nd(const Tensor& x, const Tensor& idx_in, const char* api) {
  Tensor idx = dense(idx_in);
  int64_t k = idx.shape().back();
  int64_t m = 1;  // (k == 0: each leading position selects all of x)
  for (size_t d = 0; d + 1 < idx.shape().size(); ++d) m *= idx.shape()[d];
  NdIndex r;
  Dims st = contiguous_strides(x.shape());
  for (int64_t d = k; d < x.dim(); ++d) r.slice *= x.shape()[d];
  r.offset.assign(size_t(m), 0);
  auto fill = [&](const auto* p) {
    for (int64_t i = 0; i < m; ++i) {
      int64_t off = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t v = int64_t(p[i * k + d]), n = x.shape()[d];
        if (v < -n || v >= n) out_of_bounds(api, v, d, n);
        off += (v < 0 ? v + n : v) * st[d];
      }
      r.offset[size_t(i)] = off;
    }
  };
  if (idx.dtype() == DType::Int32) fill(idx.data<int32_t>());
  else fill(idx.data<int64_t>());
  return r;
}

void gather_nd_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  Tensor x = dense(in[0]);
  NdIndex ix = load_nd(x, in[1], "oar.gather_nd");
  size_t row = size_t(ix.slice) * x.itemsize();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  parallel_for(int64_t(ix.offset.size()), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(ix.slice, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t)
                   std::memcpy(dst + size_t(t) * row, src + size_t(ix.offset[t]) * x.itemsize(), row);
               });
}

void scatter_nd_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor x = dense(in[0]), u = dense(in[2]);
  NdIndex ix = load_nd(x, in[1], "oar.scatter_nd");
  // The in-place form may target a strided tensor: work on a dense copy, then write back.
  Tensor dst = out[0].is_contiguous() ? out[0] : empty_tensor(out[0].shape(), out[0].dtype(), out[0].device());
  copy_base(x, dst);
  int64_t m = int64_t(ix.offset.size()), s = ix.slice;
  auto run = [&](auto tag, auto op) {
    using T = decltype(tag);
    T* o = static_cast<T*>(dst.raw_data());
    const T* up = static_cast<const T*>(u.raw_data());
    // Threads split the slice positions; each walks all M updates in order.
    parallel_for(s, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(m, 1)), [&](int64_t b, int64_t e) {
      for (int64_t j = 0; j < m; ++j)
        for (int64_t p = b; p < e; ++p) op(o[ix.offset[j] + p], up[j * s + p]);
    });
  };
  if (!a.b(0))
    visit_numeric(x.dtype(), [&](auto tag) { run(tag, [](auto& d, auto v) { add_to(d, v); }); });
  else
    visit_size(x.itemsize(), [&](auto tag) { run(tag, [](auto& d, auto v) { d = v; }); });
  if (!dst.same(out[0])) {
    KernelFn copy = op_def("cast").kernels[int(DeviceType::CPU)][int(dst.dtype())];
    Attrs ca{dst.dtype()};
    copy(std::span<const Tensor>(&dst, 1), out.subspan(0, 1), ca);
  }
}

// ---- ordering: NaN sorts after every number (NumPy's rule).
template <typename T> inline bool less_nan_last(T a, T b) {
  if constexpr (is_float_v<T>) {
    auto x = compute_t<T>(a), y = compute_t<T>(b);
    if (std::isnan(y)) return !std::isnan(x);
    return x < y;
  } else {
    return a < b;
  }
}

template <typename F> void visit_sortable(DType t, F&& f) {
  if (is_floating(t)) visit_float(t, f);
  else visit_int(t, f);
}

// Writes, for every line along `axis`, the indices of its first k elements in
// sorted order. Ties go to the lower index, so the order is the stable one and
// the result is deterministic; NaN sorts last.
void sorted_indices(const Tensor& in, Tensor& out, int64_t axis, int64_t k, bool descending) {
  Tensor x = dense(in);
  Lines L(x.shape(), axis);
  int64_t* o = out.data<int64_t>();
  visit_sortable(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    parallel_for(L.outer * L.inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(L.n, 1) / 8),
                 [&](int64_t b, int64_t e) {
                   std::vector<int64_t> perm(size_t(L.n));
                   for (int64_t p = b; p < e; ++p) {
                     const T* line = xp + (p / L.inner) * L.n * L.inner + p % L.inner;
                     std::iota(perm.begin(), perm.end(), int64_t(0));
                     auto val = [&](int64_t i) { return line[i * L.inner]; };
                     auto cmp = [&](int64_t i, int64_t j) {
                       bool before = descending ? less_nan_last(val(j), val(i)) : less_nan_last(val(i), val(j));
                       bool after = descending ? less_nan_last(val(i), val(j)) : less_nan_last(val(j), val(i));
                       return before || (!after && i < j);
                     };
                     if (k == L.n) std::sort(perm.begin(), perm.end(), cmp);
                     else std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), cmp);
                     int64_t* op = o + (p / L.inner) * k * L.inner + p % L.inner;
                     for (int64_t i = 0; i < k; ++i) op[i * L.inner] = perm[size_t(i)];
                   }
                 });
  });
}

void argsort_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  int64_t axis = a.i(0);
  sorted_indices(in[0], out[0], axis, Lines(in[0].shape(), axis).n, a.b(1));
}

void topk_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  sorted_indices(in[0], out[0], a.i(1), a.i(0), a.b(2));
}

// ---- dynamic shapes
void nonzero_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  Tensor x = dense(in[0]);
  const bool* p = x.data<bool>();
  int64_t n = x.numel(), nd = x.dim(), cnt = 0;
  for (int64_t i = 0; i < n; ++i) cnt += p[i] ? 1 : 0;
  out[0] = empty_tensor(Dims{cnt, nd}, DType::Int64, x.device());
  int64_t* o = out[0].data<int64_t>();
  const Dims& s = x.shape();
  for (int64_t i = 0; i < n; ++i) {
    if (!p[i]) continue;
    int64_t rem = i;
    for (int64_t d = nd - 1; d >= 0; --d) { o[d] = rem % s[d]; rem /= s[d]; }
    o += nd;
  }
}

// Rows of a dense [n, m] tensor, sorted lexicographically: outputs the first
// occurrence of each distinct row, the inverse map and the counts.
void unique_rows_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  Tensor x = dense(in[0]);
  int64_t n = x.shape()[0], m = x.shape()[1];
  visit_sortable(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    auto eq = [](T a, T b) {
      if constexpr (is_float_v<T>) {
        if (std::isnan(compute_t<T>(a)) && std::isnan(compute_t<T>(b))) return true;
      }
      return !less_nan_last(a, b) && !less_nan_last(b, a);
    };
    auto row_less = [&](int64_t i, int64_t j) {
      for (int64_t c = 0; c < m; ++c) {
        T a = xp[i * m + c], b = xp[j * m + c];
        if (less_nan_last(a, b)) return true;
        if (less_nan_last(b, a)) return false;
      }
      return false;
    };
    auto row_eq = [&](int64_t i, int64_t j) {
      for (int64_t c = 0; c < m; ++c)
        if (!eq(xp[i * m + c], xp[j * m + c])) return false;
      return true;
    };
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t(0));
    std::stable_sort(perm.begin(), perm.end(), row_less);
    std::vector<int64_t> first, counts, inverse(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      int64_t i = perm[size_t(r)];
      if (r == 0 || !row_eq(perm[size_t(r - 1)], i)) {
        first.push_back(i);
        counts.push_back(0);
      }
      ++counts.back();
      inverse[size_t(i)] = int64_t(first.size()) - 1;
    }
    auto emit = [&](Tensor& t, const std::vector<int64_t>& v) {
      t = empty_tensor(Dims{int64_t(v.size())}, DType::Int64, x.device());
      if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(int64_t));
    };
    emit(out[0], first);
    emit(out[1], inverse);
    emit(out[2], counts);
  });
}

void searchsorted_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor s = dense(in[0]), v = dense(in[1]);
  bool right = a.b(0);
  int64_t n = s.shape().back();
  int64_t nv = v.dim() == 0 ? 1 : v.shape().back();
  int64_t total = v.numel();
  bool batched = s.dim() > 1;
  int64_t* o = out[0].data<int64_t>();
  visit_sortable(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* sp = s.data<T>();
    const T* vp = v.data<T>();
    parallel_for(total, 4096, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const T* row = batched ? sp + (t / std::max<int64_t>(nv, 1)) * n : sp;
        T val = vp[t];
        const T* pos = right ? std::upper_bound(row, row + n, val, [](T x, T y) { return less_nan_last(x, y); })
                             : std::lower_bound(row, row + n, val, [](T x, T y) { return less_nan_last(x, y); });
        o[t] = int64_t(pos - row);
      }
    });
  });
}

#define OAR_SORTABLE_DTYPES                                                                   \
  { DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,        \
    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64 }

KernelRegistrar r1("index_select", DeviceType::CPU, OAR_ALL_DTYPES, index_select_kernel);
KernelRegistrar r2("index_add", DeviceType::CPU, OAR_ALL_DTYPES, index_add_kernel);
KernelRegistrar r3("take_along_axis", DeviceType::CPU, OAR_ALL_DTYPES, take_kernel);
KernelRegistrar r4("put_along_axis", DeviceType::CPU, OAR_ALL_DTYPES, put_kernel);
KernelRegistrar r5("gather_nd", DeviceType::CPU, OAR_ALL_DTYPES, gather_nd_kernel);
KernelRegistrar r6("scatter_nd", DeviceType::CPU, OAR_ALL_DTYPES, scatter_nd_kernel);
KernelRegistrar r7("argsort", DeviceType::CPU, OAR_SORTABLE_DTYPES, argsort_kernel);
KernelRegistrar r8("topk", DeviceType::CPU, OAR_SORTABLE_DTYPES, topk_kernel);
KernelRegistrar r9("nonzero", DeviceType::CPU, {DType::Bool}, nonzero_kernel);
KernelRegistrar r10("unique_rows", DeviceType::CPU, OAR_SORTABLE_DTYPES, unique_rows_kernel);
KernelRegistrar r11("searchsorted", DeviceType::CPU, OAR_SORTABLE_DTYPES, searchsorted_kernel);

}  // namespace
}  // namespace oar::cpu

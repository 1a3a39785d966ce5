// CUDA kernels of the ordering ops (kernels/cpu/index.cpp, reduce_ext.cpp):
// argsort, topk, median_index, unique_rows, searchsorted, and nonzero. Sorts
// are CUB radix sorts (stable) of order-preserving unsigned keys.
//
// Note [CUDA sort keys]
// Every sortable dtype maps to an unsigned key whose order is the CPU's
// order (less_nan_last): integers with the sign bit flipped; floats by their
// bits, negatives inverted, -0 with +0 (they compare equal), and every NaN to
// the largest key, above +inf. Equal keys are exactly the CPU's ties, so a
// stable sort of (key, position) gives the CPU's answer, ties in index order;
// descending order sorts the inverted key, which keeps ties in index order as
// the CPU does (NaN then comes first, as on the CPU). 8- and 16-bit keys sort
// in 32-bit words over their low bits only, so one sort instantiation per key
// width (32 and 64 bits) serves every dtype.
#include <climits>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/index_util.cuh"
#include "kernels/cuda/registry.h"

namespace oar::cuda {
namespace {

// ------------------------------------------------------------------- keys

template <typename U> __device__ __forceinline__ U float_key(U u, U inf) {
  constexpr U sign = U(U(1) << (8 * sizeof(U) - 1));
  if (U(u & U(~sign)) > inf) return U(~U(0));  // NaN
  if (u == sign) u = 0;                        // -0
  return (u & sign) ? U(~u) : U(u | sign);
}

// The key type and width of T, and T's key (Note [CUDA sort keys]).
template <typename T> struct SortKey {
  using K = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static constexpr int bits = std::is_same_v<T, bool> ? 8 : int(8 * sizeof(T));
  __device__ static K of(const T* p) {
    if constexpr (std::is_same_v<T, bool>) {
      return K(*reinterpret_cast<const uint8_t*>(p) != 0);
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      return K(*p);
    } else if constexpr (std::is_same_v<T, float16>) {
      return float_key<uint16_t>(*reinterpret_cast<const uint16_t*>(p), 0x7C00);
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      return float_key<uint16_t>(*reinterpret_cast<const uint16_t*>(p), 0x7F80);
    } else if constexpr (std::is_same_v<T, float>) {
      return float_key<uint32_t>(*reinterpret_cast<const uint32_t*>(p), 0x7F800000u);
    } else if constexpr (std::is_same_v<T, double>) {
      return float_key<uint64_t>(*reinterpret_cast<const uint64_t*>(p), 0x7FF0000000000000ull);
    } else {  // signed integers: flip the sign bit
      using S = std::make_unsigned_t<T>;
      return K(S(S(*p) ^ S(S(1) << (8 * sizeof(T) - 1))));
    }
  }
  static constexpr K mask() { return bits == 8 * int(sizeof(K)) ? K(~K(0)) : K((K(1) << bits) - 1); }
  static constexpr bool is_float = cpu::is_float_v<T>;
};

// The sortable dtypes: the real ones and bool.
template <typename F> void visit_sortable(DType t, F&& f) {
  if (is_floating(t)) cpu::visit_float(t, f);
  else cpu::visit_int(t, f);
}

// ---------------------------------------------------------------- sorting

// keys[t], pos[t] for element i of line l (t = l * n + i): i's key (inverted
// when `flip` is the key mask) and i.
template <typename T>
__global__ void line_keys(const T* x, AxisLines g, typename SortKey<T>::K flip, typename SortKey<T>::K* keys,
                          int32_t* pos) {
  OAR_GRID_LOOP(t, g.nlines * g.len) {
    const int64_t l = t / g.len, i = t - l * g.len;
    keys[t] = SortKey<T>::of(x + g.offset(l) + i * g.step) ^ flip;
    pos[t] = int32_t(i);
  }
}

__global__ void segment_starts(int64_t* off, int64_t lines, int64_t n) { OAR_GRID_LOOP(l, lines + 1) off[l] = l * n; }

// Temporary device memory for a CUB call: size it, allocate it, run it.
template <typename Call> void with_temp(const char* api, Device dev, Call&& call) {
  size_t bytes = 0;
  cuda_check(call(nullptr, bytes), api, "cub (temporary storage size)");
  Tensor tmp = empty_tensor({int64_t(std::max<size_t>(bytes, 1))}, DType::UInt8, dev);
  cuda_check(call(tmp.raw_data(), bytes), api, "cub");
}

// Sorts each line of n (key, position) pairs stably by key, from (ki, pi) into (ko, po).
template <typename K>
void sort_lines(const char* api, Device dev, const K* ki, K* ko, const int32_t* pi, int32_t* po, int64_t lines,
                int64_t n, int bits) {
  if (lines == 0 || n == 0) return;
  auto radix = [&](int64_t first, int64_t count) {
    with_temp(api, dev, [&](void* tmp, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(tmp, bytes, ki + first, ko + first, pi + first, po + first, count, 0,
                                             bits, cudaStreamLegacy);
    });
  };
  if (lines == 1) return radix(0, n);
  if (n >= 32768 && lines <= 64) {  // few long lines: a device-wide sort each
    for (int64_t l = 0; l < lines; ++l) radix(l * n, n);
    return;
  }
  Tensor off = empty_tensor({lines + 1}, DType::Int64, dev);
  int64_t* op = off.data<int64_t>();
  launch(api, lines + 1, segment_starts, op, lines, n);
  with_temp(api, dev, [&](void* tmp, size_t& bytes) {
    return cub::DeviceSegmentedSort::StableSortPairs(tmp, bytes, ki, ko, pi, po, lines * n, lines,
                                                     static_cast<const int64_t*>(op),
                                                     static_cast<const int64_t*>(op + 1), cudaStreamLegacy);
  });
}

// The positions, in sorted order, of every line of x along `axis`: pos[l * n + i]
// for line l; keys alongside (sorted ascending after any inversion).
struct SortedLines {
  Tensor keys, pos;
};
template <typename T>
SortedLines sort_along(const char* api, const Tensor& x, const AxisLines& g, bool descending) {
  using K = typename SortKey<T>::K;
  const int64_t total = g.nlines * g.len;
  OAR_CHECK(g.len <= INT32_MAX, NotImplemented, "[", api, "] lines of more than ", INT32_MAX,
            " elements are not supported on CUDA, got ", g.len);
  const Device dev = x.device();
  Tensor kin = empty_tensor({total * int64_t(sizeof(K))}, DType::UInt8, dev);
  Tensor pin = empty_tensor({total}, DType::Int32, dev);
  SortedLines r{empty_tensor({total * int64_t(sizeof(K))}, DType::UInt8, dev),
                empty_tensor({total}, DType::Int32, dev)};
  K* kp = static_cast<K*>(kin.raw_data());
  launch(api, total, line_keys<T>, x.data<T>(), g, descending ? SortKey<T>::mask() : K(0), kp, pin.data<int32_t>());
  sort_lines<K>(api, dev, kp, static_cast<K*>(r.keys.raw_data()), pin.data<int32_t>(), r.pos.data<int32_t>(),
                g.nlines, g.len, SortKey<T>::bits);
  return r;
}

// out viewed as [outer, k, inner] gets the first k sorted positions of each line.
__global__ void write_first(int64_t* out, const int32_t* pos, int64_t total, int64_t k, int64_t inner, int64_t n) {
  OAR_GRID_LOOP(t, total) {
    const int64_t q = t / inner, in = t - q * inner, o = q / k, i = q - o * k;
    out[t] = pos[(o * inner + in) * n + i];
  }
}

// The indices of the first k elements of each line in sorted order: the
// CPU's sorted_indices (stable, NaN last, Note [CUDA sort keys]).
void sorted_indices(const char* api, const Tensor& x, Tensor& out, int64_t axis, int64_t k, bool descending) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device().index);
  AxisLines g(x.shape(), x.strides(), axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape()[size_t(d)];
  visit_sortable(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    SortedLines s = sort_along<T>(api, x, g, descending);
    launch(api, out.numel(), write_first, out.data<int64_t>(), static_cast<const int32_t*>(s.pos.data<int32_t>()),
           out.numel(), k, inner, g.len);
  });
}

void argsort_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const int64_t axis = a.i(0);
  sorted_indices("oar.argsort", in[0], out[0], axis, in[0].shape()[size_t(axis)], a.b(1));
}

void topk_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  sorted_indices("oar.topk", in[0], out[0], a.i(1), a.i(0), a.b(2));
}

// ------------------------------------------------------------ median_index

// The lower and upper middle positions of each sorted line; a line holding
// NaN (whose keys sort last) gives its first NaN for both.
template <typename K, bool Float>
__global__ void middles(const K* keys, const int32_t* pos, int64_t lines, int64_t n, K nan_key, int64_t* lo,
                        int64_t* hi) {
  OAR_GRID_LOOP(l, lines) {
    const K* kl = keys + l * n;
    const int32_t* pl = pos + l * n;
    if (Float && kl[n - 1] == nan_key) {
      // The first NaN in sorted order is the line's first NaN (the sort is stable).
      int64_t a = 0, b = n - 1;
      while (a < b) {
        const int64_t m = (a + b) / 2;
        if (kl[m] == nan_key) b = m;
        else a = m + 1;
      }
      lo[l] = hi[l] = pl[a];
      continue;
    }
    lo[l] = pl[(n - 1) / 2];
    hi[l] = pl[n / 2];
  }
}

void median_index_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.median";
  const Tensor& x = in[0];
  AxisLines g(x.shape(), x.strides(), a.i(0));
  if (g.nlines == 0) return;
  DeviceGuard guard(out[0].device().index);
  visit_sortable(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using K = typename SortKey<T>::K;
    SortedLines s = sort_along<T>(api, x, g, false);
    launch(api, g.nlines, middles<K, SortKey<T>::is_float>, static_cast<const K*>(s.keys.raw_data()),
           static_cast<const int32_t*>(s.pos.data<int32_t>()), g.nlines, g.len, SortKey<T>::mask(),
           out[0].data<int64_t>(), out[1].data<int64_t>());
  });
}

// ------------------------------------------------------------- unique_rows

template <typename T>
__global__ void column_keys(const T* x, const int32_t* perm, int64_t n, int64_t m, int64_t c,
                            typename SortKey<T>::K* keys) {
  OAR_GRID_LOOP(r, n) keys[r] = SortKey<T>::of(x + int64_t(perm[r]) * m + c);
}
__global__ void iota32(int32_t* p, int64_t n) { OAR_GRID_LOOP(i, n) p[i] = int32_t(i); }

// flag[r] = 1 where sorted row r starts a new group (differs from row r - 1).
template <typename T> __global__ void row_starts(const T* x, const int32_t* perm, int64_t n, int64_t m, int64_t* flag) {
  OAR_GRID_LOOP(r, n) {
    int64_t f = r == 0;
    if (!f) {
      const T* a = x + int64_t(perm[r - 1]) * m;
      const T* b = x + int64_t(perm[r]) * m;
      for (int64_t c = 0; c < m && !f; ++c) f = SortKey<T>::of(a + c) != SortKey<T>::of(b + c);
    }
    flag[r] = f;
  }
}

// group[r] (inclusive count of starts) numbers sorted row r's group from 1.
__global__ void group_outputs(const int32_t* perm, const int64_t* flag, const int64_t* group, int64_t n,
                              int64_t* first, int64_t* inverse, int64_t* start) {
  OAR_GRID_LOOP(r, n) {
    const int64_t u = group[r] - 1;
    if (flag[r]) {
      first[u] = perm[r];
      start[u] = r;
    }
    inverse[perm[r]] = u;
  }
}
__global__ void group_counts(const int64_t* start, int64_t groups, int64_t n, int64_t* counts) {
  OAR_GRID_LOOP(u, groups) counts[u] = (u + 1 < groups ? start[u + 1] : n) - start[u];
}

void inclusive_sum(const char* api, Device dev, const int64_t* in, int64_t* out, int64_t n) {
  with_temp(api, dev, [&](void* tmp, size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, n, cudaStreamLegacy);
  });
}

int64_t read_back(const char* api, const int64_t* p) {
  int64_t v = 0;
  cuda_check(cudaMemcpy(&v, p, sizeof(v), cudaMemcpyDeviceToHost), api, "cudaMemcpy");
  return v;
}

// Rows of a dense [n, m] tensor sorted lexicographically (stable, by one
// radix sort per column from the last): the first occurrence of each distinct
// row, the inverse map and the counts, as the CPU kernel.
void unique_rows_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const char* api = "oar.unique";
  Tensor x = dense(in[0]);
  const int64_t n = x.shape()[0], m = x.shape()[1];
  const Device dev = x.device();
  DeviceGuard guard(dev.index);
  if (n == 0) {
    for (int i = 0; i < 3; ++i) out[size_t(i)] = empty_tensor(Dims{0}, DType::Int64, dev);
    return;
  }
  OAR_CHECK(n <= INT32_MAX, NotImplemented, "[", api, "] more than ", INT32_MAX,
            " rows are not supported on CUDA, got ", n);
  visit_sortable(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using K = typename SortKey<T>::K;
    Tensor perm = empty_tensor({n}, DType::Int32, dev), perm2 = empty_tensor({n}, DType::Int32, dev);
    launch(api, n, iota32, perm.data<int32_t>(), n);
    if (m > 0) {
      Tensor keys = empty_tensor({n * int64_t(sizeof(K))}, DType::UInt8, dev);
      Tensor keys2 = empty_tensor({n * int64_t(sizeof(K))}, DType::UInt8, dev);
      K* kp = static_cast<K*>(keys.raw_data());
      for (int64_t c = m - 1; c >= 0; --c) {
        launch(api, n, column_keys<T>, x.data<T>(), static_cast<const int32_t*>(perm.data<int32_t>()), n, m, c, kp);
        sort_lines<K>(api, dev, kp, static_cast<K*>(keys2.raw_data()), perm.data<int32_t>(), perm2.data<int32_t>(), 1,
                      n, SortKey<T>::bits);
        std::swap(perm, perm2);
      }
    }
    const int32_t* pp = perm.data<int32_t>();
    Tensor flag = empty_tensor({n}, DType::Int64, dev), group = empty_tensor({n}, DType::Int64, dev);
    launch(api, n, row_starts<T>, x.data<T>(), pp, n, m, flag.data<int64_t>());
    inclusive_sum(api, dev, flag.data<int64_t>(), group.data<int64_t>(), n);
    const int64_t groups = read_back(api, group.data<int64_t>() + (n - 1));
    out[0] = empty_tensor(Dims{groups}, DType::Int64, dev);
    out[1] = empty_tensor(Dims{n}, DType::Int64, dev);
    out[2] = empty_tensor(Dims{groups}, DType::Int64, dev);
    Tensor start = empty_tensor({groups}, DType::Int64, dev);
    launch(api, n, group_outputs, pp, static_cast<const int64_t*>(flag.data<int64_t>()),
           static_cast<const int64_t*>(group.data<int64_t>()), n, out[0].data<int64_t>(), out[1].data<int64_t>(),
           start.data<int64_t>());
    launch(api, groups, group_counts, static_cast<const int64_t*>(start.data<int64_t>()), groups, n,
           out[2].data<int64_t>());
  });
}

// ----------------------------------------------------------------- nonzero

__global__ void bool_flags(const bool* p, int64_t n, int64_t* f) { OAR_GRID_LOOP(i, n) f[i] = p[i] ? 1 : 0; }

struct Coords {
  int nd = 0;
  int64_t shape[kMaxRank];
};
// Row (rank[i] - 1) of out gets the coordinates of each true element i.
__global__ void write_coords(const bool* p, const int64_t* rank, int64_t n, Coords s, int64_t* out) {
  OAR_GRID_LOOP(i, n) {
    if (!p[i]) continue;
    int64_t* o = out + (rank[i] - 1) * s.nd;
    int64_t rem = i;
    for (int d = s.nd - 1; d >= 0; --d) {
      const int64_t q = rem / s.shape[d];
      o[d] = rem - q * s.shape[d];
      rem = q;
    }
  }
}

void nonzero_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const char* api = "oar.nonzero";
  Tensor x = dense(in[0]);
  const int64_t n = x.numel(), nd = x.dim();
  const Device dev = x.device();
  DeviceGuard guard(dev.index);
  if (n == 0) {
    out[0] = empty_tensor(Dims{0, nd}, DType::Int64, dev);
    return;
  }
  Tensor flag = empty_tensor({n}, DType::Int64, dev), rank = empty_tensor({n}, DType::Int64, dev);
  launch(api, n, bool_flags, x.data<bool>(), n, flag.data<int64_t>());
  inclusive_sum(api, dev, flag.data<int64_t>(), rank.data<int64_t>(), n);
  const int64_t cnt = read_back(api, rank.data<int64_t>() + (n - 1));
  out[0] = empty_tensor(Dims{cnt, nd}, DType::Int64, dev);
  if (cnt == 0 || nd == 0) return;
  Coords s;
  s.nd = int(nd);
  for (int d = 0; d < s.nd; ++d) s.shape[d] = x.shape()[size_t(d)];
  launch(api, n, write_coords, x.data<bool>(), static_cast<const int64_t*>(rank.data<int64_t>()), n, s,
         out[0].data<int64_t>());
}

// ------------------------------------------------------------ searchsorted

// For each value, its insertion point in its row of the sorted sequence
// (lower or upper bound in the CPU's order, through the keys).
template <typename T>
__global__ void search_rows(const T* s, const T* v, int64_t total, int64_t n, int64_t nv, bool batched, bool right,
                            int64_t* out) {
  using K = typename SortKey<T>::K;
  OAR_GRID_LOOP(t, total) {
    const T* row = batched ? s + (t / nv) * n : s;
    const K kv = SortKey<T>::of(v + t);
    int64_t a = 0, b = n;
    while (a < b) {
      const int64_t m = (a + b) / 2;
      const K km = SortKey<T>::of(row + m);
      if (right ? !(kv < km) : km < kv) a = m + 1;
      else b = m;
    }
    out[t] = a;
  }
}

void searchsorted_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.searchsorted";
  Tensor s = dense(in[0]), v = dense(in[1]);
  const int64_t n = s.shape().back();
  const int64_t nv = std::max<int64_t>(v.dim() == 0 ? 1 : v.shape().back(), 1);
  if (v.numel() == 0) return;
  DeviceGuard guard(out[0].device().index);
  visit_sortable(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    launch(api, v.numel(), search_rows<T>, s.data<T>(), v.data<T>(), v.numel(), n, nv, s.dim() > 1, a.b(0),
           out[0].data<int64_t>());
  });
}

#define OAR_SORTABLE_DTYPES                                                                   \
  { DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64,        \
    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64 }

const bool r1 = register_real("argsort", argsort_kernel, OAR_SORTABLE_DTYPES);
const bool r2 = register_real("topk", topk_kernel, OAR_SORTABLE_DTYPES);
const bool r3 = register_real("median_index", median_index_kernel, OAR_REAL_DTYPES);
const bool r4 = register_real("unique_rows", unique_rows_kernel, OAR_SORTABLE_DTYPES);
const bool r5 = register_real("nonzero", nonzero_kernel, {DType::Bool});
const bool r6 = register_real("searchsorted", searchsorted_kernel, OAR_SORTABLE_DTYPES);

}  // namespace
}  // namespace oar::cuda

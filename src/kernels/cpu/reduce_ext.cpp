// Kernels of the single-axis reductions and scans (ops/reduce_ext.cpp):
// argmax/argmin, cumsum/cumprod, cummax/cummin, median_index, and the
// gather/scatter-add along an axis that their gradients use.
//
// Every kernel here walks "lines": the elements of one axis for a fixed index
// of all the other dims. AxisLines maps a line number to its first element, so
// strided inputs need no copy; outputs are contiguous (allocated by dispatch).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/wrap.h"

namespace oar::cpu {
namespace {

struct AxisLines {
  int nd = 0;
  int64_t shape[kMaxDims], stride[kMaxDims];  // the non-axis dims
  int64_t len = 1, step = 0;                  // the axis
  int64_t nlines = 1;

  AxisLines(const Dims& sh, const Dims& st, int64_t axis) {
    for (int64_t d = 0; d < int64_t(sh.size()); ++d) {
      if (d == axis) { len = sh[d]; step = st[d]; continue; }
      shape[nd] = sh[d]; stride[nd] = st[d]; ++nd;
      nlines *= sh[d];
    }
  }
  AxisLines(const Tensor& t, int64_t axis) : AxisLines(t.shape(), t.strides(), axis) {}
  int64_t offset(int64_t line) const {
    int64_t off = 0;
    for (int i = nd - 1; i >= 0; --i) { off += (line % shape[i]) * stride[i]; line /= shape[i]; }
    return off;
  }
};

// Lines are independent: one line per task, several lines per thread.
template <typename F> void for_lines(int64_t nlines, int64_t len, F&& f) {
  parallel_for(nlines, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)), [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) f(l);
  });
}

template <typename A> bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
  else return false;
}

// ---- argmax / argmin: attrs axis, keepdim, dtype. The first NaN wins, like NumPy.
template <bool Max> void arg_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  AxisLines g(x, a.i(0));
  visit_real(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = compute_t<T>;
    const T* px = x.data<T>();
    auto run = [&](auto* po) {
      using O = std::remove_pointer_t<decltype(po)>;
      for_lines(g.nlines, g.len, [&](int64_t l) {
        const T* p = px + g.offset(l);
        A best = A(p[0]);
        int64_t bi = 0;
        if (!is_nan(best)) {
          for (int64_t i = 1; i < g.len; ++i) {
            A v = A(p[i * g.step]);
            if (is_nan(v)) { bi = i; break; }
            if (Max ? v > best : v < best) { best = v; bi = i; }
          }
        }
        po[l] = O(bi);
      });
    };
    if (out[0].dtype() == DType::Int32) run(out[0].data<int32_t>());
    else run(out[0].data<int64_t>());
  });
}

// ---- cumsum / cumprod: attrs axis, reverse.
template <typename T> using acc_t = std::conditional_t<std::is_integral_v<T>, T, compute_t<T>>;

template <bool Prod> void scan_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t axis = a.i(0);
  bool reverse = a.b(1);
  AxisLines gi(x, axis);
  AxisLines go(out[0].shape(), contiguous_strides(out[0].shape()), axis);
  visit_numeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* px = x.data<T>();
    T* po = out[0].data<T>();
    for_lines(gi.nlines, gi.len, [&](int64_t l) {
      const T* p = px + gi.offset(l);
      T* o = po + go.offset(l);
      A acc = Prod ? A(1) : A(0);
      for (int64_t k = 0; k < gi.len; ++k) {
        int64_t i = reverse ? gi.len - 1 - k : k;
        if constexpr (std::is_same_v<T, bool>) acc = Prod ? (acc && p[i * gi.step]) : (acc || p[i * gi.step]);
        else if constexpr (Prod) acc = wrap_mul(acc, A(p[i * gi.step]));
        else acc = wrap_add(acc, A(p[i * gi.step]));
        o[i * go.step] = T(acc);
      }
    });
  });
}

// ---- cummax / cummin: outputs values and int64 indices. A tie or a NaN moves
// the index forward (Paddle's rule); once NaN is seen it stays.
template <bool Max> void cumext_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  int64_t axis = a.i(0);
  AxisLines gi(x, axis);
  AxisLines go(out[0].shape(), contiguous_strides(out[0].shape()), axis);
  visit_real(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = compute_t<T>;
    const T* px = x.data<T>();
    T* pv = out[0].data<T>();
    int64_t* pi = out[1].data<int64_t>();
    for_lines(gi.nlines, gi.len, [&](int64_t l) {
      const T* p = px + gi.offset(l);
      int64_t ob = go.offset(l);
      A best = A(0);
      int64_t bi = 0;
      for (int64_t i = 0; i < gi.len; ++i) {
        A v = A(p[i * gi.step]);
        if (i == 0 || is_nan(v) || (!is_nan(best) && (Max ? v >= best : v <= best))) { best = v; bi = i; }
        pv[ob + i * go.step] = T(best);
        pi[ob + i * go.step] = bi;
      }
    });
  });
}

// ---- median_index: the positions of the lower and upper middle values of each
// line (equal for odd lengths); outputs have the axis kept with size 1. A line
// holding NaN gives the position of its first NaN for both.
void median_index_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  AxisLines g(x, a.i(0));
  int64_t* lo = out[0].data<int64_t>();
  int64_t* hi = out[1].data<int64_t>();
  int64_t n = g.len;
  visit_real(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = compute_t<T>;
    const T* px = x.data<T>();
    // One scratch line per thread, allocated here: nothing may throw inside
    // the parallel region. A serial run uses slot 0 whatever its thread id.
    int nbufs = std::max(1, omp_get_max_threads());
    std::vector<std::pair<A, int64_t>> scratch(size_t(nbufs) * size_t(n));
    parallel_for(g.nlines, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      int slot = (b == 0 && e == g.nlines) ? 0 : std::min(omp_get_thread_num(), nbufs - 1);
      auto* buf = scratch.data() + size_t(slot) * size_t(n);
      for (int64_t l = b; l < e; ++l) {
        const T* p = px + g.offset(l);
        int64_t nan_at = -1;
        for (int64_t i = 0; i < n; ++i) {
          A v = A(p[i * g.step]);
          if (is_nan(v)) { nan_at = i; break; }
          buf[i] = {v, i};
        }
        if (nan_at >= 0) { lo[l] = hi[l] = nan_at; continue; }
        int64_t kl = (n - 1) / 2, kh = n / 2;
        std::nth_element(buf, buf + kl, buf + n);
        lo[l] = buf[kl].second;
        if (kh != kl) {
          // The upper middle is the smallest element after the lower one.
          auto* it = std::min_element(buf + kh, buf + n);
          hi[l] = it->second;
        } else {
          hi[l] = lo[l];
        }
      }
    });
  });
}

// ---- pick_along_axis: out[.., j, ..] = x[.., idx[.., j, ..], ..] (attrs: axis).
// put_add_along_axis: out = zeros(shape); out[.., idx[.., j, ..], ..] += src[.., j, ..]
// (attrs: axis, shape). Indices are validated here, before any thread starts.
void check_indices(const Tensor& idx, const AxisLines& gi, int64_t limit, const char* op) {
  const int64_t* pi = idx.data<int64_t>();
  for (int64_t l = 0; l < gi.nlines; ++l) {
    const int64_t* p = pi + gi.offset(l);
    for (int64_t j = 0; j < gi.len; ++j) {
      int64_t v = p[j * gi.step];
      OAR_CHECK(v >= 0 && v < limit, Index, "[oar.", op, "] index ", v, " is out of range for an axis of size ", limit);
    }
  }
}

void pick_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  const Tensor& idx = in[1];
  int64_t axis = a.i(0);
  AxisLines gx(x, axis), gi(idx, axis);
  AxisLines go(out[0].shape(), contiguous_strides(out[0].shape()), axis);
  check_indices(idx, gi, gx.len, "pick_along_axis");
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    const int64_t* pi = idx.data<int64_t>();
    T* po = out[0].data<T>();
    for_lines(gi.nlines, gi.len, [&](int64_t l) {
      const T* p = px + gx.offset(l);
      const int64_t* q = pi + gi.offset(l);
      T* o = po + go.offset(l);
      for (int64_t j = 0; j < gi.len; ++j) o[j * go.step] = p[q[j * gi.step] * gx.step];
    });
  });
}

void put_add_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& src = in[0];
  const Tensor& idx = in[1];
  int64_t axis = a.i(0);
  AxisLines gs(src, axis), gi(idx, axis);
  AxisLines go(out[0].shape(), contiguous_strides(out[0].shape()), axis);
  check_indices(idx, gi, go.len, "put_add_along_axis");
  visit_numeric(src.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* ps = src.data<T>();
    const int64_t* pi = idx.data<int64_t>();
    T* po = out[0].data<T>();
    std::fill(po, po + out[0].numel(), T(0));
    // Each line of the output is written by one task only.
    for_lines(gi.nlines, gi.len, [&](int64_t l) {
      const T* p = ps + gs.offset(l);
      const int64_t* q = pi + gi.offset(l);
      T* o = po + go.offset(l);
      for (int64_t j = 0; j < gi.len; ++j) {
        T& d = o[q[j * gi.step] * go.step];
        d = T(A(d) + A(p[j * gs.step]));
      }
    });
  });
}

KernelRegistrar r1("argmax", DeviceType::CPU, OAR_REAL_DTYPES, arg_kernel<true>);
KernelRegistrar r2("argmin", DeviceType::CPU, OAR_REAL_DTYPES, arg_kernel<false>);
KernelRegistrar r3("cumsum", DeviceType::CPU, OAR_NUMERIC_DTYPES, scan_kernel<false>);
KernelRegistrar r4("cumprod", DeviceType::CPU, OAR_NUMERIC_DTYPES, scan_kernel<true>);
KernelRegistrar r5("cummax", DeviceType::CPU, OAR_REAL_DTYPES, cumext_kernel<true>);
KernelRegistrar r6("cummin", DeviceType::CPU, OAR_REAL_DTYPES, cumext_kernel<false>);
KernelRegistrar r7("median_index", DeviceType::CPU, OAR_REAL_DTYPES, median_index_kernel);
KernelRegistrar r8("pick_along_axis", DeviceType::CPU, OAR_ALL_DTYPES, pick_kernel);
KernelRegistrar r9("put_add_along_axis", DeviceType::CPU, OAR_NUMERIC_DTYPES, put_add_kernel);

}  // namespace
}  // namespace oar::cpu

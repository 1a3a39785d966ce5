// Reduction kernels over any set of axes of a strided tensor.
//
// Note [reduction layout]
// The kept dims index the outputs and the reduced dims are walked for each
// output. Reduced dims are merged where contiguous so that the common cases,
// reducing trailing axes or the whole tensor, become one dense inner loop the
// compiler vectorises. Few outputs over many inputs split the reduced range
// across threads and combine partial results.
#include <cmath>
#include <memory>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/wrap.h"

namespace oar::cpu {
namespace {

constexpr int kLanes = 32;  // partial results per dense inner loop

struct ReduceGeometry {
  int nk = 0, nr = 0;
  int64_t kshape[kMaxDims], kstride[kMaxDims], ostride[kMaxDims];
  int64_t rshape[kMaxDims], rstride[kMaxDims];
  int64_t nout = 1, nred = 1;

  ReduceGeometry(const Tensor& x, const Tensor& out, const Dims& axes) {
    Dims ostr = contiguous_strides(out.shape());
    size_t k = 0;
    int od = 0;
    bool keepdim = out.dim() == x.dim();
    for (int64_t d = 0; d < x.dim(); ++d) {
      bool red = k < axes.size() && axes[k] == d;
      if (red) {
        ++k;
        if (x.shape()[d] != 1) { rshape[nr] = x.shape()[d]; rstride[nr] = x.strides()[d]; ++nr; }
        if (keepdim) ++od;
      } else {
        if (x.shape()[d] != 1) { kshape[nk] = x.shape()[d]; kstride[nk] = x.strides()[d]; ostride[nk] = ostr[od]; ++nk; }
        ++od;
      }
    }
    // Merge reduced dims that are contiguous with each other.
    int m = 0;
    for (int i = 0; i < nr; ++i) {
      if (m > 0 && rstride[m - 1] == rstride[i] * rshape[i]) {
        rshape[m - 1] *= rshape[i];
        rstride[m - 1] = rstride[i];
      } else {
        rshape[m] = rshape[i]; rstride[m] = rstride[i]; ++m;
      }
    }
    nr = m;
    for (int i = 0; i < nk; ++i) nout *= kshape[i];
    for (int i = 0; i < nr; ++i) nred *= rshape[i];
  }

  int64_t in_offset(int64_t o) const {  // input element offset of output o's slice
    int64_t off = 0;
    for (int i = nk - 1; i >= 0; --i) { off += (o % kshape[i]) * kstride[i]; o /= kshape[i]; }
    return off;
  }
  int64_t out_offset(int64_t o) const {
    int64_t off = 0;
    for (int i = nk - 1; i >= 0; --i) { off += (o % kshape[i]) * ostride[i]; o /= kshape[i]; }
    return off;
  }
};

// R: init(), step(acc, x), combine(a, b), finish(acc, n).
template <typename T, typename R>
typename R::Acc reduce_range(const T* base, const ReduceGeometry& g, int64_t begin, int64_t end, const R& r) {
  using Acc = typename R::Acc;
  Acc acc = r.init();
  if (begin >= end) return acc;  // empty range: a zero-size reduced dim must not reach the % below
  if (g.nr == 0) {
    if (begin < end) acc = r.step(acc, base[0]);
    return acc;
  }
  int last = g.nr - 1;
  int64_t idx[kMaxDims];
  int64_t rem = begin;
  for (int d = last; d >= 0; --d) { idx[d] = rem % g.rshape[d]; rem /= g.rshape[d]; }
  int64_t pos = begin;
  while (pos < end) {
    const T* p = base;
    for (int d = 0; d <= last; ++d) p += idx[d] * g.rstride[d];
    int64_t n = std::min(g.rshape[last] - idx[last], end - pos);
    if (g.rstride[last] == 1) acc = r.combine(acc, r.dense(p, n));
    else for (int64_t i = 0; i < n; ++i) acc = r.step(acc, p[i * g.rstride[last]]);
    pos += n;
    idx[last] += n;
    for (int d = last; d > 0 && idx[d] >= g.rshape[d]; --d) { idx[d] = 0; ++idx[d - 1]; }
  }
  return acc;
}

template <typename T, typename O, typename R>
void run_reduce(const Tensor& x, Tensor& out, const Dims& axes, const R& r) {
  ReduceGeometry g(x, out, axes);
  const T* in = x.data<T>();
  O* o = out.data<O>();
  using Acc = typename R::Acc;
  int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  // Leading axes reduced, a dense trailing block kept (bias gradients, sums
  // over the batch): add whole rows into a block of accumulators, so the
  // loads stay contiguous instead of walking each column with a stride.
  if (g.nk == 1 && g.nr == 1 && g.kstride[0] == 1 && g.ostride[0] == 1 && g.rstride[0] == g.kshape[0] &&
      g.kshape[0] >= 16) {
    const int64_t K = g.kshape[0], rows = g.rshape[0];
    constexpr int64_t kCols = 512;
    parallel_for((K + kCols - 1) / kCols, std::max<int64_t>(1, kParallelGrain / (rows * kCols)),
                 [&](int64_t b, int64_t e) {
      Acc acc[kCols];
      for (int64_t blk = b; blk < e; ++blk) {
        int64_t c0 = blk * kCols, w = std::min(kCols, K - c0);
        for (int64_t j = 0; j < w; ++j) acc[j] = r.init();
        for (int64_t i = 0; i < rows; ++i) {
          const T* row = in + i * K + c0;
#pragma omp simd
          for (int64_t j = 0; j < w; ++j) acc[j] = r.step(acc[j], row[j]);
        }
        for (int64_t j = 0; j < w; ++j) o[c0 + j] = convert<O>(r.finish(acc[j], rows));
      }
    });
    return;
  }
  if (g.nout >= nt * 4 || g.nred < 4 * kParallelGrain) {
    parallel_for(g.nout, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.nred, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[g.out_offset(i)] = convert<O>(r.finish(reduce_range(in + g.in_offset(i), g, 0, g.nred, r), g.nred));
    });
    return;
  }
  // Few outputs: split each reduction across threads.
  for (int64_t i = 0; i < g.nout; ++i) {
    std::unique_ptr<Acc[]> part(new Acc[nt]);
    for (int t = 0; t < nt; ++t) part[t] = r.init();
    const T* base = in + g.in_offset(i);
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num();
      int64_t b = g.nred * t / nt, e = g.nred * (t + 1) / nt;
      part[t] = reduce_range(base, g, b, e, r);
    }
    Acc acc = r.init();
    for (int t = 0; t < nt; ++t) acc = r.combine(acc, part[t]);
    o[g.out_offset(i)] = convert<O>(r.finish(acc, g.nred));
  }
}

template <typename T, typename A> struct SumR {
  using Acc = A;
  Acc init() const { return Acc(0); }
  Acc step(Acc a, T x) const { return wrap_add(a, Acc(compute_t<T>(x))); }
  Acc combine(Acc a, Acc b) const { return wrap_add(a, b); }
  Acc dense(const T* p, int64_t n) const {
    Acc s = Acc(0);
    if constexpr (is_complex_v<Acc>) {
      for (int64_t i = 0; i < n; ++i) s += Acc(p[i]);  // complex
    } else {
      // Independent lanes: one accumulator chain would bound the loop by the
      // add latency rather than by memory bandwidth.
      Acc lane[kLanes] = {};
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes)
#pragma omp simd
        for (int k = 0; k < kLanes; ++k) lane[k] = wrap_add(lane[k], Acc(compute_t<T>(p[i + k])));
      for (; i < n; ++i) s = wrap_add(s, Acc(compute_t<T>(p[i])));
      for (int k = 0; k < kLanes; ++k) s = wrap_add(s, lane[k]);
    }
    return s;
  }
  Acc finish(Acc a, int64_t) const { return a; }
};
template <typename T, typename A> struct MeanR : SumR<T, A> {
  A finish(A a, int64_t n) const { return a / A(double(n)); }
};
template <typename T, typename A> struct ProdR {
  using Acc = A;
  Acc init() const { return Acc(1); }
  Acc step(Acc a, T x) const { return wrap_mul(a, Acc(compute_t<T>(x))); }
  Acc combine(Acc a, Acc b) const { return wrap_mul(a, b); }
  Acc dense(const T* p, int64_t n) const {
    Acc s = Acc(1);
    for (int64_t i = 0; i < n; ++i) s = wrap_mul(s, Acc(compute_t<T>(p[i])));
    return s;
  }
  Acc finish(Acc a, int64_t) const { return a; }
};
template <typename T, bool Max> struct ExtremeR {
  using Acc = compute_t<T>;
  bool has_nan_init = false;
  Acc init() const {
    if constexpr (std::is_floating_point_v<Acc>) return Max ? -INFINITY : INFINITY;
    else return Max ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  static bool nan(Acc v) {
    if constexpr (std::is_floating_point_v<Acc>) return std::isnan(v);
    else return false;
  }
  Acc step(Acc a, T xs) const {
    Acc x = Acc(xs);
    if (nan(a)) return a;
    if (nan(x)) return x;
    return Max ? (x > a ? x : a) : (x < a ? x : a);
  }
  Acc combine(Acc a, Acc b) const { return step(a, T(b)); }
  Acc dense(const T* p, int64_t n) const {
    Acc s = init();
    int64_t i = 0;
    if constexpr (std::is_floating_point_v<Acc>) {
      // Independent lanes; a NaN, once taken into a lane, stays there (every
      // comparison with it is false), and step() lets it win at the end.
      Acc lane[kLanes];
      for (int k = 0; k < kLanes; ++k) lane[k] = s;
      for (; i + kLanes <= n; i += kLanes)
#pragma omp simd
        for (int k = 0; k < kLanes; ++k) {
          Acc x = Acc(p[i + k]);
          bool take = (Max ? x > lane[k] : x < lane[k]) || x != x;
          lane[k] = take ? x : lane[k];
        }
      for (int k = 0; k < kLanes; ++k) s = step(s, T(lane[k]));
    }
    for (; i < n; ++i) s = step(s, p[i]);
    return s;
  }
  Acc finish(Acc a, int64_t) const { return a; }
};

// Accumulator type: float for the 16-bit floats, int64 for integers.
template <typename T> using acc_t =
    std::conditional_t<std::is_integral_v<T>, int64_t, compute_t<T>>;

void sum_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_dtype(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    visit_dtype(out[0].dtype(), [&](auto otag) {
      using O = decltype(otag);
      if constexpr (std::is_same_v<O, T> || (std::is_integral_v<T> && std::is_same_v<O, int64_t>))
        run_reduce<T, O>(in[0], out[0], a.ints(0), SumR<T, acc_t<T>>{});
      else
        fail(ErrorKind::Runtime, "[oar.sum] unsupported dtype pair");
    });
  });
}
void mean_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_inexact(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>(in[0], out[0], a.ints(0), MeanR<T, compute_t<T>>{});
  });
}
void prod_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_numeric(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>(in[0], out[0], a.ints(0), ProdR<T, acc_t<T>>{});
  });
}
template <bool Max> void extreme_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_real(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    run_reduce<T, T>(in[0], out[0], a.ints(0), ExtremeR<T, Max>{});
  });
}

KernelRegistrar r1("sum", DeviceType::CPU, OAR_ALL_DTYPES, sum_kernel);
KernelRegistrar r2("mean", DeviceType::CPU, OAR_INEXACT_DTYPES, mean_kernel);
KernelRegistrar r3("prod", DeviceType::CPU, OAR_NUMERIC_DTYPES, prod_kernel);
KernelRegistrar r4("amax", DeviceType::CPU, OAR_REAL_DTYPES, extreme_kernel<true>);
KernelRegistrar r5("amin", DeviceType::CPU, OAR_REAL_DTYPES, extreme_kernel<false>);

}  // namespace
}  // namespace oar::cpu

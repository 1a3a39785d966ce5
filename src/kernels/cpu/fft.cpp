// CPU kernels of the FFT ops (ops/fft.h) on oneMKL's DFTI.
//
// Note [FFT on oneMKL]
// oneMKL was chosen by measurement (benchmarks/RESULTS.md, "FFT library
// choice"): it is the fastest of the libraries an Apache-2.0 project may
// ship with, for every size including primes. It is linked with its GNU
// OpenMP threading layer, so its threads are the libgomp pool our own kernels
// use (cmake/mathlibs.cmake).
//
// A multi-axis transform runs one axis at a time, in place on the output:
// the tensor is seen as [outer, len, inner] around the axis, and one DFTI
// descriptor transforms `inner` interleaved lines of stride `inner` (or,
// for the last axis, `outer` contiguous lines). The per-axis scale is set in
// the descriptor, so normalising costs no extra pass. Committed descriptors
// are cached by geometry: committing costs more than a small transform (a
// prime length sets up Bluestein's algorithm); a committed descriptor may be
// used by several threads at once.
//
// Threads: a small transform (threads_for) runs on one thread; a larger one
// either lets DFTI thread its batch or splits the `outer` loop over the
// OpenMP pool with single-threaded descriptors. (One multi-dimensional DFTI
// plan for trailing axes was measured slower than this per-axis scheme on
// AMD EPYC: 512 x 512 c2c 1250 us against 815 us on one thread.)
// Signs: DFTI's real transforms have fixed signs (forward exp(-i), backward
// exp(+i)); the other sign of a real transform is its conjugate, taken on
// the complex side.
#include <mkl_dfti.h>
#include <omp.h>

#include <array>
#include <cmath>
#include <complex>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "kernels/cpu/loops.h"
#include "ops/op.h"

namespace oar::cpu {
namespace {

// ---- descriptor cache
struct PlanKey {
  bool dbl, real;
  MKL_LONG n, fwd_stride, bwd_stride, fwd_dist, bwd_dist, batch;
  double scale;
  int threads;
  bool inplace;
  // A multi-dimensional real plan over dense row-major blocks (real_trailing):
  // the lengths of its 2 or 3 dimensions; dims[0] == 0 for 1-D plans.
  std::array<MKL_LONG, 3> dims{0, 0, 0};
  auto tie() const {
    return std::tie(dbl, real, n, fwd_stride, bwd_stride, fwd_dist, bwd_dist, batch, scale, threads, inplace, dims);
  }
  bool operator<(const PlanKey& o) const { return tie() < o.tie(); }
};

struct Plan {
  DFTI_DESCRIPTOR_HANDLE h = nullptr;
  ~Plan() {
    if (h) DftiFreeDescriptor(&h);
  }
};
using PlanPtr = std::shared_ptr<Plan>;

[[noreturn]] void dfti_fail(MKL_LONG status) {
  fail(ErrorKind::Runtime, "[oar.fft] oneMKL DFTI failed: ", DftiErrorMessage(status));
}

PlanPtr make_plan(const PlanKey& k) {
  auto p = std::make_shared<Plan>();
  const MKL_LONG rank = k.dims[0] == 0 ? 1 : k.dims[2] == 0 ? 2 : 3;
  const auto precision = k.dbl ? DFTI_DOUBLE : DFTI_SINGLE;
  const auto domain = k.real ? DFTI_REAL : DFTI_COMPLEX;
  MKL_LONG st = rank == 1 ? DftiCreateDescriptor(&p->h, precision, domain, 1, k.n)
                          : DftiCreateDescriptor(&p->h, precision, domain, rank, k.dims.data());
  auto set = [&](auto param, auto value) {
    if (st == 0) st = DftiSetValue(p->h, param, value);
  };
  // Strides: a 1-D plan's line stride; a multi-dimensional one is row-major,
  // its last dimension n / 2 + 1 bins long on the complex side.
  MKL_LONG fs[4] = {0, k.fwd_stride, 0, 0}, bs[4] = {0, k.bwd_stride, 0, 0};
  for (MKL_LONG d = rank, f = 1, b = 1; rank > 1 && d >= 1; --d) {
    fs[d] = f, bs[d] = b;
    const MKL_LONG len = k.dims[size_t(d - 1)];
    f *= len;
    b *= d == rank && k.real ? len / 2 + 1 : len;
  }
  set(DFTI_PLACEMENT, k.inplace ? DFTI_INPLACE : DFTI_NOT_INPLACE);
  if (k.real) set(DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX);
  if (st == 0) st = DftiSetValue(p->h, DFTI_FWD_STRIDES, fs);
  if (st == 0) st = DftiSetValue(p->h, DFTI_BWD_STRIDES, bs);
  set(DFTI_NUMBER_OF_TRANSFORMS, k.batch);
  set(DFTI_FWD_DISTANCE, k.fwd_dist);
  set(DFTI_BWD_DISTANCE, k.bwd_dist);
  if (k.dbl) {
    set(DFTI_FORWARD_SCALE, k.scale);
    set(DFTI_BACKWARD_SCALE, k.scale);
  } else {
    set(DFTI_FORWARD_SCALE, float(k.scale));
    set(DFTI_BACKWARD_SCALE, float(k.scale));
  }
  set(DFTI_THREAD_LIMIT, static_cast<MKL_LONG>(k.threads));
  if (st == 0) st = DftiCommitDescriptor(p->h);
  if (st != 0) dfti_fail(st);
  return p;
}

PlanPtr plan_for(const PlanKey& k) {
  static std::mutex mu;
  static std::map<PlanKey, PlanPtr> cache;
  constexpr size_t kCap = 128;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  // Callers hold their plan by shared_ptr: dropping the cache is safe.
  if (cache.size() >= kCap) cache.clear();
  return cache.emplace(k, make_plan(k)).first->second;
}

// ---- geometry
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisView view_of(const Dims& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[size_t(d)];
    else if (d > axis) v.inner *= shape[size_t(d)];
  }
  v.len = shape[size_t(axis)];
  return v;
}

// The per-axis scale of a transform of length n (ops/fft.h).
double axis_scale(const std::string& norm, bool forward, int64_t n) {
  if (norm == "ortho") return 1.0 / std::sqrt(double(n));
  bool scaled = norm == "backward" ? !forward : forward;
  return scaled ? 1.0 / double(n) : 1.0;
}

// A transform of length n makes about log2(n) passes over its elements, each
// heavier than an elementwise op's, so the threading threshold is counted in
// element-passes: 8 elementwise grains (64 x 1000 complex splits, one 4096
// does not).
int threads_for(int64_t elements, int64_t len) {
  const int64_t passes = std::max<int64_t>(1, int64_t(std::log2(double(std::max<int64_t>(len, 2)))));
  if (omp_in_parallel() || elements * passes < 8 * kParallelGrain) return 1;
  return std::max(1, omp_get_max_threads());
}

// Runs f(o) for o in [0, outer), over the pool when `threads` > 1; the first
// DFTI error is raised after the loop (never from inside a parallel region).
template <typename F> void for_outer(int64_t outer, int threads, F&& f) {
  if (threads <= 1 || outer < 2) {
    for (int64_t o = 0; o < outer; ++o)
      if (MKL_LONG st = f(o)) dfti_fail(st);
    return;
  }
  std::vector<MKL_LONG> status(size_t(threads), 0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    MKL_LONG st = f(o);
    if (st) status[size_t(omp_get_thread_num())] = st;
  }
  for (MKL_LONG st : status)
    if (st) dfti_fail(st);
}

// Complex transform along `axis` of `data` (shape `shape`), in place, or
// from `src` (same shape) when it is given and different: the last axis
// transforms straight from `src`, any other copies it into `data` first (a
// copy saved is a pass over the array: 64 x 1000: 86 -> 82 us).
template <typename R> void c2c_axis(std::complex<R>* data, const Dims& shape, int64_t axis, bool forward,
                                    double scale, const std::complex<R>* src = nullptr) {
  AxisView v = view_of(shape, axis);
  const int64_t numel = v.outer * v.len * v.inner;
  int nt = threads_for(numel, v.len);
  bool dbl = std::is_same_v<R, double>;
  if (src == data) src = nullptr;
  if (src && (v.inner != 1 || (v.len == 1 && scale == 1.0))) {
    parallel_for(numel, kParallelGrain, [&](int64_t b, int64_t e) { std::copy(src + b, src + e, data + b); });
    src = nullptr;
  }
  if (v.len == 1 && scale == 1.0) return;
  auto run = [forward](const PlanPtr& p, std::complex<R>* d) {
    return forward ? DftiComputeForward(p->h, d) : DftiComputeBackward(p->h, d);
  };
  if (v.inner == 1) {
    PlanPtr p = plan_for({dbl, false, v.len, 1, 1, v.len, v.len, v.outer, scale, nt, !src});
    // DFTI reads an out-of-place input without writing it, whatever the const-ness.
    auto* in = const_cast<std::complex<R>*>(src);
    MKL_LONG st = !src ? run(p, data)
                  : forward ? DftiComputeForward(p->h, in, data)
                            : DftiComputeBackward(p->h, in, data);
    if (st) dfti_fail(st);
    return;
  }
  // `inner` lines of stride `inner` per outer index. A power-of-two stride
  // maps a line's elements onto few cache sets, so DFTI's strided passes
  // over the array miss at every step: such lines are transformed in panels
  // of kPanel neighbouring lines, a panel's rows (kPanel contiguous elements
  // each) copied into a buffer that stays in cache, transformed there as
  // interleaved lines and copied back (512 x 512 c2c, one thread: 826 ->
  // 709 us). Panels are also the unit the pool splits.
  constexpr int64_t kPanel = 32;
  if ((v.inner & (v.inner - 1)) != 0 || v.inner < 2 * kPanel) {
    // Other strides do not alias in the cache: DFTI's strided transforms
    // straight on the array, threaded by DFTI when there is one outer
    // index and split over the pool otherwise.
    bool split = v.outer > 1 && nt > 1;
    PlanPtr p = plan_for({dbl, false, v.len, v.inner, v.inner, 1, 1, v.inner, scale, split ? 1 : nt, true});
    for_outer(v.outer, split ? nt : 1, [&](int64_t o) { return run(p, data + o * v.len * v.inner); });
    return;
  }
  const int64_t panels = v.inner / kPanel, tasks = v.outer * panels;  // inner: a power of two >= 2 kPanel
  const int pool = tasks > 1 ? nt : 1;
  PlanPtr p = plan_for({dbl, false, v.len, kPanel, kPanel, 1, 1, kPanel, scale, 1, true});
  std::vector<std::vector<std::complex<R>>> buffers(size_t(std::max(pool, 1)));
  for_outer(tasks, pool, [&](int64_t t) {
    const int64_t o = t / panels, j0 = (t % panels) * kPanel;
    auto& buf = buffers[size_t(pool > 1 ? omp_get_thread_num() : 0)];
    buf.resize(size_t(kPanel * v.len));
    std::complex<R>* base = data + o * v.len * v.inner + j0;
    for (int64_t i = 0; i < v.len; ++i) std::copy(base + i * v.inner, base + i * v.inner + kPanel, buf.data() + i * kPanel);
    MKL_LONG st = run(p, buf.data());
    for (int64_t i = 0; i < v.len; ++i) std::copy(buf.data() + i * kPanel, buf.data() + (i + 1) * kPanel, base + i * v.inner);
    return st;
  });
}

// Real <-> half-spectrum transform along `axis`: forward reads the real
// `re` (shape with len n) and writes the complex `cx` (m = n/2 + 1 bins);
// backward the reverse.
template <typename R> void real_axis(R* re, std::complex<R>* cx, const Dims& real_shape, int64_t axis, bool forward,
                                     double scale) {
  AxisView v = view_of(real_shape, axis);
  int64_t n = v.len, m = n / 2 + 1;
  int nt = threads_for(v.outer * n * v.inner, n);
  bool dbl = std::is_same_v<R, double>;
  auto run = [forward](const PlanPtr& p, R* r, std::complex<R>* c) {
    return forward ? DftiComputeForward(p->h, r, c) : DftiComputeBackward(p->h, c, r);
  };
  if (v.inner == 1) {
    PlanPtr p = plan_for({dbl, true, n, 1, 1, n, m, v.outer, scale, nt, false});
    if (MKL_LONG st = run(p, re, cx)) dfti_fail(st);
    return;
  }
  bool split = v.outer > 1 && nt > 1;
  PlanPtr p = plan_for({dbl, true, n, v.inner, v.inner, 1, 1, v.inner, scale, split ? 1 : nt, false});
  for_outer(v.outer, split ? nt : 1,
            [&](int64_t o) { return run(p, re + o * n * v.inner, cx + o * m * v.inner); });
}

// r2c over the last k = 2 or 3 axes in one multi-dimensional plan, when the
// transform is threaded: measured faster than the per-axis passes on two
// threads (64^3: 196 against 249 us) and slower on one (it is not used then).
// Returns false when the axes or the thread count do not fit.
template <typename R> bool r2c_trailing(const R* re, std::complex<R>* cx, const Dims& shape, const Dims& axes,
                                        double scale) {
  const int64_t r = int64_t(shape.size()), k = int64_t(axes.size());
  if (k < 2 || k > 3 || axes.back() != r - 1) return false;
  Dims sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  std::array<MKL_LONG, 3> dims{0, 0, 0};
  int64_t block = 1, numel = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (sorted[size_t(i)] != r - k + i) return false;
    dims[size_t(i)] = shape[size_t(r - k + i)];
    block *= shape[size_t(r - k + i)];
  }
  for (int64_t d : shape) numel *= d;
  const int nt = threads_for(numel, block);
  if (nt < 2 || block == 0) return false;
  const int64_t cblock = block / shape.back() * (shape.back() / 2 + 1);
  PlanPtr p = plan_for({std::is_same_v<R, double>, true, 0, 0, 0, block, cblock, numel / block, scale, nt, false,
                        dims});
  // DFTI reads its real input without writing it, whatever the const-ness.
  if (MKL_LONG st = DftiComputeForward(p->h, const_cast<R*>(re), cx)) dfti_fail(st);
  return true;
}

template <typename C> void conj_all(C* p, int64_t n) {
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = std::conj(p[i]);
  });
}

// ---- kernels (inputs contiguous: ops/fft.cpp makes them so)
template <typename R> void c2c_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  using C = std::complex<R>;
  const Tensor& x = in[0];
  Tensor& y = out[0];
  int64_t numel = x.numel();
  if (numel == 0) return;
  const C* xp = x.data<C>();
  C* yp = y.data<C>();
  bool forward = a.b(2);
  // The axes are separable: the last (contiguous) one goes first, out of
  // place from x; the first transform reads x, the others y in place.
  Dims axes = a.ints(0);
  std::stable_partition(axes.begin(), axes.end(), [&](int64_t ax) { return ax == int64_t(x.dim()) - 1; });
  for (int64_t ax : axes) {
    c2c_axis<R>(yp, x.shape(), ax, forward, axis_scale(a.s(1), forward, x.shape()[ax]), xp);
    xp = yp;
  }
  if (axes.empty()) parallel_for(numel, kParallelGrain, [&](int64_t b, int64_t e) { std::copy(xp + b, xp + e, yp + b); });
}

template <typename R> void r2c_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  using C = std::complex<R>;
  const Tensor& x = in[0];
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  const Dims& axes = a.ints(0);
  const std::string& norm = a.s(1);
  bool forward = a.b(2), onesided = a.b(3);
  int64_t last = axes.back();
  const R* xp = x.data<R>();
  C* yp = y.data<C>();
  // Both halves: the complex transform of the widened input.
  if (!onesided) {
    parallel_for(x.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) yp[i] = C(xp[i], R(0));
    });
    for (int64_t ax : axes) c2c_axis<R>(yp, y.shape(), ax, forward, axis_scale(norm, forward, y.shape()[ax]));
    return;
  }
  double total_scale = 1.0;
  for (int64_t ax : axes) total_scale *= axis_scale(norm, forward, x.shape()[ax]);
  if (!r2c_trailing<R>(xp, yp, x.shape(), axes, total_scale)) {
    // DFTI reads its real input without writing it, whatever the const-ness.
    real_axis<R>(const_cast<R*>(xp), yp, x.shape(), last, true, axis_scale(norm, forward, x.shape()[last]));
    for (int64_t ax : axes)
      if (ax != last) c2c_axis<R>(yp, y.shape(), ax, true, axis_scale(norm, forward, y.shape()[ax]));
  }
  // exp(+i) of a real signal is the conjugate of exp(-i).
  if (!forward) conj_all(yp, y.numel());
}

template <typename R> void c2r_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  using C = std::complex<R>;
  const Tensor& x = in[0];
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  const Dims& axes = a.ints(0);
  const std::string& norm = a.s(1);
  bool forward = a.b(2);
  int64_t last = axes.back();
  // A work copy: the other axes transform in place, and DFTI's backward real
  // transform may overwrite its input. exp(-i) of a Hermitian spectrum is
  // exp(+i) of its conjugate (the result is real).
  std::vector<C> work(size_t(x.numel()));
  const C* xp = x.data<C>();
  parallel_for(x.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) work[size_t(i)] = forward ? std::conj(xp[i]) : xp[i];
  });
  for (int64_t ax : axes)
    if (ax != last) c2c_axis<R>(work.data(), x.shape(), ax, false, axis_scale(norm, forward, x.shape()[ax]));
  real_axis<R>(y.data<R>(), work.data(), y.shape(), last, false, axis_scale(norm, forward, y.shape()[last]));
}

void c2c_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (in[0].dtype() == DType::Complex128) return c2c_impl<double>(in, out, a);
  c2c_impl<float>(in, out, a);
}
void r2c_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (in[0].dtype() == DType::Float64) return r2c_impl<double>(in, out, a);
  r2c_impl<float>(in, out, a);
}
void c2r_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (in[0].dtype() == DType::Complex128) return c2r_impl<double>(in, out, a);
  c2r_impl<float>(in, out, a);
}

KernelRegistrar r_c2c("fft_c2c", DeviceType::CPU, {DType::Complex64, DType::Complex128}, c2c_kernel);
KernelRegistrar r_r2c("fft_r2c", DeviceType::CPU, {DType::Float32, DType::Float64}, r2c_kernel);
KernelRegistrar r_c2r("fft_c2r", DeviceType::CPU, {DType::Complex64, DType::Complex128}, c2r_kernel);

}  // namespace
}  // namespace oar::cpu

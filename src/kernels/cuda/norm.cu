// CUDA kernels of layer_norm, batch_norm and their gradients (definitions:
// ops/norm.cpp, Note [norm gradients]; CPU kernels: kernels/cpu/norm.cpp),
// with the CPU's arithmetic: layer_norm accumulates in float (double for
// float64) with a two-pass variance per row; batch_norm accumulates in double
// with a two-pass variance per channel.
//
// Note [CUDA channel sums]
// batch_norm reduces each channel of x [outer, C, inner] over its M = outer *
// inner elements. Block (c, s) of a partial-sum kernel adds part s of channel
// c (enough parts that the grid fills the GPU), and a per-channel kernel adds
// the parts in order, so the sums do not depend on scheduling. The variance
// is two-pass like the CPU's: the mean first, then the squared deviations.
#include <algorithm>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"

namespace oar::cuda {
namespace {

// ---------------------------------------------------------------- layer_norm

// y = (x - mean) rstd w + b per row of `cols` elements.
template <typename T>
__global__ void layer_norm_rows(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t cols, double eps) {
  using A = acc_t<T>;
  __shared__ A smem[32];
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T* p = x + r * cols;
    A s = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += A(ld(p, i));
    const A mu = row_reduce(s, SumOp{}, smem) / A(cols);
    A v = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const A d = A(ld(p, i)) - mu;
      v += d * d;
    }
    const A rs = A(1) / std::sqrt(row_reduce(v, SumOp{}, smem) / A(cols) + A(eps));
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
      st(y + r * cols, i, (A(ld(p, i)) - mu) * rs * A(ld(w, i)) + A(ld(b, i)));
  }
}

// in: x, w, b; out: y; attrs: begin_axis, eps.
void layer_norm_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.nn.functional.layer_norm";
  const Tensor x = dense(in[0], api), w = dense(in[1], api), b = dense(in[2], api);
  int64_t cols = 1;
  for (int64_t d = a.i(0); d < x.dim(); ++d) cols *= x.shape()[d];
  const int64_t rows = cols ? x.numel() / cols : 0;
  if (rows == 0) return;
  DeviceGuard guard(x.device().index);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    RowLaunch l = row_launch(rows, cols);
    layer_norm_rows<T><<<l.grid, l.block, 0, cudaStreamLegacy>>>(x.data<T>(), w.data<T>(), b.data<T>(),
                                                                  out[0].data<T>(), rows, cols, a.f(1));
  });
  check_launch(api);
}

// The input gradient per row (Note [norm gradients]): rstd (gw - mean(gw) -
// xhat mean(gw xhat)) with gw = g w; the row's mean and rstd are kept for the
// column sums of dw and db.
template <typename T>
__global__ void layer_norm_grad_rows(const T* x, const T* w, const T* g, T* gx, acc_t<T>* mean, acc_t<T>* rstd,
                                     int64_t rows, int64_t cols, double eps) {
  using A = acc_t<T>;
  __shared__ A smem[32];
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T *p = x + r * cols, *gr = g + r * cols;
    A s = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += A(ld(p, i));
    const A mu = row_reduce(s, SumOp{}, smem) / A(cols);
    A v = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const A d = A(ld(p, i)) - mu;
      v += d * d;
    }
    const A rs = A(1) / std::sqrt(row_reduce(v, SumOp{}, smem) / A(cols) + A(eps));
    A sg = 0, sgx = 0;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const A gw = A(ld(gr, i)) * A(ld(w, i));
      sg += gw;
      sgx += gw * ((A(ld(p, i)) - mu) * rs);
    }
    sg = row_reduce(sg, SumOp{}, smem) / A(cols);
    sgx = row_reduce(sgx, SumOp{}, smem) / A(cols);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
      const A xh = (A(ld(p, i)) - mu) * rs;
      st(gx + r * cols, i, rs * (A(ld(gr, i)) * A(ld(w, i)) - sg - xh * sgx));
    }
    if (threadIdx.x == 0) {
      mean[r] = mu;
      rstd[r] = rs;
    }
  }
}

// Column sums of g xhat and g over the rows of part blockIdx.y, one column per
// thread: partial[part][0][i] and partial[part][1][i].
template <typename T>
__global__ void layer_norm_grad_columns(const T* x, const T* g, const acc_t<T>* mean, const acc_t<T>* rstd,
                                        acc_t<T>* partial, int64_t rows, int64_t cols) {
  using A = acc_t<T>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= cols) return;
  const int64_t parts = gridDim.y, part = blockIdx.y;
  A sw = 0, sb = 0;
  for (int64_t r = rows * part / parts; r < rows * (part + 1) / parts; ++r) {
    const A gv = A(ld(g, r * cols + i));
    sw += gv * ((A(ld(x, r * cols + i)) - mean[r]) * rstd[r]);
    sb += gv;
  }
  partial[(part * 2) * cols + i] = sw;
  partial[(part * 2 + 1) * cols + i] = sb;
}

template <typename T>
__global__ void layer_norm_grad_finish(const acc_t<T>* partial, T* gw, T* gb, int64_t parts, int64_t cols) {
  using A = acc_t<T>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= cols) return;
  A sw = 0, sb = 0;
  for (int64_t p = 0; p < parts; ++p) {
    sw += partial[(p * 2) * cols + i];
    sb += partial[(p * 2 + 1) * cols + i];
  }
  st(gw, i, sw);
  st(gb, i, sb);
}

// in: x, w, g; out: gx, gw, gb; attrs: begin_axis, eps.
void layer_norm_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.layer_norm_grad";
  const Tensor x = dense(in[0], api), w = dense(in[1], api), g = dense(in[2], api);
  int64_t cols = 1;
  for (int64_t d = a.i(0); d < x.dim(); ++d) cols *= x.shape()[d];
  const int64_t rows = cols ? x.numel() / cols : 0;
  if (cols == 0) return;
  DeviceGuard guard(x.device().index);
  const DType acc = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const int64_t col_blocks = (cols + kThreads - 1) / kThreads;
  const int64_t parts = std::clamp<int64_t>(2048 / col_blocks, 1, std::clamp<int64_t>(rows, 1, 512));
  Tensor stats = empty_tensor({2, std::max<int64_t>(rows, 1)}, acc, x.device());
  Tensor partial = empty_tensor({parts, 2, cols}, acc, x.device());
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    A* mean = stats.data<A>();
    A* rstd = mean + std::max<int64_t>(rows, 1);
    if (rows > 0) {
      RowLaunch l = row_launch(rows, cols);
      layer_norm_grad_rows<T><<<l.grid, l.block, 0, cudaStreamLegacy>>>(x.data<T>(), w.data<T>(), g.data<T>(),
                                                                         out[0].data<T>(), mean, rstd, rows, cols,
                                                                         a.f(1));
    }
    layer_norm_grad_columns<T><<<dim3(unsigned(col_blocks), unsigned(parts)), kThreads, 0, cudaStreamLegacy>>>(
        x.data<T>(), g.data<T>(), mean, rstd, partial.data<A>(), rows, cols);
    layer_norm_grad_finish<T><<<unsigned(col_blocks), kThreads, 0, cudaStreamLegacy>>>(
        partial.data<A>(), out[1].data<T>(), out[2].data<T>(), parts, cols);
  });
  check_launch(api);
}

// ---------------------------------------------------------------- batch_norm

// Per-channel values, in double, of a [kFields, C] tensor.
enum Field { kMean, kVar, kRstd, kW, kMeanG, kMeanGx, kFields };

// x [outer, C, inner] as (channel c, element e of the channel's M).
struct ChannelLayout {
  int64_t C, inner, M;
  __device__ int64_t at(int64_t c, int64_t e) const {
    const int64_t o = e / inner;
    return (o * C + c) * inner + (e - o * inner);
  }
};

enum class Pass { Sum, SquaredDeviation, Grad };

// Note [CUDA channel sums]: part blockIdx.y of channel blockIdx.x, two sums
// per part in partial[(c * parts + part) * 2 + {0, 1}]:
//   Sum: x;  SquaredDeviation: (x - mean)^2;  Grad: g and g (x - mean) rstd.
template <typename T, Pass P>
__global__ void channel_partials(const T* x, const T* g, const double* f, ChannelLayout lay, double* partial) {
  __shared__ double smem[32];
  const int64_t c = blockIdx.x, parts = gridDim.y, part = blockIdx.y;
  const int64_t C = lay.C;
  double a = 0, b = 0;
  const double mu = P == Pass::Sum ? 0.0 : f[kMean * C + c];
  const double r = P == Pass::Grad ? f[kRstd * C + c] : 0.0;
  for (int64_t e = lay.M * part / parts + threadIdx.x; e < lay.M * (part + 1) / parts; e += blockDim.x) {
    const int64_t k = lay.at(c, e);
    const double v = double(ld(x, k));
    if constexpr (P == Pass::Sum) {
      a += v;
    } else if constexpr (P == Pass::SquaredDeviation) {
      a += (v - mu) * (v - mu);
    } else {
      const double gv = double(ld(g, k));
      a += gv;
      b += gv * (v - mu) * r;
    }
  }
  a = row_reduce(a, SumOp{}, smem);
  if constexpr (P == Pass::Grad) b = row_reduce(b, SumOp{}, smem);
  if (threadIdx.x == 0) {
    partial[(c * parts + part) * 2] = a;
    partial[(c * parts + part) * 2 + 1] = b;
  }
}

// The parts of channel c added in order.
__device__ __forceinline__ double part_sum(const double* partial, int64_t c, int64_t parts, int k) {
  double s = 0;
  for (int64_t p = 0; p < parts; ++p) s += partial[(c * parts + p) * 2 + k];
  return s;
}

__global__ void channel_mean(const double* partial, double* f, int64_t C, int64_t parts, int64_t M) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < C) f[kMean * C + c] = M ? part_sum(partial, c, parts, 0) / double(M) : 0.0;
}

// The variance from the batch (partial holds the squared deviations) or the
// running statistics (partial is null; the mean is set here too); then rstd
// and the weight.
template <typename T>
__global__ void channel_stats(const double* partial, const T* rm, const T* rv, const T* w, double* f, int64_t C,
                              int64_t parts, int64_t M, double eps) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  double var;
  if (partial) {
    var = M ? part_sum(partial, c, parts, 0) / double(M) : 0.0;
  } else {
    f[kMean * C + c] = double(ld(rm, c));
    var = double(ld(rv, c));
  }
  f[kVar * C + c] = var;
  f[kRstd * C + c] = 1.0 / std::sqrt(var + eps);
  f[kW * C + c] = double(ld(w, c));
}

// Forward per channel: the saved statistics, and y = x scale + shift in the
// compute type, with scale = w rstd and shift = b - mean w rstd.
template <typename T>
__global__ void batch_norm_affine(const double* f, const T* b, T* bm, T* bv, compute_t<T>* scale, compute_t<T>* shift,
                                  int64_t C) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  using Cm = compute_t<T>;
  const double mu = f[kMean * C + c], r = f[kRstd * C + c], wc = f[kW * C + c];
  st(bm, c, Cm(mu));
  st(bv, c, Cm(f[kVar * C + c]));
  scale[c] = Cm(wc * r);
  shift[c] = Cm(double(ld(b, c)) - mu * wc * r);
}

template <typename T>
__global__ void batch_norm_apply(const T* x, T* y, const compute_t<T>* scale, const compute_t<T>* shift,
                                 int64_t n, int64_t C, int64_t inner) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / inner) % C;
    st(y, i, ld(x, i) * scale[c] + shift[c]);
  }
}

// Gradient per channel: gb = sum g, gw = sum g xhat, and the means of both
// for the input gradient.
template <typename T>
__global__ void batch_norm_grad_sums(const double* partial, double* f, T* gw, T* gb, int64_t C, int64_t parts,
                                     int64_t M) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  using Cm = compute_t<T>;
  const double sg = part_sum(partial, c, parts, 0), sgx = part_sum(partial, c, parts, 1);
  st(gb, c, Cm(sg));
  st(gw, c, Cm(sgx));
  f[kMeanG * C + c] = M ? sg / double(M) : 0.0;
  f[kMeanGx * C + c] = M ? sgx / double(M) : 0.0;
}

// gx = w rstd (g - mean(g) - xhat mean(g xhat)) with batch statistics, w rstd g
// with fixed ones (Note [norm gradients]).
template <typename T>
__global__ void batch_norm_grad_apply(const T* x, const T* g, T* gx, const double* f, int64_t n, int64_t C,
                                      int64_t inner, bool batch) {
  using Cm = compute_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / inner) % C;
    const double r = f[kRstd * C + c], wc = f[kW * C + c], gv = double(ld(g, i));
    double v;
    if (batch) {
      const double xh = (double(ld(x, i)) - f[kMean * C + c]) * r;
      v = wc * r * (gv - f[kMeanG * C + c] - xh * f[kMeanGx * C + c]);
    } else {
      v = wc * r * gv;
    }
    st(gx, i, Cm(v));
  }
}

struct BatchNormShape {
  ChannelLayout lay;
  int64_t parts;
};

BatchNormShape batch_norm_shape(const Tensor& x, int64_t axis) {
  int64_t C = x.shape()[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  const int64_t M = outer * inner;
  // Enough parts for about 2048 blocks, each of at least 2048 elements.
  const int64_t parts = std::clamp<int64_t>((2048 + C - 1) / std::max<int64_t>(C, 1), 1,
                                            std::clamp<int64_t>(M / 2048, 1, 1024));
  return {{C, inner, M}, parts};
}

// The channel statistics into f: from x (two passes) or from the running tensors.
template <typename T>
void channel_statistics(const Tensor& x, const Tensor& rm, const Tensor& rv, const Tensor& w, const BatchNormShape& s,
                        bool batch, double eps, double* f, double* partial) {
  const int64_t C = s.lay.C;
  const dim3 grid(unsigned(C), unsigned(s.parts));
  const unsigned cb = unsigned((C + kThreads - 1) / kThreads);
  if (batch) {
    channel_partials<T, Pass::Sum><<<grid, kThreads, 0, cudaStreamLegacy>>>(x.data<T>(), nullptr, f, s.lay, partial);
    channel_mean<<<cb, kThreads, 0, cudaStreamLegacy>>>(partial, f, C, s.parts, s.lay.M);
    channel_partials<T, Pass::SquaredDeviation><<<grid, kThreads, 0, cudaStreamLegacy>>>(x.data<T>(), nullptr, f,
                                                                                          s.lay, partial);
  }
  channel_stats<T><<<cb, kThreads, 0, cudaStreamLegacy>>>(batch ? partial : nullptr, rm.data<T>(), rv.data<T>(),
                                                          w.data<T>(), f, C, s.parts, s.lay.M, eps);
}

// in: x, w, b, running mean, running var; out: y, batch mean, batch var;
// attrs: axis, eps, use_batch_stats.
void batch_norm_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.nn.functional.batch_norm";
  const Tensor x = dense(in[0], api), w = dense(in[1], api), b = dense(in[2], api), rm = dense(in[3], api),
               rv = dense(in[4], api);
  const BatchNormShape s = batch_norm_shape(x, a.i(0));
  const int64_t C = s.lay.C;
  if (C == 0) return;
  const bool batch = a.b(2);
  DeviceGuard guard(x.device().index);
  Tensor f = empty_tensor({int64_t(kFields), C}, DType::Float64, x.device());
  Tensor partial = empty_tensor({C, s.parts, 2}, DType::Float64, x.device());
  const DType cdt = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor affine = empty_tensor({2, C}, cdt, x.device());
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Cm = compute_t<T>;
    channel_statistics<T>(x, rm, rv, w, s, batch, a.f(1), f.data<double>(), partial.data<double>());
    Cm* scale = affine.data<Cm>();
    batch_norm_affine<T><<<unsigned((C + kThreads - 1) / kThreads), kThreads, 0, cudaStreamLegacy>>>(
        f.data<double>(), b.data<T>(), out[1].data<T>(), out[2].data<T>(), scale, scale + C, C);
    if (x.numel() > 0)
      batch_norm_apply<T><<<blocks_for(x.numel()), kThreads, 0, cudaStreamLegacy>>>(
          x.data<T>(), out[0].data<T>(), scale, scale + C, x.numel(), C, s.lay.inner);
  });
  check_launch(api);
}

// in: x, w, g, running mean, running var; out: gx, gw, gb (Note [norm gradients]).
void batch_norm_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.batch_norm_grad";
  const Tensor x = dense(in[0], api), w = dense(in[1], api), g = dense(in[2], api), rm = dense(in[3], api),
               rv = dense(in[4], api);
  const BatchNormShape s = batch_norm_shape(x, a.i(0));
  const int64_t C = s.lay.C;
  if (C == 0) return;
  const bool batch = a.b(2);
  DeviceGuard guard(x.device().index);
  Tensor f = empty_tensor({int64_t(kFields), C}, DType::Float64, x.device());
  Tensor partial = empty_tensor({C, s.parts, 2}, DType::Float64, x.device());
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    double* fp = f.data<double>();
    double* pp = partial.data<double>();
    channel_statistics<T>(x, rm, rv, w, s, batch, a.f(1), fp, pp);
    channel_partials<T, Pass::Grad><<<dim3(unsigned(C), unsigned(s.parts)), kThreads, 0, cudaStreamLegacy>>>(
        x.data<T>(), g.data<T>(), fp, s.lay, pp);
    batch_norm_grad_sums<T><<<unsigned((C + kThreads - 1) / kThreads), kThreads, 0, cudaStreamLegacy>>>(
        pp, fp, out[1].data<T>(), out[2].data<T>(), C, s.parts, s.lay.M);
    if (x.numel() > 0)
      batch_norm_grad_apply<T><<<blocks_for(x.numel()), kThreads, 0, cudaStreamLegacy>>>(
          x.data<T>(), g.data<T>(), out[0].data<T>(), fp, x.numel(), C, s.lay.inner, batch);
  });
  check_launch(api);
}

const bool layer_norm_reg = register_real("layer_norm", layer_norm_kernel, OAR_FLOAT_DTYPES);
const bool layer_norm_grad_reg = register_real("layer_norm_grad", layer_norm_grad_kernel, OAR_FLOAT_DTYPES);
const bool batch_norm_reg = register_real("batch_norm", batch_norm_kernel, OAR_FLOAT_DTYPES);
const bool batch_norm_grad_reg = register_real("batch_norm_grad", batch_norm_grad_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

// CUDA kernels of the activation ops (definitions: ops/activation.cpp; CPU
// kernels: kernels/cpu/activation.cpp): relu, gelu, silu, log_sigmoid and
// gelu_grad through the scalar functions the CPU runs (kernels/cpu/
// scalar_fns.h); softmax, log_softmax and softmax_grad as row reductions
// (Note [CUDA row kernels]).
#include <limits>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"

namespace oar::cuda {
namespace {

namespace scalar = oar::cpu::scalar;

// --------------------------------------------------------------- elementwise

template <typename Op> struct Apply {
  template <typename C> __device__ C operator()(C x) const { return Op::apply(x); }
};

template <typename Op> void unary_kernel(const char* api, std::span<const Tensor> in, std::span<Tensor> out) {
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    elementwise<T, T>(api, out[0], Apply<Op>{}, in[0]);
  });
}

void relu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  unary_kernel<scalar::op_relu>("oar.nn.functional.relu", in, out);
}
void gelu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (a.b(0)) unary_kernel<scalar::op_gelu_tanh>("oar.nn.functional.gelu", in, out);
  else unary_kernel<scalar::op_gelu>("oar.nn.functional.gelu", in, out);
}
void silu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  unary_kernel<scalar::op_silu>("oar.nn.functional.silu", in, out);
}
void log_sigmoid_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  unary_kernel<scalar::op_log_sigmoid>("oar.nn.functional.log_sigmoid", in, out);
}

// gelu_grad(x, g) = g * gelu'(x), in the compute type (float for 16-bit).
template <typename Op> struct TimesDeriv {
  template <typename C> __device__ C operator()(C x, C g) const { return Op::apply(x) * g; }
};
void gelu_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (a.b(0)) elementwise<T, T, T>("oar.gelu_grad", out[0], TimesDeriv<scalar::op_gelu_tanh_deriv>{}, in[0], in[1]);
    else elementwise<T, T, T>("oar.gelu_grad", out[0], TimesDeriv<scalar::op_gelu_deriv>{}, in[0], in[1]);
  });
}

// ------------------------------------------------------------------- softmax

// Note [softmax layout] (kernels/cpu/activation.cpp): the dense input is
// [outer, n, inner] with the reduced axis in the middle. With inner == 1 the
// rows are contiguous and reduced by a warp or a block each; otherwise one
// thread takes one (outer, inner) column and walks its n elements, so that
// neighbouring threads read neighbouring addresses.
template <typename T, bool Log> __global__ void softmax_rows(const T* x, T* y, int64_t rows, int64_t n) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = MaxOp{}(m, C(ld(xr, j)));
    m = finite_max(row_reduce(m, MaxOp{}, smem));
    C s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += std::exp(C(ld(xr, j)) - m);
    s = row_reduce(s, SumOp{}, smem);
    if constexpr (Log) {
      const C ls = std::log(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) st(yr, j, C(ld(xr, j)) - m - ls);
    } else {
      const C inv = C(1) / s;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) st(yr, j, std::exp(C(ld(xr, j)) - m) * inv);
    }
  }
}

template <typename T, bool Log>
__global__ void softmax_columns(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = acc_t<T>;
  const int64_t cols = outer * inner;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, k = c - o * inner;
    const T* xs = x + o * n * inner + k;
    T* ys = y + o * n * inner + k;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < n; ++j) m = MaxOp{}(m, C(ld(xs, j * inner)));
    m = finite_max(m);
    C s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::exp(C(ld(xs, j * inner)) - m);
    s = Log ? std::log(s) : C(1) / s;
    for (int64_t j = 0; j < n; ++j) {
      const C v = C(ld(xs, j * inner)) - m;
      st(ys, j * inner, Log ? v - s : std::exp(v) * s);
    }
  }
}

template <bool Log> void softmax_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = Log ? "oar.nn.functional.log_softmax" : "oar.nn.functional.softmax";
  const Tensor x = dense(in[0], api);
  const int64_t axis = a.i(0);
  const Dims& s = x.shape();
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(s.size()); ++d) {
    if (d < axis) outer *= s[d];
    else if (d == axis) n = s[d];
    else inner *= s[d];
  }
  if (outer * n * inner == 0) return;
  DeviceGuard guard(x.device().index);
  cpu::visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1) {
      RowLaunch l = row_launch(outer, n);
      softmax_rows<T, Log><<<l.grid, l.block, 0, cudaStreamLegacy>>>(x.data<T>(), out[0].data<T>(), outer, n);
    } else {
      softmax_columns<T, Log><<<blocks_for(outer * inner), kThreads, 0, cudaStreamLegacy>>>(
          x.data<T>(), out[0].data<T>(), outer, n, inner);
    }
  });
  check_launch(api);
}

// softmax_grad(y, g) along the last axis: dx = y (g - sum(g y)).
template <typename T> __global__ void softmax_grad_rows(const T* y, const T* g, T* dx, int64_t rows, int64_t n) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T *yr = y + r * n, *gr = g + r * n;
    C s = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += C(ld(gr, j)) * C(ld(yr, j));
    s = row_reduce(s, SumOp{}, smem);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) st(dx + r * n, j, C(ld(yr, j)) * (C(ld(gr, j)) - s));
  }
}

void softmax_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const char* api = "oar.softmax_grad";
  const Tensor y = dense(in[0], api), g = dense(in[1], api);
  if (y.numel() == 0) return;
  const int64_t n = y.shape()[y.dim() - 1], rows = y.numel() / n;
  DeviceGuard guard(y.device().index);
  cpu::visit_float(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    RowLaunch l = row_launch(rows, n);
    softmax_grad_rows<T><<<l.grid, l.block, 0, cudaStreamLegacy>>>(y.data<T>(), g.data<T>(), out[0].data<T>(), rows,
                                                                    n);
  });
  check_launch(api);
}

const bool relu_reg = register_real("relu", relu_kernel, OAR_FLOAT_DTYPES);
const bool gelu_reg = register_real("gelu", gelu_kernel, OAR_FLOAT_DTYPES);
const bool silu_reg = register_real("silu", silu_kernel, OAR_FLOAT_DTYPES);
const bool log_sigmoid_reg = register_real("log_sigmoid", log_sigmoid_kernel, OAR_FLOAT_DTYPES);
const bool gelu_grad_reg = register_real("gelu_grad", gelu_grad_kernel, OAR_FLOAT_DTYPES);
const bool softmax_reg = register_real("softmax", softmax_kernel<false>, OAR_FLOAT_DTYPES);
const bool log_softmax_reg = register_real("log_softmax", softmax_kernel<true>, OAR_FLOAT_DTYPES);
const bool softmax_grad_reg = register_real("softmax_grad", softmax_grad_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

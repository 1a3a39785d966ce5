// CUDA kernels of the fused softmax cross entropy (definition: ops/loss.cpp;
// CPU kernels: kernels/cpu/loss.cpp): per row the max, the sum of
// exponentials, the log-sum-exp and the picked logit (Note [CUDA row
// kernels]); the gradient in one pass from the saved log-sum-exp.
#include <limits>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"

namespace oar::cuda {
namespace {

constexpr const char* kApi = "oar.nn.functional.cross_entropy";

// A label that is neither ignore_index nor a class.
template <typename L> __device__ __forceinline__ bool bad_label(L y, int64_t classes, int64_t ignore) {
  return int64_t(y) != ignore && (int64_t(y) < 0 || int64_t(y) >= classes);
}

// loss[r] = lse - x[r, label], 0 for ignored rows; lse[r] = log(sum(exp(x[r]))).
// The smallest row with a bad label goes to *bad (the CPU reports the first).
template <typename T, typename L>
__global__ void sce_forward(const T* x, const L* label, T* loss, acc_t<T>* lse, int64_t rows, int64_t classes,
                            int64_t ignore, unsigned long long* bad) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T* xr = x + r * classes;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) m = MaxOp{}(m, C(ld(xr, j)));
    m = finite_max(row_reduce(m, MaxOp{}, smem));
    C s = 0;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) s += std::exp(C(ld(xr, j)) - m);
    s = row_reduce(s, SumOp{}, smem);
    if (threadIdx.x == 0) {
      const C l = m + std::log(s);
      lse[r] = l;
      const L y = label[r];
      const bool skip = int64_t(y) == ignore || classes == 0;
      if (bad_label(y, classes, ignore)) atomicMin(bad, (unsigned long long)r);
      st(loss, r, skip || bad_label(y, classes, ignore) ? C(0) : l - C(ld(xr, int64_t(y))));
    }
  }
}

// dx[r] = (exp(x[r] - lse[r]) - one_hot(label[r])) * g[r], 0 for ignored rows.
// As on the CPU, the picked entry is rounded to T before g is subtracted.
template <typename T, typename L>
__global__ void sce_backward(const T* x, const L* label, const acc_t<T>* lse, const T* g, T* dx, int64_t rows,
                             int64_t classes, int64_t ignore) {
  using C = acc_t<T>;
  for (int64_t r = row_begin(); r < rows; r += row_step()) {
    const T* xr = x + r * classes;
    T* dr = dx + r * classes;
    const int64_t y = int64_t(label[r]);
    if (y == ignore) {
      for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) st(dr, j, C(0));
      continue;
    }
    const C l = lse[r], gr = C(ld(g, r));
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
      C v = std::exp(C(ld(xr, j)) - l) * gr;
      if (j == y) v = round_to<T>(v) - gr;
      st(dr, j, v);
    }
  }
}

template <typename F> void with_types(const Tensor& x, const Tensor& label, F&& f) {
  cpu::visit_float(x.dtype(), [&](auto t) {
    if (label.dtype() == DType::Int64) f(t, int64_t{});
    else f(t, int32_t{});
  });
}

// in: logits [..., C], label [..., 1]; out: loss [..., 1], lse [..., 1] (float
// or double); attrs: ignore_index.
void sce_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0], kApi), label = dense(in[1], kApi);
  const int64_t ignore = a.i(0);
  const int64_t classes = x.shape().back();
  const int64_t rows = classes ? x.numel() / classes : label.numel();
  if (rows == 0) return;
  DeviceGuard guard(x.device().index);
  Tensor bad = empty_tensor({}, DType::Int64, x.device());
  cuda_check(cudaMemsetAsync(bad.raw_data(), 0xff, sizeof(int64_t), cudaStreamLegacy), kApi, "cudaMemsetAsync");
  with_types(x, label, [&](auto t, auto l) {
    using T = decltype(t);
    using L = decltype(l);
    RowLaunch rl = row_launch(rows, classes);
    sce_forward<T, L><<<rl.grid, rl.block, 0, cudaStreamLegacy>>>(
        x.data<T>(), label.data<L>(), out[0].data<T>(), out[1].data<acc_t<T>>(), rows, classes, ignore,
        static_cast<unsigned long long*>(bad.raw_data()));
  });
  check_launch(kApi);
  // A bad label is a user error (the CPU kernel checks them all): one value read back.
  unsigned long long row = 0;
  cuda_check(cudaMemcpy(&row, bad.raw_data(), sizeof(row), cudaMemcpyDeviceToHost), kApi, "cudaMemcpy");
  if (row != ~0ull) {
    int64_t v = 0;
    if (label.dtype() == DType::Int64) {
      cuda_check(cudaMemcpy(&v, label.data<int64_t>() + row, sizeof(v), cudaMemcpyDeviceToHost), kApi, "cudaMemcpy");
    } else {
      int32_t v32 = 0;
      cuda_check(cudaMemcpy(&v32, label.data<int32_t>() + row, sizeof(v32), cudaMemcpyDeviceToHost), kApi,
                 "cudaMemcpy");
      v = v32;
    }
    fail(ErrorKind::Value, "[", kApi, "] labels must be in [0, ", classes, ") or equal ignore_index (", ignore,
         "), got ", v);
  }
}

// in: logits, label, lse, g [..., 1]; out: dx; attrs: ignore_index.
void sce_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor x = dense(in[0], kApi), label = dense(in[1], kApi), lse = dense(in[2], kApi), g = dense(in[3], kApi);
  const int64_t classes = x.shape().back();
  const int64_t rows = classes ? x.numel() / classes : 0;
  if (rows == 0) return;
  DeviceGuard guard(x.device().index);
  with_types(x, label, [&](auto t, auto l) {
    using T = decltype(t);
    using L = decltype(l);
    RowLaunch rl = row_launch(rows, classes);
    sce_backward<T, L><<<rl.grid, rl.block, 0, cudaStreamLegacy>>>(x.data<T>(), label.data<L>(),
                                                                    lse.data<acc_t<T>>(), g.data<T>(),
                                                                    out[0].data<T>(), rows, classes, a.i(0));
  });
  check_launch(kApi);
}

const bool sce_reg = register_real("softmax_cross_entropy", sce_kernel, OAR_FLOAT_DTYPES);
const bool sce_grad_reg = register_real("softmax_cross_entropy_grad", sce_grad_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

// CUDA kernel of fused_linear_act (definition: ops/fused.cpp; CPU kernel:
// kernels/cpu/fused.cpp): act(x w + b) as one cuBLAS product into a float
// (double for float64) buffer and one pass that adds the bias and applies the
// activation. As on the CPU, 16-bit outputs round x w + b to their dtype
// before the activation, which is then computed in float.
#include <string>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cuda/nn_blas.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"

namespace oar::cuda {
namespace {

namespace scalar = oar::cpu::scalar;

constexpr const char* kApi = "oar.fused_linear_act";

// y[r, j] = act(round_T(acc[r, j] + b[j])); acc may be y itself (float, double).
template <typename T, typename Act>
__global__ void bias_act(const acc_t<T>* acc, const T* b, int64_t b_stride, T* y, int64_t n, int64_t cols) {
  using A = acc_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const A v = round_to<T>(acc[i] + A(ld(b, (i % cols) * b_stride)));
    st(y, i, Act::apply(v));
  }
}

template <typename T> constexpr GemmType gemm_type() {
  if constexpr (std::is_same_v<T, float16>) return GemmType::Float16;
  else if constexpr (std::is_same_v<T, bfloat16>) return GemmType::BFloat16;
  else if constexpr (std::is_same_v<T, double>) return GemmType::Float64;
  else return GemmType::Float32;
}

// A [rows, cols] operand as a cuBLAS matrix: row-major with leading dim ld
// (trans = false) or column-major (trans = true); false if neither (the
// same rule as the CPU's blas_layout in kernels/cpu/matmul.cpp).
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t* ld, bool* trans) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = std::max<int64_t>(cols, 1);
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) { *ld = rs; *trans = false; return true; }
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) { *ld = cs; *trans = true; return true; }
  return false;
}

template <typename T, typename Act> void linear_act(const Tensor& x0, const Tensor& w0, const Tensor& b, Tensor& y) {
  using A = acc_t<T>;
  const int64_t K = w0.shape()[0], N = w0.shape()[1];
  const int64_t n = y.numel(), R = n / N;
  // acc = x w, row-major [R, N]: column-major that is y^T = w^T x^T, so cuBLAS
  // gets A = w ([N, K] column-major) and B = x ([K, R] column-major).
  Tensor acc = std::is_same_v<A, T> ? y : empty_tensor(y.shape(), DType::Float32, y.device());
  if (K == 0) {
    cuda_check(cudaMemsetAsync(acc.raw_data(), 0, size_t(n) * sizeof(A), cudaStreamLegacy), kApi, "cudaMemsetAsync");
  } else {
    const Tensor x = dense(x0, kApi);
    Tensor w = w0;
    int64_t ldw = 0;
    bool tw = false;
    if (!blas_layout(K, N, w.strides()[0], w.strides()[1], &ldw, &tw)) {
      w = dense(w0, kApi);
      blas_layout(K, N, w.strides()[0], w.strides()[1], &ldw, &tw);
    }
    nn_gemm(kApi, gemm_type<T>(), tw, false, N, R, K, w.raw_data(), ldw, 0, x.raw_data(), K, 0, acc.raw_data(), N, 0,
            1);
  }
  bias_act<T, Act><<<blocks_for(n), kThreads, 0, cudaStreamLegacy>>>(acc.data<A>(), b.data<T>(), b.strides()[0],
                                                                      y.data<T>(), n, N);
  check_launch(kApi);
}

template <typename T> void linear_act_named(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                            const std::string& act) {
  if (act == "relu") linear_act<T, scalar::op_relu>(x, w, b, y);
  else if (act == "gelu") linear_act<T, scalar::op_gelu>(x, w, b, y);
  else if (act == "gelu_tanh") linear_act<T, scalar::op_gelu_tanh>(x, w, b, y);
  else if (act == "silu") linear_act<T, scalar::op_silu>(x, w, b, y);
  else if (act == "sigmoid") linear_act<T, scalar::op_sigmoid>(x, w, b, y);
  else linear_act<T, scalar::op_tanh>(x, w, b, y);  // infer_meta admits nothing else
}

// in: x [..., K], w [K, N], b [N]; out: y [..., N]; attrs: act.
void fused_linear_act_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  DeviceGuard guard(y.device().index);
  cpu::visit_float(y.dtype(), [&](auto tag) { linear_act_named<decltype(tag)>(in[0], in[1], in[2], y, a.s(0)); });
}

const bool fused_linear_act_reg = register_real("fused_linear_act", fused_linear_act_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

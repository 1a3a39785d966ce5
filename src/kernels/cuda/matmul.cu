// CUDA kernels of matmul and linear: cuBLAS for the floating and complex
// dtypes (float16 and bfloat16 accumulate in float32; float32 in full
// precision unless TF32 is allowed: oar.device.cuda.set_allow_tf32), and a
// plain kernel for the integer dtypes, which cuBLAS does not multiply.
//
// Note [cuBLAS operand layout]
// cuBLAS is column-major; a row-major product C = A B is computed as
// C^T = B^T A^T, so y is cuBLAS's first operand and x its second. Each
// operand is used in place when one of its last two strides is 1 (row- or
// column-major, transposed or not) and its batch dims step with one stride
// (or broadcast, stride 0); otherwise it is first copied dense. A stack
// times one matrix (a Linear layer on [B, S, K]) folds the stack into rows:
// one product instead of a batch.
#include <cublas_v2.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/wrap.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"
#include "ops/ops.h"

namespace oar::cuda {
namespace {

std::atomic<bool> g_allow_tf32{false};

void cublas_check(cublasStatus_t s, const char* api, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(ErrorKind::Runtime, "[", api, "] ", what, " failed: ", cublasGetStatusName(s), " (",
         cublasGetStatusString(s), ")");
}

// One handle per thread and device (a handle must not be used by two threads
// at once), on the legacy default stream (Note [CUDA streams]).
cublasHandle_t handle(int dev) {
  thread_local std::vector<cublasHandle_t> handles;
  if (size_t(dev) >= handles.size()) handles.resize(size_t(dev) + 1, nullptr);
  if (!handles[dev]) {
    cublas_check(cublasCreate(&handles[dev]), "oar.matmul", "cublasCreate");
    cublas_check(cublasSetStream(handles[dev], cudaStreamLegacy), "oar.matmul", "cublasSetStream");
  }
  return handles[dev];
}

// A matrix operand: op(X) viewed as rows x cols (row-major terms).
struct Operand {
  const char* p = nullptr;
  bool col_major = false;  // op(X)'s elements step by 1 along rows, not cols
  int64_t ld = 0;
  int64_t batch_stride = 0;  // elements; 0 broadcasts one matrix
};

// The operand for x (shape [..., a, b], transposed when t) in the batch
// `batch` (the output's batch dims), or false when it must be copied dense.
bool as_operand(const Tensor& x, bool t, const Dims& batch, Operand* o) {
  const int64_t nd = x.dim();
  int64_t sa = x.strides()[nd - 2], sb = x.strides()[nd - 1];
  int64_t ra = x.shape()[nd - 2], cb = x.shape()[nd - 1];
  int64_t rows = t ? cb : ra, cols = t ? ra : cb, srow = t ? sb : sa, scol = t ? sa : sb;
  if (cols == 1) scol = 1;  // a single column: any stride steps it
  if (rows == 1) srow = std::max<int64_t>(cols, 1);
  if (scol == 1 && srow >= std::max<int64_t>(cols, 1)) {
    o->col_major = false;
    o->ld = srow;
  } else if (srow == 1 && scol >= std::max<int64_t>(rows, 1)) {
    o->col_major = true;
    o->ld = scol;
  } else {
    return false;
  }
  // Batch dims: x's (right-aligned against `batch`) must all broadcast, or
  // all be present and step as one evenly strided run.
  const int64_t lead = int64_t(batch.size()) - (nd - 2);
  int64_t stride = 0, expect = -1;
  int nfull = 0, nbcast = 0;
  for (int64_t d = int64_t(batch.size()) - 1; d >= 0; --d) {
    if (batch[d] == 1) continue;
    const int64_t xd = d - lead;
    if (xd < 0 || x.shape()[xd] == 1) {
      ++nbcast;
      continue;
    }
    ++nfull;
    if (expect < 0) {
      stride = x.strides()[xd];
    } else if (x.strides()[xd] != expect) {
      return false;
    }
    expect = (expect < 0 ? stride : expect) * batch[d];
  }
  if (nfull > 0 && nbcast > 0) return false;
  o->batch_stride = nfull > 0 ? stride : 0;
  o->p = static_cast<const char*>(x.raw_data());
  return true;
}

cudaDataType data_type(DType t) {
  switch (t) {
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    case DType::Float64: return CUDA_R_64F;
    case DType::Complex64: return CUDA_C_32F;
    case DType::Complex128: return CUDA_C_64F;
    default: return CUDA_R_32F;
  }
}

// out[b] = op(x)[b] op(y)[b] (+ beta out[b]) for every batch index b.
void gemm(const char* api, const Operand& x, const Operand& y, Tensor& out, int64_t nb, int64_t M, int64_t N,
          int64_t K, bool accumulate) {
  const DType t = out.dtype();
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  cublasHandle_t h = handle(dev);
  OAR_CHECK(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX && nb <= INT32_MAX, Value, "[", api,
            "] dims beyond 2^31 are not supported on CUDA, got M=", M, " N=", N, " K=", K);
  // Column-major: C^T (N x M) = op(y)^T (N x K) op(x)^T (K x M).
  const cublasOperation_t ta = y.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = x.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cudaDataType dt = data_type(t);
  const bool dbl = t == DType::Float64 || t == DType::Complex128;
  cublasComputeType_t ct = dbl ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (t == DType::Float32 && g_allow_tf32.load(std::memory_order_relaxed)) ct = CUBLAS_COMPUTE_32F_FAST_TF32;
  const double one[2] = {1.0, 0.0}, beta_d[2] = {accumulate ? 1.0 : 0.0, 0.0};
  const float onef[2] = {1.0f, 0.0f}, beta_f[2] = {accumulate ? 1.0f : 0.0f, 0.0f};
  const void* alpha = dbl ? static_cast<const void*>(one) : static_cast<const void*>(onef);
  const void* beta = dbl ? static_cast<const void*>(beta_d) : static_cast<const void*>(beta_f);
  cublas_check(cublasGemmStridedBatchedEx(h, ta, tb, int(N), int(M), int(K), alpha, y.p, dt, int(y.ld),
                                          y.batch_stride, x.p, dt, int(x.ld), x.batch_stride, beta, out.raw_data(),
                                          dt, int(N), M * N, int(nb), ct, CUBLAS_GEMM_DEFAULT),
               api, "cublasGemmStridedBatchedEx");
}

// Integer products (wrapping like the CPU's): one thread per output element.
template <typename T> struct IntMat {
  const T* p;
  int64_t srow, scol, sbatch;
};
template <typename T>
__global__ void int_matmul(IntMat<T> x, IntMat<T> y, T* out, int64_t nb, int64_t M, int64_t N, int64_t K) {
  const int64_t total = nb * M * N;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / (M * N), r = (i / N) % M, c = i % N;
    const T* xp = x.p + b * x.sbatch + r * x.srow;
    const T* yp = y.p + b * y.sbatch + c * y.scol;
    T acc = T(0);
    for (int64_t k = 0; k < K; ++k) acc = cpu::wrap_add(acc, cpu::wrap_mul(xp[k * x.scol], yp[k * y.srow]));
    out[i] = acc;
  }
}

Dims batch_of(const Tensor& out) { return Dims(out.shape().begin(), out.shape().end() - 2); }

void matmul_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const bool tx = a.b(0), ty = a.b(1);
  Tensor& o = out[0];
  const int64_t nd = o.dim(), M = o.shape()[nd - 2], N = o.shape()[nd - 1];
  const Tensor &x0 = in[0], &y0 = in[1];
  const int64_t K = x0.shape()[x0.dim() - (tx ? 2 : 1)];
  if (o.numel() == 0) return;
  const Dims batch = batch_of(o);
  int64_t nb = 1;
  for (int64_t b : batch) nb *= b;
  if (K == 0) {
    DeviceGuard guard(o.device().index);
    cuda_check(cudaMemsetAsync(o.raw_data(), 0, size_t(o.numel()) * o.itemsize(), cudaStreamLegacy), "oar.matmul",
               "cudaMemsetAsync");
    return;
  }
  // Operands that cuBLAS cannot read in place become dense copies with the
  // output's batch dims.
  auto dense = [&](const Tensor& v) {
    Dims full = batch;
    full.push_back(v.shape()[v.dim() - 2]);
    full.push_back(v.shape()[v.dim() - 1]);
    return ops::contiguous(ops::expand(v, full));
  };
  Tensor x = x0, y = y0;
  Operand xo, yo;
  if (!as_operand(x, tx, batch, &xo)) {
    x = dense(x0);
    OAR_CHECK(as_operand(x, tx, batch, &xo), Runtime, "[oar.matmul] internal: no cuBLAS layout for x");
  }
  if (!as_operand(y, ty, batch, &yo)) {
    y = dense(y0);
    OAR_CHECK(as_operand(y, ty, batch, &yo), Runtime, "[oar.matmul] internal: no cuBLAS layout for y");
  }
  if (!is_floating(o.dtype()) && !is_complex(o.dtype())) {
    cpu::visit_int(o.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>) {
        auto mat = [](const Operand& op) {
          return IntMat<T>{reinterpret_cast<const T*>(op.p), op.col_major ? 1 : op.ld, op.col_major ? op.ld : 1,
                           op.batch_stride};
        };
        DeviceGuard guard(o.device().index);
        int_matmul<T><<<blocks_for(nb * M * N), kThreads, 0, cudaStreamLegacy>>>(mat(xo), mat(yo), o.data<T>(), nb,
                                                                                  M, N, K);
        cuda_check(cudaGetLastError(), "oar.matmul", "kernel launch");
      }
    });
    return;
  }
  // A stack times one matrix: the stack's rows are one row-major matrix.
  if (nb > 1 && yo.batch_stride == 0 && !xo.col_major && xo.batch_stride == M * xo.ld) {
    gemm("oar.matmul", xo, yo, o, 1, nb * M, N, K, false);
    return;
  }
  gemm("oar.matmul", xo, yo, o, nb, M, N, K, false);
}

const bool matmul_reg = register_all("matmul", matmul_kernel, OAR_NUMERIC_DTYPES);

// linear: out = x [..., K] @ w [K, N] + b [N]; the output starts as the
// broadcast bias and the product is added to it.
struct CopyValue {
  template <typename V> __device__ V operator()(V v) const { return v; }
};
void linear_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  const Tensor &x0 = in[0], &w = in[1], &b = in[2];
  const int64_t K = w.shape()[0], N = w.shape()[1], R = o.numel() / N;
  cpu::visit_float(o.dtype(), [&](auto tag) {
    using T = decltype(tag);
    elementwise<T, T>("oar.nn.functional.linear", o, CopyValue{}, b);
  });
  if (K == 0) return;
  Tensor x = x0.is_contiguous() ? x0 : ops::contiguous(x0);
  Operand xo{static_cast<const char*>(x.raw_data()), false, K, 0}, wo;
  Tensor wd = w;
  if (!as_operand(wd, false, Dims{}, &wo)) {
    wd = ops::contiguous(w);
    as_operand(wd, false, Dims{}, &wo);
  }
  gemm("oar.nn.functional.linear", xo, wo, o, 1, R, N, K, true);
}

const bool linear_reg = register_all("linear", linear_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

// TF32 for float32 products (off by default: float32 keeps its precision).
extern "C" __attribute__((visibility("default"))) void oar_cuda_set_allow_tf32(int allow) {
  oar::cuda::g_allow_tf32.store(allow != 0);
}
extern "C" __attribute__((visibility("default"))) int oar_cuda_get_allow_tf32() {
  return oar::cuda::g_allow_tf32.load() ? 1 : 0;
}

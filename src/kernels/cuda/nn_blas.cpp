#include "kernels/cuda/nn_blas.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <mutex>

#include "base/error.h"
#include "device/cuda/cuda_check.h"

namespace oar::cuda {
namespace {

void cublas_check(cublasStatus_t s, const char* api, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(ErrorKind::Runtime, "[", api, "] ", what, " failed: ", cublasGetStatusName(s), " (",
         cublasGetStatusString(s), ")");
}

// The handle of the current device, made on first use. Handles live until the
// process exits: destroying them at exit would run after the CUDA runtime's
// own teardown.
cublasHandle_t handle(const char* api) {
  constexpr int kMaxDevices = 64;
  static std::mutex mu;
  static cublasHandle_t handles[kMaxDevices] = {};
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), api, "cudaGetDevice");
  OAR_CHECK(dev >= 0 && dev < kMaxDevices, Runtime, "[", api, "] device index ", dev, " is out of range");
  std::lock_guard<std::mutex> lock(mu);
  if (!handles[dev]) {
    cublasHandle_t h = nullptr;
    cublas_check(cublasCreate(&h), api, "cublasCreate");
    cublas_check(cublasSetStream(h, cudaStreamLegacy), api, "cublasSetStream");
    handles[dev] = h;
  }
  return handles[dev];
}

int as_int(int64_t v, const char* api, const char* what) {
  OAR_CHECK(v >= 0 && v <= INT_MAX, NotImplemented, "[", api, "] ", what, " (", v,
            ") is beyond the 32-bit sizes of the CUDA products");
  return int(v);
}

}  // namespace

void nn_gemm(const char* api, GemmType type, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
             int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, void* c, int64_t ldc,
             int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  cudaDataType ab = CUDA_R_32F, ct = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (type) {
    case GemmType::Float16: ab = CUDA_R_16F; break;
    case GemmType::BFloat16: ab = CUDA_R_16BF; break;
    case GemmType::Float32: break;
    case GemmType::Float64: ab = ct = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; break;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = type == GemmType::Float64;
  cublas_check(cublasGemmStridedBatchedEx(
                   handle(api), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, as_int(m, api, "m"),
                   as_int(n, api, "n"), as_int(k, api, "k"), f64 ? static_cast<const void*>(&one_d) : &one_f, a, ab,
                   as_int(lda, api, "lda"), stride_a, b, ab, as_int(ldb, api, "ldb"), stride_b,
                   f64 ? static_cast<const void*>(&zero_d) : &zero_f, c, ct, as_int(ldc, api, "ldc"), stride_c,
                   as_int(batch, api, "the batch"), compute, CUBLAS_GEMM_DEFAULT),
               api, "cublasGemmStridedBatchedEx");
}

}  // namespace oar::cuda

// cuBLAS for the fused nn kernels (fused_linear_act, fused_attention): one
// handle per device, on the legacy default stream (Note [CUDA streams]), and
// one strided-batched product for every float dtype.
#pragma once
#include <cstdint>

namespace oar::cuda {

// The element type of the operands A and B of nn_gemm. C and the
// accumulation are float for the 16-bit types and float32, double for float64.
enum class GemmType { Float16, BFloat16, Float32, Float64 };

// Column-major, as cuBLAS: C_i[m x n] = op(A_i)[m x k] op(B_i)[k x n] for i <
// batch, where op transposes when ta / tb, and X_i starts `stride_x` elements
// after X_{i-1}. Runs on the calling thread's current device (hold a
// DeviceGuard). m, n or batch of 0 does nothing; k must be positive (the
// callers zero C themselves). `api` names the caller in errors.
void nn_gemm(const char* api, GemmType type, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
             int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, void* c, int64_t ldc,
             int64_t stride_c, int64_t batch);

}  // namespace oar::cuda

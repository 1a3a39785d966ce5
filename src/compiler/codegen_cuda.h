// CUDA code generation for fused elementwise groups (Note [generated CUDA
// kernels] in codegen_cuda.cpp).
#pragma once
#include <string>

#include "ops/op.h"

namespace oar::compiler {

// Dims a generated CUDA kernel's index arithmetic handles (collapsed dims).
constexpr int kCudaMaxRank = 8;

// The CUDA C source of the kernel that evaluates a fused_elementwise program
// over `n_in` inputs of dtype `dt`: extern "C" __global__ oar_kernel(Geometry
// g, const S* in0, ..., S* out, long long n), a grid-stride loop over the
// output's n elements.
std::string cuda_elementwise_source(DType dt, const Dims& program, int n_in);

}  // namespace oar::compiler

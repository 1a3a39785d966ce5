// CPU code generation for fusion groups (Note [generated elementwise
// kernels] in codegen_cpu.cpp).
#pragma once
#include <span>
#include <string>

#include "ops/op.h"

namespace oar::compiler {

// How a generated loop reads one input along the innermost (collapsed) dim
// of the iteration space: dense, one value per row (stride 0), through a
// stride, or one value for the whole kernel.
enum class Access : char { Dense = 'd', PerRow = 'r', Strided = 's', Scalar = 'k' };

// The C++ source of the kernel that evaluates a fused_elementwise program
// (Note [fused elementwise program], ops/fused.h) over inputs of dtype `dt`
// read as `access` says, exporting extern "C" `symbol`.
std::string elementwise_source(DType dt, const Dims& program, std::span<const Access> access,
                               const std::string& symbol);

// Runs fused_elementwise `program` over `in` into `out` (the op's output,
// allocated) with a generated kernel: false, with nothing written, when no
// kernel can be had (compiler off, missing or failing), and the caller runs
// its interpreter instead.
bool run_elementwise(std::span<const Tensor> in, Tensor& out, const Dims& program);

// fused_reduce (ops/fused.h): the program's result over the inputs'
// broadcast shape, reduced over `axes` of that shape (sorted, distinct) into
// `out` (allocated; keepdim changes only its shape). false as above.
enum class ReduceKind : int { Sum, Mean, Max, Min };
std::string reduce_source(DType dt, const Dims& program, std::span<const Access> access, ReduceKind kind,
                          bool inner, const std::string& symbol);
bool run_reduce(std::span<const Tensor> in, Tensor& out, const Dims& program, ReduceKind kind, const Dims& axes);

}  // namespace oar::compiler

// Note [generated CUDA kernels]
// The CUDA form of a fused_elementwise program: one thread per output element
// (a grid-stride loop), each input read once through its strides in the
// collapsed iteration space (the CPU generator's collapse; at most
// kCudaMaxRank dims, passed by value with the strides in a Geometry struct),
// the instructions as expressions on registers, one store. The math functions
// are CUDA's own (expf, erff, ...); float16 and bfloat16 load into float and
// round once on the store (PTX cvt for float16, bit arithmetic for bfloat16).
// The source includes no header, so NVRTC compiles it without the toolkit's
// include directory. NVRTC compiles it to PTX in `make test` where the
// toolkit is present (tests/python/test_compiler.py); loading the PTX and
// launching it needs a GPU and is not wired into fused_elementwise yet: the
// CUDA kernels of kernels/cuda run the groups.
#include "compiler/codegen_cuda.h"

#include <sstream>
#include <vector>

#include "compiler/expr.h"

namespace oar::compiler {
namespace {

using ops::EwCode;

constexpr const char* kCudaPrelude = R"(typedef long long i64;
typedef unsigned int u32;
typedef unsigned short u16;
__device__ __forceinline__ float load_bf16(u16 h) { return __uint_as_float(((u32)h) << 16); }
__device__ __forceinline__ u16 store_bf16(float f) {
  u32 u = __float_as_uint(f);
  u32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u16)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded);
}
__device__ __forceinline__ float load_f16(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ u16 store_f16(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
)";

}  // namespace

std::string cuda_elementwise_source(DType dt, const Dims& program, int n_in) {
  const TypeNames ct = type_names(dt, true);
  const int n_instr = int(program.size() / 3);
  std::ostringstream s;
  s << kCudaPrelude << "typedef " << ct.compute << " T;\ntypedef " << ct.storage << " S;\n"
    << "struct Geometry { i64 rank; i64 shape[" << kCudaMaxRank << "]; i64 strides[" << n_in << "]["
    << kCudaMaxRank << "]; };\n"
    << "extern \"C\" __global__ void oar_kernel(Geometry g";
  for (int j = 0; j < n_in; ++j) s << ", const S* __restrict__ in" << j;
  s << ", S* __restrict__ out, i64 n) {\n"
    << "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {\n"
    << "    i64 q = i";
  for (int j = 0; j < n_in; ++j) s << ", o" << j << " = 0";
  s << ";\n    for (int d = (int)g.rank - 1; d >= 0; --d) {\n"
    << "      const i64 x = q % g.shape[d];\n      q /= g.shape[d];\n";
  for (int j = 0; j < n_in; ++j) s << "      o" << j << " += x * g.strides[" << j << "][d];\n";
  s << "    }\n";
  std::vector<std::string> reg;
  for (int j = 0; j < n_in; ++j) {
    s << "    const T v" << j << " = " << ct.load << "(in" << j << "[o" << j << "]);\n";
    reg.push_back(reg_name("v", j));
  }
  for (int k = 0; k < n_instr; ++k) {
    const EwCode code = EwCode(program[size_t(3 * k)]);
    const int64_t ra = program[size_t(3 * k + 1)], rb = program[size_t(3 * k + 2)];
    const std::string t = reg_name("t", k);
    s << "    const T " << t << " = T("
      << instantiate(scalar_expression(code, true), reg[size_t(ra)], rb >= 0 ? reg[size_t(rb)] : "", ct.suffix, "")
      << ");\n";
    reg.push_back(t);
  }
  s << "    out[i] = " << ct.store << "(" << reg.back() << ");\n  }\n}\n";
  return s.str();
}

}  // namespace oar::compiler

// Kernels of the unary elementwise ops (definitions: ops/unary.cpp).
#include <cmath>
#include <string_view>
#include <utility>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

using namespace scalar;

// VEC: the vmath function with a dense vectorised path, or kNoVec (the
// iterator only).
constexpr int kNoVec = -1;
#define OAR_UNARY_KERNEL(NAME, VISIT, DTYPES, VEC, EXPR)                                    \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {    \
    if constexpr (int(VEC) >= 0)                                                            \
      if (vmath::apply(vmath::Fn(VEC), in[0], out[0])) return;                              \
    VISIT(in[0].dtype(), [&](auto tag) {                                                    \
      using T = decltype(tag);                                                              \
      using C = compute_t<T>;                                                               \
      elementwise<T, T>(out[0], [](C x) -> C { return EXPR; }, in[0]);                      \
    });                                                                                     \
  }                                                                                         \
  KernelRegistrar NAME##_reg(#NAME, DeviceType::CPU, DTYPES, NAME##_kernel);

#define OAR_UNARY_TO(NAME, VISIT, DTYPES, OUT, EXPR)                                        \
  void NAME##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {    \
    VISIT(in[0].dtype(), [&](auto tag) {                                                    \
      using T = decltype(tag);                                                              \
      using C = compute_t<T>;                                                               \
      using O = OUT;                                                                        \
      elementwise<O, T>(out[0], [](C x) { return EXPR; }, in[0]);                           \
    });                                                                                     \
  }                                                                                         \
  KernelRegistrar NAME##_reg(#NAME, DeviceType::CPU, DTYPES, NAME##_kernel);

// The declared unary ops' kernels (ops/elementwise.toml).
#include "gen/kernels/unary.inc"

}  // namespace
}  // namespace oar::cpu

// fused_reduce on CUDA: the fused elementwise kernel, then the reduction
// kernel (ops::fused_reduce_by_ops); a generated CUDA kernel would read the
// inputs once.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/registry.h"
#include "ops/fused.h"

namespace oar::cuda {
namespace {

const bool fused_reduce_reg = register_real("fused_reduce", ops::fused_reduce_by_ops, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

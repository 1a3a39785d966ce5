// CUDA kernels composed of other ops (each reads its inputs several times;
// a fused CUDA kernel would read them once):
// - fused_reduce: the fused elementwise kernel, then the reduction kernel;
// - rms_norm, rms_norm_grad: Note [rms_norm by ops];
// - relu_grad: a comparison, a zero tensor and a select;
// - fused_attention_grad: the composite gradient's products and softmax, in
//   float32 for 16-bit inputs.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/registry.h"
#include "ops/activation.h"
#include "ops/fused.h"
#include "ops/norm.h"

namespace oar::cuda {
namespace {

const bool fused_reduce_reg = register_real("fused_reduce", ops::fused_reduce_by_ops, OAR_FLOAT_DTYPES);
const bool rms_norm_reg = register_real("rms_norm", ops::rms_norm_by_ops, OAR_FLOAT_DTYPES);
const bool rms_norm_grad_reg = register_real("rms_norm_grad", ops::rms_norm_grad_by_ops, OAR_FLOAT_DTYPES);
const bool relu_grad_reg = register_real("relu_grad", ops::relu_grad_by_ops, OAR_FLOAT_DTYPES);
const bool attention_grad_reg =
    register_real("fused_attention_grad", ops::fused_attention_grad_by_ops, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

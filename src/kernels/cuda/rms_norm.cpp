// rms_norm and rms_norm_grad on CUDA: composed of ops (Note [rms_norm by
// ops]), so each reads its input several times; a fused row kernel, as
// norm.cu's layer_norm, would read it once.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/registry.h"
#include "ops/norm.h"

namespace oar::cuda {
namespace {

const bool rms_norm_reg = register_real("rms_norm", ops::rms_norm_by_ops, OAR_FLOAT_DTYPES);
const bool rms_norm_grad_reg = register_real("rms_norm_grad", ops::rms_norm_grad_by_ops, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

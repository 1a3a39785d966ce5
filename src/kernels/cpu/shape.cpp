#include "kernels/cpu/dtype_lists.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

// out = copy of base; then the slice view of out receives src.
void slice_scatter_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const OpDef& cast = op_def("cast");
  KernelFn copy = cast.kernels[int(DeviceType::CPU)][int(in[0].dtype())];
  Tensor o = out[0];
  if (!(in[0].same(o) || (in[0].raw_data() == o.raw_data() && in[0].strides() == o.strides())))
    copy(in.subspan(0, 1), std::span<Tensor>(&o, 1), a);
  Tensor ov = o;
  Metas m = op_def("strided_slice").infer_meta(std::span<const Tensor>(&ov, 1), a);
  Tensor view = make_view(o, m[0].shape, m[0].strides, m[0].offset);
  if (view.numel() == 0) return;
  Tensor src = in[1].shape() == view.shape() ? in[1] : ops::expand(in[1], view.shape());
  copy(std::span<const Tensor>(&src, 1), std::span<Tensor>(&view, 1), a);
}

KernelRegistrar r("slice_scatter", DeviceType::CPU, OAR_ALL_DTYPES, slice_scatter_kernel);

}  // namespace
}  // namespace oar::cpu

// CUDA kernels of concat and slice_scatter (kernels/cpu/manip.cpp,
// shape.cpp): contiguous inputs of concat are copied as blocks of rows,
// everything else goes through the CUDA cast kernel's strided copy.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/index_util.cuh"
#include "kernels/cuda/registry.h"
#include "ops/dispatch.h"

namespace oar::cuda {
namespace {

// rows x width units from src (rows spitch apart) to dst (rows dpitch apart).
template <typename U>
__global__ void copy_rows(U* dst, int64_t dpitch, const U* src, int64_t spitch, int64_t rows, int64_t width) {
  OAR_GRID_LOOP(t, rows * width) {
    const int64_t r = t / width;
    dst[r * dpitch + (t - r * width)] = src[r * spitch + (t - r * width)];
  }
}

// Each input is copied into its slice of the contiguous output along `axis`.
void concat_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const char* api = "oar.concat";
  Tensor& o = out[0];
  const int64_t axis = a.i(0);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= o.shape()[size_t(d)];
  for (int64_t d = axis + 1; d < o.dim(); ++d) inner *= o.shape()[size_t(d)];
  const int64_t isz = int64_t(o.itemsize());
  const int64_t orow = o.shape()[size_t(axis)] * inner * isz;  // bytes per outer row of the output
  char* obase = static_cast<char*>(o.raw_data());
  DeviceGuard guard(o.device().index);
  int64_t off = 0;
  for (const Tensor& t : in) {
    const int64_t n = t.shape()[size_t(axis)];
    if (t.numel() > 0) {
      const int64_t block = n * inner * isz;  // bytes per outer row of t
      char* dst = obase + off * inner * isz;
      const char* src = static_cast<const char*>(t.raw_data());
      if (t.is_contiguous() && outer == 1) {
        cuda_check(cudaMemcpyAsync(dst, src, size_t(block), cudaMemcpyDeviceToDevice, cudaStreamLegacy), api,
                   "cudaMemcpyAsync");
      } else if (t.is_contiguous()) {
        int unit = 1;
        for (int u : {16, 8, 4, 2})
          if (block % u == 0 && orow % u == 0 && reinterpret_cast<uintptr_t>(dst) % u == 0 &&
              reinterpret_cast<uintptr_t>(src) % u == 0) {
            unit = u;
            break;
          }
        visit_size(size_t(unit), [&](auto tag) {
          using U = decltype(tag);
          launch(api, outer * (block / unit), copy_rows<U>, reinterpret_cast<U*>(dst), orow / unit,
                 reinterpret_cast<const U*>(src), block / unit, outer, block / unit);
        });
      } else {
        Tensor view = make_view(o, t.shape(), o.strides(), o.offset() + off * inner);
        device_copy(t, view);
      }
    }
    off += n;
  }
}

// out = a copy of base; then the slice view of out receives src (broadcast).
void slice_scatter_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor o = out[0];
  if (!(in[0].same(o) || (in[0].raw_data() == o.raw_data() && in[0].strides() == o.strides())))
    device_copy(in[0], o);
  static const OpDef& slice = op_def("strided_slice");
  Tensor ov = o;
  Metas m = slice.infer_meta(std::span<const Tensor>(&ov, 1), a);
  Tensor view = make_view(o, m[0].shape, m[0].strides, m[0].offset);
  if (view.numel() == 0) return;
  Tensor src = in[1].shape() == view.shape() ? in[1] : ops::expand(in[1], view.shape());
  device_copy(src, view);
}

const bool r1 = register_all("concat", concat_kernel, OAR_ALL_DTYPES);
const bool r2 = register_all("slice_scatter", slice_scatter_kernel, OAR_ALL_DTYPES);

}  // namespace
}  // namespace oar::cuda

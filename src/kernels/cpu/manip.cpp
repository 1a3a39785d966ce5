// concat: each input is copied into its slice of the contiguous output;
// contiguous inputs as one memcpy per outer row, others through the cast
// kernel's strided copy.
#include <cstring>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"

namespace oar::cpu {
namespace {

void concat_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor& o = out[0];
  int64_t axis = a.i(0);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= o.shape()[d];
  for (int64_t d = axis + 1; d < o.dim(); ++d) inner *= o.shape()[d];
  const int64_t isz = int64_t(o.itemsize());
  const int64_t orow = o.shape()[axis] * inner * isz;  // bytes per outer row of the output
  char* obase = static_cast<char*>(o.raw_data());
  KernelFn copy = op_def("cast").kernels[int(DeviceType::CPU)][int(o.dtype())];
  int64_t off = 0;
  for (const Tensor& t : in) {
    int64_t n = t.shape()[axis];
    if (t.numel() > 0) {
      if (t.is_contiguous()) {
        const int64_t block = n * inner * isz;
        const char* src = static_cast<const char*>(t.raw_data());
        char* dst = obase + off * inner * isz;
        if (outer == 1) {
          parallel_for(block, kParallelGrain * 8, [&](int64_t b, int64_t e) {
            std::memcpy(dst + b, src + b, size_t(e - b));
          });
        } else {
          int64_t grain = std::max<int64_t>(1, kParallelGrain * 8 / block);
          parallel_for(outer, grain, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r) std::memcpy(dst + r * orow, src + r * block, size_t(block));
          });
        }
      } else {
        Tensor view = make_view(o, t.shape(), o.strides(), o.offset() + off * inner);
        copy(std::span<const Tensor>(&t, 1), std::span<Tensor>(&view, 1), a);
      }
    }
    off += n;
  }
}

KernelRegistrar r("concat", DeviceType::CPU, OAR_ALL_DTYPES, concat_kernel);

}  // namespace
}  // namespace oar::cpu

// CUDA kernel of `cast`: every (input, output) dtype pair, between strided
// tensors (clone, contiguous, copy_ and astype all run it). Conversions are
// those of the CPU (kernels/cpu/convert.h): complex -> real keeps the real
// part, -> bool tests for nonzero, float -> int truncates.
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/loops.cuh"
#include "kernels/cuda/registry.h"

namespace oar::cuda {
namespace {

template <typename Out> struct Convert {
  template <typename V> __device__ value_t<Out> operator()(V v) const {
    using O = value_t<Out>;
    if constexpr (is_cx_v<O>) {
      using F = decltype(O::re);
      if constexpr (is_cx_v<V>) return O{F(v.re), F(v.im)};
      else return O{F(v), F(0)};
    } else if constexpr (is_cx_v<V>) {
      if constexpr (std::is_same_v<O, bool>) return v.re != 0 || v.im != 0;
      else return O(v.re);
    } else if constexpr (std::is_same_v<O, bool>) {
      return v != V(0);
    } else {
      return O(v);
    }
  }
};

// The same dtype: items moved as unsigned integers of their size.
struct Copy {
  template <typename U> __device__ U operator()(U v) const { return v; }
};
template <typename U> void copy_items(const Tensor& x, Tensor& y) { elementwise<U, U>("oar.cast", y, Copy{}, x); }

void cast_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  Tensor& y = out[0];
  if (x.dtype() == y.dtype()) {
    if (x.is_contiguous() && y.is_contiguous() && x.shape() == y.shape()) {
      const size_t n = size_t(y.numel()) * y.itemsize();
      if (n == 0 || x.raw_data() == y.raw_data()) return;
      DeviceGuard guard(y.device().index);
      cuda_check(cudaMemcpyAsync(y.raw_data(), x.raw_data(), n, cudaMemcpyDeviceToDevice, cudaStreamLegacy),
                 "oar.cast", "cudaMemcpyAsync");
      return;
    }
    switch (x.itemsize()) {
      case 1: return copy_items<uint8_t>(x, y);
      case 2: return copy_items<uint16_t>(x, y);
      case 4: return copy_items<uint32_t>(x, y);
      case 8: return copy_items<uint64_t>(x, y);
      default: return copy_items<Pair64>(x, y);
    }
  }
  visit_dtype(x.dtype(), [&](auto itag) {
    using In = decltype(itag);
    visit_dtype(y.dtype(), [&](auto otag) {
      using Out = decltype(otag);
      elementwise<Out, In>("oar.cast", y, Convert<Out>{}, x);
    });
  });
}

const bool cast_reg = register_all("cast", cast_kernel, OAR_ALL_DTYPES);

}  // namespace
}  // namespace oar::cuda

// custom_cpu's manipulation kernels: concat (attr axis, normalised), which
// data parallel uses to flatten gradients into one buffer per bucket. It
// copies elements as bytes, so every dtype; inputs may be strided.
#include <cstring>

#include "custom_cpu.h"
#include "kernel_util.h"

namespace custom_cpu {
namespace {

using oar::ext::KernelContext;

// Copies x (any strides) into the dense block of `out` that starts at
// `base`, whose rows (the dims from `axis` on) are `row` elements apart.
void copy_block(const TensorView& x, char* base, int axis, int64_t row, size_t w) {
  const int nd = x.ndim();
  std::vector<int64_t> idx(size_t(nd), 0);
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t soff = 0, outer = 0, inner = 0;
    for (int d = 0; d < nd; ++d) {
      soff += idx[size_t(d)] * x.stride(d);
      if (d < axis) outer = outer * x.shape(d) + idx[size_t(d)];
      else inner = inner * x.shape(d) + idx[size_t(d)];
    }
    std::memcpy(base + size_t(outer * row + inner) * w, src + size_t(soff) * w, w);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < x.shape(d)) break;
      idx[size_t(d)] = 0;
    }
  }
}

void concat(KernelContext& ctx) {
  TensorView out = ctx.output(0);
  const int nd = out.ndim();
  int axis = int(ctx.attr_int(0));
  if (axis < 0) axis += nd;
  const size_t w = oar::ext::itemsize(out.dtype());
  int64_t tail = 1;  // elements of one slice at the concatenation axis
  for (int d = axis + 1; d < nd; ++d) tail *= out.shape(d);
  const int64_t row = out.shape(axis) * tail;
  char* o = static_cast<char*>(out.raw_data());
  int64_t at = 0;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    TensorView x = ctx.input(k);
    copy_block(x, o + size_t(at * tail) * w, axis, row, w);
    at += x.shape(axis);
  }
}

const RegisterKernels reg([] {
  using namespace oar::ext;
  add_kernel("concat", {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64,
                        kComplex64, kComplex128}, concat);
});

}  // namespace
}  // namespace custom_cpu

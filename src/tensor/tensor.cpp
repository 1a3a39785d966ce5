#include "tensor/tensor.h"

#include "tensor/autograd_meta.h"
#include "base/error.h"

namespace oar {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  data_ = device_interface(device.type).allocate(nbytes, device.index);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

namespace {
std::atomic<Storage::ReleaseHook> g_read_only_release{nullptr};
}  // namespace

void Storage::set_read_only_release_hook(ReleaseHook h) { g_read_only_release.store(h); }

Storage::~Storage() {
  if (read_only_)
    if (ReleaseHook h = g_read_only_release.load()) h(this);
  if (release_) release_();
  else device_interface(device_.type).deallocate(data_, nbytes_, device_.index);
}

TensorImpl::TensorImpl(Ref<Storage> s, Dims shp, Dims str, int64_t off, DType dt)
    : storage(std::move(s)), shape(std::move(shp)), strides(std::move(str)), offset(off), dtype(dt) {
  check_rank(shape.size(), "oar.Tensor");
  refresh();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::refresh() {
  int64_t n = 1;
  bool c = true;
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    n *= shape[i];
    if (shape[i] != 1 && strides[i] != expect) c = false;
    expect *= shape[i];
  }
  numel = n;
  contiguous = c || n == 0;
}

Dims contiguous_strides(const Dims& shape) {
  Dims s(shape.size(), 1);
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
  return s;
}

void check_rank(size_t rank, const char* api) {
  OAR_CHECK(rank <= size_t(kMaxRank), Value, "[", api, "] tensors have at most ", kMaxRank,
            " dimensions, got a shape of rank ", rank);
}

int64_t checked_numel(const Dims& shape, const char* api) {
  check_rank(shape.size(), api);
  int64_t n = 1;
  for (int64_t d : shape) {
    OAR_CHECK(d >= 0, Value, "[", api, "] shape dims must be non-negative, got ", d);
    OAR_CHECK(!__builtin_mul_overflow(n, d, &n), Value, "[", api,
              "] the number of elements overflows int64");
  }
  return n;
}

bool Tensor::requires_grad() const {
  return impl_->autograd && !impl_->autograd->stop_gradient;
}

AutogradMeta& Tensor::autograd_meta() const {
  if (!impl_->autograd) impl_->autograd = std::make_unique<AutogradMeta>();
  return *impl_->autograd;
}

Tensor empty_tensor(const Dims& shape, DType dtype, Device device) {
  int64_t n = checked_numel(shape, "oar.empty");
  int64_t bytes;
  OAR_CHECK(!__builtin_mul_overflow(n, int64_t(itemsize(dtype)), &bytes), Value,
            "[oar.empty] the tensor size in bytes overflows int64");
  auto storage = make_ref<Storage>(size_t(bytes), device);
  return Tensor(make_ref<TensorImpl>(std::move(storage), shape, contiguous_strides(shape), 0, dtype));
}

Tensor make_view(const Tensor& base, Dims shape, Dims strides, int64_t offset) {
  return Tensor(make_ref<TensorImpl>(base.impl()->storage, std::move(shape), std::move(strides),
                                     offset, base.dtype()));
}

}  // namespace oar

// Storage, TensorImpl and the Tensor handle.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "base/dtype.h"
#include "base/refcount.h"
#include "base/small_vector.h"
#include "tensor/device.h"

namespace oar {

struct AutogradMeta;  // tensor/autograd_meta.h
struct DistAttr;      // placements on a process mesh (dist/)

class Storage final : public RefCounted {
 public:
  // Allocates `nbytes` on `device` through its DeviceInterface.
  Storage(size_t nbytes, Device device);
  // Wraps memory owned elsewhere (NumPy, DLPack); `release` runs on destruction.
  Storage(void* data, size_t nbytes, Device device, std::function<void()> release);
  ~Storage() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Bumped by every in-place write; shared by all views of this storage.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

  // Note [read-only storage]
  // Weights owned by an inference predictor are marked read-only: no op may
  // write them (dispatch refuses in-place ops on them), so kernels may keep
  // derived forms of their data keyed by the storage (oneDNN's blocked copy
  // of convolution weights), valid until the storage is freed. The hook
  // (one per process, set by the kernels that cache) runs when a read-only
  // storage is destroyed so those forms are dropped with it.
  bool read_only() const { return read_only_; }
  void set_read_only() { read_only_ = true; }
  using ReleaseHook = void (*)(const Storage*);
  static void set_read_only_release_hook(ReleaseHook h);

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::atomic<uint32_t> version_{0};
  bool read_only_ = false;
  std::function<void()> release_;
};

class TensorImpl final : public RefCounted {
 public:
  TensorImpl(Ref<Storage> storage, Dims shape, Dims strides, int64_t offset, DType dtype);
  ~TensorImpl() override;

  Ref<Storage> storage;
  Dims shape;
  Dims strides;  // in elements
  int64_t offset = 0;  // in elements
  int64_t numel = 1;
  DType dtype;
  bool contiguous = true;
  bool is_view = false;  // made by a view op: shares its storage with a base tensor
  std::unique_ptr<AutogradMeta> autograd;  // null until autograd needs it
  std::shared_ptr<DistAttr> dist;          // null for a local tensor

  void refresh();  // recompute numel and contiguous from shape and strides
};

// Note [maximum rank]
// Tensors have at most kMaxRank dims. The CPU loops keep per-dim state in
// fixed arrays of this size, so the limit is enforced wherever a shape can
// come from: tensor creation from user data, every op's infer_meta result
// (dispatch, tracing, loaded programs) and the safetensors reader; the
// TensorImpl constructor checks it once more as a last guard.
constexpr int kMaxRank = 16;
// Refuses shapes of more than kMaxRank dims: "[api] ... rank N ...".
void check_rank(size_t rank, const char* api);

// Row-major strides for a shape.
Dims contiguous_strides(const Dims& shape);
// Product of the dims, checked for int64 overflow; `api` names the caller in the error.
int64_t checked_numel(const Dims& shape, const char* api);

// A reference to a TensorImpl; may be undefined (null).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}
  explicit Tensor(TensorImpl* impl) : impl_(impl) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& ref() const { return impl_; }

  const Dims& shape() const { return impl_->shape; }
  const Dims& strides() const { return impl_->strides; }
  int64_t dim() const { return int64_t(impl_->shape.size()); }
  int64_t size(int64_t d) const { return impl_->shape[d]; }
  int64_t numel() const { return impl_->numel; }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  bool is_contiguous() const { return impl_->contiguous; }
  size_t itemsize() const { return oar::itemsize(impl_->dtype); }
  Storage& storage() const { return *impl_->storage; }
  bool is_dist() const { return impl_->dist != nullptr; }

  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(itemsize());
  }
  template <typename T> T* data() const { return static_cast<T*>(raw_data()); }

  // Autograd state (see tensor/autograd_meta.h).
  bool requires_grad() const;  // !stop_gradient
  AutogradMeta& autograd_meta() const;  // creates it if missing

  bool same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  Ref<TensorImpl> impl_;
};

// A new uninitialised contiguous tensor.
Tensor empty_tensor(const Dims& shape, DType dtype, Device device = Device{});
// A tensor sharing `base`'s storage with other shape/strides/offset.
Tensor make_view(const Tensor& base, Dims shape, Dims strides, int64_t offset);

}  // namespace oar

#include "tensor/caching_allocator.h"

#include "base/error.h"

namespace oar {

void* CachingAllocator::allocate(size_t nbytes) {
  int cls;
  const size_t sz = size_class(nbytes, &cls);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (size_t(cls) >= bins_.size()) bins_.resize(cls + 1);
    bins_[cls].size = sz;
    stats_.allocated += sz;
    if (stats_.allocated > stats_.max_allocated) stats_.max_allocated = stats_.allocated;
    auto& fl = bins_[cls].blocks;
    if (!fl.empty()) {
      void* p = fl.back();
      fl.pop_back();
      return p;
    }
    stats_.reserved += sz;
    if (stats_.reserved > stats_.max_reserved) stats_.max_reserved = stats_.reserved;
  }
  auto undo = [&] {
    std::lock_guard<std::mutex> g(mu_);
    stats_.allocated -= sz;
    stats_.reserved -= sz;
  };
  void* p = nullptr;
  try {
    p = backend_->raw_allocate(sz);
    if (!p) {
      empty_cache();
      p = backend_->raw_allocate(sz);
    }
  } catch (...) {
    undo();
    throw;
  }
  if (!p) {
    undo();
    fail(ErrorKind::Memory, "[oar] out of memory: could not allocate ", nbytes, " bytes on ", device_.str());
  }
  return p;
}

void CachingAllocator::deallocate(void* p, size_t nbytes) {
  if (!p) return;
  int cls;
  size_class(nbytes, &cls);
  std::lock_guard<std::mutex> g(mu_);
  stats_.allocated -= int64_t(bins_[cls].size);
  bins_[cls].blocks.push_back(p);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

void CachingAllocator::reset_peak_allocated() {
  std::lock_guard<std::mutex> g(mu_);
  stats_.max_allocated = stats_.allocated;
}

void CachingAllocator::reset_peak_reserved() {
  std::lock_guard<std::mutex> g(mu_);
  stats_.max_reserved = stats_.reserved;
}

void CachingAllocator::empty_cache() {
  backend_->before_release();
  std::lock_guard<std::mutex> g(mu_);
  for (Bin& bin : bins_) {
    for (void* p : bin.blocks) backend_->raw_free(p, bin.size);
    stats_.reserved -= int64_t(bin.size * bin.blocks.size());
    bin.blocks.clear();
  }
}

}  // namespace oar

// The caching allocator every device's memory goes through (the CPU's, one
// per CUDA device, one per plugin device).
//
// Note [caching allocator]
// Requests are rounded up to a size class (allocator_size_class: powers of
// two up to `pow2_until`, then four classes per power of two, so at most 25%
// is lost to rounding). Freed blocks go to a free list per class and are
// reused by the next request of that class, which keeps small tensors off
// the device's allocator in the eager path and avoids its cost (page faults,
// cudaMalloc's synchronization) for big ones. empty_cache() returns them all.
// A block is reused by work queued after its free on the same stream, so
// reuse needs no synchronization as long as kernels use the current stream
// (Note [device streams]); empty_cache first lets the device finish.
#pragma once
#include <mutex>
#include <vector>

#include "tensor/device.h"

namespace oar {

class CachingAllocator {
 public:
  // The device's own allocator. raw_allocate returns null when the device is
  // out of memory (the allocator then returns its cached blocks and tries
  // once more) and throws for any other failure.
  struct Backend {
    virtual ~Backend() = default;
    virtual void* raw_allocate(size_t nbytes) = 0;
    virtual void raw_free(void* p, size_t nbytes) = 0;
    // Called before cached blocks are returned: wait for queued work.
    virtual void before_release() {}
  };

  CachingAllocator(Device device, Backend* backend, size_t min_bytes, size_t pow2_until)
      : device_(device), backend_(backend), min_bytes_(min_bytes), pow2_until_(pow2_until) {}

  // Throws ErrorKind::Memory when the device has no room left.
  void* allocate(size_t nbytes);
  void deallocate(void* p, size_t nbytes);
  MemoryStats stats() const;
  void reset_peak_allocated();
  void reset_peak_reserved();
  void empty_cache();
  size_t size_class(size_t nbytes, int* cls) const {
    return allocator_size_class(nbytes == 0 ? 1 : nbytes, min_bytes_, pow2_until_, cls);
  }

 private:
  struct Bin {
    size_t size = 0;
    std::vector<void*> blocks;
  };

  Device device_;
  Backend* backend_;
  size_t min_bytes_, pow2_until_;
  mutable std::mutex mu_;
  std::vector<Bin> bins_;
  MemoryStats stats_;
};

}  // namespace oar

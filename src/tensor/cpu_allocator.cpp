// The CPU device: 64-byte aligned host blocks behind the caching allocator
// (Note [caching allocator]).
//
// Note [CPU block sizes]
// Size classes are powers of two up to 4 KiB, then four per power of two, so
// tiny tensors of the eager path share a few free lists.
//
// Note [huge pages]
// Blocks of 4 MiB and more ask the kernel for transparent huge pages on the
// 2 MiB-aligned range inside them (madvise; a no-op where THP is off or set
// to "always"). Matrix products and streaming kernels over such tensors then
// miss the TLB 512 times less often.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tensor/caching_allocator.h"

namespace oar {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeFrom = size_t(4) << 20;

void advise_huge_pages(void* p, size_t n) {
#ifdef MADV_HUGEPAGE
  uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) & ~uintptr_t(kHugePage - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);  // advice only: failure is harmless
#else
  (void)p;
  (void)n;
#endif
}

struct HostMemory final : CachingAllocator::Backend {
  void* raw_allocate(size_t sz) override {
    void* p = std::aligned_alloc(kAlign, sz);
    if (p && sz >= kHugeFrom) advise_huge_pages(p, sz);
    return p;
  }
  void raw_free(void* p, size_t) override { std::free(p); }
};

class CpuDevice final : public DeviceInterface {
 public:
  DeviceType type() const override { return DeviceType::CPU; }
  void* allocate(size_t nbytes, int) override { return alloc_.allocate(nbytes); }
  void deallocate(void* p, size_t nbytes, int) override { alloc_.deallocate(p, nbytes); }

  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_on_device(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }

  MemoryStats memory_stats(int) const override { return alloc_.stats(); }
  void reset_peak_stats(int) override { alloc_.reset_peak_allocated(); }
  void reset_peak_reserved(int) override { alloc_.reset_peak_reserved(); }
  void empty_cache(int) override { alloc_.empty_cache(); }
  std::string device_name(int) override { return "cpu"; }

 private:
  HostMemory host_;
  CachingAllocator alloc_{Device{}, &host_, kAlign, 4096};
};

// The device is never destroyed: tensors may be freed during interpreter
// shutdown after static destructors have run, and its cached blocks stay
// reachable (so leak checkers do not count them).
struct RegisterCpu {
  RegisterCpu() { register_device(DeviceType::CPU, new CpuDevice); }
} register_cpu;

}  // namespace

// Exposed for the allocator unit test.
size_t cpu_size_class(size_t n) {
  int c;
  return allocator_size_class(n == 0 ? 1 : n, kAlign, 4096, &c);
}

}  // namespace oar

// The CPU device: a caching allocator of 64-byte aligned blocks.
//
// Note [CPU block sizes]
// Requests are rounded up to a size class: powers of two up to 4 KiB, then four
// classes per power of two (x1, x1.25, x1.5, x1.75), so at most 25% is lost to
// rounding. Freed blocks go to a free list per class and are reused by the next
// request of that class, which keeps tiny tensors off malloc in the eager path
// and avoids page faults for big ones. empty_cache() returns them all.
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
#include <mutex>
#include <new>
#include <vector>

#include "base/error.h"
#include "tensor/device.h"

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

size_t size_class(size_t n, int* cls) { return allocator_size_class(n, kAlign, 4096, cls); }

class CpuDevice final : public DeviceInterface {
 public:
  DeviceType type() const override { return DeviceType::CPU; }

  void* allocate(size_t nbytes, int) override {
    int cls;
    size_t sz = size_class(nbytes == 0 ? 1 : nbytes, &cls);
    {
      std::lock_guard<std::mutex> g(mu_);
      if (size_t(cls) >= bins_.size()) bins_.resize(cls + 1);
      bins_[cls].size = sz;
      auto& fl = bins_[cls].blocks;
      stats_.allocated += sz;
      if (stats_.allocated > stats_.max_allocated) stats_.max_allocated = stats_.allocated;
      if (!fl.empty()) {
        void* p = fl.back();
        fl.pop_back();
        return p;
      }
      stats_.reserved += sz;
      if (stats_.reserved > stats_.max_reserved) stats_.max_reserved = stats_.reserved;
    }
    void* p = std::aligned_alloc(kAlign, sz);
    if (!p) {
      empty_cache(0);
      p = std::aligned_alloc(kAlign, sz);
    }
    if (!p) {
      std::lock_guard<std::mutex> g(mu_);
      stats_.allocated -= sz;
      stats_.reserved -= sz;
      fail(ErrorKind::Memory, "[oar] out of memory: could not allocate ", nbytes, " bytes on the CPU");
    }
    if (sz >= kHugeFrom) advise_huge_pages(p, sz);
    return p;
  }

  void deallocate(void* p, size_t nbytes, int) override {
    if (!p) return;
    int cls;
    size_t sz = size_class(nbytes == 0 ? 1 : nbytes, &cls);
    std::lock_guard<std::mutex> g(mu_);
    stats_.allocated -= sz;
    bins_[cls].blocks.push_back(p);
  }

  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_on_device(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }

  MemoryStats memory_stats(int) const override {
    std::lock_guard<std::mutex> g(mu_);
    return stats_;
  }
  void reset_peak_stats(int) override {
    std::lock_guard<std::mutex> g(mu_);
    stats_.max_allocated = stats_.allocated;
  }
  void reset_peak_reserved(int) override {
    std::lock_guard<std::mutex> g(mu_);
    stats_.max_reserved = stats_.reserved;
  }
  void empty_cache(int) override {
    std::lock_guard<std::mutex> g(mu_);
    for (Bin& bin : bins_) {
      for (void* p : bin.blocks) std::free(p);
      stats_.reserved -= int64_t(bin.size * bin.blocks.size());
      bin.blocks.clear();
    }
  }

 private:
  mutable std::mutex mu_;
  struct Bin { size_t size = 0; std::vector<void*> blocks; };
  std::vector<Bin> bins_;
  MemoryStats stats_;
};

DeviceInterface* g_devices[kNumDeviceTypes] = {};

// The device is never destroyed: tensors may be freed during interpreter
// shutdown after static destructors have run, and its cached blocks stay
// reachable (so leak checkers do not count them).
struct RegisterCpu {
  RegisterCpu() { g_devices[0] = new CpuDevice; }
} register_cpu;

}  // namespace

DeviceInterface& device_interface(DeviceType t) {
  DeviceInterface* d = g_devices[int(t)];
  if (!d) fail(ErrorKind::Runtime, "[oar] device type ", int(t), " is not available in this build");
  return *d;
}
size_t allocator_size_class(size_t n, size_t min_bytes, size_t pow2_until, int* cls) {
  const int pmin = __builtin_ctzll(min_bytes), pmax = __builtin_ctzll(pow2_until);
  if (n <= min_bytes) {
    *cls = 0;
    return min_bytes;
  }
  const int p = 64 - __builtin_clzll(n - 1);  // 2^p >= n
  if (p <= pmax) {
    *cls = p - pmin;
    return size_t(1) << p;
  }
  const size_t base = size_t(1) << (p - 1);  // base < n <= 2*base
  const size_t q = base / 4;
  const size_t k = (n - base + q - 1) / q;   // 1..4
  *cls = (pmax - pmin) + 1 + (p - pmax - 1) * 4 + int(k - 1);
  return base + k * q;
}

bool has_device(DeviceType t) { return g_devices[int(t)] != nullptr; }
void register_device(DeviceType t, DeviceInterface* iface) { g_devices[int(t)] = iface; }

std::string Device::str() const {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "gpu:" + std::to_string(index);
    default: return "custom:" + std::to_string(index);
  }
}

// Exposed for the allocator unit test.
size_t cpu_size_class(size_t n) { int c; return size_class(n, &c); }

}  // namespace oar

// The shared caching allocator (tensor/caching_allocator.h) over a fake
// device, and the registry of plugin device type slots (tensor/device.h).
#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "tensor/caching_allocator.h"

namespace oar {
namespace {

// A device with `capacity` bytes that counts what it is asked for.
struct FakeMemory final : CachingAllocator::Backend {
  size_t capacity, used = 0;
  int allocs = 0, frees = 0, releases = 0;
  std::set<void*> live;
  explicit FakeMemory(size_t cap) : capacity(cap) {}
  void* raw_allocate(size_t n) override {
    if (used + n > capacity) return nullptr;
    used += n;
    ++allocs;
    void* p = ::operator new(n);
    live.insert(p);
    return p;
  }
  void raw_free(void* p, size_t n) override {
    EXPECT_EQ(live.erase(p), 1u);
    used -= n;
    ++frees;
    ::operator delete(p);
  }
  void before_release() override { ++releases; }
};

TEST(CachingAllocator, ReusesBlocksOfAClassAndCountsBytes) {
  FakeMemory mem(1 << 20);
  CachingAllocator a(Device{DeviceType::Custom, 0}, &mem, 256, 4096);
  void* p = a.allocate(1000);  // class 1024
  EXPECT_EQ(a.stats().allocated, 1024);
  EXPECT_EQ(a.stats().reserved, 1024);
  a.deallocate(p, 1000);
  EXPECT_EQ(a.stats().allocated, 0);
  EXPECT_EQ(a.stats().reserved, 1024);  // cached
  EXPECT_EQ(a.allocate(900), p);        // same class: the cached block
  EXPECT_EQ(mem.allocs, 1);
  void* q = a.allocate(3000);  // another class: a new block
  EXPECT_NE(q, p);
  EXPECT_EQ(mem.allocs, 2);
  EXPECT_EQ(a.stats().max_allocated, 1024 + 4096);
  a.deallocate(p, 900);
  a.deallocate(q, 3000);
  a.reset_peak_allocated();
  EXPECT_EQ(a.stats().max_allocated, 0);
  a.empty_cache();
  EXPECT_EQ(mem.releases, 1);  // the device was let finish first
  EXPECT_EQ(mem.frees, 2);
  EXPECT_EQ(a.stats().reserved, 0);
  EXPECT_EQ(a.stats().max_reserved, 1024 + 4096);
  a.reset_peak_reserved();
  EXPECT_EQ(a.stats().max_reserved, 0);
}

TEST(CachingAllocator, OutOfMemoryReturnsTheCacheAndRetriesThenFails) {
  FakeMemory mem(8192);
  CachingAllocator a(Device{DeviceType::Custom, 1}, &mem, 256, 4096);
  void* p = a.allocate(4096);
  a.deallocate(p, 4096);  // cached, 4096 of the 8192 bytes held
  void* q = a.allocate(6000);  // class 6144: fits only once the cache is returned
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(mem.frees, 1);
  EXPECT_EQ(a.stats().reserved, 6144);
  try {
    a.allocate(4096);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Memory);
    EXPECT_NE(std::string(e.what()).find("could not allocate 4096 bytes on "), std::string::npos) << e.what();
  }
  // a failed request leaves the statistics as they were
  EXPECT_EQ(a.stats().allocated, 6144);
  EXPECT_EQ(a.stats().reserved, 6144);
  a.deallocate(q, 6000);
  a.empty_cache();
  EXPECT_EQ(mem.used, 0u);
}

struct NullDevice final : DeviceInterface {
  DeviceType type() const override { return DeviceType::Custom; }
  void* allocate(size_t, int) override { return nullptr; }
  void deallocate(void*, size_t, int) override {}
  void copy_to_host(void*, const void*, size_t, int) override {}
  void copy_from_host(void*, const void*, size_t, int) override {}
  void copy_on_device(void*, const void*, size_t, int) override {}
  MemoryStats memory_stats(int) const override { return {}; }
  void reset_peak_stats(int) override {}
  void reset_peak_reserved(int) override {}
};

TEST(DeviceTypes, PluginTypesTakeSlotsByName) {
  // (the test binary loads no plugins, so the slots are free)
  static NullDevice dev;
  DeviceType t = register_custom_device("test_npu", &dev);
  EXPECT_TRUE(is_custom(t));
  EXPECT_EQ(find_device_type("test_npu"), int(t));
  EXPECT_EQ(device_type_name(t), "test_npu");
  EXPECT_EQ((Device{t, 3}.str()), "test_npu:3");
  EXPECT_EQ(&device_interface(t), &dev);
  EXPECT_EQ(find_device_type("cpu"), int(DeviceType::CPU));
  EXPECT_EQ(find_device_type("gpu"), int(DeviceType::CUDA));
  EXPECT_EQ(find_device_type("nope"), -1);
  EXPECT_THROW(register_custom_device("test_npu", &dev), Error);
  EXPECT_THROW(register_custom_device("cpu", &dev), Error);
  // default events are host timestamps, complete once recorded
  void* a = dev.create_event(0, true);
  void* b = dev.create_event(0, true);
  dev.record_event(0, a, nullptr);
  dev.record_event(0, b, nullptr);
  EXPECT_TRUE(dev.query_event(0, b));
  EXPECT_GE(dev.event_elapsed_ms(0, a, b), 0.0);
  dev.destroy_event(0, a);
  dev.destroy_event(0, b);
}

}  // namespace
}  // namespace oar

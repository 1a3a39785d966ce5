#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "base/dtype.h"
#include "base/half.h"
#include "ops/ops.h"
#include "tensor/tensor.h"

namespace oar {
size_t cpu_size_class(size_t n);
namespace {

TEST(Half, RoundTripsExactValues) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f})
    EXPECT_EQ(float(float16(v)), v) << v;
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(float(float16(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even -> 1+2^-9.
  EXPECT_EQ(float(float16(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isinf(float(float16(65520.0f))));
  EXPECT_EQ(float(float16(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isnan(float(float16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(float(bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(float(bfloat16(1.0f + std::ldexp(1.0f, -8))), 1.0f);  // tie -> even
  EXPECT_EQ(float(bfloat16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(float(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, Promotion) {
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Int64, DType::Float16), DType::Float16);
  EXPECT_EQ(promote_types(DType::Float64, DType::Complex64), DType::Complex128);
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int32), DType::Int32);
}

TEST(Shape, Broadcast) {
  EXPECT_EQ(ops::broadcast_shapes(Dims{3, 1}, Dims{4}, "t"), (Dims{3, 4}));
  EXPECT_EQ(ops::broadcast_shapes(Dims{}, Dims{2, 2}, "t"), (Dims{2, 2}));
  EXPECT_THROW(ops::broadcast_shapes(Dims{3}, Dims{4}, "t"), Error);
}

TEST(Shape, NumelOverflowIsAnError) {
  EXPECT_THROW(checked_numel(Dims{int64_t(1) << 40, int64_t(1) << 40}, "t"), Error);
  EXPECT_THROW(checked_numel(Dims{-1}, "t"), Error);
}

TEST(Tensor, TransposeIsAViewWithSwappedStrides) {
  Tensor x = ops::arange(Scalar(int64_t(0)), Scalar(int64_t(6)), Scalar(int64_t(1)), DType::Float32);
  Tensor y = ops::transpose(ops::reshape(x, Dims{2, 3}), Dims{1, 0});
  EXPECT_EQ(y.shape(), (Dims{3, 2}));
  EXPECT_EQ(y.strides(), (Dims{1, 3}));
  EXPECT_FALSE(y.is_contiguous());
  EXPECT_EQ(y.storage().data(), x.storage().data());
  Tensor c = ops::contiguous(y);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.data<float>()[1], 3.0f);
}

TEST(Allocator, SizeClassesAreAlignedAndTight) {
  for (size_t n : {size_t(1), size_t(64), size_t(65), size_t(4097), size_t(1) << 20, (size_t(1) << 20) + 1}) {
    size_t c = cpu_size_class(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 64, 0u);
    if (n > 4096) {
      EXPECT_LE(c, n + n / 4 + 64);
    }
  }
}

// Both configurations in use (CPU: 64 B, powers of two to 4 KiB; CUDA: from
// 512 B): a class number names exactly one block size, and sizes grow with it.
TEST(Allocator, SizeClassNumbersAreOneToOneWithSizes) {
  for (auto [lo, until] : {std::pair<size_t, size_t>{64, 4096}, {512, 512}}) {
    std::map<int, size_t> size_of;
    size_t prev = 0;
    int prev_cls = -1;
    for (size_t n = 1; n < (size_t(1) << 22); n += 1 + n / 7) {
      int cls = -1;
      size_t sz = allocator_size_class(n, lo, until, &cls);
      EXPECT_GE(sz, n);
      EXPECT_GE(sz, lo);
      EXPECT_LE(sz, std::max(lo, n <= until ? 2 * n : n + n / 4 + 1));
      auto [it, fresh] = size_of.emplace(cls, sz);
      EXPECT_EQ(it->second, sz) << "class " << cls << " for " << n;
      EXPECT_TRUE(sz > prev ? cls > prev_cls : cls == prev_cls) << n;
      prev = sz;
      prev_cls = cls;
    }
    EXPECT_EQ(size_of.begin()->first, 0);
  }
}

TEST(Allocator, ReusesFreedBlocksAndCountsBytes) {
  DeviceInterface& cpu = device_interface(DeviceType::CPU);
  int64_t before = cpu.memory_stats(0).allocated;
  void* p = cpu.allocate(1000, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_GE(cpu.memory_stats(0).allocated, before + 1000);
  cpu.deallocate(p, 1000, 0);
  EXPECT_EQ(cpu.memory_stats(0).allocated, before);
  void* q = cpu.allocate(1000, 0);
  EXPECT_EQ(p, q);
  cpu.deallocate(q, 1000, 0);
}

}  // namespace
}  // namespace oar

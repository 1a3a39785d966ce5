// Read-only storages (Note [read-only storage] in tensor/tensor.h): writes
// are refused, and oneDNN's cached blocked copy of a read-only convolution
// weight gives the same results as reordering it at every call.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "ops/conv.h"
#include "ops/ops.h"

namespace oar {
namespace {

Tensor ramp(const Dims& shape, float scale) {
  Tensor t = ops::arange(0.0, double(checked_numel(shape, "test")), 1.0, DType::Float32);
  return ops::reshape(ops::sin(ops::multiply(t, ops::full({}, scale, DType::Float32))), shape);
}

// Direct 3x3 convolution, padding 1, stride 1, one image, for reference.
float conv_at(const Tensor& x, const Tensor& w, int64_t o, int64_t i, int64_t j) {
  const int64_t C = x.size(1), H = x.size(2), W = x.size(3);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  double acc = 0;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 3; ++b) {
        int64_t y = i + a - 1, z = j + b - 1;
        if (y < 0 || y >= H || z < 0 || z >= W) continue;
        acc += double(xp[(c * H + y) * W + z]) * wp[((o * C + c) * 3 + a) * 3 + b];
      }
  return float(acc);
}

TEST(ReadOnlyStorage, ConvolutionWithPackedWeightsMatchesDirectLoops) {
  ops::ConvParams p{{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1};
  Tensor w = ramp({32, 16, 3, 3}, 0.37f);
  w.storage().set_read_only();
  for (int round = 0; round < 3; ++round) {  // the first call packs, later ones reuse
    Tensor x = ramp({1, 16, 9, 11}, 0.11f + 0.05f * float(round));
    Tensor y = ops::conv(x, w, p);
    ASSERT_EQ(y.shape(), (Dims{1, 32, 9, 11}));
    const float* yp = y.data<float>();
    for (int64_t o : {0, 7, 31})
      for (int64_t i : {0, 4, 8})
        for (int64_t j : {0, 5, 10})
          EXPECT_NEAR(yp[(o * 9 + i) * 11 + j], conv_at(x, w, o, i, j), 1e-4) << round;
  }
}

TEST(ReadOnlyStorage, InPlaceWritesAreRefused) {
  Tensor w = ramp({4, 4}, 0.5f);
  w.storage().set_read_only();
  try {
    ops::copy_(w, ops::full({4, 4}, 1.0, DType::Float32));
    FAIL() << "a write to a read-only tensor was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  EXPECT_FLOAT_EQ(w.data<float>()[1], std::sin(0.5f));
}

}  // namespace
}  // namespace oar

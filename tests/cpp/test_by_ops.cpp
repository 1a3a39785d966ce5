// The op-composed kernels (ops::*_by_ops: rms_norm, relu_grad,
// fused_attention_grad, the kernels of devices without fused ones: CUDA) run
// on the CPU here against the fused CPU kernels, so they are checked without
// a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/fused.h"
#include "ops/norm.h"
#include "ops/ops.h"
#include "ops/random.h"

namespace oar {
namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.numel() == 0) return 0.0;
  Tensor d = ops::cast(ops::contiguous(ops::amax(ops::abs(ops::subtract(ops::cast(a, DType::Float64),
                                                                       ops::cast(b, DType::Float64))))),
                       DType::Float64);
  return *d.data<double>();
}

struct Case {
  DType dtype;
  Dims shape;
  int64_t begin;
  bool weighted;
  double tol;
};

TEST(RmsNormByOps, MatchesTheFusedCpuKernels) {
  const OpDef* fwd = find_op("rms_norm");
  const OpDef* bwd = find_op("rms_norm_grad");
  ASSERT_TRUE(fwd && bwd);
  for (const Case& c : {Case{DType::Float64, {3, 4, 5}, 1, true, 1e-12}, Case{DType::Float64, {6, 7}, 1, false, 1e-12},
                        Case{DType::Float32, {4, 300}, 1, true, 1e-5}, Case{DType::BFloat16, {5, 64}, 1, true, 2e-2},
                        Case{DType::Float16, {2, 3, 8}, 2, false, 2e-3}, Case{DType::Float32, {0, 4}, 1, true, 0}}) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " " + ops::shape_str(c.shape));
    Dims ns(c.shape.begin() + c.begin, c.shape.end());
    Tensor x = ops::cast(ops::uniform(c.shape, DType::Float64, -2.0, 2.0, 11), c.dtype);
    Tensor g = ops::cast(ops::uniform(c.shape, DType::Float64, -1.0, 1.0, 12), c.dtype);
    Tensor w = c.weighted ? ops::cast(ops::uniform(ns, DType::Float64, 0.5, 2.0, 13), c.dtype) : Tensor();
    Attrs fa{c.begin, 1e-5};
    Tensor fin[2] = {x, w};
    Tensor fused = dispatch1(*fwd, fin, fa);
    Tensor composed = empty_tensor(c.shape, c.dtype);
    Tensor fout[1] = {composed};
    ops::rms_norm_by_ops(fin, fout, fa);
    EXPECT_LE(max_abs_diff(fused, composed), c.tol);

    Attrs ba{c.begin, 1e-5, c.weighted};
    Tensor bin[3] = {x, w, g};
    Tensors grads = dispatch(*bwd, bin, ba);
    Tensor bout[2] = {empty_tensor(c.shape, c.dtype), empty_tensor(c.weighted ? ns : Dims{0}, c.dtype)};
    ops::rms_norm_grad_by_ops(bin, bout, ba);
    EXPECT_LE(max_abs_diff(grads[0], bout[0]), c.tol * 4);
    if (c.weighted) EXPECT_LE(max_abs_diff(grads[1], bout[1]), c.tol * 4 * (1 + c.shape[0]));
  }
}

TEST(ReluGradByOps, MatchesTheFusedCpuKernel) {
  const OpDef* op = find_op("relu_grad");
  ASSERT_TRUE(op);
  for (DType dt : {DType::Float64, DType::Float32, DType::BFloat16}) {
    Tensor y = ops::cast(ops::uniform(Dims{7, 33}, DType::Float64, -1.0, 1.0, 21), dt);
    Tensor g = ops::cast(ops::uniform(Dims{7, 33}, DType::Float64, -1.0, 1.0, 22), dt);
    Tensor in[2] = {y, g};
    Tensor fused = dispatch1(*op, in, Attrs{});
    Tensor out[1] = {empty_tensor(y.shape(), dt)};
    ops::relu_grad_by_ops(in, out, Attrs{});
    EXPECT_EQ(max_abs_diff(fused, out[0]), 0.0) << dtype_name(dt);
  }
}

TEST(FusedAttentionGradByOps, MatchesTheFusedCpuKernel) {
  const OpDef* op = find_op("fused_attention_grad");
  ASSERT_TRUE(op);
  struct A {
    DType dt;
    Dims q, k, v, mask;
    bool causal;
    double tol;
  };
  for (const A& c : {A{DType::Float64, {2, 3, 70, 8}, {2, 3, 50, 8}, {2, 3, 50, 4}, {}, false, 1e-12},
                     A{DType::Float64, {2, 5, 8}, {2, 9, 8}, {2, 9, 3}, {5, 9}, true, 1e-12},
                     A{DType::Float32, {1, 130, 16}, {1, 130, 16}, {1, 130, 16}, {1, 1, 130}, true, 2e-5},
                     A{DType::BFloat16, {2, 40, 8}, {2, 40, 8}, {2, 40, 8}, {}, true, 5e-2}}) {
    SCOPED_TRACE(std::string(dtype_name(c.dt)) + " " + ops::shape_str(c.q));
    auto rnd = [&](const Dims& s, uint64_t seed) {
      return s.empty() ? Tensor() : ops::cast(ops::uniform(s, DType::Float64, -1.0, 1.0, seed), c.dt);
    };
    Dims o = c.q;
    o.back() = c.v.back();
    Tensor in[5] = {rnd(c.q, 31), rnd(c.k, 32), rnd(c.v, 33), rnd(c.mask, 34), rnd(o, 35)};
    Attrs a{0.4, c.causal};
    Tensors fused = dispatch(*op, in, a);
    Tensor out[3] = {empty_tensor(c.q, c.dt), empty_tensor(c.k, c.dt), empty_tensor(c.v, c.dt)};
    ops::fused_attention_grad_by_ops(in, out, a);
    for (int i = 0; i < 3; ++i) EXPECT_LE(max_abs_diff(fused[size_t(i)], out[i]), c.tol) << "gradient " << i;
  }
}

}  // namespace
}  // namespace oar

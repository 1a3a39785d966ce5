// custom_cpu's kernels around a training step: comparisons and where (masks,
// dropout, relu's gradient), sum and mean (and the sum of counts), argmax,
// full_like, and the fused Adam update (adam_, which AdamW uses too).
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "custom_cpu.h"
#include "kernel_util.h"

namespace custom_cpu {
namespace {

using oar::ext::DType;
using oar::ext::Error;
using oar::ext::KernelContext;

// Calls f(T{}) with T the C++ type of float32, int32 or int64.
template <typename F> void visit(DType t, const char* op, F&& f) {
  switch (t) {
    case oar::ext::kFloat32: return f(float{});
    case oar::ext::kInt32: return f(int32_t{});
    case oar::ext::kInt64: return f(int64_t{});
    default: throw Error(OAR_ERROR_UNSUPPORTED, std::string(op) + ": this dtype is not supported on custom_cpu");
  }
}

// ---- comparisons: bool out, operands of one dtype broadcast ------------------------------

template <typename Cmp> void compare(KernelContext& ctx, Cmp cmp) {
  TensorView x = ctx.input(0), y = ctx.input(1), out = ctx.output(0);
  bool* c = out.data<bool>();
  visit(x.dtype(), ctx.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const T *a = x.data<T>(), *b = y.data<T>();
    for_each_broadcast<2>(out, {x, y},
                          [&](int64_t i, const std::array<int64_t, 2>& o) { c[i] = cmp(a[o[0]], b[o[1]]); });
  });
}

void equal(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a == b; }); }
void not_equal(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a != b; }); }
void greater_than(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a > b; }); }
void greater_equal(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a >= b; }); }
void less_than(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a < b; }); }
void less_equal(KernelContext& ctx) { compare(ctx, [](auto a, auto b) { return a <= b; }); }

// ---- where(cond, x, y): keyed by cond's dtype (bool); x and y of any dtype ------------------

void where(KernelContext& ctx) {
  TensorView c = ctx.input(0), x = ctx.input(1), y = ctx.input(2), out = ctx.output(0);
  const int64_t w = int64_t(oar::ext::itemsize(out.dtype()));
  const bool* k = c.data<bool>();
  const char *a = static_cast<const char*>(x.raw_data()), *b = static_cast<const char*>(y.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  for_each_broadcast<3>(out, {c, x, y}, [&](int64_t i, const std::array<int64_t, 3>& off) {
    std::memcpy(o + i * w, k[off[0]] ? a + off[1] * w : b + off[2] * w, size_t(w));
  });
}

// ---- sum / mean: attrs axes (normalised, sorted), keepdim, dtype ------------------------------
// float32 in, float32 out, accumulated in double; sum also of bool, int32 and
// int64, accumulated in int64, to the output's dtype (the attr's).

template <bool Mean, typename T>
void reduce_typed(const TensorView& x, const TensorView& out, std::span<const int64_t> axes) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const int nd = x.ndim();
  std::vector<bool> reduced(size_t(nd), false);
  for (int64_t ax : axes) reduced[size_t(ax < 0 ? ax + nd : ax)] = true;
  // ostride[d]: the stride of x's dim d in the (dense) output, 0 if reduced.
  std::vector<int64_t> ostride(size_t(nd), 0);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; --d)
    if (!reduced[size_t(d)]) {
      ostride[size_t(d)] = s;
      s *= x.shape(d);
    }
  std::vector<Acc> acc(size_t(out.numel()), Acc(0));
  const T* a = x.data<T>();
  std::vector<int64_t> idx(size_t(nd), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t xo = 0, oo = 0;
    for (int d = 0; d < nd; ++d) {
      xo += idx[size_t(d)] * x.stride(d);
      oo += idx[size_t(d)] * ostride[size_t(d)];
    }
    acc[size_t(oo)] += Acc(a[xo]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < x.shape(d)) break;
      idx[size_t(d)] = 0;
    }
  }
  const int64_t n = out.numel() ? x.numel() / out.numel() : 0;
  auto store = [&](auto* y) {
    using O = std::remove_pointer_t<decltype(y)>;
    for (int64_t i = 0; i < out.numel(); ++i) {
      if constexpr (Mean) y[i] = O(n ? double(acc[size_t(i)]) / double(n) : NAN);
      else y[i] = O(acc[size_t(i)]);
    }
  };
  switch (out.dtype()) {
    case oar::ext::kFloat32: return store(out.data<float>());
    case oar::ext::kInt32: return store(out.data<int32_t>());
    case oar::ext::kInt64: return store(out.data<int64_t>());
    default: throw Error(OAR_ERROR_UNSUPPORTED, "sum: this output dtype is not supported on custom_cpu");
  }
}

template <bool Mean> void reduce(KernelContext& ctx) {
  TensorView x = ctx.input(0), out = ctx.output(0);
  const auto axes = ctx.attr_ints(0);
  switch (x.dtype()) {
    case oar::ext::kFloat32: return reduce_typed<Mean, float>(x, out, axes);
    case oar::ext::kBool: return reduce_typed<Mean, bool>(x, out, axes);
    case oar::ext::kInt32: return reduce_typed<Mean, int32_t>(x, out, axes);
    case oar::ext::kInt64: return reduce_typed<Mean, int64_t>(x, out, axes);
    default:
      throw Error(OAR_ERROR_UNSUPPORTED, std::string(ctx.op_name()) + ": this dtype is not supported on custom_cpu");
  }
}

// ---- argmax: attrs axis, keepdim, dtype (int32 or int64). The first NaN wins. --------------

void argmax(KernelContext& ctx) {
  TensorView x = ctx.input(0), out = ctx.output(0);
  const int nd = x.ndim();
  int64_t axis = ctx.attr_int(0);
  if (axis < 0) axis += nd;
  const int64_t len = x.shape(int(axis)), step = x.stride(int(axis));
  // The lines along `axis`, in row-major order of the other dims.
  std::vector<int64_t> idx(size_t(nd), 0);
  const float* a = x.data<float>();
  const int64_t lines = len ? x.numel() / len : 0;
  for (int64_t l = 0; l < lines; ++l) {
    int64_t base = 0;
    for (int d = 0; d < nd; ++d) base += idx[size_t(d)] * x.stride(d);
    float best = a[base];
    int64_t bi = 0;
    if (best == best)
      for (int64_t i = 1; i < len; ++i) {
        const float v = a[base + i * step];
        if (v != v) { bi = i; break; }
        if (v > best) { best = v; bi = i; }
      }
    if (out.dtype() == oar::ext::kInt32) out.data<int32_t>()[l] = int32_t(bi);
    else out.data<int64_t>()[l] = bi;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == axis) continue;
      if (++idx[size_t(d)] < x.shape(d)) break;
      idx[size_t(d)] = 0;
    }
  }
}

// ---- full_like: attrs value (bool, int or float), dtype ---------------------------------------

template <typename T> void fill(const TensorView& out, T v) {
  T* p = out.data<T>();
  for (int64_t i = 0; i < out.numel(); ++i) p[i] = v;
}

void full_like(KernelContext& ctx) {
  TensorView out = ctx.output(0);
  double v = 0;
  int64_t iv = 0;
  switch (ctx.attr_type(0)) {
    case OAR_ATTR_BOOL: iv = ctx.attr_bool(0); v = double(iv); break;
    case OAR_ATTR_INT: iv = ctx.attr_int(0); v = double(iv); break;
    case OAR_ATTR_FLOAT: v = ctx.attr_float(0); iv = int64_t(v); break;
    default: throw Error(OAR_ERROR_UNSUPPORTED, "full_like: this fill value is not supported on custom_cpu");
  }
  switch (out.dtype()) {
    case oar::ext::kBool: return fill<bool>(out, v != 0);
    case oar::ext::kInt32: return fill<int32_t>(out, int32_t(iv));
    case oar::ext::kInt64: return fill<int64_t>(out, iv);
    case oar::ext::kFloat32: return fill<float>(out, float(v));
    case oar::ext::kFloat64: return fill<double>(out, v);
    default: throw Error(OAR_ERROR_UNSUPPORTED, "full_like: this dtype is not supported on custom_cpu");
  }
}

// ---- adam_: in-place update of (param, grad, m, v[, vmax]) ----------------------------------
// attrs: learning_rate, beta1, beta2, epsilon, step, coeff (decoupled weight
// decay, AdamW), l1_decay, l2_decay; as src/kernels/cpu/optimizer.cpp.

void adam(KernelContext& ctx) {
  TensorView pv = ctx.input(0), gv = ctx.input(1);
  const size_t nin = ctx.num_inputs();
  for (size_t k = 0; k < nin; ++k) {
    TensorView t = ctx.input(k);
    if (t.defined() && !t.is_contiguous())
      throw Error(OAR_ERROR_UNSUPPORTED, "adam_: custom_cpu needs contiguous parameters, gradients and states");
  }
  const double lr = ctx.attr_float(0), b1 = ctx.attr_float(1), b2 = ctx.attr_float(2), eps = ctx.attr_float(3);
  const double t = double(ctx.attr_int(4)), coeff = ctx.attr_float(5);
  const float l1 = float(ctx.attr_float(6)), l2 = float(ctx.attr_float(7));
  const double bc1 = 1.0 - std::pow(b1, t), bc2 = std::sqrt(1.0 - std::pow(b2, t));
  const float lr_t = float(lr * bc2 / bc1), eps_t = float(eps * bc2);
  const float cb1 = float(b1), cb2 = float(b2), decay = float(1.0 - lr * coeff);
  float* p = pv.data<float>();
  const float* g = gv.data<float>();
  float *m = ctx.input(2).data<float>(), *v = ctx.input(3).data<float>();
  float* vmax = nullptr;
  if (nin > 4 && ctx.input(4).defined()) vmax = ctx.input(4).data<float>();
  for (int64_t i = 0; i < pv.numel(); ++i) {
    float pi = p[i];
    const float gi = g[i] + l2 * pi + l1 * float((pi > 0.0f) - (pi < 0.0f));
    if (coeff != 0.0) pi = pi * decay;
    const float mi = cb1 * m[i] + (1.0f - cb1) * gi;
    float vi = cb2 * v[i] + (1.0f - cb2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    if (vmax) {
      vi = std::max(vmax[i], vi);
      vmax[i] = vi;
    }
    p[i] = pi - lr_t * mi / (std::sqrt(vi) + eps_t);
  }
}

const RegisterKernels reg([] {
  using namespace oar::ext;
  using Named = std::pair<const char*, KernelFunction>;
  for (auto [name, fn] : {Named{"equal", equal}, Named{"not_equal", not_equal}, Named{"greater_than", greater_than},
                          Named{"greater_equal", greater_equal}, Named{"less_than", less_than},
                          Named{"less_equal", less_equal}})
    add_kernel(name, {kFloat32, kInt32, kInt64}, fn);
  add_kernel("where", {kBool}, where);
  add_kernel("sum", {kBool, kInt32, kInt64, kFloat32}, reduce<false>);
  add_kernel("mean", {kFloat32}, reduce<true>);
  add_kernel("argmax", {kFloat32}, argmax);
  add_kernel("full_like", {kBool, kInt32, kInt64, kFloat32, kFloat64}, full_like);
  add_kernel("adam_", {kFloat32}, adam);
});

}  // namespace
}  // namespace custom_cpu

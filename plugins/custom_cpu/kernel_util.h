// Loops shared by custom_cpu's kernels: operands are views with strides (in
// elements) and are broadcast to the output's shape, as oar passes them.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "oar/kernel_ext.h"

namespace custom_cpu {

using oar::ext::TensorView;

// Calls f(i, offsets) for each element i of `out` in row-major order, where
// offsets[k] is the element offset of that element in in[k] broadcast to
// out's shape (dims aligned on the right, size-1 dims repeated).
template <size_t N, typename F>
void for_each_broadcast(const TensorView& out, const std::array<TensorView, N>& in, F&& f) {
  const int nd = out.ndim();
  const int64_t n = out.numel();
  bool flat = true;
  for (const TensorView& t : in) flat = flat && t.numel() == n && t.ndim() == nd && t.is_contiguous();
  std::array<int64_t, N> off{};
  if (flat) {
    for (int64_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < N; ++k) off[k] = i;
      f(i, off);
    }
    return;
  }
  // stride[k][d]: in[k]'s stride along out's dim d (0 where broadcast).
  std::array<std::array<int64_t, 16>, N> stride{};
  for (size_t k = 0; k < N; ++k)
    for (int d = 0; d < nd; ++d) {
      const int dk = d - (nd - in[k].ndim());
      stride[k][d] = dk < 0 || in[k].shape(dk) == 1 ? 0 : in[k].stride(dk);
    }
  std::array<int64_t, 16> idx{};
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (int d = nd - 1; d >= 0; --d) {  // next index, odometer style
      if (++idx[d] < out.shape(d)) {
        for (size_t k = 0; k < N; ++k) off[k] += stride[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= stride[k][d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace custom_cpu

namespace custom_cpu {

// A view's elements as dense row-major memory: the view's own data when it is
// contiguous, else a copy. For kernels that walk rows or planes.
template <typename T>
class Dense {
 public:
  explicit Dense(const TensorView& v) {
    if (v.is_contiguous()) {
      p_ = v.data<T>();
      return;
    }
    copy_.resize(size_t(v.numel()));
    const T* a = v.data<T>();
    for_each_broadcast<1>(v, {v}, [&](int64_t i, const std::array<int64_t, 1>& o) { copy_[size_t(i)] = a[o[0]]; });
    p_ = copy_.data();
  }
  const T* get() const { return p_; }
  const T& operator[](int64_t i) const { return p_[i]; }

 private:
  const T* p_ = nullptr;
  std::vector<T> copy_;
};

}  // namespace custom_cpu

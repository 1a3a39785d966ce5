// Helpers for kernels that walk the rows of the last axis (softmax, fused
// cross entropy).
#pragma once
#include <cstdint>
#include <limits>

namespace oar::cpu {

// The maximum of v[0..n) through independent partial maxima, so that the
// comparisons vectorise instead of forming one serial dependency chain.
// (A NaN may be skipped here; callers' sums of exponentials still turn the
// row into NaN.)
template <typename C> C row_max(const C* v, int64_t n) {
  constexpr int kLanes = 16;
  C acc[kLanes];
  for (int k = 0; k < kLanes; ++k) acc[k] = -std::numeric_limits<C>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] = acc[k] < v[j + k] ? v[j + k] : acc[k];
  C m = -std::numeric_limits<C>::infinity();
  for (int k = 0; k < kLanes; ++k) m = m < acc[k] ? acc[k] : m;
  for (; j < n; ++j) m = m < v[j] ? v[j] : m;
  return m;
}

}  // namespace oar::cpu

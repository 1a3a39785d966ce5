// Helpers shared by the LAPACK-backed kernels (lapack.cpp, lapack_ext.cpp).
#pragma once
#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/scalar_fns.h"

namespace oar::cpu::lapack {

using scalar::conj_of;
using scalar::real_t;

template <typename T> bool finite(T v) { return scalar::is_fin(v); }

// A workspace size returned by a query (a float holding an integer).
template <typename T> int ws_size(T v) {
  double d = double(std::real(v));
  return std::max(1, int(std::min<double>(d + 0.5, double(std::numeric_limits<int>::max()))));
}

// Number of matrices: the product of the dims before the last `core` ones.
inline int64_t batch_of(const Tensor& t, int core) {
  int64_t b = 1;
  for (int64_t d = 0; d < t.dim() - core; ++d) b *= t.shape()[d];
  return b;
}

// Runs f(begin, end) over the matrices, in parallel when there are many
// small ones (LAPACK itself threads the large ones).
template <typename F> void for_batch(int64_t batch, int64_t work_per_item, F&& f) {
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_item));
  parallel_for(batch, grain, [&](int64_t b, int64_t e) { f(b, e); });
}

}  // namespace oar::cpu::lapack

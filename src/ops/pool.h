// Pooling (ops/pool.cpp): max and average pooling over 1, 2 or 3 spatial dims
// of a channel-first (N, C, *spatial) tensor, with fixed or adaptive windows.
#pragma once
#include <utility>

#include "ops/ops.h"

namespace oar::ops {

struct PoolParams {
  Dims kernel;   // the output size when adaptive
  Dims strides, pads_l, pads_r;
  bool ceil_mode = false;
  bool adaptive = false;
  bool exclusive = true;  // average: divide by the count of non-padding elements
};

// (out, mask): mask holds the flat spatial index of each maximum (int32, -1 for
// an empty window), as Paddle's return_mask.
std::pair<Tensor, Tensor> max_pool(const Tensor& x, const PoolParams& p, const char* api = "oar.max_pool");
Tensor avg_pool(const Tensor& x, const PoolParams& p, const char* api = "oar.avg_pool");

// Spatial output size along one dim (Paddle's formula; <= 0 for invalid input).
inline int64_t pool_out_size(int64_t in, int64_t k, int64_t s, int64_t pl, int64_t pr, bool ceil_mode) {
  int64_t num = in - k + pl + pr + (ceil_mode ? s - 1 : 0);
  return num < 0 ? 0 : num / s + 1;
}

}  // namespace oar::ops

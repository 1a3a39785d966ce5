// Fused loss ops (kernels: kernels/cpu/loss.cpp).
#pragma once
#include <cstdint>

#include "tensor/tensor.h"

namespace oar::ops {

// Cross entropy of logits [..., C] against class indices `label` [..., 1]
// (int32 or int64): the per-row loss logsumexp(x) - x[label], [..., 1], and
// 0 in rows whose label is ignore_index. One pass per row forward and one
// backward, instead of log_softmax, a gather and their gradients.
Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& label, int64_t ignore_index);

}  // namespace oar::ops

// Fused loss ops (src/ops/loss.h).
#include "common.h"
#include "ops/loss.h"

namespace oar::bind {
namespace {

void bind_loss(nb::module_& m) {
  m.def("_softmax_cross_entropy", [](const Tensor& logits, const Tensor& label, int64_t ignore_index) {
    return ops::softmax_cross_entropy(logits, label, ignore_index);
  });
}

Binder b(bind_loss);

}  // namespace
}  // namespace oar::bind

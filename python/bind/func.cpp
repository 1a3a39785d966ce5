// Function transforms over captured programs (autograd/transforms.h): the
// batched interpreter behind oar.vmap and the forward-mode one behind
// oar.func.jvp. No logic beyond argument conversion; oar/func/ wraps these.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/tuple.h>

#include "autograd/transforms.h"
#include "common.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_func(nb::module_& m) {
  // Returns (outputs, which outputs are batched, ops run, ops run per example, their names).
  m.def("_vmap_run", [](const ir::Program& p, const std::vector<Tensor>& inputs, const std::vector<bool>& batched,
                        const std::vector<Tensor>& params, int64_t batch, const std::string& randomness) {
    OAR_CHECK(inputs.size() == batched.size(), Value, "[oar.vmap] one batched flag per input expected");
    std::vector<BatchedValue> in;
    for (size_t i = 0; i < inputs.size(); ++i) in.push_back(BatchedValue{inputs[i], batched[i]});
    BatchStats stats;
    std::vector<BatchedValue> out =
        run_batched(p, in, std::span<const Tensor>(params.data(), params.size()), batch, randomness, &stats);
    std::vector<Tensor> ts;
    std::vector<bool> bs;
    for (BatchedValue& v : out) ts.push_back(v.t), bs.push_back(v.batched);
    return std::make_tuple(ts, bs, stats.ops, stats.fallbacks, stats.fallback_ops);
  }, arg("program"), arg("inputs"), arg("batched"), arg("parameters"), arg("batch"), arg("randomness"));

  // Returns the outputs followed by their tangents.
  m.def("_jvp_run", [](const ir::Program& p, const std::vector<Tensor>& inputs,
                       const std::vector<std::optional<Tensor>>& tangents, const std::vector<Tensor>& params) {
    Tensors ts;
    for (const auto& t : tangents) ts.push_back(t ? *t : Tensor());
    Tensors out = run_jvp(p, std::span<const Tensor>(inputs.data(), inputs.size()),
                          std::span<const Tensor>(ts.data(), ts.size()),
                          std::span<const Tensor>(params.data(), params.size()));
    return std::vector<Tensor>(out.begin(), out.end());
  }, arg("program"), arg("inputs"), arg("tangents"), arg("parameters"));
}

Binder b(bind_func);

}  // namespace
}  // namespace oar::bind

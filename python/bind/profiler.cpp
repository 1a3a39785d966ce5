// The eager op profiler (src/ops/profiler.h).
#include "common.h"
#include "ops/profiler.h"

namespace oar::bind {
namespace {

void bind_profiler(nb::module_& m) {
  m.def("_profiler_enable", [](bool on, bool shapes) { profiler::set_enabled(on, shapes); }, nb::arg("on"),
        nb::arg("shapes") = false);
  m.def("_profiler_take", []() {
    nb::list rows;
    for (const profiler::OpStat& r : profiler::take()) rows.append(nb::make_tuple(r.name, r.inputs, r.calls, r.ns, r.bytes));
    return rows;
  });
}

Binder b(bind_profiler);

}  // namespace
}  // namespace oar::bind

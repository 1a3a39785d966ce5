// The model format from Python: a Program to and from its JSON document.
// No logic beyond argument conversion; oar/jit/io.py wraps these.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/unique_ptr.h>

#include "common.h"
#include "ir/serialize.h"

namespace oar::bind {
namespace {

using nb::arg;

void bind_ir_io(nb::module_& m) {
  m.def("_ir_to_json", [](const ir::Program& p) { return ir::to_json(p); }, arg("program"));
  // Returns an IrProgram (the class bound in ir.cpp), as _ir_trace does.
  m.def("_ir_from_json", [](const std::string& text, const std::string& filename) {
    return ir::from_json(text, filename.c_str());
  }, arg("text"), arg("filename"));
  // (dtype name, shape) per parameter, to check loaded weights against.
  m.def("_ir_parameter_types", [](const ir::Program& p) {
    std::vector<std::pair<std::string, Dims>> out;
    for (const ir::NamedValue& v : p.parameters())
      out.emplace_back(dtype_name(v.value->type().dtype), v.value->type().shape);
    return out;
  }, arg("program"));
  m.attr("_ir_format_version") = ir::kFormatVersion;
}

Binder b(bind_ir_io);

}  // namespace
}  // namespace oar::bind

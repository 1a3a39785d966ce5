// The model format from Python: a Program to and from its JSON document, and
// the one safetensors reader (io/safetensors.h) that oar.load and
// oar.jit.load read weights with. No logic beyond argument conversion;
// oar/jit/io.py and oar/serialization.py wrap these.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>

#include "common.h"
#include "io/safetensors.h"
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
  // ([(name, Tensor)] in data order, [(key, value)] of the metadata).
  m.def("_read_safetensors", [](const std::string& path, const std::string& api) {
    io::Metadata meta;
    std::vector<io::NamedTensor> ts;
    {
      nb::gil_scoped_release nogil;
      ts = io::read_safetensors(path, api.c_str(), &meta);
    }
    std::vector<std::pair<std::string, Tensor>> out;
    out.reserve(ts.size());
    for (io::NamedTensor& t : ts) out.emplace_back(std::move(t.name), std::move(t.tensor));
    return std::make_pair(std::move(out), std::move(meta));
  }, arg("path"), arg("api"));
  // ([(name, dtype name, shape, begin, end)], data start, metadata): the
  // validated header alone, for readers of pieces of large files.
  m.def("_read_safetensors_header", [](const std::string& path, const std::string& api) {
    io::SafetensorsHeader h = io::read_safetensors_header(path, api.c_str());
    std::vector<std::tuple<std::string, std::string, Dims, uint64_t, uint64_t>> entries;
    for (io::SafetensorsEntry& e : h.entries)
      entries.emplace_back(std::move(e.name), dtype_name(e.dtype), std::move(e.shape), e.begin, e.end);
    return std::make_tuple(std::move(entries), h.data_start, std::move(h.metadata));
  }, arg("path"), arg("api"));
}

Binder b(bind_ir_io);

}  // namespace
}  // namespace oar::bind

// The IR: programs (print, verify, run) and graph capture by tracing.
// No logic beyond argument conversion; oar/_ir.py wraps these.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>

#include "common.h"
#include "ir/executor.h"
#include "ir/passes/passes.h"
#include "ir/tracer.h"

namespace oar::bind {
namespace {

using nb::arg;

std::vector<std::string> names_of(const std::vector<ir::NamedValue>& vs) {
  std::vector<std::string> out;
  for (const ir::NamedValue& v : vs) out.push_back(v.name);
  return out;
}

// (dtype name, shape with -1 for dynamic dims) per value.
std::vector<std::pair<std::string, Dims>> types_of(const std::vector<ir::NamedValue>& vs) {
  std::vector<std::pair<std::string, Dims>> out;
  for (const ir::NamedValue& v : vs) out.emplace_back(dtype_name(v.value->type().dtype), v.value->type().shape);
  return out;
}

std::span<const Tensor> span_of(const std::vector<Tensor>& v) { return {v.data(), v.size()}; }

void bind_ir(nb::module_& m) {
  nb::class_<ir::Program>(m, "IrProgram")
      .def("__str__", [](const ir::Program& p) { return ir::to_string(p); })
      .def("verify", [](const ir::Program& p) { ir::verify(p); })
      .def_prop_ro("input_names", [](const ir::Program& p) { return names_of(p.inputs()); })
      .def_prop_ro("parameter_names", [](const ir::Program& p) { return names_of(p.parameters()); })
      .def_prop_ro("output_names", [](const ir::Program& p) { return p.output_names(); })
      .def_prop_ro("input_types", [](const ir::Program& p) { return types_of(p.inputs()); })
      .def_prop_ro("output_types", [](const ir::Program& p) { return types_of(p.outputs()); })
      .def_prop_ro("notes", [](const ir::Program& p) { return p.notes(); })
      .def_prop_ro("num_ops", [](const ir::Program& p) { return p.body().operations().size(); })
      .def("run", [](const ir::Program& p, const std::vector<Tensor>& inputs, const std::vector<Tensor>& params) {
        Tensors out = ir::run(p, span_of(inputs), span_of(params));
        return std::vector<Tensor>(out.begin(), out.end());
      }, arg("inputs"), arg("parameters"));

  // thunk() runs the traced code on the example inputs and returns a list of
  // output Tensors. Returns (program, thunk's result, tensors bound to the
  // program's parameters in order).
  m.def("_ir_trace", [](nb::callable thunk, const std::vector<Tensor>& examples,
                        const std::vector<std::string>& input_names, const std::vector<Dims>& dynamic_dims,
                        const std::vector<std::pair<std::string, Tensor>>& params) {
    OAR_CHECK(input_names.size() == examples.size() && dynamic_dims.size() == examples.size(), Value,
              "[oar.ir.trace] expected one name and one dynamic-dims list per input");
    ir::Tracer tracer;
    for (const auto& [name, t] : params) tracer.name_parameter(name, t);
    for (size_t i = 0; i < examples.size(); ++i) tracer.add_input(input_names[i], examples[i], dynamic_dims[i]);
    nb::object result = thunk();
    size_t k = 0;
    for (nb::handle h : result) {
      OAR_CHECK(nb::isinstance<TensorImpl>(h), Type, "[oar.ir.trace] output ", k,
                " of the traced function must be a Tensor, got ", nb::type_name(h.type()).c_str());
      tracer.add_output("out" + std::to_string(k++), nb::cast<Tensor>(h));
    }
    std::vector<Tensor> bindings = tracer.bindings();
    std::unique_ptr<ir::Program> prog = tracer.finish();
    return std::make_tuple(std::move(prog), result, std::move(bindings));
  }, arg("thunk"), arg("examples"), arg("input_names"), arg("dynamic_dims"), arg("parameters"));

  // Runs the graph passes in place. Folding adds and drops constants, so it
  // takes the tensors bound to the parameters and returns the new list with a
  // dict of which passes changed the program.
  m.def("_ir_run_passes", [](ir::Program& p, std::vector<Tensor> bindings, bool dce, bool cse, bool fold,
                             bool fold_conv_bn, bool fuse_softmax_layer_norm, bool fuse_linear_act,
                             bool fuse_conv_act, bool fuse_attention, bool fuse_elementwise) {
    ir::PassOptions o;
    o.dce = dce;
    o.cse = cse;
    o.fold = fold;
    o.fold_conv_bn = fold_conv_bn;
    o.fuse_softmax_layer_norm = fuse_softmax_layer_norm;
    o.fuse_linear_act = fuse_linear_act;
    o.fuse_conv_act = fuse_conv_act;
    o.fuse_attention = fuse_attention;
    o.fuse_elementwise = fuse_elementwise;
    ir::PassResult r = ir::run_passes(p, bindings, o);
    nb::dict changed;
    changed["dce"] = r.dce;
    changed["cse"] = r.cse;
    changed["fold"] = r.fold;
    changed["fold_conv_bn"] = r.fold_conv_bn;
    changed["fuse_softmax_layer_norm"] = r.fuse_softmax_layer_norm;
    changed["fuse_linear_act"] = r.fuse_linear_act;
    changed["fuse_conv_act"] = r.fuse_conv_act;
    changed["fuse_attention"] = r.fuse_attention;
    changed["fuse_elementwise"] = r.fuse_elementwise;
    return std::make_pair(changed, std::move(bindings));
  }, arg("program"), arg("bindings"), arg("dce") = true, arg("cse") = true, arg("fold") = true,
     arg("fold_conv_bn") = false, arg("fuse_softmax_layer_norm") = false, arg("fuse_linear_act") = false,
     arg("fuse_conv_act") = false, arg("fuse_attention") = false, arg("fuse_elementwise") = false);

  m.def("_ir_is_tracing", [] { return ir::is_tracing(); });
  // The shape `t` has in the innermost active trace, dynamic dims as -1; None
  // when it is not a value of that trace (Note [declared shapes], oar/static).
  m.def("_ir_traced_shape", [](const Tensor& t) -> std::optional<Dims> {
    auto ty = ir::traced_type(t);
    if (!ty) return std::nullopt;
    return ty->shape;
  });
}

Binder b(bind_ir);

}  // namespace
}  // namespace oar::bind

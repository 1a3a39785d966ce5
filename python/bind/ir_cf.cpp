// Control flow and state updates of captured programs from Python. No logic
// beyond argument conversion; oar/static/nn.py wraps these.
#include "common.h"
#include "ir/executor.h"
#include "ir/tracer.h"

namespace oar::bind {
namespace {

using nb::arg;

// The Tensors a Python callback returned (a list or tuple of them).
Tensors tensors_of(const nb::object& r, const char* api, const char* who) {
  OAR_CHECK(nb::isinstance<nb::list>(r) || nb::isinstance<nb::tuple>(r), Type, "[", api, "] internal: ", who,
            " must give a list of Tensors");
  Tensors out;
  size_t k = 0;
  for (nb::handle h : r) {
    OAR_CHECK(nb::isinstance<TensorImpl>(h), Type, "[", api, "] ", who, " must return Tensors, output ", k,
              " is ", nb::type_name(h.type()).c_str());
    out.push_back(nb::cast<Tensor>(h));
    ++k;
  }
  return out;
}

nb::list list_of(const Tensors& ts) {
  nb::list l;
  for (const Tensor& t : ts) l.append(nb::cast(t));
  return l;
}

ir::BranchFn branch(nb::callable f, const char* api, const char* who) {
  return [f = std::move(f), api, who]() { return tensors_of(f(), api, who); };
}

void bind_ir_cf(nb::module_& m) {
  // Each thunk takes no argument and returns a list of Tensors; the result
  // is the list the example's branch gives (see ir/tracer.h).
  m.def("_ir_cond", [](const Tensor& pred, nb::callable true_fn, nb::callable false_fn) {
    const char* api = "oar.static.nn.cond";
    return list_of(ir::trace_cond(pred, branch(true_fn, api, "true_fn"), branch(false_fn, api, "false_fn"), api));
  }, arg("pred"), arg("true_fn"), arg("false_fn"));

  // `fns`: one thunk per key, then the default.
  m.def("_ir_switch_case", [](const Tensor& index, const Dims& keys, const std::vector<nb::callable>& fns) {
    const char* api = "oar.static.nn.switch_case";
    std::vector<ir::BranchFn> bs;
    for (const nb::callable& f : fns) bs.push_back(branch(f, api, "a branch function"));
    return list_of(ir::trace_switch_case(index, keys, bs, api));
  }, arg("index"), arg("keys"), arg("fns"));

  // cond(list) -> Tensor, body(list) -> list of Tensors.
  m.def("_ir_while_loop", [](nb::callable cond, nb::callable body, const std::vector<Tensor>& loop_vars) {
    const char* api = "oar.static.nn.while_loop";
    ir::LoopCondFn c = [cond](const Tensors& vs) {
      nb::object r = cond(list_of(vs));
      OAR_CHECK(nb::isinstance<TensorImpl>(r), Type, "[oar.static.nn.while_loop] cond must return a Tensor, got ",
                nb::type_name(r.type()).c_str());
      return nb::cast<Tensor>(r);
    };
    ir::LoopBodyFn b = [body, api](const Tensors& vs) { return tensors_of(body(list_of(vs)), api, "body"); };
    Tensors init(loop_vars.begin(), loop_vars.end());
    return list_of(ir::trace_while_loop(c, b, init, api));
  }, arg("cond"), arg("body"), arg("loop_vars"));

  // The names of the parameters the program writes at the end of each run.
  m.def("_ir_state_updates", [](const ir::Program& p) {
    std::vector<std::string> names;
    for (const ir::StateUpdate& u : p.state_updates()) {
      const int64_t i = p.parameter_index(u.parameter);
      names.push_back(i >= 0 ? p.parameters()[size_t(i)].name : std::string());
    }
    return names;
  }, arg("program"));

  m.def("_ir_set_max_loop_iterations", [](int64_t n) { ir::set_max_loop_iterations(n); }, arg("n"));
  m.def("_ir_max_loop_iterations", [] { return ir::max_loop_iterations(); });
}

Binder b(bind_ir_cf);

}  // namespace
}  // namespace oar::bind

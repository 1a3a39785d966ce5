// Control flow in the inference runtime (Note [control flow in the runtime]):
// turning region ops into steps with sub-regions, and running them.
#include "runtime/control_flow.h"

#include <algorithm>

#include "ir/executor.h"
#include "ops/control_flow.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar::runtime {

namespace {

using Kind = ControlFlow::Kind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Cond: return "cond";
    case Kind::SwitchCase: return "switch_case";
    case Kind::WhileLoop: return "while_loop";
    case Kind::PyLayer: return "py_layer";
  }
  return "?";
}

// The region of `block`, its values numbered; `captures` gains every slot
// below `outer_end` (defined outside the region op) that the region reads.
Region make_region(const ir::Block& block, SlotNumbering& n, int outer_end, std::vector<int>& captures,
                   const char* api, const std::string& file) {
  Region r;
  const int own_begin = n.count;
  for (size_t i = 0; i < block.num_arguments(); ++i) r.args.push_back(n.number(block.argument(i)));
  for (const auto& op : block.operations()) {
    r.steps.push_back(make_step(*op, n, api, file));
    for (int o : r.steps.back().out) r.defined.push_back(o);
  }
  for (ir::Value* y : block.yields()) {
    auto it = y ? n.slot.find(y) : n.slot.end();
    OAR_CHECK(it != n.slot.end(), Value, "[", api, "] ", file, ": a region yields a value that is not defined");
    r.yields.push_back(it->second);
  }
  // Reads, for capture and for dropping this region's values after their
  // last reader (values of nested regions are dropped by those regions).
  std::unordered_map<int, size_t> last;
  auto read = [&](int s, size_t k) {
    if (s < 0) return;
    if (s < outer_end) captures.push_back(s);
    else if (s >= own_begin) last[s] = k;
  };
  for (size_t k = 0; k < r.steps.size(); ++k) {
    for (int s : r.steps[k].in) read(s, k);
    for (int s : r.steps[k].captures) read(s, k);
  }
  for (int y : r.yields) {
    if (y < outer_end) captures.push_back(y);
    last.erase(y);  // yields outlive the region's steps; cleared when it ends
  }
  for (int a : r.args) last.erase(a);  // cleared when the region ends
  r.release.assign(r.steps.size(), {});
  for (const auto& [s, k] : last) r.release[k].push_back(s);
  return r;
}

bool type_matches(const ir::Type& want, const Tensor& t) {
  if (t.dtype() != want.dtype || size_t(t.dim()) != want.shape.size()) return false;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] != ir::kDynamic && want.shape[d] != t.shape()[d]) return false;
  return true;
}

struct Runner {
  std::vector<Tensor>& env;
  const char* api;
  int64_t limit;

  // The value of a selector (a predicate or a branch index) as an integer.
  int64_t selector(const Tensor& t, Kind k) const {
    OAR_CHECK(t.defined() && t.numel() == 1, Value, "[", api, "] the selector of '", kind_name(k),
              "' must hold exactly one element, got shape ", ops::shape_str(t.defined() ? t.shape() : Dims{}));
    OAR_CHECK(t.device().type == DeviceType::CPU, NotImplemented, "[", api, "] the selector of '", kind_name(k),
              "' must be on the CPU");
    Tensor c = t.is_contiguous() ? t : ops::contiguous(t);
    switch (c.dtype()) {
      case DType::Bool: return *c.data<bool>() ? 1 : 0;
      case DType::UInt8: return *c.data<uint8_t>();
      case DType::Int8: return *c.data<int8_t>();
      case DType::Int16: return *c.data<int16_t>();
      case DType::Int32: return *c.data<int32_t>();
      case DType::Int64: return *c.data<int64_t>();
      default: break;
    }
    fail(ErrorKind::Type, "[", api, "] the selector of '", kind_name(k), "' must be a bool or integer tensor, got ",
         dtype_name(c.dtype()));
  }

  void check_results(const ControlFlow& cf, const Tensors& out, const char* what) const {
    OAR_CHECK(out.size() == cf.result_types.size(), Value, "[", api, "] ", what, " of '", kind_name(cf.kind),
              "' gives ", out.size(), " value(s), the op has ", cf.result_types.size(), " result(s)");
    for (size_t i = 0; i < out.size(); ++i)
      OAR_CHECK(out[i].defined() && type_matches(cf.result_types[i], out[i]), Value, "[", api, "] ", what, " of '",
                kind_name(cf.kind), "' gives ", out[i].defined() ? ir::Type::of(out[i]).str() : std::string("none"),
                " for result ", i, ", which has type ", cf.result_types[i].str());
  }

  Tensors region(const Region& r, const Tensors& args) {
    for (size_t i = 0; i < r.args.size(); ++i) env[size_t(r.args[i])] = args[i];
    Tensors ins;
    for (size_t k = 0; k < r.steps.size(); ++k) {
      const Step& st = r.steps[k];
      Tensors outs;
      if (st.control) {
        outs = step(st);
      } else {
        ins.clear();
        for (int in : st.in) ins.push_back(in >= 0 ? env[size_t(in)] : Tensor());
        outs = run_eager(*st.def, std::span<const Tensor>(ins.data(), ins.size()), *st.attrs);
      }
      OAR_CHECK(outs.size() == st.out.size(), Runtime, "[", api, "] op '", st.def->name, "' returned ",
                outs.size(), " result(s), the program expects ", st.out.size());
      for (size_t j = 0; j < outs.size(); ++j) env[size_t(st.out[j])] = std::move(outs[j]);
      for (int s : r.release[k]) env[size_t(s)] = Tensor();
    }
    Tensors ys;
    for (int y : r.yields) ys.push_back(env[size_t(y)]);
    for (int a : r.args) env[size_t(a)] = Tensor();
    for (int d : r.defined) env[size_t(d)] = Tensor();
    return ys;
  }

  Tensors step(const Step& st) {
    const ControlFlow& cf = *st.control;
    Tensors in;
    for (int s : st.in) in.push_back(s >= 0 ? env[size_t(s)] : Tensor());
    switch (cf.kind) {
      case Kind::PyLayer: {
        Tensors out = region(cf.regions[0], in);
        check_results(cf, out, "the forward");
        return out;
      }
      case Kind::WhileLoop: {
        Tensors vals = std::move(in);
        for (int64_t it = 0;; ++it) {
          Tensors p = region(cf.regions[0], vals);
          if (!selector(p[0], cf.kind)) break;
          OAR_CHECK(it < limit, Runtime, "[", api, "] while_loop ran ", limit, " iterations and its condition is "
                    "still true; if the loop is meant to run longer, raise the limit with "
                    "oar.static.nn.set_max_loop_iterations(n)");
          vals = region(cf.regions[1], vals);
          check_results(cf, vals, "the body");
        }
        return vals;
      }
      case Kind::Cond:
      case Kind::SwitchCase: {
        const int64_t s = selector(in[0], cf.kind);
        size_t r = 0;
        if (cf.kind == Kind::Cond) {
          r = s ? 0 : 1;
        } else {
          r = cf.keys.size();  // the default
          for (size_t i = 0; i < cf.keys.size(); ++i)
            if (cf.keys[i] == s) {
              r = i;
              break;
            }
        }
        Tensors out = region(cf.regions[r], {});
        check_results(cf, out, "a branch");
        return out;
      }
    }
    return {};
  }
};

}  // namespace

Step make_step(const ir::Operation& op, SlotNumbering& n, const char* api, const std::string& file) {
  Step s;
  s.def = &op.def();
  s.attrs = &op.attrs();
  for (ir::Value* v : op.operands()) {
    auto it = v ? n.slot.find(v) : n.slot.end();
    OAR_CHECK(!v || it != n.slot.end(), Value, "[", api, "] ", file, ": an operand of op '", op.name(),
              "' is not defined before it is used");
    s.in.push_back(v ? it->second : -1);
  }
  if (op.num_regions() > 0) {
    OAR_CHECK(is_control_flow(op.def()), NotImplemented, "[", api, "] ", file, ": op '", op.name(),
              "' has regions but is not a control-flow op the inference runtime knows");
    auto cf = std::make_shared<ControlFlow>();
    size_t want = 0, args = 0;
    if (&op.def() == &kCond) {
      cf->kind = Kind::Cond, want = 2;
    } else if (&op.def() == &kSwitchCase) {
      cf->kind = Kind::SwitchCase;
      const Dims& keys = op.attrs().ints(0);
      cf->keys.assign(keys.begin(), keys.end());
      want = keys.size() + 1;
    } else if (&op.def() == &kWhileLoop) {
      cf->kind = Kind::WhileLoop, want = 2, args = op.num_operands();
    } else {
      cf->kind = Kind::PyLayer, want = 1, args = op.num_operands();
    }
    const bool selects = cf->kind == Kind::Cond || cf->kind == Kind::SwitchCase;
    OAR_CHECK(op.num_regions() == want && (!selects || op.num_operands() == 1), Value, "[", api, "] ", file, ": '",
              op.name(), "' has ", op.num_regions(), " region(s) and ", op.num_operands(), " operand(s), expected ",
              want, " region(s)", selects ? " and 1 operand (the selector)" : "");
    const int outer_end = n.count;
    for (size_t r = 0; r < want; ++r) {
      const ir::Block& b = op.region(r);
      const size_t yields = cf->kind == Kind::WhileLoop && r == 0 ? 1 : op.num_results();
      OAR_CHECK(b.num_arguments() == args && b.num_yields() == yields, Value, "[", api, "] ", file,
                ": region ", r, " of '", op.name(), "' takes ", b.num_arguments(), " argument(s) and yields ",
                b.num_yields(), " value(s), expected ", args, " and ", yields);
      cf->regions.push_back(make_region(b, n, outer_end, s.captures, api, file));
    }
    std::sort(s.captures.begin(), s.captures.end());
    s.captures.erase(std::unique(s.captures.begin(), s.captures.end()), s.captures.end());
    for (size_t k = 0; k < op.num_results(); ++k) cf->result_types.push_back(op.result(k)->type());
    s.control = std::move(cf);
  }
  for (size_t k = 0; k < op.num_results(); ++k) s.out.push_back(n.number(op.result(k)));
  return s;
}

Tensors run_control_flow(const Step& st, std::vector<Tensor>& env, const char* api, const char* arena_begin,
                         const char* arena_end) {
  Runner run{env, api, ir::max_loop_iterations()};
  Tensors out = run.step(st);
  // Note [control flow in the runtime]: a result that is (a view of) a
  // planned buffer would be overwritten once the arena reuses those bytes.
  const OpDef* cast = find_op("cast");
  for (Tensor& t : out) {
    const char* p = static_cast<const char*>(t.storage().data());
    if (arena_begin && p >= arena_begin && p < arena_end) {
      Tensor src[] = {t};
      t = run_eager(*cast, src, Attrs{t.dtype()})[0];
    }
  }
  return out;
}

}  // namespace oar::runtime

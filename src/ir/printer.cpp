// The text form of a Program, e.g.
//   program {
//     input %0 "x": float32[-1,4]
//     param %1 "fc1.weight": float32[4,8]
//     %2: float32[-1,8] = matmul(%0, %1) {transpose_x=false, transpose_y=false}
//     output "out0" = %2
//     update "bn.running_mean" = %7
//   }
// Nested regions are printed indented below their op, each as a block with
// its arguments and yields; "update" lines are the state updates (the value
// written into a parameter at the end of a run).
#include <charconv>

#include "ir/ir.h"

namespace oar::ir {

namespace {

std::string double_str(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest form that reads back exactly
  std::string s(buf, r.ptr);
  // Keep a float attribute visibly a float: 3.0, not 3.
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

struct Printer {
  const std::unordered_map<const Value*, int>& ids;
  std::string out;

  std::string ref(const Value* v) const {
    if (!v) return "none";
    auto it = ids.find(v);
    if (it == ids.end()) return "%<unknown>";
    std::string s = "%";
    s += std::to_string(it->second);
    return s;
  }

  void indent(int depth) { out.append(size_t(depth) * 2, ' '); }

  void print_op(const Operation& op, int depth) {
    indent(depth);
    for (size_t i = 0; i < op.num_results(); ++i) {
      if (i) out += ", ";
      out += ref(op.result(i)) + ": " + op.result(i)->type().str();
    }
    if (op.num_results()) out += " = ";
    out += op.name() + "(";
    for (size_t i = 0; i < op.num_operands(); ++i) {
      if (i) out += ", ";
      out += ref(op.operand(i));
    }
    out += ")";
    if (op.attrs().size()) {
      out += " {";
      for (size_t i = 0; i < op.attrs().size(); ++i) {
        if (i) out += ", ";
        if (i < op.def().attr_names.size()) {
          out += op.def().attr_names[i];
        } else {
          out += "attr";
          out += std::to_string(i);
        }
        out += '=';
        out += attr_str(op.attrs()[i]);
      }
      out += "}";
    }
    if (!op.note().empty()) out += "  # " + op.note();
    out += "\n";
    for (size_t r = 0; r < op.num_regions(); ++r) print_region(op.region(r), int(r), depth + 1);
  }

  void print_region(const Block& b, int index, int depth) {
    indent(depth);
    out += "region " + std::to_string(index) + " (";
    for (size_t i = 0; i < b.num_arguments(); ++i) {
      if (i) out += ", ";
      out += ref(b.argument(i)) + ": " + b.argument(i)->type().str();
    }
    out += ") {\n";
    for (const auto& op : b.operations()) print_op(*op, depth + 1);
    indent(depth + 1);
    out += "yield";
    for (size_t i = 0; i < b.num_yields(); ++i) out += (i ? ", " : " ") + ref(b.yield(i));
    out += "\n";
    indent(depth);
    out += "}\n";
  }
};

}  // namespace

std::string attr_str(const AttrValue& a) {
  struct V {
    std::string operator()(std::monostate) const { return "none"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return double_str(d); }
    std::string operator()(std::complex<double> c) const {
      std::string s = "(";
      s += double_str(c.real());
      if (c.imag() >= 0) s += '+';
      s += double_str(c.imag());
      s += "j)";
      return s;
    }
    std::string operator()(DType t) const { return dtype_name(t); }
    std::string operator()(const std::string& s) const {
      std::string q = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
      }
      return q + "\"";
    }
    std::string operator()(const Dims& d) const {
      std::string s = "[";
      for (size_t i = 0; i < d.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(d[i]);
      }
      return s + "]";
    }
  };
  return std::visit(V{}, a);
}

std::string to_string(const Program& p) {
  auto ids = number_values(p);
  Printer pr{ids, {}};
  pr.out = "program {\n";
  const Block& body = p.body();
  // Inputs and parameters are the body's arguments; list them by role.
  for (const NamedValue& in : p.inputs())
    pr.out += "  input " + pr.ref(in.value) + " \"" + in.name + "\": " + in.value->type().str() + "\n";
  for (const NamedValue& pa : p.parameters())
    pr.out += std::string(pa.constant ? "  const " : "  param ") + pr.ref(pa.value) + " \"" + pa.name +
              "\": " + pa.value->type().str() + "\n";
  for (const auto& op : body.operations()) pr.print_op(*op, 1);
  auto outs = p.outputs();
  for (const NamedValue& o : outs) pr.out += "  output \"" + o.name + "\" = " + pr.ref(o.value) + "\n";
  for (const StateUpdate& u : p.state_updates()) {
    const int64_t i = p.parameter_index(u.parameter);
    const std::string name = i >= 0 ? p.parameters()[size_t(i)].name : "<not a parameter>";
    pr.out += "  update \"" + name + "\" = " + pr.ref(u.value) + "\n";
  }
  pr.out += "}\n";
  return pr.out;
}

}  // namespace oar::ir

// The model format: the writer, and the loader that rebuilds a Program from
// untrusted text read with the strict JSON reader of io/json.h (see
// serialize.h for the layout).
//
// The loader treats the file as hostile: every field is type-checked, value
// ids must be defined before use and defined once, op names must be in the
// op registry, attribute counts must match the op's declaration, and the
// verifier then checks each op's result types against its infer_meta (which
// also rejects attributes of the wrong type) and control-flow ops against
// their regions. Ids defined in a region are forgotten when it ends, so a
// reference from outside it fails as an undefined id. Nesting depth is
// bounded so that a deep document cannot exhaust the stack.
#include "ir/serialize.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include "io/json.h"
#include "ops/control_flow.h"

namespace oar::ir {

namespace {

// ---------------------------------------------------------------- writing

void put_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
}

void put_double(std::string& out, double d) {
  // JSON has no NaN or infinity literals.
  if (std::isnan(d)) { out += "\"nan\""; return; }
  if (std::isinf(d)) { out += d > 0 ? "\"inf\"" : "\"-inf\""; return; }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest form that reads back exactly
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  out += s;
}

void put_dims(std::string& out, const Dims& d) {
  out += '[';
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(d[i]);
  }
  out += ']';
}

void put_type(std::string& out, const Type& t) {
  out += "\"dtype\": ";
  put_string(out, dtype_name(t.dtype));
  out += ", \"shape\": ";
  put_dims(out, t.shape);
}

void put_attr(std::string& out, const AttrValue& a) {
  struct V {
    std::string& out;
    void operator()(std::monostate) const { out += "{\"none\": null}"; }
    void operator()(bool b) const { out += b ? "{\"bool\": true}" : "{\"bool\": false}"; }
    void operator()(int64_t i) const { out += "{\"int\": " + std::to_string(i) + "}"; }
    void operator()(double d) const {
      out += "{\"float\": ";
      put_double(out, d);
      out += '}';
    }
    void operator()(std::complex<double> c) const {
      out += "{\"complex\": [";
      put_double(out, c.real());
      out += ", ";
      put_double(out, c.imag());
      out += "]}";
    }
    void operator()(DType t) const {
      out += "{\"dtype\": ";
      put_string(out, dtype_name(t));
      out += '}';
    }
    void operator()(const std::string& s) const {
      out += "{\"str\": ";
      put_string(out, s);
      out += '}';
    }
    void operator()(const Dims& d) const {
      out += "{\"ints\": ";
      put_dims(out, d);
      out += '}';
    }
  };
  std::visit(V{out}, a);
}

using io::Json;
using JKind = io::Json::Kind;

// Programs nest containers a few levels per region; 64 leaves room for deep
// control flow while keeping the reader's recursion bounded.
constexpr int kMaxDepth = 64;

// ---------------------------------------------------------------- loading

class Loader {
 public:
  explicit Loader(const std::string& file) : file_(file) {}

  template <typename... Args> [[noreturn]] void bad(const Args&... args) const {
    fail(ErrorKind::Value, "[oar.jit.load] ", file_, ": ", args...);
  }

  const Json& want(const Json& v, JKind k, const std::string& what) const {
    if (v.kind != k) bad(what, " must be ", io::json_kind_name(k), ", got ", io::json_kind_name(v.kind));
    return v;
  }
  const Json& field(const Json& obj, const char* key, JKind k, const std::string& what) const {
    const Json* v = obj.find(key);
    if (!v) bad(what, " has no \"", key, "\"");
    return want(*v, k, what + " \"" + key + "\"");
  }
  void only_keys(const Json& obj, std::initializer_list<const char*> keys, const std::string& what) const {
    for (const auto& m : obj.members) {
      bool known = false;
      for (const char* k : keys) known = known || m.key == k;
      if (!known) bad(what, " has an unknown key \"", m.key, "\"");
    }
  }

  int64_t integer(const Json& v, const std::string& what) const {
    want(v, JKind::Number, what);
    if (!v.integral) bad(what, " must be an integer, got ", v.str);
    if (!v.is_int) bad(what, " is out of the int64 range: ", v.str);
    return v.integer;
  }
  double real(const Json& v, const std::string& what) const {
    if (v.kind == JKind::String) {
      if (v.str == "nan") return std::nan("");
      if (v.str == "inf") return HUGE_VAL;
      if (v.str == "-inf") return -HUGE_VAL;
      bad(what, " must be a number or \"nan\", \"inf\", \"-inf\", got \"", v.str, "\"");
    }
    want(v, JKind::Number, what);
    double x = 0;
    auto r = std::from_chars(v.str.data(), v.str.data() + v.str.size(), x);
    // from_chars reports out-of-range for overflow (and some underflow): reject both.
    if (r.ec != std::errc() || r.ptr != v.str.data() + v.str.size()) bad(what, " is not a representable double: ", v.str);
    return x;
  }
  DType dtype(const Json& v, const std::string& what) const {
    const std::string& s = want(v, JKind::String, what).str;
    for (int i = 0; i < kNumDTypes; ++i)
      if (s == dtype_name(DType(i))) return DType(i);
    bad(what, " names an unknown dtype \"", s, "\"");
  }
  Dims dims(const Json& v, const std::string& what, bool shape) const {
    want(v, JKind::Array, what);
    Dims d;
    for (size_t i = 0; i < v.items.size(); ++i) {
      int64_t x = integer(v.items[i], what + "[" + std::to_string(i) + "]");
      if (shape && x < kDynamic) bad(what, "[", i, "] is ", x, "; dims are sizes >= 0, or -1 for a dynamic dim");
      d.push_back(x);
    }
    return d;
  }
  Type type(const Json& obj, const std::string& what) const {
    const Json* dt = obj.find("dtype");
    const Json* sh = obj.find("shape");
    if (!dt || !sh) bad(what, " needs \"dtype\" and \"shape\"");
    return Type{dtype(*dt, what + " \"dtype\""), dims(*sh, what + " \"shape\"", true)};
  }

  AttrValue attr(const Json& a, const std::string& what) const {
    want(a, JKind::Object, what);
    if (a.members.size() != 1)
      bad(what, " must be an object with one key naming its type (bool, int, float, complex, dtype, str, ints, none)");
    const auto& [k, v] = a.members[0];
    if (k == "none") {
      want(v, JKind::Null, what);
      return std::monostate{};
    }
    if (k == "bool") return want(v, JKind::Bool, what).boolean;
    if (k == "int") return integer(v, what);
    if (k == "float") return real(v, what);
    if (k == "complex") {
      want(v, JKind::Array, what);
      if (v.items.size() != 2) bad(what, " must be [re, im]");
      return std::complex<double>(real(v.items[0], what + "[0]"), real(v.items[1], what + "[1]"));
    }
    if (k == "dtype") return dtype(v, what);
    if (k == "str") return want(v, JKind::String, what).str;
    if (k == "ints") return dims(v, what, false);
    bad(what, " has the unknown attribute type \"", k, "\"");
  }

  void define(int64_t id, Value* v, const std::string& what) {
    if (id < 0) bad(what, " has the negative id ", id);
    // Ids are unique in the whole document, even across regions that cannot see each other.
    if (!all_ids_.insert(id).second) bad(what, " defines the id ", id, ", which is already defined");
    values_.emplace(id, v);
  }
  Value* lookup(const Json& ref, const std::string& what) const {
    int64_t id = integer(ref, what);
    auto it = values_.find(id);
    if (it == values_.end())
      bad(what, " refers to the id ", id, ", which is not defined before it is used (or is defined inside a region "
          "that is not visible here)");
    return it->second;
  }

  // The op registry does not declare how many operands an op takes, and
  // infer_meta indexes its inputs without checking their count. So that a
  // file with too few operands is rejected rather than read out of bounds,
  // infer_meta runs on the operands followed by padding tensors of three
  // different types: an op that reads past its operands sees the padding,
  // and its answer then changes with the padding's type.
  void check_operand_count(const OpDef& def, const std::vector<Value*>& operands, const Attrs& attrs,
                           const std::string& what) const {
    const Type pads[] = {Type{DType::Float32, {}}, Type{DType::Bool, {3, 5, 7}}, Type{DType::Complex128, {1, 2}}};
    std::string first;
    for (size_t k = 0; k < std::size(pads); ++k) {
      std::string outcome;
      try {
        std::vector<Tensor> buf;
        for (Value* v : operands) buf.push_back(v ? meta_tensor(v->type(), kDynProbeA) : Tensor());
        for (int i = 0; i < 8; ++i) buf.push_back(meta_tensor(pads[k]));
        Metas m = infer_metas(def, std::span<const Tensor>(buf.data(), operands.size()), attrs);
        outcome = "ok";
        for (const TensorMeta& x : m) outcome += " " + Type{x.dtype, x.shape}.str();
      } catch (const std::exception& e) {
        outcome = e.what();
      }
      if (k == 0) first = std::move(outcome);
      else if (outcome != first) bad(what, ": ", operands.size(), " operand(s) are too few for the op");
    }
  }

  // The ops of `block` (the body, or a region at `prefix`, e.g. "ops[3] region 0 ").
  void load_ops(const Json& ops, Block& block, const std::string& prefix) {
    for (size_t k = 0; k < ops.items.size(); ++k) {
      std::string what = prefix + "ops[" + std::to_string(k) + "]";
      const Json& o = want(ops.items[k], JKind::Object, what);
      only_keys(o, {"op", "operands", "results", "attrs", "example_shapes", "regions"}, what);
      const std::string& name = field(o, "op", JKind::String, what).str;
      what += " ('" + name + "')";
      const OpDef* def = find_op(name);
      if (!def || !def->infer_meta) bad(what, ": unknown op '", name, "'");
      const bool cf = is_control_flow(*def);
      const Json* regions = o.find("regions");
      if (regions && version_ < 2)
        bad(what, " has \"regions\", which need format version 2; the document says ", version_);
      if (regions && !cf) bad(what, ": op '", name, "' takes no regions");
      std::vector<Value*> operands;
      const Json& ins = field(o, "operands", JKind::Array, what);
      for (size_t i = 0; i < ins.items.size(); ++i) {
        if (ins.items[i].kind == JKind::Null) {
          if (!def->input_optional(i)) bad(what, " operand ", i, " is null, but the op requires that input");
          operands.push_back(nullptr);
        } else {
          operands.push_back(lookup(ins.items[i], what + " operand " + std::to_string(i)));
        }
      }
      Attrs attrs;
      const Json& as = field(o, "attrs", JKind::Array, what);
      if (as.items.size() != def->attr_names.size())
        bad(what, " has ", as.items.size(), " attribute(s) but the op declares ", def->attr_names.size());
      for (size_t i = 0; i < as.items.size(); ++i)
        attrs.push_back(attr(as.items[i], what + " attribute '" + def->attr_names[i] + "'"));
      const Json& rs = field(o, "results", JKind::Array, what);
      std::vector<Type> types;
      std::vector<int64_t> ids;
      for (size_t i = 0; i < rs.items.size(); ++i) {
        std::string rw = what + " result " + std::to_string(i);
        const Json& r = want(rs.items[i], JKind::Object, rw);
        only_keys(r, {"id", "dtype", "shape"}, rw);
        ids.push_back(integer(field(r, "id", JKind::Number, rw), rw + " \"id\""));
        types.push_back(type(r, rw));
      }
      // Control-flow ops are checked against their regions by the verifier.
      if (!cf) check_operand_count(*def, operands, attrs, what);
      Operation* op = block.append(*def, operands, std::move(attrs), types);
      if (const Json* ex = o.find("example_shapes"))
        op->mark_example_shapes(want(*ex, JKind::String, what + " \"example_shapes\"").str);
      if (regions) {
        want(*regions, JKind::Array, what + " \"regions\"");
        for (size_t r = 0; r < regions->items.size(); ++r)
          load_region(regions->items[r], op->add_region(), what + " region " + std::to_string(r));
      }
      for (size_t i = 0; i < ids.size(); ++i) define(ids[i], op->result(i), what + " result " + std::to_string(i));
    }
  }

  // A region: its arguments and ops see the enclosing ids; its own ids are
  // forgotten afterwards, so nothing outside it can refer to them.
  void load_region(const Json& rj, Block& b, const std::string& what) {
    want(rj, JKind::Object, what);
    only_keys(rj, {"arguments", "ops", "yields"}, what);
    std::vector<int64_t> scope_before;
    for (const auto& [id, v] : values_) scope_before.push_back(id);
    const Json& args = field(rj, "arguments", JKind::Array, what);
    for (size_t i = 0; i < args.items.size(); ++i) {
      std::string aw = what + " argument " + std::to_string(i);
      const Json& a = want(args.items[i], JKind::Object, aw);
      only_keys(a, {"id", "dtype", "shape"}, aw);
      int64_t id = integer(field(a, "id", JKind::Number, aw), aw + " \"id\"");
      define(id, b.add_argument(type(a, aw)), aw);
    }
    load_ops(field(rj, "ops", JKind::Array, what), b, what + " ");
    const Json& ys = field(rj, "yields", JKind::Array, what);
    for (size_t i = 0; i < ys.items.size(); ++i) b.add_yield(lookup(ys.items[i], what + " yield " + std::to_string(i)));
    std::map<int64_t, Value*> kept;
    for (int64_t id : scope_before) kept.emplace(id, values_.at(id));
    values_ = std::move(kept);
  }

  std::unique_ptr<Program> load(const Json& doc) {
    want(doc, JKind::Object, "the document");
    const Json* fmt = doc.find("format");
    if (!fmt || fmt->kind != JKind::String || fmt->str != "oar.program")
      bad("not an oar program (\"format\" must be \"oar.program\")");
    int64_t version = integer(field(doc, "version", JKind::Number, "the document"), "\"version\"");
    if (version > kFormatVersion)
      bad("written by a newer oar: format version ", version, ", this build reads up to ", kFormatVersion);
    if (version < 1) bad("format version ", version, " is not valid (versions start at 1)");
    only_keys(doc, {"format", "version", "inputs", "parameters", "ops", "outputs", "state_updates", "notes", "meta"},
              "the document");
    version_ = version;

    auto prog = std::make_unique<Program>();
    // Inputs and parameters are the body's arguments; recreate them in id
    // order so that the numbering (and the printed form) is the same.
    struct Arg {
      int64_t id;
      bool input;
      std::string name;
      Type type;
      bool constant;
    };
    std::vector<Arg> args;
    for (const char* list : {"inputs", "parameters"}) {
      const bool input = std::string_view(list) == "inputs";
      const Json& arr = field(doc, list, JKind::Array, "the document");
      for (size_t i = 0; i < arr.items.size(); ++i) {
        std::string what = std::string(list) + "[" + std::to_string(i) + "]";
        const Json& e = want(arr.items[i], JKind::Object, what);
        only_keys(e, {"name", "id", "dtype", "shape", "constant"}, what);
        Arg a{integer(field(e, "id", JKind::Number, what), what + " \"id\""), input,
              field(e, "name", JKind::String, what).str, type(e, what), false};
        if (const Json* c = e.find("constant")) a.constant = want(*c, JKind::Bool, what + " \"constant\"").boolean;
        if (input && e.find("constant")) bad(what, ": only parameters can be constant");
        args.push_back(std::move(a));
      }
    }
    std::stable_sort(args.begin(), args.end(), [](const Arg& a, const Arg& b) { return a.id < b.id; });
    for (Arg& a : args) {
      Value* v = a.input ? prog->add_input(a.name, a.type) : prog->add_parameter(a.name, a.type, a.constant);
      define(a.id, v, std::string(a.input ? "input '" : "parameter '") + a.name + "'");
    }

    load_ops(field(doc, "ops", JKind::Array, "the document"), prog->body(), "");

    const Json& outs = field(doc, "outputs", JKind::Array, "the document");
    for (size_t i = 0; i < outs.items.size(); ++i) {
      std::string what = "outputs[" + std::to_string(i) + "]";
      const Json& e = want(outs.items[i], JKind::Object, what);
      only_keys(e, {"name", "id"}, what);
      const Json* id = e.find("id");
      if (!id) bad(what, " has no \"id\"");
      prog->add_output(field(e, "name", JKind::String, what).str, lookup(*id, what));
    }
    if (const Json* ups = doc.find("state_updates")) {
      if (version < 2) bad("\"state_updates\" needs format version 2, the document says ", version);
      want(*ups, JKind::Array, "\"state_updates\"");
      for (size_t i = 0; i < ups->items.size(); ++i) {
        std::string what = "state_updates[" + std::to_string(i) + "]";
        const Json& e = want(ups->items[i], JKind::Object, what);
        only_keys(e, {"parameter", "id"}, what);
        const std::string& name = field(e, "parameter", JKind::String, what).str;
        Value* param = nullptr;
        for (const NamedValue& n : prog->parameters())
          if (n.name == name) param = n.value;
        if (!param) bad(what, " names '", name, "', which is not a parameter of the program");
        for (const StateUpdate& u : prog->state_updates())
          if (u.parameter == param) bad(what, " updates parameter '", name, "' a second time");
        const Json* id = e.find("id");
        if (!id) bad(what, " has no \"id\"");
        prog->set_state_update(param, lookup(*id, what));
      }
    }
    if (const Json* notes = doc.find("notes")) {
      want(*notes, JKind::Array, "\"notes\"");
      for (const Json& n : notes->items) prog->notes().push_back(want(n, JKind::String, "a note").str);
    }

    try {
      verify(*prog);
    } catch (const std::exception& e) {  // oar errors, and a wrongly typed attribute read outside infer_meta's guard
      bad("the program does not verify: ", e.what());
    }
    return prog;
  }

 private:
  const std::string& file_;
  std::map<int64_t, Value*> values_;  // the ids visible at the current point
  std::set<int64_t> all_ids_;
  int64_t version_ = kFormatVersion;
};

template <typename Id>
void put_ops(std::string& out, const Block& b, const Id& id, int depth) {
  const std::string pad(size_t(depth) * 2, ' ');
  out += '[';
  bool first = true;
  for (const auto& op : b.operations()) {
    out += first ? "\n" : ",\n";
    out += pad;
    first = false;
    out += "{\"op\": ";
    put_string(out, op->name());
    out += ", \"operands\": [";
    for (size_t i = 0; i < op->num_operands(); ++i) out += (i ? ", " : "") + id(op->operand(i));
    out += "], \"results\": [";
    for (size_t i = 0; i < op->num_results(); ++i) {
      out += i ? ", {\"id\": " : "{\"id\": ";
      out += id(op->result(i)) + ", ";
      put_type(out, op->result(i)->type());
      out += '}';
    }
    out += "], \"attrs\": [";
    for (size_t i = 0; i < op->attrs().size(); ++i) {
      if (i) out += ", ";
      put_attr(out, op->attrs()[i]);
    }
    out += ']';
    if (op->example_shapes()) {
      out += ", \"example_shapes\": ";
      put_string(out, op->note());
    }
    if (op->num_regions()) {
      out += ", \"regions\": [";
      for (size_t r = 0; r < op->num_regions(); ++r) {
        const Block& region = op->region(r);
        out += r ? ",\n" + pad + " {\"arguments\": [" : "{\"arguments\": [";
        for (size_t i = 0; i < region.num_arguments(); ++i) {
          out += i ? ", {\"id\": " : "{\"id\": ";
          out += id(region.argument(i)) + ", ";
          put_type(out, region.argument(i)->type());
          out += '}';
        }
        out += "], \"ops\": ";
        put_ops(out, region, id, depth + 2);
        out += ", \"yields\": [";
        for (size_t i = 0; i < region.num_yields(); ++i) out += (i ? ", " : "") + id(region.yield(i));
        out += "]}";
      }
      out += ']';
    }
    out += '}';
  }
  out += ']';
}

}  // namespace

std::string to_json(const Program& p) {
  auto ids = number_values(p);
  auto id = [&](const Value* v) -> std::string {
    if (!v) return "null";
    auto it = ids.find(v);
    OAR_CHECK(it != ids.end(), Value, "[oar.jit.save] the program uses a value that it does not define");
    return std::to_string(it->second);
  };
  std::string out = "{\"format\": \"oar.program\", \"version\": " + std::to_string(kFormatVersion) + ",\n";
  auto named = [&](const char* key, const std::vector<NamedValue>& vs, bool params) {
    out += " \"";
    out += key;
    out += "\": [";
    for (size_t i = 0; i < vs.size(); ++i) {
      out += i ? ",\n  {\"name\": " : "\n  {\"name\": ";
      put_string(out, vs[i].name);
      out += ", \"id\": " + id(vs[i].value) + ", ";
      put_type(out, vs[i].value->type());
      if (params) out += vs[i].constant ? ", \"constant\": true" : ", \"constant\": false";
      out += '}';
    }
    out += "],\n";
  };
  named("inputs", p.inputs(), false);
  named("parameters", p.parameters(), true);
  out += " \"ops\": ";
  put_ops(out, p.body(), id, 1);
  out += ",\n \"outputs\": [";
  auto outs = p.outputs();
  for (size_t i = 0; i < outs.size(); ++i) {
    out += i ? ", {\"name\": " : "{\"name\": ";
    put_string(out, outs[i].name);
    out += ", \"id\": " + id(outs[i].value) + "}";
  }
  out += "],\n \"state_updates\": [";
  {
    bool first = true;
    for (const StateUpdate& u : p.state_updates()) {
      const int64_t i = p.parameter_index(u.parameter);
      OAR_CHECK(i >= 0, Value, "[oar.jit.save] a state update names a value that is not a program parameter");
      out += first ? "{\"parameter\": " : ", {\"parameter\": ";
      first = false;
      put_string(out, p.parameters()[size_t(i)].name);
      out += ", \"id\": " + id(u.value) + "}";
    }
  }
  out += "],\n \"notes\": [";
  for (size_t i = 0; i < p.notes().size(); ++i) {
    if (i) out += ", ";
    put_string(out, p.notes()[i]);
  }
  out += "]}\n";
  return out;
}

std::unique_ptr<Program> from_json(const std::string& text, const char* file_for_errors) {
  const std::string file = file_for_errors ? file_for_errors : "<string>";
  Json doc;
  io::JsonError err;
  if (!io::parse_json(text, doc, err, io::JsonOptions{kMaxDepth, true}))
    fail(ErrorKind::Value, "[oar.jit.load] ", file, ": malformed JSON ", err.str());
  return Loader(file).load(doc);
}

}  // namespace oar::ir

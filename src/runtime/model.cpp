// Loading a saved model for inference: program + weights, graph passes, the
// bfloat16 rewrite, slot numbering; and the memory plan per input shapes.
#include "runtime/model.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "io/json.h"
#include "io/safetensors.h"
#include "ir/passes/passes.h"
#include "ir/serialize.h"
#include "ops/autocast.h"
#include "ops/dispatch.h"
#include "ops/ops.h"
#include "runtime/control_flow.h"

namespace oar::runtime {

namespace {

constexpr long kMaxProgramBytes = 1l << 30;  // a larger file is not a program

std::string read_program_text(const std::string& path, const char* api) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  OAR_CHECK(f, Value, "[", api, "] ", path, ": the program file cannot be opened (", std::strerror(errno), ")");
  long size = -1;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) size = std::ftell(f.get());
  OAR_CHECK(size >= 0, Value, "[", api, "] ", path, ": cannot be read (not a regular file?)");
  OAR_CHECK(size <= kMaxProgramBytes, Value, "[", api, "] ", path, ": ", size, " bytes is too large for a program file");
  std::rewind(f.get());
  std::string text(size_t(size), '\0');
  OAR_CHECK(size == 0 || std::fread(text.data(), 1, text.size(), f.get()) == text.size(), Value, "[", api, "] ",
            path, ": short read");
  return text;
}

// from_json names its own API; the runtime's errors name the runtime's.
[[noreturn]] void rethrow_as(const Error& e, const char* api) {
  std::string msg = e.what();
  const std::string theirs = "[oar.jit.load] ";
  if (msg.rfind(theirs, 0) == 0) msg = msg.substr(theirs.size());
  fail(e.kind(), "[", api, "] ", msg);
}

bool type_matches(const ir::Type& want, const Tensor& t) {
  if (t.dtype() != want.dtype || size_t(t.dim()) != want.shape.size()) return false;
  for (size_t d = 0; d < want.shape.size(); ++d)
    if (want.shape[d] != ir::kDynamic && want.shape[d] != t.shape()[d]) return false;
  return true;
}

void drop_unused_parameters(ir::Program& p, std::vector<Tensor>& params) {
  for (size_t i = p.parameters().size(); i-- > 0;)
    if (!p.parameters()[i].value->has_uses()) {
      p.erase_parameter(i);
      params.erase(params.begin() + std::ptrdiff_t(i));
    }
}

// A data-less tensor with this metadata, for shape propagation.
Tensor meta_view(const Tensor& base, const TensorMeta& m) {
  return make_view(base, m.shape, m.strides, m.offset);
}

// The InputSpec names that oar.jit.save records in the document's "meta"
// entry, when every input has one and they are distinct: users name inputs
// by them (Paddle's get_input_names). Empty otherwise.
std::vector<std::string> input_spec_names(const std::string& text, size_t num_inputs) {
  if (text.find("\"input_names\"") == std::string::npos) return {};
  io::Json doc;
  io::JsonError err;
  if (!io::parse_json(text, doc, err) || doc.kind != io::Json::Kind::Object) return {};
  const io::Json* meta = doc.find("meta");
  const io::Json* names = meta ? meta->find("input_names") : nullptr;
  if (!names || names->kind != io::Json::Kind::Array || names->items.size() != num_inputs) return {};
  std::vector<std::string> out;
  for (const io::Json& n : names->items) {
    if (n.kind != io::Json::Kind::String || n.str.empty()) return {};
    for (const std::string& seen : out)
      if (seen == n.str) return {};
    out.push_back(n.str);
  }
  return out;
}

}  // namespace

std::string shapes_key(const std::vector<Dims>& shapes) {
  std::string k;
  for (const Dims& s : shapes) {
    for (size_t d = 0; d < s.size(); ++d) k += (d ? "x" : "") + std::to_string(s[d]);
    k += ';';
  }
  return k;
}

void rewrite_bf16(ir::Program& p, std::vector<Tensor>& params) {
  const OpDef* cast = find_op("cast");
  OAR_CHECK(cast, Runtime, "[oar.inference] the cast op is not registered");
  ir::Block& body = p.body();
  std::unordered_map<const ir::Value*, size_t> param_index;
  for (size_t i = 0; i < p.parameters().size(); ++i) param_index[p.parameters()[i].value] = i;
  std::unordered_map<const ir::Value*, ir::Value*> bf16_param;  // float32 parameter -> its bfloat16 copy
  auto make_cast = [&](ir::Block::OpList::iterator pos, ir::Value* v, DType to) {
    ir::Type t{to, v->type().shape};
    ir::Value* operands[] = {v};
    return body.insert(pos, *cast, operands, Attrs{to}, std::span<const ir::Type>(&t, 1))->result(0);
  };
  for (auto it = body.begin(); it != body.end(); ++it) {
    ir::Operation* op = it->get();
    if (op->def().name == "cast" || cast_policy(op->def().name) != CastPolicy::Low) continue;
    bool changed = false;
    for (size_t i = 0; i < op->num_operands(); ++i) {
      ir::Value* v = op->operand(i);
      if (!v || v->type().dtype != DType::Float32) continue;
      auto pi = param_index.find(v);
      if (pi != param_index.end()) {
        ir::Value*& copy = bf16_param[v];
        if (!copy) {
          const std::string& name = p.parameters()[pi->second].name;
          copy = p.add_parameter(name + "@bf16", ir::Type{DType::BFloat16, v->type().shape}, true);
          Tensor src[] = {params[pi->second]};
          params.push_back(run_eager(*cast, src, Attrs{DType::BFloat16})[0]);
        }
        op->set_operand(i, copy);
      } else {
        op->set_operand(i, make_cast(it, v, DType::BFloat16));
      }
      changed = true;
    }
    if (!changed) continue;
    std::vector<const ir::Type*> types;
    for (ir::Value* v : op->operands()) types.push_back(v ? &v->type() : nullptr);
    ir::InferResult r = ir::infer_result_types(op->def(), types, op->attrs());
    OAR_CHECK(r.types && r.types->size() == op->num_results(), Runtime, "[oar.inference] op '", op->name(),
              "' does not accept bfloat16 operands: ", r.error);
    auto next = std::next(it);
    for (size_t k = 0; k < op->num_results(); ++k) {
      ir::Value* res = op->result(k);
      DType was = res->type().dtype;
      ir::Type now = (*r.types)[k];
      if (op->example_shapes()) now.shape = res->type().shape;
      res->set_type(now);
      if (was == now.dtype || !res->has_uses()) continue;
      // Everything after the op keeps seeing the dtype it was traced with.
      ir::Value* back = make_cast(next, res, was);
      res->replace_all_uses_with(back);
      back->defining_op()->set_operand(0, res);
    }
    // Skip over the casts just inserted after the op.
    it = std::prev(next);
  }
  ir::dead_code_elimination(p);
  drop_unused_parameters(p, params);
  ir::verify(p);
}

namespace {

// The loading shared by files and memory: `read_weights` returns the
// validated safetensors entries, and is called only once the program has
// loaded (so a bad program is reported before the weights are read).
template <typename ReadWeights>
std::shared_ptr<const Model> build_model(const std::string& text, const std::string& prog_file,
                                         const std::string& params_file, const ReadWeights& read_weights,
                                         const ModelOptions& options, const char* api) {
  auto m = std::make_shared<Model>();
  m->prog_file = prog_file;
  m->params_file = params_file;
  try {
    m->program = ir::from_json(text, prog_file.c_str());
  } catch (const Error& e) {
    rethrow_as(e, api);
  }
  ir::Program& p = *m->program;
  std::vector<std::string> spec_names = input_spec_names(text, p.inputs().size());

  // A program that updates its parameters (batch-norm statistics of a layer
  // saved in training mode) would write the predictor's read-only weights.
  OAR_CHECK(p.state_updates().empty(), Value, "[", api, "] ", prog_file, ": the program updates ",
            p.state_updates().size(), " of its parameters in place (a layer saved in training mode?); call "
            "layer.eval() before oar.jit.save for inference");
  std::vector<io::NamedTensor> weights = read_weights();
  std::unordered_map<std::string, Tensor> by_name;
  for (io::NamedTensor& w : weights) by_name.emplace(w.name, std::move(w.tensor));
  for (const ir::NamedValue& nv : p.parameters()) {
    auto it = by_name.find(nv.name);
    OAR_CHECK(it != by_name.end(), Value, "[", api, "] ", params_file, ": has no tensor for the program parameter '",
              nv.name, "'");
    OAR_CHECK(type_matches(nv.value->type(), it->second), Value, "[", api, "] ", params_file, ": '", nv.name,
              "' has type ", ir::Type::of(it->second).str(), " but the program expects ", nv.value->type().str());
    m->params.push_back(it->second);
    by_name.erase(it);
  }
  OAR_CHECK(by_name.empty(), Value, "[", api, "] ", params_file, ": holds tensor '", by_name.begin()->first,
            "' that the program does not use (weights of another model?)");

  if (options.ir_optim) {
    ir::PassOptions passes = ir::PassOptions::inference();
    for (const std::string& name : options.deleted_passes)
      OAR_CHECK(ir::set_pass(passes, name, false), Value, "[", api, "] no graph pass is named '", name, "'");
    ir::run_passes(p, m->params, passes);
  }
  if (options.bf16) {
    rewrite_bf16(p, m->params);
    // The weights read from the file share one buffer; the float32 originals
    // of the converted weights would keep all of it alive, so the weights
    // still used get buffers of their own and the file's is released.
    const OpDef* cast = find_op("cast");
    for (Tensor& t : m->params)
      if (t.dtype() != DType::BFloat16) {
        Tensor src[] = {t};
        t = run_eager(*cast, src, Attrs{t.dtype()})[0];
      }
  }
  drop_unused_parameters(p, m->params);
  for (const Tensor& t : m->params) {
    m->weight_bytes += t.numel() * int64_t(t.itemsize());
    // Nothing writes the weights from here on; kernels may keep derived forms
    // of them (Note [read-only storage]).
    t.storage().set_read_only();
  }

  // Slots: inputs, parameters, then op results in program order (a region
  // op's region values before its results).
  SlotNumbering slots;
  for (const ir::NamedValue& nv : p.inputs()) {
    m->input_slots.push_back(slots.number(nv.value));
    m->input_types.push_back(nv.value->type());
    m->input_names.push_back(spec_names.empty() ? nv.name : spec_names[m->input_names.size()]);
  }
  for (const ir::NamedValue& nv : p.parameters()) m->param_slots.push_back(slots.number(nv.value));
  for (const auto& op : p.body().operations()) m->steps.push_back(make_step(*op, slots, api, prog_file));
  m->num_slots = slots.count;
  for (const ir::NamedValue& nv : p.outputs()) {
    m->output_slots.push_back(slots.slot.at(nv.value));
    m->output_names.push_back(nv.name);
  }
  return m;
}

}  // namespace

std::shared_ptr<const Model> load_model(const std::string& prog_file, const std::string& params_file,
                                        const ModelOptions& options, const char* api) {
  std::string text = read_program_text(prog_file, api);
  return build_model(
      text, prog_file, params_file, [&] { return io::read_safetensors(params_file, api); }, options, api);
}

std::shared_ptr<const Model> load_model_from_memory(const std::string& prog_text, std::span<const char> params_bytes,
                                                    const ModelOptions& options, const char* api,
                                                    const std::string& prog_name, const std::string& params_name) {
  return build_model(
      prog_text, prog_name, params_name, [&] { return io::parse_safetensors(params_bytes, params_name, api); },
      options, api);
}

SlotPlan make_plan(const Model& m, const std::vector<Dims>& input_shapes) {
  const int n = m.num_slots;
  const size_t N = size_t(n);
  std::vector<Tensor> meta(N);
  std::vector<int> root(N), first(N, -1), last(N, -1), own_last(N, -1);
  std::vector<int64_t> bytes(N, 0);
  std::vector<char> buffer(N, 0), pinned(N, 0);
  for (int i = 0; i < n; ++i) root[size_t(i)] = i;
  for (size_t i = 0; i < m.input_slots.size(); ++i)
    meta[size_t(m.input_slots[i])] = ir::meta_tensor(ir::Type{m.input_types[i].dtype, input_shapes[i]});
  for (size_t i = 0; i < m.param_slots.size(); ++i) meta[size_t(m.param_slots[i])] = m.params[i];

  for (size_t s = 0; s < m.steps.size(); ++s) {
    const Step& st = m.steps[s];
    const int si = int(s);
    auto read = [&](int in) {
      if (in < 0) return;
      own_last[size_t(in)] = si;
      int& l = last[size_t(root[size_t(in)])];
      l = std::max(l, si);
    };
    for (int in : st.in) read(in);
    if (st.control) {
      // Note [control flow in the runtime]: what the regions read is live
      // across the step; the results get buffers of their own.
      for (int in : st.captures) read(in);
      const std::vector<ir::Type>& types = st.control->result_types;
      for (size_t k = 0; k < st.out.size(); ++k) {
        first[size_t(st.out[k])] = si;
        bool fixed = true;
        for (int64_t d : types[k].shape) fixed = fixed && d != ir::kDynamic;
        if (fixed) meta[size_t(st.out[k])] = ir::meta_tensor(types[k]);
      }
      continue;
    }
    if (st.def->traits.view)
      for (int out : st.out) root[size_t(out)] = st.in.empty() || st.in[0] < 0 ? out : root[size_t(st.in[0])];
    bool known = !st.def->traits.dynamic_shape;
    Tensors ins;
    for (int in : st.in) {
      if (in >= 0 && !meta[size_t(in)].defined()) known = false;
      ins.push_back(in >= 0 ? meta[size_t(in)] : Tensor());
    }
    for (int out : st.out) first[size_t(out)] = si;
    if (!known) continue;
    Metas metas;
    try {
      metas = infer_metas(*st.def, std::span<const Tensor>(ins.data(), ins.size()), *st.attrs);
    } catch (const std::exception&) {
      continue;  // sized at run time instead
    }
    if (metas.size() != st.out.size()) continue;
    for (size_t k = 0; k < st.out.size(); ++k) {
      const int out = st.out[k];
      if (st.def->traits.view) {
        meta[size_t(out)] = meta_view(ins[0], metas[k]);
        continue;
      }
      meta[size_t(out)] = ir::meta_tensor(ir::Type{metas[k].dtype, metas[k].shape});
      bytes[size_t(out)] = meta[size_t(out)].numel() * int64_t(itemsize(metas[k].dtype));
      buffer[size_t(out)] = 1;
    }
  }
  // Program outputs (and what they are views of) outlive the run.
  for (int o : m.output_slots) pinned[size_t(root[size_t(o)])] = 1;
  for (int i : m.input_slots) pinned[size_t(i)] = 1;
  for (int i : m.param_slots) pinned[size_t(i)] = 1;

  SlotPlan plan;
  plan.offset.assign(N, -1);
  plan.bytes.assign(N, 0);
  plan.release.assign(m.steps.size(), {});
  std::vector<BufferRequest> reqs;
  std::vector<int> req_slot;
  for (int i = 0; i < n; ++i) {
    if (!buffer[size_t(i)] || pinned[size_t(i)] || bytes[size_t(i)] == 0) continue;
    reqs.push_back({bytes[size_t(i)], first[size_t(i)], std::max(first[size_t(i)], last[size_t(i)])});
    req_slot.push_back(i);
  }
  plan.memory = plan_memory(reqs);
  for (size_t r = 0; r < reqs.size(); ++r) {
    plan.offset[size_t(req_slot[r])] = plan.memory.offsets[r];
    plan.bytes[size_t(req_slot[r])] = reqs[r].bytes;
  }
  // A slot's tensor is dropped after its last reader; a buffer's after the
  // last reader of any view of it, when its memory is really free.
  for (int i = 0; i < n; ++i) {
    if (pinned[size_t(root[size_t(i)])] || first[size_t(i)] < 0) continue;
    int at = root[size_t(i)] == i ? std::max(last[size_t(i)], own_last[size_t(i)]) : own_last[size_t(i)];
    plan.release[size_t(std::max(at, first[size_t(i)]))].push_back(i);
  }
  return plan;
}

std::shared_ptr<const SlotPlan> Model::plan_for(const std::vector<Dims>& input_shapes) const {
  std::string key = shapes_key(input_shapes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  auto plan = std::make_shared<const SlotPlan>(make_plan(*this, input_shapes));
  std::lock_guard<std::mutex> lock(mu_);
  // Bound the cache: a server fed every batch size should not grow forever.
  if (plans_.size() >= 64) plans_.clear();
  return plans_.emplace(key, plan).first->second;
}

}  // namespace oar::runtime

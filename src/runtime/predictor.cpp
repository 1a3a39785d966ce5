// The public inference API (include/oar/inference.h) over the runtime's
// Model and Executor. Every entry point converts oar errors into
// oar_infer::Error, so users need no internal header to catch them.
#include <sys/stat.h>

#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>

#include "oar/inference.h"
#include "ir/passes/passes.h"
#include "ops/ops.h"
#include "runtime/executor.h"

namespace oar_infer {

using oar::DType;
using oar::fail;

namespace {

template <typename F> auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const oar::Error& e) {
    throw Error(static_cast<oar_infer::ErrorKind>(int(e.kind())), e.what());
  }
}

DType to_dtype(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return DType::Float32;
    case DataType::FLOAT64: return DType::Float64;
    case DataType::FLOAT16: return DType::Float16;
    case DataType::BFLOAT16: return DType::BFloat16;
    case DataType::INT64: return DType::Int64;
    case DataType::INT32: return DType::Int32;
    case DataType::INT16: return DType::Int16;
    case DataType::INT8: return DType::Int8;
    case DataType::UINT8: return DType::UInt8;
    case DataType::BOOL: return DType::Bool;
  }
  fail(oar::ErrorKind::Type, "[oar.inference] unknown DataType ", int(t));
}

DataType from_dtype(DType t, const char* api) {
  switch (t) {
    case DType::Float32: return DataType::FLOAT32;
    case DType::Float64: return DataType::FLOAT64;
    case DType::Float16: return DataType::FLOAT16;
    case DType::BFloat16: return DataType::BFLOAT16;
    case DType::Int64: return DataType::INT64;
    case DType::Int32: return DataType::INT32;
    case DType::Int16: return DataType::INT16;
    case DType::Int8: return DataType::INT8;
    case DType::UInt8: return DataType::UINT8;
    case DType::Bool: return DataType::BOOL;
    default: break;
  }
  fail(oar::ErrorKind::NotImplemented, "[", api, "] the runtime's handles do not carry ", oar::dtype_name(t), " data");
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// A folder holds one model: inference.json if present, else its only *.json.
std::string prefix_in_dir(const std::string& dir) {
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  struct stat st;
  if (::stat((base + "/inference.json").c_str(), &st) == 0) return base + "/inference";
  std::vector<std::string> found;
  if (DIR* d = ::opendir(base.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (ends_with(n, ".json")) found.push_back(n.substr(0, n.size() - 5));
    }
    ::closedir(d);
  }
  OAR_CHECK(found.size() == 1, Value, "[oar.inference.Config] ", dir, ": expected one saved model (a .json program "
            "file with its .safetensors weights) in the folder, found ", found.size(), " .json files");
  return base + "/" + found[0];
}

}  // namespace

// ---------------------------------------------------------------- Config

Config::Config(const std::string& model_dir_or_prefix) { SetModel(model_dir_or_prefix); }

Config::Config(const std::string& prog_file, const std::string& params_file) { SetModel(prog_file, params_file); }

void Config::SetModel(const std::string& model) {
  guarded([&] {
    OAR_CHECK(!model.empty(), Value, "[oar.inference.Config] the model path is empty");
    std::string prefix = model;
    if (is_dir(model)) {
      model_dir_ = model;
      prefix = prefix_in_dir(model);
    } else if (ends_with(model, ".json")) {
      prefix = model.substr(0, model.size() - 5);
    }
    prog_file_ = prefix + ".json";
    params_file_ = prefix + ".safetensors";
  });
}

void Config::SetModel(const std::string& prog_file, const std::string& params_file) {
  guarded([&] {
    OAR_CHECK(!prog_file.empty() && !params_file.empty(), Value,
              "[oar.inference.Config] the program and params file names must not be empty");
    prog_file_ = prog_file;
    params_file_ = params_file;
  });
}

void Config::SetCpuMathLibraryNumThreads(int n) {
  guarded([&] {
    OAR_CHECK(n >= 0, Value, "[oar.inference.Config.set_cpu_math_library_num_threads] expects n >= 0, got ", n);
    threads_ = n;
  });
}

void Config::DeletePass(const std::string& name) {
  guarded([&] {
    const auto& names = oar::ir::pass_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (std::string_view n : names) known += std::string(known.empty() ? "" : ", ") + std::string(n);
      oar::fail(oar::ErrorKind::Value, "[oar.inference.Config.delete_pass] no graph pass is named '", name, "'; the passes are ",
                known);
    }
    if (std::find(deleted_passes_.begin(), deleted_passes_.end(), name) == deleted_passes_.end())
      deleted_passes_.push_back(name);
  });
}

std::vector<std::string> Config::pass_names() {
  const auto& names = oar::ir::pass_names();
  return {names.begin(), names.end()};
}

void Config::SetPrecision(PrecisionType p) {
  guarded([&] {
    OAR_CHECK(p == PrecisionType::kFloat32 || p == PrecisionType::kBf16, NotImplemented,
              "[oar.inference.Config.set_precision] the CPU runtime runs float32 or bfloat16, got precision ",
              int(p));
    precision_ = p;
  });
}

// ---------------------------------------------------------------- PredictorImpl

namespace detail {

class PredictorImpl {
 public:
  PredictorImpl(const Config& c, std::shared_ptr<const oar::runtime::Model> model)
      : config(c), exec(std::move(model), c.enable_memory_optim(), c.cpu_math_library_num_threads(), c.winograd_conv()) {
    const auto& m = exec.model();
    inputs.resize(m.input_slots.size());
    pending.resize(m.input_slots.size());
    outputs.resize(m.output_slots.size());
  }

  Config config;
  oar::runtime::Executor exec;
  // Note [predictor threads]
  // One call at a time: every entry that reads or writes the per-predictor
  // state (inputs, pending shapes, outputs, the executor's arena and stats)
  // holds this lock, so a predictor used from several threads at once is
  // serialised rather than corrupted; clones share the weights and are the
  // way to run in parallel. Recursive because entries call each other.
  mutable std::recursive_mutex mu;
  using Lock = std::lock_guard<std::recursive_mutex>;
  std::vector<oar::Tensor> inputs;
  std::vector<std::optional<oar::Dims>> pending;  // shapes given to Reshape
  std::vector<oar::Tensor> outputs;

  const oar::runtime::Model& model() const { return exec.model(); }

  void check_shape(int i, const oar::Dims& shape, const char* api) const {
    const oar::ir::Type& want = model().input_types[size_t(i)];
    const std::string& name = model().input_names[size_t(i)];
    bool ok = shape.size() == want.shape.size();
    for (size_t d = 0; ok && d < shape.size(); ++d)
      ok = shape[d] >= 0 && (want.shape[d] == oar::ir::kDynamic || want.shape[d] == shape[d]);
    OAR_CHECK(ok, Value, "[", api, "] input '", name, "' expects shape ", want.str(), " (-1: any size), got ",
              oar::ops::shape_str(shape));
  }

  void copy_in(int i, const void* data, DType dt) {
    Lock lock(mu);
    const char* api = "oar.inference.Tensor.copy_from_cpu";
    const oar::ir::Type& want = model().input_types[size_t(i)];
    const std::string& name = model().input_names[size_t(i)];
    OAR_CHECK(dt == want.dtype, Type, "[", api, "] input '", name, "' holds ", oar::dtype_name(want.dtype),
              ", got ", oar::dtype_name(dt), " data");
    oar::Dims shape;
    if (pending[size_t(i)]) {
      shape = *pending[size_t(i)];
    } else {
      OAR_CHECK(!want.is_dynamic(), Value, "[", api, "] input '", name, "' has dynamic dims (", want.str(),
                "); call reshape() with its shape first");
      shape = want.shape;
    }
    check_shape(i, shape, api);
    oar::Tensor t = oar::empty_tensor(shape, dt);
    const size_t n = size_t(t.numel()) * t.itemsize();
    if (n) {
      OAR_CHECK(data, Value, "[", api, "] input '", name, "': data is null");
      std::memcpy(t.raw_data(), data, n);
    }
    inputs[size_t(i)] = std::move(t);
  }

  void copy_out(const oar::Tensor& t, bool input, int i, void* data, DType dt) const {
    Lock lock(mu);
    const char* api = "oar.inference.Tensor.copy_to_cpu";
    const std::string& name = input ? model().input_names[size_t(i)] : model().output_names[size_t(i)];
    OAR_CHECK(t.defined(), Runtime, "[", api, "] ", input ? "input '" : "output '", name, "' has no data yet; ",
              input ? "call copy_from_cpu first" : "call Predictor.run first");
    OAR_CHECK(dt == t.dtype(), Type, "[", api, "] '", name, "' holds ", oar::dtype_name(t.dtype()), ", asked for ",
              oar::dtype_name(dt));
    const size_t n = size_t(t.numel()) * t.itemsize();
    if (n) {
      OAR_CHECK(data, Value, "[", api, "] '", name, "': data is null");
      std::memcpy(data, t.raw_data(), n);  // inputs and outputs are contiguous and own their buffers
    }
  }

  void run() {
    Lock lock(mu);
    const char* api = "oar.inference.Predictor.run";
    for (size_t i = 0; i < inputs.size(); ++i)
      OAR_CHECK(inputs[i].defined(), Value, "[", api, "] input '", model().input_names[i],
                "' has no data; call copy_from_cpu on its handle first");
    for (auto& o : outputs) o = oar::Tensor();
    std::vector<oar::Tensor> outs = exec.run(inputs, api);
    for (size_t i = 0; i < outs.size(); ++i) outputs[i] = std::move(outs[i]);
  }
};

}  // namespace detail

// ---------------------------------------------------------------- Tensor

namespace {

int find_name(const std::vector<std::string>& names, const std::string& name, const char* api, const char* what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return int(i);
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "'" : ", '") + n + "'";
  fail(oar::ErrorKind::Value, "[", api, "] no ", what, " named '", name, "'; the model's ", what, "s are ", all);
}

}  // namespace

void Tensor::Reshape(const std::vector<int>& shape) {
  guarded([&] {
    OAR_CHECK(input_, Value, "[oar.inference.Tensor.reshape] '", name_, "' is an output; only inputs are reshaped");
    oar::Dims d;
    for (int s : shape) d.push_back(s);
    p_->check_shape(index_, d, "oar.inference.Tensor.reshape");
    detail::PredictorImpl::Lock lock(p_->mu);
    p_->pending[size_t(index_)] = d;
  });
}

void Tensor::CopyFromCpu(const void* data, DataType dtype) {
  guarded([&] {
    OAR_CHECK(input_, Value, "[oar.inference.Tensor.copy_from_cpu] '", name_, "' is an output");
    p_->copy_in(index_, data, to_dtype(dtype));
  });
}

void Tensor::CopyFromCpu(const void* data, DataType dtype, const std::vector<int>& shape) {
  guarded([&] {
    const char* api = "oar.inference.Tensor.copy_from_cpu";
    OAR_CHECK(input_, Value, "[", api, "] '", name_, "' is an output");
    oar::Dims d;
    for (int s : shape) d.push_back(s);
    p_->check_shape(index_, d, api);
    detail::PredictorImpl::Lock lock(p_->mu);
    p_->pending[size_t(index_)] = d;
    p_->copy_in(index_, data, to_dtype(dtype));
  });
}

void Tensor::CopyToCpu(void* data, DataType dtype) const {
  guarded([&] {
    detail::PredictorImpl::Lock lock(p_->mu);
    const oar::Tensor& t = input_ ? p_->inputs[size_t(index_)] : p_->outputs[size_t(index_)];
    p_->copy_out(t, input_, index_, data, to_dtype(dtype));
  });
}

namespace {
template <typename T> DataType data_type_of();
template <> DataType data_type_of<float>() { return DataType::FLOAT32; }
template <> DataType data_type_of<double>() { return DataType::FLOAT64; }
template <> DataType data_type_of<int64_t>() { return DataType::INT64; }
template <> DataType data_type_of<int32_t>() { return DataType::INT32; }
template <> DataType data_type_of<int16_t>() { return DataType::INT16; }
template <> DataType data_type_of<int8_t>() { return DataType::INT8; }
template <> DataType data_type_of<uint8_t>() { return DataType::UINT8; }
template <> DataType data_type_of<bool>() { return DataType::BOOL; }
}  // namespace

template <typename T> void Tensor::CopyFromCpu(const T* data) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    // 16-bit float bits: the input's own dtype says which.
    DataType t = type();
    if (t != DataType::FLOAT16 && t != DataType::BFLOAT16) t = DataType::FLOAT16;  // reports the mismatch
    CopyFromCpu(static_cast<const void*>(data), t);
  } else {
    CopyFromCpu(static_cast<const void*>(data), data_type_of<T>());
  }
}

template <typename T> void Tensor::CopyToCpu(T* data) const {
  if constexpr (std::is_same_v<T, uint16_t>) {
    DataType t = type();
    if (t != DataType::FLOAT16 && t != DataType::BFLOAT16) t = DataType::FLOAT16;
    CopyToCpu(static_cast<void*>(data), t);
  } else {
    CopyToCpu(static_cast<void*>(data), data_type_of<T>());
  }
}

#define OAR_INFER_COPY(T)                                \
  template void Tensor::CopyFromCpu<T>(const T* data);   \
  template void Tensor::CopyToCpu<T>(T * data) const;
OAR_INFER_COPY(float)
OAR_INFER_COPY(double)
OAR_INFER_COPY(int64_t)
OAR_INFER_COPY(int32_t)
OAR_INFER_COPY(int16_t)
OAR_INFER_COPY(int8_t)
OAR_INFER_COPY(uint8_t)
OAR_INFER_COPY(uint16_t)
OAR_INFER_COPY(bool)
#undef OAR_INFER_COPY

std::vector<int> Tensor::shape() const {
  return guarded([&] {
    detail::PredictorImpl::Lock lock(p_->mu);
    const oar::Tensor& t = input_ ? p_->inputs[size_t(index_)] : p_->outputs[size_t(index_)];
    oar::Dims d;
    if (input_ && p_->pending[size_t(index_)]) d = *p_->pending[size_t(index_)];
    else if (t.defined()) d = t.shape();
    else if (input_) d = p_->model().input_types[size_t(index_)].shape;
    else {
      // Before a run: the traced type (-1 for a dynamic dim).
      d = p_->model().program->outputs()[size_t(index_)].value->type().shape;
    }
    std::vector<int> out;
    for (int64_t v : d) out.push_back(int(v));
    return out;
  });
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int d : shape()) n *= d < 0 ? 0 : d;
  return n;
}

DataType Tensor::type() const {
  return guarded([&] {
    DType dt = input_ ? p_->model().input_types[size_t(index_)].dtype
                      : p_->model().program->outputs()[size_t(index_)].value->type().dtype;
    return from_dtype(dt, "oar.inference.Tensor.type");
  });
}

// ---------------------------------------------------------------- Predictor

Predictor::Predictor(const Config& config) {
  guarded([&] {
    const char* api = "oar.inference.create_predictor";
    OAR_CHECK(!config.prog_file().empty(), Value, "[", api, "] the Config names no model; pass the model prefix "
              "given to oar.jit.save (or the .json and .safetensors files)");
    oar::runtime::ModelOptions opt;
    opt.ir_optim = config.ir_optim();
    opt.bf16 = config.precision() == PrecisionType::kBf16;
    opt.deleted_passes = config.deleted_passes();
    auto model = oar::runtime::load_model(config.prog_file(), config.params_file(), opt, api);
    impl_ = std::make_shared<detail::PredictorImpl>(config, std::move(model));
  });
}

Predictor::~Predictor() = default;

std::vector<std::string> Predictor::GetInputNames() const { return impl_->model().input_names; }
std::vector<std::string> Predictor::GetOutputNames() const { return impl_->model().output_names; }

std::unique_ptr<Tensor> Predictor::GetInputHandle(const std::string& name) {
  return guarded([&] {
    int i = find_name(impl_->model().input_names, name, "oar.inference.Predictor.get_input_handle", "input");
    return std::unique_ptr<Tensor>(new Tensor(impl_, i, true, name));
  });
}

std::unique_ptr<Tensor> Predictor::GetOutputHandle(const std::string& name) {
  return guarded([&] {
    int i = find_name(impl_->model().output_names, name, "oar.inference.Predictor.get_output_handle", "output");
    return std::unique_ptr<Tensor>(new Tensor(impl_, i, false, name));
  });
}

bool Predictor::Run() {
  guarded([&] { impl_->run(); });
  return true;
}

std::unique_ptr<Predictor> Predictor::Clone() {
  return guarded([&] {
    auto impl = std::make_shared<detail::PredictorImpl>(impl_->config, impl_->exec.shared_model());
    return std::unique_ptr<Predictor>(new Predictor(std::move(impl)));
  });
}

void Predictor::ClearIntermediateTensor() {
  detail::PredictorImpl::Lock lock(impl_->mu);
  impl_->exec.release_arena();
}

uint64_t Predictor::TryShrinkMemory() {
  detail::PredictorImpl::Lock lock(impl_->mu);
  return uint64_t(impl_->exec.release_arena());
}

MemoryStats Predictor::GetMemoryStats() const {
  detail::PredictorImpl::Lock lock(impl_->mu);
  const oar::runtime::RunStats& s = impl_->exec.stats();
  MemoryStats m;
  m.weight_bytes = impl_->model().weight_bytes;
  m.intermediate_peak_bytes = s.intermediate_peak_bytes;
  m.planned_bytes = s.planned_bytes;
  m.unplanned_bytes = s.unplanned_bytes;
  m.live_lower_bound_bytes = s.live_lower_bound_bytes;
  m.output_bytes = s.output_bytes;
  m.memory_optim = impl_->config.enable_memory_optim();
  return m;
}

uintptr_t Predictor::WeightsId() const { return reinterpret_cast<uintptr_t>(&impl_->model()); }

const Config& Predictor::config() const { return impl_->config; }

std::shared_ptr<Predictor> CreatePredictor(const Config& config) { return std::make_shared<Predictor>(config); }

std::string GetVersion() { return "oar 0.1 (inference runtime, program format 1)"; }

}  // namespace oar_infer

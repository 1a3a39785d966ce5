// The oar inference runtime: load a model saved by oar.jit.save and run it
// from C++, without Python. The names follow Paddle Inference
// (paddle_infer::Config, CreatePredictor, GetInputHandle, CopyFromCpu, Run,
// CopyToCpu, Clone), so code written against it ports by renaming the
// namespace.
//
//   oar_infer::Config config("model");          // model.json + model.safetensors
//   config.SetCpuMathLibraryNumThreads(4);
//   auto predictor = oar_infer::CreatePredictor(config);
//   auto x = predictor->GetInputHandle(predictor->GetInputNames()[0]);
//   x->Reshape({1, 3, 224, 224});
//   x->CopyFromCpu(data.data());
//   predictor->Run();
//   auto y = predictor->GetOutputHandle(predictor->GetOutputNames()[0]);
//   std::vector<float> out(y->numel());
//   y->CopyToCpu(out.data());
//
// Programs may hold control flow (oar.static.nn.cond, switch_case,
// while_loop, nested to any depth, and PyLayer calls, which run their
// recorded forward): each request runs the branches and iterations its data
// selects, and loops may change shapes from one iteration to the next. A
// loop stops with an error (kRuntime) after the iteration limit that
// oar.static.nn.set_max_loop_iterations sets (1,000,000 by default).
//
// One predictor runs one request at a time; Clone() gives another predictor
// that shares the weights (and the cached memory plans) for another thread.
//
// This header needs only the standard library; the implementation is in
// liboar_inference. Errors are thrown as oar_infer::Error, whose message
// starts with the API name ("[oar.inference.<api>] ...").
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace oar_infer {

enum class PrecisionType { kFloat32 = 0, kHalf = 1, kInt8 = 2, kBf16 = 3 };

enum class DataType { FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT8, BOOL };

// What kind of mistake an error reports (the Python binding maps these to
// ValueError, IndexError, TypeError, NotImplementedError, RuntimeError).
enum class ErrorKind { kValue = 0, kIndex = 1, kType = 2, kNotImplemented = 3, kRuntime = 4 };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

class Config {
 public:
  Config() = default;
  // A model prefix (prefix.json + prefix.safetensors), a program file
  // (x.json), or a folder holding one saved model.
  explicit Config(const std::string& model_dir_or_prefix);
  Config(const std::string& prog_file, const std::string& params_file);

  void SetModel(const std::string& model_dir_or_prefix);
  void SetModel(const std::string& prog_file, const std::string& params_file);
  const std::string& prog_file() const { return prog_file_; }
  const std::string& params_file() const { return params_file_; }
  const std::string& model_dir() const { return model_dir_; }

  // OpenMP threads used by one Run (0: the library default).
  void SetCpuMathLibraryNumThreads(int n);
  int cpu_math_library_num_threads() const { return threads_; }
  // Graph passes (dead code, common subexpressions, constant folding and the
  // fusions registered with the pass manager) before the first run.
  void SwitchIrOptim(bool on = true) { ir_optim_ = on; }
  bool ir_optim() const { return ir_optim_; }
  // Leaves one graph pass out (a name from pass_names(); an unknown name
  // throws); the others still run while IR optimisation is on.
  void DeletePass(const std::string& name);
  const std::vector<std::string>& deleted_passes() const { return deleted_passes_; }
  // The graph passes, in the order they run.
  static std::vector<std::string> pass_names();
  // Intermediate results share one arena planned by liveness.
  void EnableMemoryOptim(bool on = true) { memory_optim_ = on; }
  bool enable_memory_optim() const { return memory_optim_; }
  // Float32 3x3 stride-1 convolutions of 32 channels and more as Winograd
  // where oneDNN has it (AVX-512): about half the time of the direct
  // algorithm, with errors of the same size against an exact result, but
  // not bit for bit what eager code gives. On by default.
  void SwitchWinogradConv(bool on = true) { winograd_conv_ = on; }
  bool winograd_conv() const { return winograd_conv_; }
  // Matrix products and convolutions in bfloat16 (weights converted once at
  // load), everything else and the outputs in float32.
  void EnableMkldnnBfloat16() { precision_ = PrecisionType::kBf16; }
  bool mkldnn_bfloat16_enabled() const { return precision_ == PrecisionType::kBf16; }
  // kFloat32 or kBf16; other precisions throw NotImplemented.
  void SetPrecision(PrecisionType p);
  PrecisionType precision() const { return precision_; }
  // Accepted for Paddle compatibility; the CPU kernels always use oneDNN
  // where they have it, and the runtime logs nothing.
  void EnableMKLDNN() {}
  void DisableGlogInfo() {}

 private:
  std::string prog_file_, params_file_, model_dir_;
  int threads_ = 0;
  bool ir_optim_ = true;
  std::vector<std::string> deleted_passes_;
  bool memory_optim_ = true;
  bool winograd_conv_ = true;
  PrecisionType precision_ = PrecisionType::kFloat32;
};

namespace detail {
class PredictorImpl;
}

// A named input or output of a predictor. Handles stay valid while the
// predictor lives; an output handle reads the result of the latest Run.
class Tensor {
 public:
  // Sets the shape of the next CopyFromCpu (inputs only); -1 is not allowed.
  void Reshape(const std::vector<int>& shape);
  // Copies numel() elements of the input's dtype from host memory; T must
  // match the input's DataType (float, double, int64_t, int32_t, int16_t,
  // int8_t, uint8_t, bool; uint16_t for bfloat16/float16 bits).
  template <typename T> void CopyFromCpu(const T* data);
  // Copies the output (or the input last given) to host memory.
  template <typename T> void CopyToCpu(T* data) const;
  // Untyped forms, `dtype` naming the element type of `data`.
  void CopyFromCpu(const void* data, DataType dtype);
  // Reshape and copy in one call, for data that carries its shape (arrays).
  void CopyFromCpu(const void* data, DataType dtype, const std::vector<int>& shape);
  void CopyToCpu(void* data, DataType dtype) const;

  std::vector<int> shape() const;
  int64_t numel() const;
  DataType type() const;
  const std::string& name() const { return name_; }

 private:
  friend class Predictor;
  Tensor(std::shared_ptr<detail::PredictorImpl> p, int index, bool input, std::string name)
      : p_(std::move(p)), index_(index), input_(input), name_(std::move(name)) {}
  std::shared_ptr<detail::PredictorImpl> p_;
  int index_;
  bool input_;
  std::string name_;
};

// Bytes the runtime holds, for the latest Run.
struct MemoryStats {
  int64_t weight_bytes = 0;              // parameters (shared by clones)
  int64_t intermediate_peak_bytes = 0;   // peak of intermediate results during the latest Run
  int64_t planned_bytes = 0;             // arena size of the plan for the latest input shapes
  int64_t unplanned_bytes = 0;           // the same intermediates, each in its own buffer (no reuse)
  int64_t live_lower_bound_bytes = 0;    // most intermediate bytes live at one time
  int64_t output_bytes = 0;              // the outputs of the latest Run
  bool memory_optim = false;
};

class Predictor {
 public:
  explicit Predictor(const Config& config);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  std::vector<std::string> GetInputNames() const;
  std::vector<std::string> GetOutputNames() const;
  std::unique_ptr<Tensor> GetInputHandle(const std::string& name);
  std::unique_ptr<Tensor> GetOutputHandle(const std::string& name);
  // Runs the program on the inputs copied in; returns true (errors throw).
  bool Run();
  // Another predictor over the same weights, with its own inputs, outputs
  // and buffers, for running in another thread.
  std::unique_ptr<Predictor> Clone();
  // Releases the buffers of intermediate results (kept between runs for speed).
  void ClearIntermediateTensor();
  uint64_t TryShrinkMemory();

  MemoryStats GetMemoryStats() const;
  // Identifies the weights in memory: equal for a predictor and its clones.
  uintptr_t WeightsId() const;
  const Config& config() const;

 private:
  explicit Predictor(std::shared_ptr<detail::PredictorImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::PredictorImpl> impl_;
};

std::shared_ptr<Predictor> CreatePredictor(const Config& config);

// The oar version the library was built from.
std::string GetVersion();

}  // namespace oar_infer

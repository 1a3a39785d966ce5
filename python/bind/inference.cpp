// Bindings of the C++ inference runtime (include/oar/inference.h) for
// oar.inference. No logic beyond converting arguments: the Python classes in
// oar/inference wrap these.
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstring>

#include "common.h"
#include "oar/inference.h"

namespace oar::bind {
namespace {

using nb::arg;
using oar_infer::DataType;

DataType from_dl(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  auto c = C(d.code);
  if (c == C::Bool) return DataType::BOOL;
  if (c == C::Float && d.bits == 32) return DataType::FLOAT32;
  if (c == C::Float && d.bits == 64) return DataType::FLOAT64;
  if (c == C::Float && d.bits == 16) return DataType::FLOAT16;
  if (c == C::Bfloat && d.bits == 16) return DataType::BFLOAT16;
  if (c == C::Int && d.bits == 64) return DataType::INT64;
  if (c == C::Int && d.bits == 32) return DataType::INT32;
  if (c == C::Int && d.bits == 16) return DataType::INT16;
  if (c == C::Int && d.bits == 8) return DataType::INT8;
  if (c == C::UInt && d.bits == 8) return DataType::UINT8;
  if (c == C::UInt && d.bits == 16) return DataType::BFLOAT16;  // bfloat16 bits (NumPy has no bfloat16)
  fail(ErrorKind::Type, "[oar.inference.Tensor.copy_from_cpu] unsupported array dtype (code ", int(d.code), ", ",
       int(d.bits), " bits)");
}

nb::dlpack::dtype to_dl(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return nb::dtype<float>();
    case DataType::FLOAT64: return nb::dtype<double>();
    case DataType::INT64: return nb::dtype<int64_t>();
    case DataType::INT32: return nb::dtype<int32_t>();
    case DataType::INT16: return nb::dtype<int16_t>();
    case DataType::INT8: return nb::dtype<int8_t>();
    case DataType::UINT8: return nb::dtype<uint8_t>();
    case DataType::BOOL: return nb::dtype<bool>();
    case DataType::FLOAT16: return {uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
    case DataType::BFLOAT16: return nb::dtype<uint16_t>();  // raw bits; the Python side widens them
  }
  return nb::dtype<float>();
}

size_t item_size(DataType t) {
  switch (t) {
    case DataType::FLOAT64: case DataType::INT64: return 8;
    case DataType::FLOAT32: case DataType::INT32: return 4;
    case DataType::FLOAT16: case DataType::BFLOAT16: case DataType::INT16: return 2;
    default: return 1;
  }
}

const char* type_name(DataType t) {
  switch (t) {
    case DataType::FLOAT32: return "float32";
    case DataType::FLOAT64: return "float64";
    case DataType::FLOAT16: return "float16";
    case DataType::BFLOAT16: return "bfloat16";
    case DataType::INT64: return "int64";
    case DataType::INT32: return "int32";
    case DataType::INT16: return "int16";
    case DataType::INT8: return "int8";
    case DataType::UINT8: return "uint8";
    case DataType::BOOL: return "bool";
  }
  return "?";
}

void bind_inference(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const oar_infer::Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case oar_infer::ErrorKind::kValue: type = PyExc_ValueError; break;
        case oar_infer::ErrorKind::kIndex: type = PyExc_IndexError; break;
        case oar_infer::ErrorKind::kType: type = PyExc_TypeError; break;
        case oar_infer::ErrorKind::kNotImplemented: type = PyExc_NotImplementedError; break;
        default: break;
      }
      // Messages may quote bytes of a corrupted file: never fail on invalid UTF-8.
      const char* msg = e.what();
      PyObject* text = PyUnicode_DecodeUTF8(msg, Py_ssize_t(std::strlen(msg)), "backslashreplace");
      if (!text) {
        PyErr_Clear();
        text = PyUnicode_FromString("[oar.inference] (unprintable error message)");
      }
      PyErr_SetObject(type, text);
      Py_XDECREF(text);
    }
  });

  using oar_infer::Config;
  nb::class_<Config>(m, "_InferConfig")
      .def(nb::init<>())
      .def("set_model", nb::overload_cast<const std::string&>(&Config::SetModel), arg("model"))
      .def("set_model", nb::overload_cast<const std::string&, const std::string&>(&Config::SetModel),
           arg("prog_file"), arg("params_file"))
      .def("prog_file", &Config::prog_file)
      .def("params_file", &Config::params_file)
      .def("model_dir", &Config::model_dir)
      .def("set_cpu_math_library_num_threads", &Config::SetCpuMathLibraryNumThreads, arg("n"))
      .def("cpu_math_library_num_threads", &Config::cpu_math_library_num_threads)
      .def("switch_ir_optim", &Config::SwitchIrOptim, arg("on"))
      .def("ir_optim", &Config::ir_optim)
      .def("delete_pass", &Config::DeletePass, arg("name"))
      .def("deleted_passes", &Config::deleted_passes)
      .def_static("pass_names", &Config::pass_names)
      .def("enable_memory_optim", &Config::EnableMemoryOptim, arg("on"))
      .def("memory_optim_enabled", &Config::enable_memory_optim)
      .def("switch_winograd_conv", &Config::SwitchWinogradConv, arg("on"))
      .def("winograd_conv", &Config::winograd_conv)
      .def("set_precision", [](Config& c, int p) { c.SetPrecision(oar_infer::PrecisionType(p)); }, arg("precision"))
      .def("precision", [](const Config& c) { return int(c.precision()); });

  using oar_infer::Tensor;
  nb::class_<Tensor>(m, "_InferTensor")
      .def("name", &Tensor::name)
      .def("shape", &Tensor::shape)
      .def("type", [](const Tensor& t) { return std::string(type_name(t.type())); })
      .def("reshape", [](Tensor& t, const std::vector<int>& shape) { t.Reshape(shape); }, arg("shape"))
      .def("copy_from_cpu", [](Tensor& t, nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> a) {
        std::vector<int> shape;
        for (size_t i = 0; i < a.ndim(); ++i) {
          OAR_CHECK(a.shape(i) <= size_t(INT32_MAX), Value, "[oar.inference.Tensor.copy_from_cpu] dim ", i,
                    " of size ", a.shape(i), " is too large");
          shape.push_back(int(a.shape(i)));
        }
        t.CopyFromCpu(a.data(), from_dl(a.dtype()), shape);
      }, arg("data"))
      .def("copy_to_cpu", [](const Tensor& t) {
        DataType dt = t.type();
        std::vector<int> shape = t.shape();
        std::vector<size_t> dims;
        size_t n = 1;
        for (int d : shape) {
          dims.push_back(size_t(d < 0 ? 0 : d));
          n *= dims.back();
        }
        char* buf = new char[std::max<size_t>(n * item_size(dt), 1)];
        nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<char*>(p); });
        t.CopyToCpu(buf, dt);
        return nb::ndarray<nb::numpy>(buf, dims.size(), dims.data(), owner, nullptr, to_dl(dt));
      });

  using oar_infer::Predictor;
  nb::class_<Predictor>(m, "_InferPredictor")
      .def("__init__", [](Predictor* self, const Config& c) {
        nb::gil_scoped_release release;  // loading reads files and may run passes
        new (self) Predictor(c);
      }, arg("config"))
      .def("get_input_names", &Predictor::GetInputNames)
      .def("get_output_names", &Predictor::GetOutputNames)
      .def("get_input_handle", &Predictor::GetInputHandle, arg("name"))
      .def("get_output_handle", &Predictor::GetOutputHandle, arg("name"))
      // Other threads (clones) run at the same time while one runs.
      .def("run", &Predictor::Run, nb::call_guard<nb::gil_scoped_release>())
      .def("clone", &Predictor::Clone)
      .def("clear_intermediate_tensor", &Predictor::ClearIntermediateTensor)
      .def("try_shrink_memory", &Predictor::TryShrinkMemory)
      .def("weights_id", &Predictor::WeightsId)
      .def("memory_stats", [](const Predictor& p) {
        oar_infer::MemoryStats s = p.GetMemoryStats();
        nb::dict d;
        d["weight_bytes"] = s.weight_bytes;
        d["intermediate_peak_bytes"] = s.intermediate_peak_bytes;
        d["planned_bytes"] = s.planned_bytes;
        d["unplanned_bytes"] = s.unplanned_bytes;
        d["live_lower_bound_bytes"] = s.live_lower_bound_bytes;
        d["output_bytes"] = s.output_bytes;
        d["memory_optim"] = s.memory_optim;
        return d;
      });
  m.def("_infer_version", &oar_infer::GetVersion);
}

Binder b(bind_inference);

}  // namespace
}  // namespace oar::bind

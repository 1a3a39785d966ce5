// oar-bench: latency percentiles and throughput of a saved model on the C++
// inference runtime.
//
//   oar-bench MODEL --shape NAME:1x3x224x224 [--shape ...] [--threads N] [--warmup W] [--iters I]
//             [--bf16] [--no-ir-optim] [--no-memory-optim] [--no-winograd]
//
// Inputs are filled with deterministic values (floats sin(0.1 i), integers
// i % 7). Inputs with static shapes need no --shape. Throughput counts
// samples as the first dim of the first input (the batch).
#include <oar/inference.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "oar-bench: " << why << "\n"
            << "usage: oar-bench MODEL --shape NAME:1x3x224x224 [--threads N] [--warmup W] [--iters I]\n"
            << "                 [--bf16] [--no-ir-optim] [--no-memory-optim] [--no-winograd]\n";
  std::exit(2);
}

int to_int(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    int v = std::stoi(s, &used);
    if (used != s.size() || v < 0) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    usage(what + " expects a non-negative integer, got '" + s + "'");
  }
}

std::vector<int> parse_dims(const std::string& s) {
  std::vector<int> d;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) d.push_back(to_int(part, "--shape"));
  if (d.empty()) usage("--shape expects NAME:AxBxC");
  return d;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

void fill(oar_infer::Tensor& h, const std::vector<int>& shape) {
  size_t n = 1;
  for (int d : shape) n *= size_t(d);
  h.Reshape(shape);
  switch (h.type()) {
    case oar_infer::DataType::FLOAT32: {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.1f * float(i));
      h.CopyFromCpu(v.data());
      break;
    }
    case oar_infer::DataType::INT64: {
      std::vector<int64_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = int64_t(i % 7);
      h.CopyFromCpu(v.data());
      break;
    }
    case oar_infer::DataType::INT32: {
      std::vector<int32_t> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = int32_t(i % 7);
      h.CopyFromCpu(v.data());
      break;
    }
    default:
      usage("input '" + h.name() + "' has a dtype oar-bench does not fill (float32, int64, int32)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") usage("no model given");
  std::string model = argv[1];
  oar_infer::Config config(model);
  std::map<std::string, std::vector<int>> shapes;
  int warmup = 5, iters = 50, threads = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--shape") {
      std::string v = next();
      size_t c = v.rfind(':');
      if (c == std::string::npos) usage("--shape expects NAME:1x3x224x224");
      shapes[v.substr(0, c)] = parse_dims(v.substr(c + 1));
    } else if (a == "--threads") {
      threads = to_int(next(), "--threads");
    } else if (a == "--warmup") {
      warmup = to_int(next(), "--warmup");
    } else if (a == "--iters") {
      iters = to_int(next(), "--iters");
    } else if (a == "--bf16") {
      config.EnableMkldnnBfloat16();
    } else if (a == "--no-ir-optim") {
      config.SwitchIrOptim(false);
    } else if (a == "--no-memory-optim") {
      config.EnableMemoryOptim(false);
    } else if (a == "--no-winograd") {
      config.SwitchWinogradConv(false);
    } else {
      usage("unknown argument " + a);
    }
  }
  if (iters < 1) usage("--iters must be at least 1");
  config.SetCpuMathLibraryNumThreads(threads);
  try {
    auto predictor = oar_infer::CreatePredictor(config);
    int64_t batch = 1;
    std::string shape_text;
    bool first = true;
    for (const std::string& name : predictor->GetInputNames()) {
      auto h = predictor->GetInputHandle(name);
      std::vector<int> shape = shapes.count(name) ? shapes[name] : h->shape();
      for (int d : shape)
        if (d < 0) usage("input '" + name + "' has a dynamic dim: give --shape " + name + ":AxB...");
      fill(*h, shape);
      if (first && !shape.empty()) batch = shape[0];
      first = false;
      shape_text += (shape_text.empty() ? "" : " ") + name + ":";
      for (size_t d = 0; d < shape.size(); ++d) shape_text += (d ? "x" : "") + std::to_string(shape[d]);
      shapes.erase(name);
    }
    if (!shapes.empty()) usage("--shape names an input the model does not have: " + shapes.begin()->first);
    for (int i = 0; i < warmup; ++i) predictor->Run();
    std::vector<double> ms;
    auto t_all = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      predictor->Run();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
    oar_infer::MemoryStats mem = predictor->GetMemoryStats();
    double mean = 0;
    for (double v : ms) mean += v / double(ms.size());
    std::printf("model: %s\n", model.c_str());
    std::printf("inputs: %s\n", shape_text.c_str());
    std::printf("threads: %d  precision: %s  ir_optim: %s  memory_optim: %s  winograd: %s\n", threads,
                config.mkldnn_bfloat16_enabled() ? "bfloat16" : "float32", config.ir_optim() ? "on" : "off",
                config.enable_memory_optim() ? "on" : "off", config.winograd_conv() ? "on" : "off");
    std::printf("warmup: %d  iters: %d\n", warmup, iters);
    std::printf("latency_ms: p50 %.3f  p90 %.3f  p99 %.3f  mean %.3f  min %.3f\n", percentile(ms, 0.5),
                percentile(ms, 0.9), percentile(ms, 0.99), mean, *std::min_element(ms.begin(), ms.end()));
    std::printf("throughput: %.2f samples/s (batch %lld)\n", double(batch) * double(iters) / total_s,
                static_cast<long long>(batch));
    std::printf("memory_bytes: weights %lld  intermediate_peak %lld  planned %lld  without_planner %lld\n",
                static_cast<long long>(mem.weight_bytes), static_cast<long long>(mem.intermediate_peak_bytes),
                static_cast<long long>(mem.planned_bytes), static_cast<long long>(mem.unplanned_bytes));
  } catch (const oar_infer::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

// Runs a model saved by oar.jit.save with the C++ inference runtime, no Python.
//
//   oar_infer_example MODEL [--input NAME=FILE.npy]... [--shape NAME:1x3x224x224]...
//                     [--out PREFIX] [--threads N] [--bf16] [--no-ir-optim] [--no-memory-optim]
//
// MODEL is the prefix given to oar.jit.save (MODEL.json + MODEL.safetensors).
// Inputs come from .npy files (C order, little-endian), or are filled with
// deterministic values (floats: sin(0.1 * i); integers: i % 7) for the shape
// given by --shape (needed for dynamic dims). Each output is printed (shape,
// sum, first values) and, with --out, written to PREFIX_<name>.npy.
//
// It needs only the public header and the runtime library:
//   g++ -std=c++17 -I include examples/cpp/infer.cpp -L build/release -loar_inference
#include <oar/inference.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Array {
  oar_infer::DataType dtype = oar_infer::DataType::FLOAT32;
  std::vector<int> shape;
  std::vector<char> bytes;
};

size_t item_size(oar_infer::DataType t) {
  using D = oar_infer::DataType;
  switch (t) {
    case D::FLOAT64: case D::INT64: return 8;
    case D::FLOAT32: case D::INT32: return 4;
    case D::FLOAT16: case D::BFLOAT16: case D::INT16: return 2;
    default: return 1;
  }
}

const char* npy_descr(oar_infer::DataType t) {
  using D = oar_infer::DataType;
  switch (t) {
    case D::FLOAT32: return "<f4";
    case D::FLOAT64: return "<f8";
    case D::FLOAT16: return "<f2";
    case D::INT64: return "<i8";
    case D::INT32: return "<i4";
    case D::INT16: return "<i2";
    case D::INT8: return "|i1";
    case D::UINT8: return "|u1";
    case D::BOOL: return "|b1";
    case D::BFLOAT16: return "<u2";  // NumPy has no bfloat16: the raw bits
  }
  return "<f4";
}

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "oar_infer_example: " << msg << "\n";
  std::exit(2);
}

// A minimal .npy reader: version 1-3 headers, C order, the dtypes above.
Array read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) die("cannot open " + path);
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) die(path + " is not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    f.read(reinterpret_cast<char*>(b), 2);
    hlen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    f.read(reinterpret_cast<char*>(b), 4);
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  if (hlen > (1u << 20)) die(path + ": .npy header too large");
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  auto field = [&](const std::string& key) {
    size_t p = header.find("'" + key + "'");
    if (p == std::string::npos) die(path + ": .npy header has no " + key);
    return header.substr(header.find(':', p) + 1);
  };
  Array a;
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  bool found = false;
  for (auto t : {oar_infer::DataType::FLOAT32, oar_infer::DataType::FLOAT64, oar_infer::DataType::FLOAT16,
                 oar_infer::DataType::INT64, oar_infer::DataType::INT32, oar_infer::DataType::INT16,
                 oar_infer::DataType::INT8, oar_infer::DataType::UINT8, oar_infer::DataType::BOOL})
    if (descr == npy_descr(t)) { a.dtype = t; found = true; }
  if (!found) die(path + ": unsupported .npy dtype " + descr);
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) die(path + ": Fortran order");
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::stringstream ss(shape);
  std::string dim;
  size_t n = 1;
  while (std::getline(ss, dim, ','))
    if (dim.find_first_of("0123456789") != std::string::npos) {
      a.shape.push_back(std::stoi(dim));
      n *= size_t(a.shape.back());
    }
  a.bytes.resize(n * item_size(a.dtype));
  if (!f.read(a.bytes.data(), std::streamsize(a.bytes.size()))) die(path + ": truncated data");
  return a;
}

void write_npy(const std::string& path, oar_infer::DataType t, const std::vector<int>& shape, const char* data,
               size_t nbytes) {
  std::string dict = std::string("{'descr': '") + npy_descr(t) + "', 'fortran_order': False, 'shape': (";
  for (int d : shape) dict += std::to_string(d) + ", ";
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  dict += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t hl = uint16_t(dict.size());
  char hb[2] = {char(hl & 0xff), char(hl >> 8)};
  f.write(hb, 2);
  f << dict;
  f.write(data, std::streamsize(nbytes));
  if (!f) die("cannot write " + path);
}

std::vector<int> parse_dims(const std::string& s) {
  std::vector<int> d;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) d.push_back(std::stoi(part));
  return d;
}

Array deterministic(oar_infer::DataType t, const std::vector<int>& shape) {
  Array a;
  a.dtype = t;
  a.shape = shape;
  size_t n = 1;
  for (int d : shape) n *= size_t(d);
  a.bytes.resize(n * item_size(t));
  for (size_t i = 0; i < n; ++i) {
    using D = oar_infer::DataType;
    char* p = a.bytes.data() + i * item_size(t);
    if (t == D::FLOAT32) { float v = std::sin(0.1f * float(i)); std::memcpy(p, &v, 4); }
    else if (t == D::FLOAT64) { double v = std::sin(0.1 * double(i)); std::memcpy(p, &v, 8); }
    else if (t == D::INT64) { int64_t v = int64_t(i % 7); std::memcpy(p, &v, 8); }
    else if (t == D::INT32) { int32_t v = int32_t(i % 7); std::memcpy(p, &v, 4); }
    else die("deterministic inputs cover float32/float64/int64/int32; give a .npy file");
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: oar_infer_example MODEL [--input NAME=FILE.npy] [--shape NAME:1x3x224x224] [--out PREFIX]\n"
                 "                          [--threads N] [--bf16] [--no-ir-optim] [--no-memory-optim]\n";
    return 2;
  }
  std::map<std::string, std::string> files;
  std::map<std::string, std::vector<int>> shapes;
  std::string out_prefix;
  oar_infer::Config config(argv[1]);
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") {
      std::string v = next();
      size_t eq = v.find('=');
      if (eq == std::string::npos) die("--input expects NAME=FILE.npy");
      files[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "--shape") {
      std::string v = next();
      size_t c = v.rfind(':');
      if (c == std::string::npos) die("--shape expects NAME:1x3x224x224");
      shapes[v.substr(0, c)] = parse_dims(v.substr(c + 1));
    } else if (a == "--out") {
      out_prefix = next();
    } else if (a == "--threads") {
      config.SetCpuMathLibraryNumThreads(std::stoi(next()));
    } else if (a == "--bf16") {
      config.EnableMkldnnBfloat16();
    } else if (a == "--no-ir-optim") {
      config.SwitchIrOptim(false);
    } else if (a == "--no-memory-optim") {
      config.EnableMemoryOptim(false);
    } else {
      die("unknown argument " + a);
    }
  }
  try {
    auto predictor = oar_infer::CreatePredictor(config);
    for (const std::string& name : predictor->GetInputNames()) {
      auto h = predictor->GetInputHandle(name);
      Array a;
      if (files.count(name)) {
        a = read_npy(files[name]);
      } else {
        std::vector<int> shape = shapes.count(name) ? shapes[name] : h->shape();
        for (int d : shape)
          if (d < 0) die("input '" + name + "' has a dynamic dim: give --shape " + name + ":AxB... or --input");
        a = deterministic(h->type(), shape);
      }
      h->Reshape(a.shape);
      h->CopyFromCpu(a.bytes.data(), a.dtype);
    }
    predictor->Run();
    for (const std::string& name : predictor->GetOutputNames()) {
      auto h = predictor->GetOutputHandle(name);
      std::vector<int> shape = h->shape();
      oar_infer::DataType t = h->type();
      std::vector<char> buf(size_t(h->numel()) * item_size(t));
      h->CopyToCpu(buf.data(), t);
      std::cout << name << ": shape [";
      for (size_t d = 0; d < shape.size(); ++d) std::cout << (d ? ", " : "") << shape[d];
      std::cout << "]";
      if (t == oar_infer::DataType::FLOAT32) {
        const float* v = reinterpret_cast<const float*>(buf.data());
        double sum = 0;
        for (int64_t i = 0; i < h->numel(); ++i) sum += v[i];
        std::cout << " sum " << sum << " first";
        for (int64_t i = 0; i < std::min<int64_t>(h->numel(), 5); ++i) std::cout << " " << v[i];
      }
      std::cout << "\n";
      if (!out_prefix.empty()) write_npy(out_prefix + "_" + name + ".npy", t, shape, buf.data(), buf.size());
    }
  } catch (const oar_infer::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

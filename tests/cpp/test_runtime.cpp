// The inference runtime's C++ parts: the strict JSON reader and the
// safetensors reader on malformed input, loading a model from memory, the
// memory planner's placement, and the public API's errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "base/error.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "ir/serialize.h"
#include "ir_test_util.h"
#include "oar/inference.h"
#include "runtime/model.h"
#include "runtime/planner.h"

namespace oar {
namespace {

// A safetensors file: length, header JSON, data.
std::string file_bytes(const std::string& header, const std::string& data, int64_t claimed_len = -1) {
  uint64_t n = claimed_len >= 0 ? uint64_t(claimed_len) : header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.begin(), s.size());
  return s;
}

std::vector<io::NamedTensor> parse(const std::string& bytes) {
  return io::parse_safetensors(std::span<const char>(bytes.data(), bytes.size()), "w.safetensors");
}

// Expects a ValueError naming the file and containing `what`.
void expect_rejected(const std::string& bytes, const std::string& what) {
  try {
    parse(bytes);
    ADD_FAILURE() << "accepted a file that should fail with: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value) << e.what();
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[oar.io.safetensors] w.safetensors: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nexpected to contain: " << what;
  }
}

TEST(Safetensors, ReadsValidFile) {
  std::string h = R"({"b":{"dtype":"I64","shape":[1],"data_offsets":[8,16]},)"
                  R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"oar.format":"1"}})";
  int64_t seven = 7;
  std::string data = floats({1.5f, -2.0f}) + std::string(reinterpret_cast<const char*>(&seven), 8);
  auto ts = parse(file_bytes(h, data));
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].name, "a");  // in data order
  EXPECT_EQ(ts[0].tensor.dtype(), DType::Float32);
  EXPECT_EQ(ts[0].tensor.shape(), (Dims{2}));
  EXPECT_EQ(ts[0].tensor.data<float>()[1], -2.0f);
  EXPECT_EQ(ts[1].tensor.data<int64_t>()[0], 7);
}

TEST(Safetensors, ZeroSizeScalarAndComplex128) {
  std::string h = R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},)"
                  R"("s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
                  R"("c":{"dtype":"F64","shape":[1,2],"data_offsets":[8,24]},)"
                  R"("__metadata__":{"oar.complex128":"[\"c\"]"}})";
  double d[3] = {2.5, 1.0, -1.0};
  auto ts = parse(file_bytes(h, std::string(reinterpret_cast<const char*>(d), 24)));
  ASSERT_EQ(ts.size(), 3u);
  for (const auto& t : ts) {
    if (t.name == "e") {
      EXPECT_EQ(t.tensor.numel(), 0);
    }
    if (t.name == "s") {
      EXPECT_EQ(t.tensor.dim(), 0);
    }
    if (t.name == "c") {
      EXPECT_EQ(t.tensor.dtype(), DType::Complex128);
      EXPECT_EQ(t.tensor.shape(), (Dims{1}));
      EXPECT_EQ(t.tensor.data<complex128>()[0], complex128(1.0, -1.0));
    }
  }
}

TEST(Safetensors, RejectsMalformedFiles) {
  const std::string ok_entry = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string data = floats({1, 2});
  expect_rejected("abc", "8-byte header length");
  expect_rejected(file_bytes("{" + ok_entry + "}", data).substr(0, 20), "runs past the end");
  expect_rejected(file_bytes("{" + ok_entry + "}", data, int64_t(1) << 40), "exceeds the");
  expect_rejected(file_bytes("{" + ok_entry, data), "not valid JSON");
  expect_rejected(file_bytes("[1, 2]", ""), "must begin with '{'");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F99","shape":[2],"data_offsets":[0,8]}})", data), "has dtype 'F99'");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,80]}})", data),
                  "outside the 8-byte data section");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data), "needs 12");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                  "non-negative ints");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})", data),
                  "overlap");
  expect_rejected(file_bytes("{" + ok_entry + "," + ok_entry + "}", data), "duplicate key 'a'");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[2]}})", data), "exactly dtype, shape and data_offsets");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", data),
                  "overflows int64");
  expect_rejected(file_bytes("{" + ok_entry + R"(,"__metadata__":{"oar.format":"9"}})", data), "newer");
  expect_rejected(file_bytes("{" + ok_entry + R"(,"__metadata__":{"k":1}})", data), "map strings to strings");
  // Names that are not UTF-8 are escaped, so that the message is printable text.
  expect_rejected(file_bytes("{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data),
                  "entry name 'a\\xff' is not valid UTF-8");  // escaped, so the message stays printable
  expect_rejected(file_bytes("{\"a\xed\xa0\x80\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data),
                  "is not valid UTF-8");  // a surrogate
  expect_rejected(file_bytes("{\"a\":{\"dtype\":\"F99\",\"shape\":[2],\"data_offsets\":[0,8]}}", data),
                  "entry 'a' has dtype");
  std::string deep = "{\"a\":" + std::string(100, '[');
  expect_rejected(file_bytes(deep, ""), "nesting");
  // The data section must be covered exactly: no trailing byte, no hole.
  expect_rejected(file_bytes("{" + ok_entry + "}", data + "x"), "1 trailing bytes");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data), "hole of 4 bytes");
  expect_rejected(file_bytes(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})",
                             std::string(4, '\0')),
                  "rank 17");
}

TEST(Safetensors, RandomCorruptionsNeverCrash) {
  std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"oar.format":"1"}})";
  std::string good = file_bytes(h, floats({1, 2}));
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string b = good;
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) b[rng() % b.size()] = char(rng() % 256);
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    try {
      parse(b);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
    }
  }
}

TEST(Safetensors, ReadsFileSharingOneBuffer) {
  char path[] = "/tmp/oar_st_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string h = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  h += std::string((8 - h.size() % 8) % 8, ' ');
  std::string bytes = file_bytes(h, floats({3, 4, 5}));
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  close(fd);
  auto ts = io::read_safetensors(path, "oar.test");
  std::remove(path);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[1].tensor.data<float>()[0], 5.0f);
  // Aligned entries point into the one buffer the file was read into.
  EXPECT_EQ(static_cast<char*>(ts[1].tensor.raw_data()) - static_cast<char*>(ts[0].tensor.raw_data()), 8);
  try {
    io::read_safetensors("/nonexistent/w.safetensors", "oar.test");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/w.safetensors"), std::string::npos);
  }
}

// ---------------------------------------------------------------- planner

bool overlap_in_time(const runtime::BufferRequest& a, const runtime::BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

void check_plan(const std::vector<runtime::BufferRequest>& reqs, const runtime::MemoryPlan& p) {
  ASSERT_EQ(p.offsets.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % runtime::kArenaAlignment, 0);
    EXPECT_LE(p.offsets[i] + reqs[i].bytes, p.arena_bytes);
    for (size_t j = 0; j < i; ++j) {
      if (!overlap_in_time(reqs[i], reqs[j]) || reqs[i].bytes == 0 || reqs[j].bytes == 0) continue;
      bool disjoint = p.offsets[i] + reqs[i].bytes <= p.offsets[j] || p.offsets[j] + reqs[j].bytes <= p.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " are live together and overlap";
    }
  }
  EXPECT_LE(p.live_peak, p.arena_bytes);
  EXPECT_LE(p.arena_bytes, p.total_bytes);
}

TEST(Planner, ChainReusesFreedBuffers) {
  // x0 -> x1 -> x2 -> x3: each buffer dies when the next is made, so two slots suffice.
  std::vector<runtime::BufferRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  auto p = runtime::plan_memory(reqs);
  check_plan(reqs, p);
  EXPECT_EQ(p.arena_bytes, 2 * 1024);
  EXPECT_EQ(p.offsets[0], p.offsets[2]);
  EXPECT_EQ(p.offsets[1], p.offsets[3]);
  EXPECT_EQ(p.total_bytes, 4 * 1024);
}

TEST(Planner, BestFitPutsSmallBufferInFreedGap) {
  // A big buffer dies; a small one made later goes into its bytes, not after the live one.
  std::vector<runtime::BufferRequest> reqs = {{4096, 0, 1}, {4096, 0, 5}, {128, 2, 3}};
  auto p = runtime::plan_memory(reqs);
  check_plan(reqs, p);
  EXPECT_EQ(p.arena_bytes, 8192);
  EXPECT_EQ(p.offsets[2], p.offsets[0]);
}

TEST(Planner, RandomRequestsNeverOverlapWhileLive) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<runtime::BufferRequest> reqs;
    int n = 1 + int(rng() % 60);
    for (int i = 0; i < n; ++i) {
      int first = int(rng() % 40);
      reqs.push_back({int64_t(rng() % 5000), first, first + int(rng() % 10)});
    }
    check_plan(reqs, runtime::plan_memory(reqs));
  }
}

TEST(Planner, RejectsBadRequests) {
  std::vector<runtime::BufferRequest> bad = {{-1, 0, 0}};
  EXPECT_THROW(runtime::plan_memory(bad), Error);
  std::vector<runtime::BufferRequest> backwards = {{8, 3, 1}};
  EXPECT_THROW(runtime::plan_memory(backwards), Error);
  EXPECT_EQ(runtime::plan_memory({}).arena_bytes, 0);
}

// ---------------------------------------------------------------- public API

TEST(InferenceApi, MissingModelIsValueError) {
  oar_infer::Config c("/nonexistent/model");
  EXPECT_EQ(c.prog_file(), "/nonexistent/model.json");
  EXPECT_EQ(c.params_file(), "/nonexistent/model.safetensors");
  try {
    oar_infer::CreatePredictor(c);
    ADD_FAILURE();
  } catch (const oar_infer::Error& e) {
    EXPECT_EQ(e.kind(), oar_infer::ErrorKind::kValue);
    EXPECT_EQ(std::string(e.what()).rfind("[oar.inference.create_predictor] /nonexistent/model.json", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(c.SetPrecision(oar_infer::PrecisionType::kInt8), oar_infer::Error);
  EXPECT_THROW(c.SetCpuMathLibraryNumThreads(-1), oar_infer::Error);
  c.SetPrecision(oar_infer::PrecisionType::kBf16);
  EXPECT_TRUE(c.mkldnn_bfloat16_enabled());
}

// ---------------------------------------------------------------- end to end

// relu(x @ w + b) followed by a transpose (a view as the output), saved the
// way oar.jit.save saves: program JSON + safetensors weights.
struct SavedMlp {
  std::string prefix;
  float w[3][2] = {{1.0f, -2.0f}, {0.5f, 1.5f}, {-1.0f, 0.25f}};
  float b[2] = {0.1f, -0.3f};

  SavedMlp() {
    char dir[] = "/tmp/oar_rt_XXXXXX";
    prefix = std::string(mkdtemp(dir)) + "/mlp";
    ir::Program p;
    const ir::Type tx{DType::Float32, {-1, 3}}, tw{DType::Float32, {3, 2}}, tb{DType::Float32, {2}};
    const ir::Type th{DType::Float32, {-1, 2}}, tt{DType::Float32, {2, -1}};
    ir::Value* x = p.add_input("x", tx);
    ir::Value* wv = p.add_parameter("fc.weight", tw);
    ir::Value* bv = p.add_parameter("fc.bias", tb);
    auto op = [&](const char* name, std::vector<ir::Value*> in, Attrs a, const ir::Type& t) {
      return p.body().append(ir::testing::def(name), in, std::move(a), std::span<const ir::Type>(&t, 1))->result(0);
    };
    ir::Value* h = op("matmul", {x, wv}, Attrs{false, false}, th);
    h = op("add", {h, bv}, {}, th);
    h = op("relu", {h}, {}, th);
    p.add_output("y", h);
    p.add_output("yt", op("transpose", {h}, Attrs{Dims{1, 0}}, tt));
    ir::verify(p);
    std::FILE* f = std::fopen((prefix + ".json").c_str(), "wb");
    std::string json = ir::to_json(p);
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
    std::string h2 = R"({"fc.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},)"
                     R"("fc.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})";
    std::string data(reinterpret_cast<const char*>(w), 24);
    data += std::string(reinterpret_cast<const char*>(b), 8);
    std::string bytes = file_bytes(h2, data);
    f = std::fopen((prefix + ".safetensors").c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }

  ~SavedMlp() {
    std::remove((prefix + ".json").c_str());
    std::remove((prefix + ".safetensors").c_str());
    rmdir(prefix.substr(0, prefix.rfind('/')).c_str());
  }

  std::vector<float> expected(const std::vector<float>& x, int n) const {
    std::vector<float> y(size_t(n) * 2);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) {
        float acc = 0;
        for (int k = 0; k < 3; ++k) acc += x[size_t(i * 3 + k)] * w[k][j];
        y[size_t(i * 2 + j)] = std::max(acc + b[j], 0.0f);
      }
    return y;
  }
};

std::vector<float> run_mlp(oar_infer::Predictor& p, const std::vector<float>& x, int n, std::vector<float>* yt) {
  auto in = p.GetInputHandle("x");
  in->Reshape({n, 3});
  in->CopyFromCpu(x.data());
  EXPECT_TRUE(p.Run());
  auto out = p.GetOutputHandle("y");
  EXPECT_EQ(out->shape(), (std::vector<int>{n, 2}));
  std::vector<float> y(size_t(out->numel()));
  out->CopyToCpu(y.data());
  auto t = p.GetOutputHandle("yt");
  EXPECT_EQ(t->shape(), (std::vector<int>{2, n}));
  yt->resize(size_t(t->numel()));
  t->CopyToCpu(yt->data());
  return y;
}

TEST(InferenceApi, RunsSavedProgramInEveryMode) {
  SavedMlp m;
  for (int mode = 0; mode < 8; ++mode) {
    oar_infer::Config c(m.prefix);
    c.SwitchIrOptim(mode & 1);
    c.EnableMemoryOptim(mode & 2);
    if (mode & 4) c.EnableMkldnnBfloat16();
    auto p = oar_infer::CreatePredictor(c);
    EXPECT_EQ(p->GetInputNames(), (std::vector<std::string>{"x"}));
    EXPECT_EQ(p->GetOutputNames(), (std::vector<std::string>{"y", "yt"}));
    for (int n : {4, 1, 4}) {
      std::vector<float> x(size_t(n) * 3), yt;
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) + 0.3f * float(n));
      std::vector<float> y = run_mlp(*p, x, n, &yt), want = m.expected(x, n);
      const float tol = (mode & 4) ? 0.05f : 1e-6f;  // bfloat16 keeps 8 bits of mantissa
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(y[i], want[i], tol) << "mode " << mode << " n " << n << " i " << i;
        EXPECT_EQ(yt[(i % 2) * size_t(n) + i / 2], y[i]);  // the transpose
      }
    }
    auto clone = p->Clone();
    EXPECT_EQ(clone->WeightsId(), p->WeightsId());
    EXPECT_EQ(clone->GetMemoryStats().weight_bytes, p->GetMemoryStats().weight_bytes);
  }
}

TEST(InferenceApi, HandleErrorsAreTyped) {
  SavedMlp m;
  auto p = oar_infer::CreatePredictor(oar_infer::Config(m.prefix));
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (const oar_infer::Error& e) {
      return e.kind();
    }
    return oar_infer::ErrorKind(-1);
  };
  EXPECT_EQ(kind_of([&] { p->GetInputHandle("nope"); }), oar_infer::ErrorKind::kValue);
  auto in = p->GetInputHandle("x");
  std::vector<double> xd(6);
  in->Reshape({2, 3});
  EXPECT_EQ(kind_of([&] { in->CopyFromCpu(xd.data()); }), oar_infer::ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { in->Reshape({2, 4}); }), oar_infer::ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { p->Run(); }), oar_infer::ErrorKind::kValue);  // no data yet
  std::vector<float> y(4);
  EXPECT_EQ(kind_of([&] { p->GetOutputHandle("y")->CopyToCpu(y.data()); }), oar_infer::ErrorKind::kRuntime);
}

TEST(InferenceRuntime, PlanKeepsOutputsOutOfTheArena) {
  SavedMlp m;
  runtime::ModelOptions opt;
  opt.ir_optim = false;  // the steps as written, whatever fusions the passes know
  auto model = runtime::load_model(m.prefix + ".json", m.prefix + ".safetensors", opt, "oar.test");
  runtime::SlotPlan plan = runtime::make_plan(*model, {Dims{5, 3}});
  ASSERT_EQ(model->steps.size(), 4u);
  // matmul and add results are intermediates; relu's is an output (and the
  // transpose a view of it), so it has no arena offset.
  EXPECT_GE(plan.offset[size_t(model->steps[0].out[0])], 0);
  EXPECT_GE(plan.offset[size_t(model->steps[1].out[0])], 0);
  EXPECT_EQ(plan.offset[size_t(model->steps[2].out[0])], -1);
  EXPECT_EQ(plan.offset[size_t(model->steps[3].out[0])], -1);
  EXPECT_EQ(plan.bytes[size_t(model->steps[0].out[0])], 5 * 2 * 4);
  // The matmul result dies at the add, which writes to a buffer live at the same step.
  EXPECT_NE(plan.offset[size_t(model->steps[0].out[0])], plan.offset[size_t(model->steps[1].out[0])]);
}

TEST(InferenceRuntime, Bf16RewriteCastsWeightsOnceAndResultsBack) {
  SavedMlp m;
  runtime::ModelOptions opt;
  opt.ir_optim = false;
  opt.bf16 = true;
  auto model = runtime::load_model(m.prefix + ".json", m.prefix + ".safetensors", opt, "oar.test");
  const ir::Program& p = *model->program;
  int casts = 0;
  for (const auto& op : p.body().operations()) casts += op->name() == "cast";
  EXPECT_EQ(casts, 2);  // x to bfloat16 before the matmul, its result back to float32
  bool bf16_weight = false;
  for (const auto& nv : p.parameters())
    bf16_weight = bf16_weight || (nv.name == "fc.weight@bf16" && nv.value->type().dtype == DType::BFloat16);
  EXPECT_TRUE(bf16_weight);
  EXPECT_EQ(p.outputs()[0].value->type().dtype, DType::Float32);
}

// ---------------------------------------------------------------- the strict JSON reader

io::Json json_ok(std::string_view text) {
  io::Json v;
  io::JsonError err;
  EXPECT_TRUE(io::parse_json(text, v, err)) << text << ": " << err.str();
  return v;
}

TEST(Json, ReadsRfc8259Values) {
  io::Json v = json_ok(" {\"a\": [1, -0, 2.5e3, -9223372036854775808, 9223372036854775808, 1E-2],\n"
                       "  \"b\": {\"c\": null, \"d\": true, \"e\": false},"
                       "  \"s\": \"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\xc3\xa9\"} \t\r\n");
  ASSERT_EQ(v.kind, io::Json::Kind::Object);
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[0].key, "a");  // document order
  const io::Json* a = v.find("a");
  ASSERT_TRUE(a && a->kind == io::Json::Kind::Array && a->items.size() == 6);
  EXPECT_TRUE(a->items[0].integral && a->items[0].is_int);
  EXPECT_EQ(a->items[0].integer, 1);
  EXPECT_EQ(a->items[1].str, "-0");
  EXPECT_EQ(a->items[1].integer, 0);
  EXPECT_FALSE(a->items[2].integral);
  EXPECT_EQ(a->items[2].str, "2.5e3");  // numbers keep their text
  EXPECT_TRUE(a->items[3].is_int);
  EXPECT_EQ(a->items[3].integer, INT64_MIN);
  EXPECT_TRUE(a->items[4].integral);
  EXPECT_FALSE(a->items[4].is_int);  // integral, but past int64
  EXPECT_FALSE(a->items[5].integral);
  const io::Json* b = v.find("b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->find("c")->kind, io::Json::Kind::Null);
  EXPECT_TRUE(b->find("d")->boolean);
  EXPECT_EQ(b->find("e")->kind, io::Json::Kind::Bool);
  EXPECT_FALSE(b->find("e")->boolean);
  EXPECT_EQ(b->find("zz"), nullptr);
  EXPECT_EQ(v.find("s")->str, "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9");
  EXPECT_EQ(json_ok("\"\"").str, "");
  EXPECT_EQ(json_ok("[]").items.size(), 0u);
  EXPECT_EQ(json_ok("{}").members.size(), 0u);
  EXPECT_EQ(json_ok("0").integer, 0);
}

TEST(Json, RejectsWithTheByteOffset) {
  struct Case {
    std::string text;
    const char* what;
    size_t offset;
  };
  const Case cases[] = {
      {"", "truncated", 0},
      {"   ", "truncated", 3},
      {"{\"a\": 1,}", "expected a string key", 8},
      {"{\"a\": 01}", "expected '}'", 7},
      {"[1 2]", "expected ']'", 3},
      {"[1, 2", "truncated", 5},
      {"1 2", "unexpected data after the document", 2},
      {"{\"a\": 1, \"a\": 2}", "duplicate key 'a'", 12},
      {"{\"a\" 1}", "expected ':'", 5},
      {"tru", "truncated", 0},
      {"nul!", "unexpected character", 0},
      {"NaN", "unexpected character", 0},
      {"[.5]", "unexpected character", 1},
      {"-", "truncated in a number", 1},
      {"1.", "truncated in a number", 2},
      {"1.e5", "malformed number", 2},
      {"1e+", "truncated in a number", 3},
      {"+1", "unexpected character", 0},
      {"\"a\tb\"", "control character in a string", 2},
      {"\"\\x\"", "unknown escape", 2},
      {"\"\\u12g4\"", "malformed \\u escape", 6},
      {"\"\\ud800x\"", "unpaired surrogate", 7},
      {"\"\\udc00\"", "unpaired surrogate", 7},
      {"\"abc", "truncated inside a string", 4},
      {"\"\xff\"", "invalid UTF-8", 1},
      {"\"\xc0\xaf\"", "invalid UTF-8", 1},          // overlong '/'
      {"\"\xed\xa0\x80\"", "invalid UTF-8", 1},      // an encoded surrogate
      {"\"\xf4\x90\x80\x80\"", "invalid UTF-8", 1},  // past U+10FFFF
      {"[] // comment", "unexpected data", 3},
      {std::string("[1]\0", 4), "unexpected data", 3},
  };
  for (const Case& c : cases) {
    io::Json v;
    io::JsonError err;
    EXPECT_FALSE(io::parse_json(c.text, v, err)) << c.text;
    EXPECT_NE(err.what.find(c.what), std::string::npos) << c.text << ": " << err.what;
    EXPECT_EQ(err.offset, c.offset) << c.text << ": " << err.what;
    EXPECT_EQ(err.str().rfind("at byte " + std::to_string(c.offset) + ": ", 0), 0u) << err.str();
    EXPECT_EQ(v.kind, io::Json::Kind::Null);  // nothing half-parsed is left behind
  }
}

TEST(Json, NestingLimitAndUtf8Option) {
  io::Json v;
  io::JsonError err;
  io::JsonOptions opt;
  opt.max_depth = 3;
  EXPECT_TRUE(io::parse_json("[[[[]]]]", v, err, opt)) << err.str();
  EXPECT_FALSE(io::parse_json("[[[[[]]]]]", v, err, opt));
  EXPECT_NE(err.what.find("nested deeper than 3 levels"), std::string::npos) << err.what;
  EXPECT_EQ(err.offset, 4u);
  // A million brackets fail at the limit rather than exhausting the stack.
  EXPECT_FALSE(io::parse_json(std::string(1000000, '['), v, err));
  EXPECT_NE(err.what.find("nested deeper than 64 levels"), std::string::npos) << err.what;
  opt = io::JsonOptions{};
  opt.utf8 = false;
  EXPECT_TRUE(io::parse_json("{\"a\xff\": 1}", v, err, opt)) << err.str();
  EXPECT_EQ(v.members[0].key, "a\xff");
  EXPECT_FALSE(io::parse_json("{\"\xff\": 1, \"\xff\": 2}", v, err, opt));
  EXPECT_NE(err.what.find("duplicate key '\\xff'"), std::string::npos) << err.what;  // printable
}

TEST(Json, ProgramAndSafetensorsErrorsCarryTheOffset) {
  try {
    ir::from_json("{\"format\": \"oar.program\",", "p.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_EQ(std::string(e.what()).rfind("[oar.jit.load] p.json: malformed JSON at byte 25: ", 0), 0u) << e.what();
  }
  expect_rejected(file_bytes("{\"a\":", ""), "header is not valid JSON (at byte 5: ");
}

// ---------------------------------------------------------------- loading from memory

std::string slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string out;
  char buf[4096];
  for (size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  if (f) std::fclose(f);
  return out;
}

void expect_load_rejected(const std::string& program, const std::string& weights, const std::string& what,
                          ErrorKind kind = ErrorKind::Value) {
  try {
    runtime::load_model_from_memory(program, std::span<const char>(weights.data(), weights.size()), {}, "oar.test",
                                    "m.json", "m.safetensors");
    ADD_FAILURE() << "loaded a model that should fail with: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[oar.test] m.", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nexpected to contain: " << what;
  }
}

TEST(InferenceRuntime, LoadsFromMemoryLikeFromFiles) {
  SavedMlp m;
  const std::string program = slurp(m.prefix + ".json"), weights = slurp(m.prefix + ".safetensors");
  for (int mode = 0; mode < 4; ++mode) {
    runtime::ModelOptions opt;
    opt.ir_optim = mode & 1;
    opt.bf16 = mode & 2;
    auto model = runtime::load_model_from_memory(program, std::span<const char>(weights.data(), weights.size()), opt,
                                                 "oar.test");
    auto files = runtime::load_model(m.prefix + ".json", m.prefix + ".safetensors", opt, "oar.test");
    EXPECT_EQ(ir::to_json(*model->program), ir::to_json(*files->program));
    ASSERT_EQ(model->params.size(), files->params.size());
    EXPECT_EQ(model->weight_bytes, files->weight_bytes);
    EXPECT_EQ(model->input_names, (std::vector<std::string>{"x"}));
  }
  expect_load_rejected(program.substr(0, program.size() / 2), weights, "m.json: malformed JSON at byte ");
  expect_load_rejected(program, weights.substr(0, weights.size() - 4), "m.safetensors: entry ");
  expect_load_rejected(program, "", "m.safetensors: file is 0 bytes");
  std::string newer = program;
  newer.replace(newer.find("\"version\": 2"), 12, "\"version\": 3");
  expect_load_rejected(newer, weights, "written by a newer oar");
}

}  // namespace
}  // namespace oar

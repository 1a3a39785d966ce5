// libFuzzer target for the model loader (`make fuzz`). The first byte of an
// input picks what the rest is fed to:
//
//   0  the program reader: ir::from_json (which also runs the verifier, and so
//      every op's infer_meta), then the printer and the writer; a program
//      that loads must write back to text that loads again
//   1  the strict JSON reader and the safetensors parser, on the same bytes
//   2  the runtime's full load (runtime::load_model_from_memory): a 4-byte
//      little-endian length n, n bytes of program JSON, then the safetensors
//      file; the selector's higher bits switch the graph passes and the
//      bfloat16 rewrite on (2: neither, 5: passes, 8: bf16, 11: both)
//
// (the selector is taken modulo 3). A loader may reject its input only with
// oar::Error; any other exception, a crash, a sanitizer report, a hang or
// unbounded memory is a finding. tools/fuzz_corpus.py writes seeds in this
// layout.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "base/error.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "ir/serialize.h"
#include "runtime/model.h"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

void program(const std::string& text) {
  std::unique_ptr<oar::ir::Program> p;
  try {
    p = oar::ir::from_json(text, "fuzz.json");
  } catch (const oar::Error&) {
    return;  // a clear rejection is the expected outcome for malformed input
  }
  // What loads must print, write back and load again.
  (void)oar::ir::to_string(*p);
  std::string again = oar::ir::to_json(*p);
  try {
    (void)oar::ir::from_json(again, "fuzz-rewritten.json");
  } catch (const oar::Error& e) {
    finding("a loaded program does not load after to_json", e.what());
  }
}

void weights(std::span<const char> bytes) {
  oar::io::Json doc;
  oar::io::JsonError err;
  (void)oar::io::parse_json(std::string_view(bytes.data(), bytes.size()), doc, err);
  try {
    (void)oar::io::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const oar::Error&) {
  }
}

void full_load(std::span<const char> bytes, unsigned flags) {
  if (bytes.size() < 4) return;
  uint32_t n = 0;
  std::memcpy(&n, bytes.data(), 4);
  bytes = bytes.subspan(4);
  if (n > bytes.size()) n = uint32_t(bytes.size());
  std::string text(bytes.data(), n);
  oar::runtime::ModelOptions options;
  options.ir_optim = flags & 1;
  options.bf16 = flags & 2;
  try {
    (void)oar::runtime::load_model_from_memory(text, bytes.subspan(n), options, "oar.inference", "fuzz.json",
                                               "fuzz.safetensors");
  } catch (const oar::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  std::span<const char> rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (selector % 3) {
    case 0: program(std::string(rest.data(), rest.size())); break;
    case 1: weights(rest); break;
    default: full_load(rest, selector / 3); break;
  }
  return 0;
}

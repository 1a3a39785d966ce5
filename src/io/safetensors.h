// A safetensors reader (DESIGN.md §3) for C++ code that has no Python: the
// inference runtime loads model weights with it.
//
// Layout: an 8-byte little-endian header length n, n bytes of JSON header
// {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
// ..., "__metadata__": {"key": "value"}}, then the data section; offsets are
// relative to the start of the data section.
//
// The file is untrusted. Everything is validated before any tensor is
// allocated: the header length against a cap and the file size, the JSON
// (strict, bounded nesting, unique keys), every dtype against an allow-list,
// shapes (non-negative, numel without overflow), byte ranges in bounds, not
// overlapping and equal to numel x itemsize, and the oar format version.
// Each problem is a ValueError "[<api>] <file>: <what is wrong>".
//
// oar.save stores complex128 tensors as float64 pairs listed in the metadata
// key "oar.complex128"; they are read back as complex128.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace oar::io {

constexpr uint64_t kMaxSafetensorsHeader = 100ull << 20;  // bytes of JSON header accepted

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Reads `path` with one read into one buffer; tensors whose data is aligned
// for their dtype point into that buffer (they share it), others are copied.
// Entries come back in the order of their data offsets.
std::vector<NamedTensor> read_safetensors(const std::string& path, const char* api = "oar.io.safetensors");

// The same over bytes already in memory (the whole file); `file` names the
// source in error messages. The tensors are copies.
std::vector<NamedTensor> parse_safetensors(std::span<const char> bytes, const std::string& file,
                                           const char* api = "oar.io.safetensors");

// The strict JSON reader behind the header parser (RFC 8259 values; object
// keys must be unique), for other small documents: the runtime reads the
// front end's "meta" entry of a program file with it.
struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  bool is_int = false;  // a number without fraction or exponent that fits int64
  int64_t integer = 0;
  std::string str;      // a string's value, or a number's text
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};
// False (with `error` set) for malformed text or nesting deeper than max_depth.
bool parse_json(std::string_view text, Json& out, std::string& error, int max_depth = 16);

}  // namespace oar::io

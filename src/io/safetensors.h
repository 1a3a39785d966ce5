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
// (io/json.h: strict, bounded nesting, unique keys; it must begin with '{'
// and may be padded with spaces), every dtype against an allow-list, shapes
// (non-negative, at most kMaxRank dims, numel without overflow), byte ranges
// equal to numel x itemsize that tile the data section exactly (no overlap,
// no hole, no trailing byte: a header length that is off by any amount is
// refused, never read as shifted weights), and the oar format version.
// Python's oar.load reads through this same reader.
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

#include "io/json.h"
#include "tensor/tensor.h"

namespace oar::io {

constexpr uint64_t kMaxSafetensorsHeader = 100ull << 20;  // bytes of JSON header accepted

struct NamedTensor {
  std::string name;
  Tensor tensor;
};
// The header's "__metadata__" (string to string), in file order.
using Metadata = std::vector<std::pair<std::string, std::string>>;

// One validated entry: complex128 entries (float64 pairs listed in
// "oar.complex128") have their dtype and shape as read back.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::Float32;
  Dims shape;
  uint64_t begin = 0, end = 0;  // byte range in the data section
};
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // sorted by begin
  uint64_t data_start = 0;                // file offset of the data section
  Metadata metadata;
};

// Reads and validates only the header of `path` (all the checks above; the
// data section is not read), for readers that fetch pieces of large files.
SafetensorsHeader read_safetensors_header(const std::string& path, const char* api);

// Reads `path` with one read into one buffer; tensors whose data is aligned
// for their dtype point into that buffer (they share it), others are copied.
// Entries come back in the order of their data offsets.
std::vector<NamedTensor> read_safetensors(const std::string& path, const char* api = "oar.io.safetensors",
                                          Metadata* metadata = nullptr);

// The same over bytes already in memory (the whole file); `file` names the
// source in error messages. The tensors are copies.
std::vector<NamedTensor> parse_safetensors(std::span<const char> bytes, const std::string& file,
                                           const char* api = "oar.io.safetensors", Metadata* metadata = nullptr);

}  // namespace oar::io

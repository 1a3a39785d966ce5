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
// (io/json.h: strict, bounded nesting, unique keys), every dtype against an allow-list,
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

#include "io/json.h"
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

}  // namespace oar::io

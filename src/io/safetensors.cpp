// The safetensors reader: the header parsed with the strict JSON reader
// (io/json.h), the validation of every entry, then one allocation per file.
#include "io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "ops/ops.h"

namespace oar::io {

namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would have to swap bytes");

// A name from the file, quoted for an error message: control bytes, and
// every non-ASCII byte when the name is not valid UTF-8, are escaped, so the
// message is always printable text.
std::string quoted(const std::string& s) {
  const bool utf8 = is_utf8(s);
  std::string out = "'";
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "'";
}

// ---------------------------------------------------------------- entries

struct DTypeName {
  const char* name;
  DType dtype;
};
// The allow-list: safetensors names of the dtypes oar stores.
constexpr DTypeName kDTypes[] = {
    {"BOOL", DType::Bool},       {"U8", DType::UInt8},     {"I8", DType::Int8},       {"I16", DType::Int16},
    {"I32", DType::Int32},       {"I64", DType::Int64},    {"F16", DType::Float16},   {"BF16", DType::BFloat16},
    {"F32", DType::Float32},     {"F64", DType::Float64},  {"C64", DType::Complex64},
};

using Entry = SafetensorsEntry;
using Header = SafetensorsHeader;

// Validates the whole file layout of a `size`-byte file whose first bytes
// (at least the header) are `bytes`; allocates nothing but the parsed header.
Header validate(std::span<const char> bytes, uint64_t size, const std::string& file, const char* api) {
  auto bad = [&](const auto&... what) { fail(ErrorKind::Value, "[", api, "] ", file, ": ", what...); };
  if (size < 8) bad("file is ", size, " bytes; a safetensors file starts with an 8-byte header length");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxSafetensorsHeader) bad("header length ", n, " exceeds the ", kMaxSafetensorsHeader, "-byte limit");
  if (n > size - 8) bad("header length ", n, " runs past the end of the ", size, "-byte file (truncated?)");
  if (n == 0 || bytes[8] != '{')
    bad("the header must begin with '{' right after the 8-byte length (a header length of ", n,
        " does not fit the file, or this is not a safetensors file)");
  const JsonOptions json_options{16, false};
  JsonError err;
  Json root;
  if (!parse_json(std::string_view(bytes.data() + 8, size_t(n)), root, err, json_options))
    bad("header is not valid JSON (", err.str(), ")");
  if (root.kind != Json::Kind::Object) bad("header must be a JSON object");
  Header h;
  h.data_start = 8 + n;
  const uint64_t data_size = size - h.data_start;
  std::set<std::string> complex128;
  // Names are checked for UTF-8 here (not by the parser) so that the
  // message can show the offending name, escaped.
  for (const auto& [key, v] : root.members) {
    if (!is_utf8(key)) bad("entry name ", quoted(key), " is not valid UTF-8");
    if (key == "__metadata__" && v.kind == Json::Kind::Object)
      for (const auto& [mk, mv] : v.members)
        if (!is_utf8(mk) || (mv.kind == Json::Kind::String && !is_utf8(mv.str)))
          bad("__metadata__ entry ", quoted(mk), " is not valid UTF-8");
  }
  for (const auto& [key, v] : root.members) {
    if (key != "__metadata__") continue;
    if (v.kind == Json::Kind::Null) continue;
    if (v.kind != Json::Kind::Object) bad("__metadata__ must map strings to strings");
    for (const auto& [mk, mv] : v.members) {
      if (mv.kind != Json::Kind::String) bad("__metadata__ must map strings to strings");
      h.metadata.emplace_back(mk, mv.str);
      if (mk == "oar.format") {
        bool digits = !mv.str.empty() && mv.str.size() < 10 &&
                      std::all_of(mv.str.begin(), mv.str.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits || std::stoll(mv.str) > 1)
          bad("format version ", quoted(mv.str), " is newer than this oar reads (1); upgrade oar");
      } else if (mk == "oar.complex128") {
        JsonError cerr;
        Json list;
        if (!parse_json(mv.str, list, cerr, json_options) || list.kind != Json::Kind::Array)
          bad("metadata oar.complex128 must be a JSON list of entry names");
        for (const Json& item : list.items) {
          if (item.kind != Json::Kind::String) bad("metadata oar.complex128 must be a JSON list of entry names");
          complex128.insert(item.str);
        }
      }
    }
  }
  for (const auto& [key, v] : root.members) {
    if (key == "__metadata__") continue;
    const std::string q = quoted(key);
    bool ok = v.kind == Json::Kind::Object && v.members.size() == 3;
    const Json *dt = nullptr, *shape = nullptr, *offs = nullptr;
    for (const auto& [mk, mv] : v.members) {
      if (mk == "dtype") dt = &mv;
      else if (mk == "shape") shape = &mv;
      else if (mk == "data_offsets") offs = &mv;
    }
    if (!ok || !dt || !shape || !offs) bad("entry ", q, " must have exactly dtype, shape and data_offsets");
    Entry e;
    e.name = key;
    bool known = false;
    if (dt->kind == Json::Kind::String)
      for (const DTypeName& d : kDTypes)
        if (dt->str == d.name) { e.dtype = d.dtype; known = true; }
    if (!known) {
      std::string allowed;
      for (const DTypeName& d : kDTypes) allowed += std::string(allowed.empty() ? "" : ", ") + d.name;
      bad("entry ", q, " has dtype ", dt->kind == Json::Kind::String ? quoted(dt->str) : std::string("(not a string)"),
          "; allowed: ", allowed);
    }
    if (shape->kind != Json::Kind::Array) bad("entry ", q, " has a shape that is not a list of non-negative ints");
    if (shape->items.size() > size_t(kMaxRank))
      bad("entry ", q, " has a shape of rank ", shape->items.size(), "; tensors have at most ", kMaxRank, " dimensions");
    int64_t numel = 1;
    bool overflow = false;
    for (const Json& d : shape->items) {
      if (d.kind != Json::Kind::Number || !d.is_int || d.integer < 0)
        bad("entry ", q, " has a shape that is not a list of non-negative ints");
      e.shape.push_back(d.integer);
      overflow = overflow || __builtin_mul_overflow(numel, d.integer, &numel);
    }
    int64_t nbytes = 0;
    overflow = overflow || __builtin_mul_overflow(numel, int64_t(itemsize(e.dtype)), &nbytes);
    if (overflow) bad("entry ", q, " has a shape whose size overflows int64");
    if (offs->kind != Json::Kind::Array || offs->items.size() != 2 ||
        !std::all_of(offs->items.begin(), offs->items.end(),
                     [](const Json& o) { return o.kind == Json::Kind::Number && o.is_int && o.integer >= 0; }))
      bad("entry ", q, " has data_offsets that are not [begin, end] non-negative ints");
    e.begin = uint64_t(offs->items[0].integer);
    e.end = uint64_t(offs->items[1].integer);
    if (e.begin > e.end || e.end > data_size)
      bad("entry ", q, " has bytes [", e.begin, ", ", e.end, ") outside the ", data_size,
          "-byte data section (truncated?)");
    if (e.end - e.begin != uint64_t(nbytes))
      bad("entry ", q, " has ", e.end - e.begin, " bytes but shape ", ops::shape_str(e.shape), " of ", dt->str, " needs ",
          nbytes);
    if (complex128.count(key)) {
      if (e.dtype != DType::Float64 || e.shape.empty() || e.shape.back() != 2)
        bad("entry ", q, " is marked complex128 but is not float64 pairs");
      e.dtype = DType::Complex128;
      e.shape.pop_back();
    }
    h.entries.push_back(std::move(e));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  // The entries must tile the data section: each starts where the bytes before
  // it end. Zero-size entries occupy no bytes and may sit anywhere.
  uint64_t covered = 0;
  const Entry* last = nullptr;
  for (const Entry& e : h.entries) {
    if (e.end == e.begin && e.begin <= covered) continue;
    if (e.begin < covered) bad("entries ", quoted(last->name), " and ", quoted(e.name), " overlap");
    if (e.begin > covered)
      bad("the data section has a hole of ", e.begin - covered, " bytes before entry ", quoted(e.name),
          " (bytes [", covered, ", ", e.begin, ") belong to no tensor)");
    covered = e.end;
    last = &e;
  }
  if (covered != data_size)
    bad("the data section has ", data_size - covered, " trailing bytes after the last tensor (", data_size,
        " bytes, the tensors cover ", covered, "); the header length or the offsets are wrong");
  return h;
}

Tensor copy_out(const Entry& e, const char* src) {
  Tensor t = empty_tensor(e.shape, e.dtype);
  if (e.end > e.begin) std::memcpy(t.raw_data(), src, size_t(e.end - e.begin));
  return t;
}

}  // namespace

std::vector<NamedTensor> parse_safetensors(std::span<const char> bytes, const std::string& file, const char* api,
                                           Metadata* metadata) {
  Header h = validate(bytes, bytes.size(), file, api);
  if (metadata) *metadata = std::move(h.metadata);
  std::vector<NamedTensor> out;
  out.reserve(h.entries.size());
  for (const Entry& e : h.entries)
    out.push_back({e.name, copy_out(e, bytes.data() + h.data_start + e.begin)});
  return out;
}

namespace {

using File = std::unique_ptr<FILE, int (*)(FILE*)>;

// Opens `path` for reading; its size in bytes.
File open_sized(const std::string& path, const char* api, long& size) {
  auto bad = [&](const auto&... what) { fail(ErrorKind::Value, "[", api, "] ", path, ": ", what...); };
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) bad("cannot be opened (", std::strerror(errno), ")");
  if (std::fseek(f.get(), 0, SEEK_END) != 0) bad("cannot be read (not a regular file?)");
  size = std::ftell(f.get());
  if (size < 0) bad("cannot be read (not a regular file?)");
  std::rewind(f.get());
  return f;
}

}  // namespace

SafetensorsHeader read_safetensors_header(const std::string& path, const char* api) {
  long size = 0;
  File f = open_sized(path, api, size);
  std::string head(size_t(std::min<long>(size, 8)), '\0');
  if (std::fread(head.data(), 1, head.size(), f.get()) != head.size())
    fail(ErrorKind::Value, "[", api, "] ", path, ": short read (the file changed while it was read?)");
  uint64_t n = 0;
  if (head.size() == 8) std::memcpy(&n, head.data(), 8);
  // validate() refuses lengths over the cap or past the end before reading them.
  if (head.size() == 8 && n <= kMaxSafetensorsHeader && n <= uint64_t(size) - 8) {
    head.resize(size_t(8 + n));
    if (std::fread(head.data() + 8, 1, size_t(n), f.get()) != size_t(n))
      fail(ErrorKind::Value, "[", api, "] ", path, ": short read (the file changed while it was read?)");
  }
  return validate(std::span<const char>(head.data(), head.size()), uint64_t(size), path, api);
}

std::vector<NamedTensor> read_safetensors(const std::string& path, const char* api, Metadata* metadata) {
  auto bad = [&](const auto&... what) { fail(ErrorKind::Value, "[", api, "] ", path, ": ", what...); };
  long size = 0;
  File f = open_sized(path, api, size);
  // One buffer for the whole file, aligned so that the data section's
  // tensors can point into it without copying.
  constexpr size_t kAlign = 64;
  size_t cap = (size_t(size) + kAlign - 1) / kAlign * kAlign;
  std::shared_ptr<char> buf(static_cast<char*>(std::aligned_alloc(kAlign, std::max(cap, kAlign))), &std::free);
  if (!buf) fail(ErrorKind::Runtime, "[", api, "] ", path, ": out of memory reading ", size, " bytes");
  if (size > 0 && std::fread(buf.get(), 1, size_t(size), f.get()) != size_t(size))
    bad("short read (the file changed while it was read?)");
  std::span<const char> bytes(buf.get(), size_t(size));
  Header h = validate(bytes, bytes.size(), path, api);
  if (metadata) *metadata = std::move(h.metadata);
  std::vector<NamedTensor> out;
  out.reserve(h.entries.size());
  for (const Entry& e : h.entries) {
    char* src = buf.get() + h.data_start + e.begin;
    const size_t nbytes = size_t(e.end - e.begin);
    if (reinterpret_cast<uintptr_t>(src) % itemsize(e.dtype) != 0 || nbytes == 0) {
      out.push_back({e.name, copy_out(e, src)});
      continue;
    }
    auto storage = make_ref<Storage>(src, nbytes, Device{}, [buf]() {});
    out.push_back({e.name, Tensor(make_ref<TensorImpl>(std::move(storage), e.shape, contiguous_strides(e.shape), 0,
                                                       e.dtype))});
  }
  return out;
}

}  // namespace oar::io

// The one strict JSON reader (RFC 8259) for every document oar reads from
// untrusted files: the program format (ir/serialize.cpp), the safetensors
// header (io/safetensors.cpp) and the front end's "meta" entry that the
// inference runtime reads (runtime/model.cpp).
//
// Strict means: exactly one value with only whitespace around it; no
// trailing commas, comments, NaN/Infinity literals, leading zeros or
// unescaped control characters; object keys unique; nesting bounded (so a
// deep document cannot exhaust the stack); strings valid UTF-8 (optional,
// see JsonOptions::utf8). Numbers keep their text, so a reader can convert
// them exactly to the type it needs, and whether they are integral.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oar::io {

struct Json {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  // Declared here and defined after Json: a pair or struct holding a Json
  // inside Json's own definition would be an incomplete type for the
  // standard library, which clang with libstdc++ rejects.
  struct Member;

  Kind kind = Kind::Null;
  bool boolean = false;
  bool integral = false;  // a Number written without fraction or exponent
  bool is_int = false;    // integral and within the int64 range; `integer` holds it
  int64_t integer = 0;
  std::string str;        // a String's value, or a Number's text
  std::vector<Json> items;      // an Array's elements
  std::vector<Member> members;  // an Object's members, in document order

  // The member named `key`, or nullptr (keys are unique).
  const Json* find(std::string_view key) const;
};

struct Json::Member {
  std::string key;
  Json value;
};

// "null", "a boolean", "a number", "a string", "an array", "an object".
const char* json_kind_name(Json::Kind k);

struct JsonOptions {
  int max_depth = 64;  // containers nested deeper than this are rejected
  bool utf8 = true;    // reject strings that are not well-formed UTF-8
};

struct JsonError {
  size_t offset = 0;  // byte offset of the problem in the text
  std::string what;   // e.g. "the document is truncated inside a string"
  // "at byte <offset>: <what>"
  std::string str() const;
};

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
size_t utf8_sequence_length(std::string_view s, size_t i);

// Whether all of `s` is well-formed UTF-8.
bool is_utf8(std::string_view s);

// False, with `error` set, for text that is not one strict JSON document.
bool parse_json(std::string_view text, Json& out, JsonError& error, const JsonOptions& options = {});

}  // namespace oar::io

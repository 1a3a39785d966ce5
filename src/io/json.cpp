// The strict JSON reader (see json.h). A recursive-descent parser over the
// text; it throws a private exception internally and parse_json turns it
// into a JsonError, so callers choose how to word and type their errors.
#include "io/json.h"

#include <charconv>
#include <cstdio>
#include <set>

namespace oar::io {

const Json* Json::find(std::string_view key) const {
  for (const Member& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

const char* json_kind_name(Json::Kind k) {
  switch (k) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return "a boolean";
    case Json::Kind::Number: return "a number";
    case Json::Kind::String: return "a string";
    case Json::Kind::Array: return "an array";
    case Json::Kind::Object: return "an object";
  }
  return "?";
}

std::string JsonError::str() const { return "at byte " + std::to_string(offset) + ": " + what; }

namespace {

struct Failure {
  size_t offset;
  std::string what;
};

class Parser {
 public:
  Parser(std::string_view text, const JsonOptions& options) : t_(text), opt_(options) {}

  void document(Json& out) {
    ws();
    value(out, 0);
    ws();
    if (p_ != t_.size()) error("unexpected data after the document");
  }

 private:
  [[noreturn]] void error(std::string what) const { throw Failure{p_, std::move(what)}; }
  bool at_end() const { return p_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[p_]; }
  void ws() {
    while (!at_end() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  void expect(char c) {
    if (at_end()) error(std::string("the document is truncated (expected '") + c + "')");
    if (t_[p_] != c) error(std::string("expected '") + c + "'");
    ++p_;
  }
  void literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word)
      error(t_.size() - p_ < word.size() && word.substr(0, t_.size() - p_) == t_.substr(p_) ? "the document is truncated"
                                                                                           : "unexpected character");
    p_ += word.size();
  }

  // A key for an error message: control bytes (and, when strings need not be
  // UTF-8, every non-ASCII byte) escaped, so the message is printable text.
  std::string quoted(const std::string& s) const {
    std::string out = "'";
    for (unsigned char c : s) {
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && !opt_.utf8)) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
    return out + "'";
  }

  void value(Json& v, int depth) {
    if (depth > opt_.max_depth)
      error("nested deeper than " + std::to_string(opt_.max_depth) + " levels (the nesting limit)");
    if (at_end()) error("the document is truncated (expected a value)");
    char c = t_[p_];
    if (c == '{') {
      v.kind = Json::Kind::Object;
      ++p_;
      ws();
      if (peek() == '}') { ++p_; return; }
      std::set<std::string> seen;
      while (true) {
        ws();
        if (peek() != '"') error(at_end() ? "the document is truncated" : "expected a string key");
        std::string key = string();
        if (!seen.insert(key).second) error("duplicate key " + quoted(key));
        ws();
        expect(':');
        ws();
        v.members.push_back(Json::Member{std::move(key), Json()});
        value(v.members.back().value, depth + 1);
        ws();
        if (peek() == ',') { ++p_; continue; }
        expect('}');
        return;
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::Array;
      ++p_;
      ws();
      if (peek() == ']') { ++p_; return; }
      while (true) {
        ws();
        v.items.emplace_back();
        value(v.items.back(), depth + 1);
        ws();
        if (peek() == ',') { ++p_; continue; }
        expect(']');
        return;
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::String;
      v.str = string();
      return;
    }
    if (c == 't') { literal("true"); v.kind = Json::Kind::Bool; v.boolean = true; return; }
    if (c == 'f') { literal("false"); v.kind = Json::Kind::Bool; return; }
    if (c == 'n') { literal("null"); return; }
    if (c == '-' || (c >= '0' && c <= '9')) return number(v);
    error("unexpected character");
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  void number(Json& v) {
    size_t start = p_;
    v.kind = Json::Kind::Number;
    v.integral = true;
    if (peek() == '-') ++p_;
    if (peek() == '0') {
      ++p_;  // no leading zeros: "01" stops after the 0 and fails in the caller
    } else if (digit(peek())) {
      while (digit(peek())) ++p_;
    } else {
      error(at_end() ? "the document is truncated in a number" : "malformed number");
    }
    if (peek() == '.') {
      ++p_;
      v.integral = false;
      if (!digit(peek())) error(at_end() ? "the document is truncated in a number" : "malformed number");
      while (digit(peek())) ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++p_;
      v.integral = false;
      if (peek() == '+' || peek() == '-') ++p_;
      if (!digit(peek())) error(at_end() ? "the document is truncated in a number" : "malformed number");
      while (digit(peek())) ++p_;
    }
    v.str.assign(t_.substr(start, p_ - start));
    if (v.integral) {
      auto r = std::from_chars(v.str.data(), v.str.data() + v.str.size(), v.integer);
      v.is_int = r.ec == std::errc() && r.ptr == v.str.data() + v.str.size();
      if (!v.is_int) v.integer = 0;
    }
  }

  unsigned hex4() {
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      if (at_end()) error("the document is truncated in a \\u escape");
      char c = t_[p_++];
      u <<= 4;
      if (c >= '0' && c <= '9') u |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') u |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') u |= unsigned(c - 'A' + 10);
      else error("malformed \\u escape");
    }
    return u;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++p_;  // the opening quote
    std::string out;
    while (true) {
      if (at_end()) error("the document is truncated inside a string");
      unsigned char c = (unsigned char)t_[p_];
      if (c == '"') { ++p_; return out; }
      if (c < 0x20) error("control character in a string");
      if (c == '\\') {
        ++p_;
        if (at_end()) error("the document is truncated inside a string");
        char e = t_[p_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned cp = hex4();
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (t_.substr(p_, 2) != "\\u") error("unpaired surrogate in a \\u escape");
              p_ += 2;
              unsigned lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) error("unpaired surrogate in a \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              error("unpaired surrogate in a \\u escape");
            }
            put_utf8(out, cp);
            break;
          }
          default: --p_; error("unknown escape in a string");
        }
        continue;
      }
      if (c < 0x80 || !opt_.utf8) {
        out += char(c);
        ++p_;
        continue;
      }
      size_t n = utf8_sequence_length(t_, p_);
      if (!n) error("invalid UTF-8 in a string");
      out.append(t_.substr(p_, n));
      p_ += n;
    }
  }

  std::string_view t_;
  const JsonOptions& opt_;
  size_t p_ = 0;
};

}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return i + k < s.size() ? (unsigned char)s[i + k] : 0u; };
  auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  const unsigned c = b(0), c1 = b(1);
  if (i >= s.size()) return 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return 0;  // overlong; surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;  // overlong; above U+10FFFF
    return 4;
  }
  return 0;
}

bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

bool parse_json(std::string_view text, Json& out, JsonError& error, const JsonOptions& options) {
  out = Json();
  try {
    Parser(text, options).document(out);
    return true;
  } catch (const Failure& f) {
    error = JsonError{f.offset, f.what};
    out = Json();
    return false;
  }
}

}  // namespace oar::io

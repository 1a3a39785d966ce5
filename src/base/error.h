// User-facing errors. Each maps to a Python exception type in the bindings.
// Messages start with the API name: "[oar.matmul] x.shape[-1] (3) must equal ...".
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace oar {

enum class ErrorKind { Value, Index, Type, NotImplemented, Runtime, Timeout, Memory };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

template <typename... Args> std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <typename... Args> [[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  throw Error(kind, str_cat(args...));
}

}  // namespace oar

// Raise a user error unless `cond` holds. The message pieces are only built on failure.
#define OAR_CHECK(cond, kind, ...) \
  do { if (__builtin_expect(!(cond), 0)) ::oar::fail(::oar::ErrorKind::kind, __VA_ARGS__); } while (0)

// Shared by the IR tests.
#pragma once
#include <stdexcept>
#include <string>

#include "ops/op.h"

namespace oar::ir::testing {

// The registered op named `name` (the tests build programs from real ops).
inline const OpDef& def(const char* name) {
  const OpDef* d = find_op(name);
  if (!d) throw std::runtime_error(std::string("no op ") + name);
  return *d;
}

}  // namespace oar::ir::testing

// Mixed precision, dispatch stage 3 (DESIGN.md §1): while autocast is on,
// each op's floating inputs are cast according to the op's policy.
//   Low:     run in the autocast dtype (float16/bfloat16): matmul, conv.
//   Float32: run in float32 for accuracy: exp, log, softmax, sums, norms.
//   Promote: the rest; at level O1 mixed float inputs go to the widest one,
//            at level O2 float32 inputs go to the autocast dtype.
#pragma once
#include <string>

#include "base/dtype.h"
#include "ops/op.h"

namespace oar {

// Each op is defined with its policy (CastPolicy in ops/op.h,
// OpBuilder::amp), following Paddle's O1 lists.

struct AutocastConfig {
  bool enabled = false;
  DType dtype = DType::Float16;
  int level = 1;  // 1 (O1) or 2 (O2)
};

// Thread-local, like grad mode.
AutocastConfig autocast_config();
void set_autocast_config(const AutocastConfig& c);

// The policy of an op by name; raises ValueError for an unknown op.
CastPolicy cast_policy(const std::string& op);
void set_cast_policy(const std::string& op, CastPolicy p);

}  // namespace oar

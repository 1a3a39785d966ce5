// Note [layout hand-off]
// oneDNN convolutions run fastest on blocked layouts (nChw16c), while oar
// tensors are plain (NCHW): every convolution reorders its input in and its
// output back out, which costs as much memory traffic as the convolution of
// a small layer itself. When a graph executor knows that a convolution's
// output is read by nothing but the very next op, itself a float32
// fused_conv taking it as input 0, it sets `produce` for the first and
// `consume` for the second: the producer keeps its output in oneDNN's
// layout (the plain buffer is left unwritten) and the consumer reads that
// directly. Outside such an executor both flags are off and nothing changes.
// The state is per thread and only ever set around one kernel call.
#pragma once

namespace oar::cpu {

// Sets the flags for the next kernel call on this thread (see the note).
void set_conv_handoff(bool consume, bool produce);
// Turns both flags off and drops a kept output (after a run, or an error).
void clear_conv_handoff();

}  // namespace oar::cpu

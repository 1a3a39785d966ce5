// Note [layout hand-off]
// oneDNN convolutions run fastest on their own layouts (channels-last or
// blocked), while oar tensors are plain (NCHW): every convolution reorders
// its input in and its output back out, which costs as much memory traffic
// as the convolution of a small layer itself. A graph executor knows which
// steps read a value. The steps that take part are fused_conv, avg_pool, and
// max_pool when nothing reads its mask. When every reader of a float32
// output of one of them is another taking it as its input (0), or a
// fused_conv taking it as its residual (3), and the caller never sees it,
// the executor asks the producer to keep the output in oneDNN's layout: the
// plain buffer is left unwritten, and a per-thread table maps that buffer to
// the kept memory. A fused_conv reads a kept input directly, and a kept
// residual becomes its destination in place when no later step reads it
// (the sum post-op adds into the destination). A pooling whose input is kept
// pools it in that layout with oneDNN where its windows have one size
// (oneDNN gives no max mask there: hence the condition on max_pool); a step
// that cannot read a kept input writes it into its plain buffer first. The
// executor drops an entry when it releases the value's slot, and the whole
// table after the run. Outside such an executor the table stays empty and
// nothing changes.
#pragma once

namespace oar {
class Tensor;
}

namespace oar::cpu {

// Flags for the next kernel call on this thread (see the note): `active`
// lets the step look up kept inputs (and tells a max_pool that its mask is
// never read), `keep_output` keeps its output, `residual_dies` says no later
// step reads a fused_conv's residual.
void set_layout_handoff(bool active, bool keep_output = false, bool residual_dies = false);
// The value whose plain buffer is `data` is dead: drops its kept layout.
void release_layout_handoff(const void* data);
// Writes a kept value into its plain buffer (for a reader that needs it).
void materialize_layout_handoff(const Tensor& t);
// Drops every kept output and turns the flags off (after a run, or an error).
void clear_layout_handoff();

// Turns the flags off for its scope and restores them after: for a kernel
// that runs oneDNN on temporaries (the float32 copies of a bfloat16
// convolution), which must neither be kept nor looked up.
class LayoutHandoffOff {
 public:
  LayoutHandoffOff();
  ~LayoutHandoffOff();
  LayoutHandoffOff(const LayoutHandoffOff&) = delete;
  LayoutHandoffOff& operator=(const LayoutHandoffOff&) = delete;

 private:
  bool active_, keep_output_, residual_dies_;
};

}  // namespace oar::cpu

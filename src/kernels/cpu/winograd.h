// Note [winograd convolution]
// oneDNN runs float32 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) at
// small batches and F(4x4, 3x3) at larger ones (AVX-512 CPUs): 1.7-2x less
// time than its direct kernels on ResNet-sized layers (32 channels and up;
// below that, and for 3-channel inputs, the direct kernels win). Measured
// against a float64 reference, F(2x2, 3x3) is as accurate as the direct
// kernels and F(4x4, 3x3) within 2x of them. The inference runtime turns it
// on for its runs (Config.SwitchWinogradConv, on by default); eager code
// and training keep the direct algorithm and give what they gave before.
// Where it fits is in winograd_fits (kernels/cpu/conv.cpp). The primitives run with caller-owned scratchpads (dnnl_util::attr()):
// oneDNN's library-managed one crashed two threads running one Winograd
// primitive at once.
#pragma once

namespace oar::cpu {

// Lets fused_conv on this thread take the Winograd algorithm where the note
// says, for its scope, and restores the previous setting after.
class WinogradConvScope {
 public:
  explicit WinogradConvScope(bool on);
  ~WinogradConvScope();
  WinogradConvScope(const WinogradConvScope&) = delete;
  WinogradConvScope& operator=(const WinogradConvScope&) = delete;

 private:
  bool prev_;
};

}  // namespace oar::cpu

// Discrete Fourier transforms (oar.fft): three ops, after the split of the
// transform by the domains of its input and output.
//   fft_c2c  complex -> complex over `axes`;
//   fft_r2c  real -> complex, the last of `axes` kept to n/2 + 1 bins when onesided;
//   fft_c2r  complex (the half spectrum of a Hermitian signal) -> real, the
//            last of `axes` of length last_dim_size / 2 + 1 on input.
// `forward` picks the sign of the exponent (true: exp(-2 pi i jk/n)),
// `normalization` the scale: "backward" (none forward, 1/n backward),
// "forward" (the reverse) or "ortho" (1/sqrt(n) both ways), n the product of
// the transformed (real-signal) lengths. Kernels: kernels/cpu/fft.cpp (oneMKL).
// Padding and cropping to a requested length are left to the caller
// (python/oar/fft.py composes them with slicing and padding).
#pragma once
#include <string>

#include "ops/ops.h"

namespace oar::ops {

// Integer and bool inputs are read as the default float dtype, float inputs
// of c2c as their complex dtype.
Tensor fft_c2c(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward);
Tensor fft_r2c(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward, bool onesided);
// x's length along axes.back() must be last_dim_size / 2 + 1.
Tensor fft_c2r(const Tensor& x, const Dims& axes, const std::string& normalization, bool forward,
               int64_t last_dim_size);

}  // namespace oar::ops

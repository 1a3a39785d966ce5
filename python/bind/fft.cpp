// The three FFT ops (ops/fft.h) for python/oar/fft.py, which reads Paddle's
// arguments (n / s, axis / axes, norm), pads or crops, and picks the op.
#include "common.h"
#include "ops/fft.h"

namespace oar::bind {
namespace {

void bind_fft(nb::module_& m) {
  m.def("_fft_c2c", &ops::fft_c2c, nb::arg("x"), nb::arg("axes"), nb::arg("normalization"), nb::arg("forward"));
  m.def("_fft_r2c", &ops::fft_r2c, nb::arg("x"), nb::arg("axes"), nb::arg("normalization"), nb::arg("forward"),
        nb::arg("onesided"));
  m.def("_fft_c2r", &ops::fft_c2r, nb::arg("x"), nb::arg("axes"), nb::arg("normalization"), nb::arg("forward"),
        nb::arg("last_dim_size"));
}

Binder b(bind_fft);

}  // namespace
}  // namespace oar::bind

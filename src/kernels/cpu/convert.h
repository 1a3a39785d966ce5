#pragma once
#include "kernels/cpu/dtype_lists.h"

namespace oar::cpu {

// Value conversion between any two storage types (complex -> real keeps the
// real part, like NumPy's astype).
template <typename Out, typename In> inline Out convert(In v) {
  if constexpr (is_complex_v<In> && is_complex_v<Out>) {
    return Out(typename Out::value_type(v.real()), typename Out::value_type(v.imag()));
  } else if constexpr (is_complex_v<In>) {
    if constexpr (std::is_same_v<Out, bool>) return v != In(0);
    else return Out(v.real());
  } else if constexpr (is_complex_v<Out>) {
    return Out(typename Out::value_type(compute_t<In>(v)));
  } else if constexpr (std::is_same_v<Out, bool>) {
    return compute_t<In>(v) != compute_t<In>(0);
  } else {
    return Out(compute_t<In>(v));
  }
}

}  // namespace oar::cpu

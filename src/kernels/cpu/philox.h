// The random-number generator of the random ops, shared by the CPU kernels
// (kernels/cpu/random.cpp) and the CUDA kernels (kernels/cuda/random.cu), so
// that a seed gives the same words on both: Philox-4x32-10 (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011; philox(0, 0)
// matches Random123's known answer 6627e8d5 e169c58d bc57ac4c 9b00dbd8).
#pragma once
#include <cstdint>
#include <type_traits>

#include "base/half.h"
#include "base/hd.h"

namespace oar::random {

// Four 32-bit words: block `counter` of the stream of key `seed`.
struct PhiloxBlock {
  uint32_t w[4];
  OAR_HD const uint32_t* data() const { return w; }
  OAR_HD uint32_t* data() { return w; }
};

OAR_HD inline PhiloxBlock philox(uint64_t counter, uint64_t seed) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
#ifdef __CUDACC__
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = uint64_t(kM0) * c0, p1 = uint64_t(kM1) * c2;
    const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0), hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return {{c0, c1, c2, c3}};
}

// Uniform in [0, 1) with as many random bits as T's mantissa holds, so that
// rounding never produces 1.
template <typename T> OAR_HD inline double unit(const uint32_t* w) {
  if constexpr (std::is_same_v<T, double>)
    return double(((uint64_t(w[0]) << 32) | w[1]) >> 11) * 0x1.0p-53;
  else if constexpr (std::is_same_v<T, float16>)
    return double(w[0] >> 21) * 0x1.0p-11;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return double(w[0] >> 24) * 0x1.0p-8;
  else
    return double(w[0] >> 8) * 0x1.0p-24;
}
OAR_HD inline double unit53(const uint32_t* w) { return double(((uint64_t(w[0]) << 32) | w[1]) >> 11) * 0x1.0p-53; }

}  // namespace oar::random

// 16-bit floating-point storage types. Arithmetic is done in float: kernels
// load, compute in float and store with round-to-nearest-even.
#pragma once
#include <cstdint>
#include <cstring>

namespace oar {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct float16 {
  uint16_t x = 0;
  float16() = default;
  float16(float f) : x(from_float(f)) {}
  operator float() const { return to_float(x); }

  static uint16_t from_float(float f) {
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7fffffffu;
    if (u >= 0x7f800000u)  // inf or nan
      return uint16_t(sign | 0x7c00u | (u > 0x7f800000u ? 0x200u | ((u >> 13) & 0x3ffu) : 0u));
    if (u >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
    if (u < 0x38800000u) {  // subnormal half (or zero): add a magic float to round
      float t = bits_f32(u) + 0.5f;
      return uint16_t(sign | (f32_bits(t) - 0x3f000000u));
    }
    uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return uint16_t(sign | (u >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {  // zero or subnormal: mant * 2^-24
      float v = float(mant) * 5.9604644775390625e-8f;
      return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct bfloat16 {
  uint16_t x = 0;
  bfloat16() = default;
  bfloat16(float f) : x(from_float(f)) {}
  operator float() const { return bits_f32(uint32_t(x) << 16); }

  // Branch-free (both results computed, one selected) so loops over arrays vectorise.
  static uint16_t from_float(float f) {
    uint32_t u = f32_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // nearest even
    uint32_t quiet_nan = (u >> 16) | 0x40u;
    return uint16_t((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
};

}  // namespace oar

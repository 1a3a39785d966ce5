// Random tensor creation (ops/random.cpp, kernels/cpu/random.cpp).
//
// Note [counter-based random numbers]: every random op draws from a
// Philox-4x32-10 stream keyed by a 64-bit seed. The op receives the generator's
// current (seed, offset) as attributes and the global offset advances by the
// number of 32-bit words the op consumes, so element i's value depends only on
// (seed, offset, i): results do not depend on the thread count, and replaying
// an op with its recorded attributes reproduces it exactly.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "ops/op.h"

namespace oar {

// The global generator.
void manual_seed(uint64_t seed);
// (seed, offset) now; offsets count 32-bit words.
std::pair<uint64_t, uint64_t> rng_state();
void set_rng_state(uint64_t seed, uint64_t offset);
// Returns the current (seed, offset) and advances the offset by `words`
// (rounded up to whole Philox blocks of 4 words).
std::pair<uint64_t, uint64_t> rng_reserve(uint64_t words);

namespace ops {

// Uniform in [min, max). seed != 0 uses that seed (offset 0) and leaves the
// global generator alone, as Paddle's `seed` argument does.
Tensor uniform(const Dims& shape, DType dtype, double min = 0.0, double max = 1.0, uint64_t seed = 0);
Tensor gaussian(const Dims& shape, DType dtype, double mean = 0.0, double std = 1.0, uint64_t seed = 0);
// Integers uniform in [low, high).
Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype = DType::Int64);
// 1 with probability x[i], else 0; same shape and dtype as x.
Tensor bernoulli(const Tensor& x);
// Category indices (int64) drawn from the (unnormalised) weights in the last axis of x.
Tensor multinomial(const Tensor& x, int64_t num_samples = 1, bool replacement = false);
Tensor randperm(int64_t n, DType dtype = DType::Int64);

}  // namespace ops
}  // namespace oar

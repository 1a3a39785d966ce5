// Random tensor creation (ops/random.cpp, kernels/cpu/random.cpp).
//
// Note [counter-based random numbers]: every random op draws from a
// Philox-4x32-10 stream keyed by a 64-bit seed. The kernel receives the
// generator's current (seed, offset) as attributes and the global offset
// advances by the number of 32-bit words the op consumes, so element i's value
// depends only on (seed, offset, i): results do not depend on the thread count.
// When the state is drawn: Note [random state at run time].
#pragma once
#include <cstdint>
#include <optional>
#include <span>
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

// Note [random state at run time]
// A random op's last two attributes are (seed, offset). The ops functions
// give an explicit seed as (seed, 0), whose numbers are fixed, and otherwise
// (0, 0): "take them from the global generator when the op runs". The eager
// stage of dispatch (and the inference runtime, which runs kernels itself)
// replaces (0, 0) by rng_reserve of the words the op consumes, just before the
// kernel. So a recorded program (to_static, a saved model) holds (0, 0) and
// draws fresh numbers on each run, advancing the generator as the eager code
// would, instead of repeating the numbers of the traced example.
bool draws_at_run_time(const OpDef& op, const Attrs& attrs);
// attrs with (seed, offset) taken from the global generator (the op's words reserved).
Attrs with_drawn_state(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs);

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

// Random creation ops: uniform, gaussian, randint, bernoulli, multinomial,
// randperm (kernels/cpu/random.cpp). See Note [counter-based random numbers]
// in ops/random.h.
#include "ops/random.h"

#include <cmath>
#include <mutex>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/ops.h"

namespace oar {
namespace {

struct Generator {
  std::mutex mu;
  uint64_t seed = 0x5eed5eedULL;  // fixed, so an unseeded program is still reproducible
  uint64_t offset = 0;
};
Generator& generator() {
  static Generator g;
  return g;
}

void check_float(DType t, const char* api) {
  OAR_CHECK(is_floating(t), Type, "[", api, "] dtype must be a floating-point dtype, got ", dtype_name(t));
}

// Words each element consumes (kernels/cpu/random.cpp draws the same amount).
uint64_t uniform_words(DType t) { return t == DType::Float64 ? 2 : 1; }
uint64_t gaussian_words(DType t) { return t == DType::Float64 ? 4 : 2; }

// attrs of the creation ops: shape, dtype, a, b, seed, offset
Metas uniform_meta(std::span<const Tensor>, const Attrs& a) {
  checked_numel(a.ints(0), "oar.uniform");
  check_float(a.dtype(1), "oar.uniform");
  OAR_CHECK(std::isfinite(a.f(2)) && std::isfinite(a.f(3)) && a.f(2) <= a.f(3), Value,
            "[oar.uniform] min must be <= max and both finite, got min=", a.f(2), " max=", a.f(3));
  return {TensorMeta{a.ints(0), a.dtype(1)}};
}
OpDef& kUniform = OpBuilder("uniform")
                      .attrs({"shape", "dtype", "min", "max", "seed", "offset"})
                      .meta(uniform_meta)
                      .traits({.random = true});

Metas gaussian_meta(std::span<const Tensor>, const Attrs& a) {
  checked_numel(a.ints(0), "oar.normal");
  check_float(a.dtype(1), "oar.normal");
  OAR_CHECK(std::isfinite(a.f(2)) && std::isfinite(a.f(3)) && a.f(3) >= 0, Value,
            "[oar.normal] mean must be finite and std finite and non-negative, got mean=", a.f(2), " std=", a.f(3));
  return {TensorMeta{a.ints(0), a.dtype(1)}};
}
OpDef& kGaussian = OpBuilder("gaussian")
                       .attrs({"shape", "dtype", "mean", "std", "seed", "offset"})
                       .meta(gaussian_meta)
                       .traits({.random = true});

Metas randint_meta(std::span<const Tensor>, const Attrs& a) {
  checked_numel(a.ints(0), "oar.randint");
  DType t = a.dtype(1);
  OAR_CHECK(t == DType::Int32 || t == DType::Int64, Type, "[oar.randint] dtype must be int32 or int64, got ",
            dtype_name(t));
  OAR_CHECK(a.i(2) < a.i(3), Value, "[oar.randint] low must be less than high, got low=", a.i(2), " high=", a.i(3));
  if (t == DType::Int32)
    OAR_CHECK(a.i(2) >= INT32_MIN && a.i(3) - 1 <= INT32_MAX, Value,
              "[oar.randint] [low, high) must fit in int32, got low=", a.i(2), " high=", a.i(3));
  return {TensorMeta{a.ints(0), t}};
}
OpDef& kRandint = OpBuilder("randint")
                      .attrs({"shape", "dtype", "low", "high", "seed", "offset"})
                      .meta(randint_meta)
                      .traits({.random = true});

// bernoulli(x): attrs seed, offset. Probabilities are checked by the kernel
// (they are data), before it starts its threads.
Metas bernoulli_meta(std::span<const Tensor> in, const Attrs&) {
  check_float(in[0].dtype(), "oar.bernoulli");
  return {TensorMeta{in[0].shape(), in[0].dtype()}};
}
OpDef& kBernoulli = OpBuilder("bernoulli").attrs({"seed", "offset"}).meta(bernoulli_meta).traits({.random = true})
                        .spmd("elementwise");

// multinomial(x): attrs num_samples, replacement, seed, offset.
Metas multinomial_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_float(x.dtype(), "oar.multinomial");
  OAR_CHECK(x.dim() == 1 || x.dim() == 2, Value, "[oar.multinomial] x must be 1-D or 2-D, got ", x.dim(), "-D");
  int64_t cats = x.shape()[x.dim() - 1];
  OAR_CHECK(cats > 0, Value, "[oar.multinomial] x must have at least one category");
  OAR_CHECK(a.i(0) > 0, Value, "[oar.multinomial] num_samples must be positive, got ", a.i(0));
  OAR_CHECK(a.b(1) || a.i(0) <= cats, Value, "[oar.multinomial] num_samples (", a.i(0),
            ") must not exceed the number of categories (", cats, ") when replacement is False");
  Dims s = x.shape();
  s[s.size() - 1] = a.i(0);
  return {TensorMeta{s, DType::Int64}};
}
OpDef& kMultinomial = OpBuilder("multinomial")
                          .attrs({"num_samples", "replacement", "seed", "offset"})
                          .meta(multinomial_meta)
                          .traits({.random = true});

// randperm: attrs n, dtype, seed, offset.
Metas randperm_meta(std::span<const Tensor>, const Attrs& a) {
  OAR_CHECK(a.i(0) >= 0, Value, "[oar.randperm] n must be non-negative, got ", a.i(0));
  DType t = a.dtype(1);
  OAR_CHECK(is_integral(t) || is_floating(t), Type, "[oar.randperm] dtype must be an integer or float dtype, got ",
            dtype_name(t));
  return {TensorMeta{Dims{a.i(0)}, t}};
}
OpDef& kRandperm = OpBuilder("randperm").attrs({"n", "dtype", "seed", "offset"}).meta(randperm_meta).traits({.random = true});

uint64_t words_of(int64_t n, uint64_t per) { return uint64_t(n) * per; }

// The 32-bit words the op's kernel draws (kernels/cpu/random.cpp draws the same amount).
uint64_t random_words(const OpDef& op, std::span<const Tensor> in, const Attrs& a) {
  if (&op == &kUniform) return words_of(checked_numel(a.ints(0), "oar.random"), uniform_words(a.dtype(1)));
  if (&op == &kGaussian) return words_of(checked_numel(a.ints(0), "oar.random"), gaussian_words(a.dtype(1)));
  if (&op == &kRandint) return words_of(checked_numel(a.ints(0), "oar.random"), 2);
  if (&op == &kBernoulli) return words_of(in[0].numel(), uniform_words(in[0].dtype()));
  if (&op == &kRandperm) return words_of(a.i(0), 2);
  OAR_CHECK(&op == &kMultinomial, Runtime, "[oar.", op.name, "] is not a random op of ops/random.cpp");
  const Tensor& x = in[0];
  const int64_t rows = x.dim() == 2 ? x.shape()[0] : 1;
  return words_of(rows * (a.b(1) ? a.i(0) : x.shape()[x.dim() - 1]), 2);
}
}  // namespace

bool draws_at_run_time(const OpDef& op, const Attrs& attrs) {
  return op.traits.random && attrs.size() >= 2 && attrs.i(attrs.size() - 2) == 0;
}

Attrs with_drawn_state(const OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs) {
  auto [s, off] = rng_reserve(random_words(op, inputs, attrs));
  Attrs out;
  for (size_t k = 0; k + 2 < attrs.size(); ++k) out.push_back(attrs[k]);
  out.push_back(int64_t(s));
  out.push_back(int64_t(off));
  return out;
}

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  g.seed = seed;
  g.offset = 0;
}
std::pair<uint64_t, uint64_t> rng_state() {
  Generator& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  return {g.seed, g.offset};
}
void set_rng_state(uint64_t seed, uint64_t offset) {
  Generator& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  g.seed = seed;
  g.offset = (offset + 3) / 4 * 4;
}
std::pair<uint64_t, uint64_t> rng_reserve(uint64_t words) {
  Generator& g = generator();
  std::lock_guard<std::mutex> l(g.mu);
  std::pair<uint64_t, uint64_t> s{g.seed, g.offset};
  g.offset += (words + 3) / 4 * 4;  // whole Philox blocks, so every op starts on a block
  return s;
}

namespace ops {

Tensor uniform(const Dims& shape, DType dtype, double min, double max, uint64_t seed) {
  checked_numel(shape, "oar.uniform");
  check_float(dtype, "oar.uniform");
  // An explicit seed: fixed numbers; else (0, 0): Note [random state at run time].
  return dispatch1(kUniform, std::span<const Tensor>(), Attrs{shape, dtype, min, max, int64_t(seed), int64_t(0)});
}

Tensor gaussian(const Dims& shape, DType dtype, double mean, double std, uint64_t seed) {
  checked_numel(shape, "oar.normal");
  check_float(dtype, "oar.normal");
  return dispatch1(kGaussian, std::span<const Tensor>(), Attrs{shape, dtype, mean, std, int64_t(seed), int64_t(0)});
}

Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype) {
  checked_numel(shape, "oar.randint");
  OAR_CHECK(low < high, Value, "[oar.randint] low must be less than high, got low=", low, " high=", high);
  return dispatch1(kRandint, std::span<const Tensor>(), Attrs{shape, dtype, low, high, int64_t(0), int64_t(0)});
}

Tensor bernoulli(const Tensor& x) {
  check_float(x.dtype(), "oar.bernoulli");
  // Detached: sampling has no gradient. Contiguous: the kernel reads by flat index.
  Tensor in[1] = {detach(contiguous(x))};
  return dispatch1(kBernoulli, in, Attrs{int64_t(0), int64_t(0)});
}

Tensor multinomial(const Tensor& x, int64_t num_samples, bool replacement) {
  Tensor in[1] = {detach(contiguous(x))};
  Attrs probe{num_samples, replacement, int64_t(0), int64_t(0)};
  multinomial_meta(in, probe);  // validate before consuming random words
  int64_t cats = x.shape()[x.dim() - 1];
  int64_t rows = x.dim() == 2 ? x.shape()[0] : 1;
  // The draws' count, checked for overflow before any arithmetic on it.
  checked_numel(Dims{rows, replacement ? num_samples : cats}, "oar.multinomial");
  return dispatch1(kMultinomial, in, Attrs{num_samples, replacement, int64_t(0), int64_t(0)});
}

Tensor randperm(int64_t n, DType dtype) {
  OAR_CHECK(n >= 0, Value, "[oar.randperm] n must be non-negative, got ", n);
  return dispatch1(kRandperm, std::span<const Tensor>(), Attrs{n, dtype, int64_t(0), int64_t(0)});
}

}  // namespace ops
}  // namespace oar

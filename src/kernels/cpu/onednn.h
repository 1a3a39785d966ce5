// One oneDNN engine and stream for the CPU kernels, a small LRU cache of
// primitives keyed by shape/attributes (creating one costs tens of
// microseconds, more than running a small convolution), and memory-descriptor
// helpers for plain (row-major) tensors.
#pragma once
#include <dnnl.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace oar::cpu::dnnl_util {

dnnl::engine& engine();
dnnl::stream& stream();

// Plain row-major descriptor of `shape` with oneDNN's data type for `dt`.
dnnl::memory::desc plain_md(const Dims& shape, DType dt);
dnnl::memory::data_type data_type(DType dt);
// A memory object over a tensor's data (no copy).
dnnl::memory wrap(const dnnl::memory::desc& md, const Tensor& t);

// Attributes every primitive is created with: a scratchpad the caller
// passes at each execution. (oneDNN's own, library-managed scratchpad
// crashed Winograd convolutions run by two threads at once; with ours each
// execution has its own, from oar's caching allocator.)
dnnl::primitive_attr attr();

// A primitive with the memory layouts it chose for its arguments (primitives
// created with format_tag::any pick blocked layouts that run much faster
// than the plain ones our tensors have). Create it with attr() (or attributes
// that start from it).
struct Prim {
  dnnl::primitive prim;
  std::vector<dnnl::memory::desc> mds;
  dnnl::memory::desc scratchpad = {};  // filled in by cached()
};

// The cached primitive for `key`, built with `make` on a miss.
Prim cached(const std::string& key, const std::function<Prim()>& make);

// One argument of a primitive: the tensor in its plain layout and the layout
// the primitive wants. Inputs are reordered in before running, outputs out
// after; nothing is copied where the layouts agree.
struct Arg {
  int id;
  const Tensor* t;
  dnnl::memory::desc plain;
  dnnl::memory::desc want;
  bool output;
  // An output the primitive also reads (a sum post-op) starts as a copy of
  // this tensor, of the same shape (it may be `t` itself).
  const Tensor* init = nullptr;
};
void execute(const Prim& p, const std::vector<Arg>& args, const std::string& key);

// The eltwise algorithm (and its alpha, beta) of a fused activation: relu,
// gelu, gelu_tanh, silu, sigmoid, tanh, or clip to [lo, hi] (infinite bounds
// for none).
dnnl::algorithm eltwise_alg(const std::string& act, float lo, float hi, float* alpha, float* beta);

// "f32:[1,2,3]" style fragments for keys.
std::string key_dims(const Dims& d);
// The bytes of a descriptor, for keys.
std::string layout_key(const dnnl::memory::desc& md);

// The layout `t` is kept in (Note [layout hand-off] in kernels/cpu/handoff.h)
// when the running step may read kept inputs and `t` is one.
std::optional<dnnl::memory::desc> kept_layout(const Tensor& t);

// Whether oneDNN runs bfloat16 products natively on this CPU (AVX512-BF16 or
// AMX), faster than converting them to float32.
bool native_bf16();
// Whether oneDNN uses AMX tiles on this CPU.
bool has_amx();

// c[m x n] (float32) = beta c + op(a) op(b) for bfloat16 (raw bits) a and b,
// row-major with BLAS leading dims (op(a) = a^T with ta, a being [k x m]);
// beta is 0 or 1. Runs on the calling thread, for kernels inside their own
// parallel loops; oneDNN's bfloat16 matmul (AMX where the CPU has it).
void gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
               int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace oar::cpu::dnnl_util

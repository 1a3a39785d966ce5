#include "kernels/cpu/onednn.h"
#include "kernels/cpu/handoff.h"

#include <cmath>
#include <limits>
#include <list>
#include <mutex>
#include <unordered_map>

#include "base/error.h"

namespace oar::cpu::dnnl_util {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  // One per thread: primitives may run concurrently, a stream object is not
  // documented as safe to share between threads.
  thread_local dnnl::stream s(engine());
  return s;
}

dnnl::memory::data_type data_type(DType dt) {
  switch (dt) {
    case DType::BFloat16: return dnnl::memory::data_type::bf16;
    case DType::Float16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::f32;
  }
}

dnnl::memory::desc plain_md(const Dims& shape, DType dt) {
  dnnl::memory::dims d(shape.begin(), shape.end());
  Dims st = contiguous_strides(shape);
  dnnl::memory::dims s(st.begin(), st.end());
  return dnnl::memory::desc(d, data_type(dt), s);
}

dnnl::memory wrap(const dnnl::memory::desc& md, const Tensor& t) {
  return dnnl::memory(md, engine(), t.raw_data());
}

dnnl::primitive_attr attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

namespace {
constexpr size_t kCacheCapacity = 256;
struct Cache {
  std::mutex mu;
  std::list<std::pair<std::string, Prim>> lru;  // most recent first
  std::unordered_map<std::string, decltype(lru)::iterator> index;
};
Cache& cache() {
  static Cache c;
  return c;
}
}  // namespace

Prim cached(const std::string& key, const std::function<Prim()>& make) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto it = c.index.find(key);
    if (it != c.index.end()) {
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      return it->second->second;
    }
  }
  Prim p = make();  // outside the lock: creation is the slow part
  const dnnl_memory_desc_t* sp =
      dnnl_primitive_desc_query_md(p.prim.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
  if (sp) p.scratchpad = dnnl::memory::desc(*sp);
  std::lock_guard<std::mutex> g(c.mu);
  if (c.index.count(key)) return p;
  c.lru.emplace_front(key, p);
  c.index[key] = c.lru.begin();
  if (c.lru.size() > kCacheCapacity) {
    c.index.erase(c.lru.back().first);
    c.lru.pop_back();
  }
  return p;
}

namespace {

dnnl::memory pooled(const dnnl::memory::desc& md, Tensor* owner);

// `p` on `args` plus a scratchpad of its own (kept alive in `keep`).
void run(const Prim& p, std::unordered_map<int, dnnl::memory>& args, std::vector<Tensor>& keep) {
  if (p.scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, pooled(p.scratchpad, &keep.emplace_back()));
  p.prim.execute(stream(), args);
}

void reorder(const dnnl::memory& from, const dnnl::memory& to, const std::string& key) {
  Prim r = cached(key, [&] {
    return Prim{dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from.get_desc(), engine(), to.get_desc(), attr())),
                {}};
  });
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  std::vector<Tensor> keep;
  run(r, args, keep);
  if (!keep.empty()) stream().wait();  // the scratchpad's buffer returns to the allocator
}

// Inputs of read-only storages (Note [read-only storage]) in the layouts
// primitives asked for, so a predictor's weights are reordered once rather
// than at every run. Keyed by storage, element offset and the primitive key
// plus argument id (which fix the layout); dropped when the storage dies.
struct PackedKey {
  const Storage* storage;
  int64_t offset;
  std::string layout;
  bool operator==(const PackedKey& o) const {
    return storage == o.storage && offset == o.offset && layout == o.layout;
  }
};
struct PackedKeyHash {
  size_t operator()(const PackedKey& k) const {
    return std::hash<const void*>()(k.storage) ^ (std::hash<std::string>()(k.layout) * 31 + size_t(k.offset));
  }
};
struct Packed {
  std::mutex mu;
  std::unordered_map<PackedKey, dnnl::memory, PackedKeyHash> map;
};
Packed& packed() {
  static Packed* p = [] {
    Storage::set_read_only_release_hook([](const Storage* s) {
      Packed& c = packed();
      std::lock_guard<std::mutex> g(c.mu);
      std::erase_if(c.map, [s](const auto& kv) { return kv.first.storage == s; });
    });
    return new Packed;  // never destroyed: storages may be freed during exit
  }();
  return *p;
}

// A memory of layout `md` in a block of oar's caching allocator, owned by
// `owner`. (A dnnl::memory that allocates for itself mallocs anew on every
// call: for the activations of a large batch that is an mmap, and its page
// faults cost more than the convolution writing it.)
dnnl::memory pooled(const dnnl::memory::desc& md, Tensor* owner) {
  const size_t n = md.get_size();
  if (n == 0) return dnnl::memory(md, engine());
  *owner = empty_tensor(Dims{int64_t(n)}, DType::UInt8);
  return dnnl::memory(md, engine(), owner->raw_data());
}

dnnl::memory reorder_in(const Arg& a, const std::string& key, std::vector<Tensor>& keep) {
  dnnl::memory user = wrap(a.plain, *a.t);
  std::string rkey = key + "/reorder" + std::to_string(a.id);
  if (!a.t->storage().read_only()) {
    dnnl::memory internal = pooled(a.want, &keep.emplace_back());
    reorder(user, internal, rkey + "in");
    return internal;
  }
  Packed& c = packed();
  PackedKey pk{&a.t->storage(), a.t->impl()->offset, rkey};
  {
    std::lock_guard<std::mutex> g(c.mu);
    auto it = c.map.find(pk);
    if (it != c.map.end()) return it->second;
  }
  dnnl::memory internal(a.want, engine());
  reorder(user, internal, rkey + "in");
  stream().wait();
  std::lock_guard<std::mutex> g(c.mu);
  return c.map.emplace(std::move(pk), internal).first->second;
}

// Note [layout hand-off] in kernels/cpu/handoff.h.
struct Kept {
  const void* data;  // the plain buffer it stands for
  dnnl::memory mem;
  Tensor owner;  // mem's buffer
};
struct Handoff {
  bool active = false, keep_output = false, residual_dies = false;
  std::vector<Kept> kept;  // a handful live at once
  Kept* find(const void* data) {
    for (Kept& k : kept)
      if (k.data == data) return &k;
    return nullptr;
  }
  void erase(const void* data) {
    std::erase_if(kept, [data](const Kept& k) { return k.data == data; });
  }
};
Handoff& handoff() {
  thread_local Handoff h;
  return h;
}

}  // namespace

// oneDNN 2.x descriptors are plain structs, zero-initialised.
std::string layout_key(const dnnl::memory::desc& md) {
  return std::string(reinterpret_cast<const char*>(&md.data), sizeof(md.data));
}

std::optional<dnnl::memory::desc> kept_layout(const Tensor& t) {
  Handoff& h = handoff();
  const Kept* k = h.active ? h.find(t.raw_data()) : nullptr;
  if (!k) return std::nullopt;
  return k->mem.get_desc();
}

namespace {

// Copies `from` into `to`, converting the layout.
void convert(const dnnl::memory& from, const dnnl::memory& to) {
  reorder(from, to, "handoff" + layout_key(from.get_desc()) + layout_key(to.get_desc()));
}

// `k`'s data in layout `want`: the kept memory itself, or a converted copy.
dnnl::memory in_layout(const Kept& k, const dnnl::memory::desc& want, std::vector<Tensor>& keep) {
  if (k.mem.get_desc() == want) return k.mem;
  dnnl::memory m = pooled(want, &keep.emplace_back());
  convert(k.mem, m);
  return m;
}

}  // namespace

void execute(const Prim& p, const std::vector<Arg>& args, const std::string& key) {
  std::unordered_map<int, dnnl::memory> margs;
  std::vector<std::pair<dnnl::memory, dnnl::memory>> outs;  // (internal, user)
  std::vector<Tensor> keep;                                 // buffers of internal memories, until the end
  std::vector<size_t> out_owners;                           // indices into keep
  Handoff& h = handoff();
  const bool lookup = h.active && !h.kept.empty();
  for (const Arg& a : args) {
    if (!a.output) {
      if (Kept* k = lookup ? h.find(a.t->raw_data()) : nullptr) {
        margs.emplace(a.id, in_layout(*k, a.want, keep));
      } else {
        margs.emplace(a.id, a.want == a.plain ? wrap(a.plain, *a.t) : reorder_in(a, key, keep));
      }
      continue;
    }
    dnnl::memory user = wrap(a.plain, *a.t);
    Kept* init = a.init && lookup ? h.find(a.init->raw_data()) : nullptr;
    dnnl::memory internal;
    if (init && h.residual_dies && init->mem.get_desc() == a.want) {
      // The initial values are dead after this call: write over them.
      for (const Arg& b : args)
        OAR_CHECK(b.output || b.t->raw_data() != a.init->raw_data(), Runtime,
                  "[oar.fused_conv] internal: a residual that dies is also read");
      internal = init->mem;
      out_owners.push_back(keep.size());
      keep.push_back(std::move(init->owner));
      h.erase(a.init->raw_data());
    } else if (a.want == a.plain) {
      internal = user;
      if (init) convert(init->mem, user);
      else if (a.init && a.init->raw_data() != a.t->raw_data())
        std::memcpy(a.t->raw_data(), a.init->raw_data(), size_t(a.t->numel()) * a.t->itemsize());
    } else {
      out_owners.push_back(keep.size());
      internal = pooled(a.want, &keep.emplace_back());
      if (init) convert(init->mem, internal);
      else if (a.init) reorder(wrap(a.plain, *a.init), internal, key + "/reorder" + std::to_string(a.id) + "init");
    }
    if (a.want != a.plain) outs.emplace_back(internal, user);
    margs.emplace(a.id, internal);
  }
  run(p, margs, keep);
  if (h.active && h.keep_output && outs.size() == 1 && out_owners.size() == 1) {
    h.erase(outs[0].second.get_data_handle());
    h.kept.push_back({outs[0].second.get_data_handle(), outs[0].first, std::move(keep[out_owners[0]])});
  } else {
    for (size_t i = 0; i < outs.size(); ++i) reorder(outs[i].first, outs[i].second, key + "/out" + std::to_string(i));
  }
  stream().wait();
}

}  // namespace oar::cpu::dnnl_util

namespace oar::cpu {

void set_layout_handoff(bool active, bool keep_output, bool residual_dies) {
  dnnl_util::Handoff& h = dnnl_util::handoff();
  h.active = active;
  h.keep_output = keep_output;
  h.residual_dies = residual_dies;
}

void release_layout_handoff(const void* data) { dnnl_util::handoff().erase(data); }

void materialize_layout_handoff(const Tensor& t) {
  dnnl_util::Handoff& h = dnnl_util::handoff();
  dnnl_util::Kept* k = h.active ? h.find(t.raw_data()) : nullptr;
  if (!k) return;
  dnnl_util::convert(k->mem, dnnl_util::wrap(dnnl_util::plain_md(t.shape(), t.dtype()), t));
  dnnl_util::stream().wait();
  h.erase(t.raw_data());
}

void clear_layout_handoff() {
  dnnl_util::Handoff& h = dnnl_util::handoff();
  h = dnnl_util::Handoff();
}

LayoutHandoffOff::LayoutHandoffOff() {
  dnnl_util::Handoff& h = dnnl_util::handoff();
  active_ = h.active, keep_output_ = h.keep_output, residual_dies_ = h.residual_dies;
  set_layout_handoff(false);
}

LayoutHandoffOff::~LayoutHandoffOff() { set_layout_handoff(active_, keep_output_, residual_dies_); }

}  // namespace oar::cpu

namespace oar::cpu::dnnl_util {

dnnl::algorithm eltwise_alg(const std::string& act, float lo, float hi, float* alpha, float* beta) {
  using dnnl::algorithm;
  *alpha = 0.0f;
  *beta = 0.0f;
  if (act == "relu") return algorithm::eltwise_relu;
  if (act == "clip") {
    constexpr float big = std::numeric_limits<float>::max();
    *alpha = std::isfinite(lo) ? lo : -big;
    *beta = std::isfinite(hi) ? hi : big;
    return algorithm::eltwise_clip;
  }
  if (act == "gelu") return algorithm::eltwise_gelu_erf;
  if (act == "gelu_tanh") return algorithm::eltwise_gelu_tanh;
  if (act == "silu") {
    *alpha = 1.0f;
    return algorithm::eltwise_swish;
  }
  if (act == "sigmoid") return algorithm::eltwise_logistic;
  if (act == "tanh") return algorithm::eltwise_tanh;
  fail(ErrorKind::Runtime, "[oar] internal: no oneDNN activation '", act, "'");
}

std::string key_dims(const Dims& d) {
  std::string s = "[";
  for (int64_t v : d) { s += std::to_string(v); s += ','; }
  s += ']';
  return s;
}

namespace {
bool has_isa(dnnl::cpu_isa want) {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
}
}  // namespace

bool native_bf16() {
  static const bool yes = has_isa(dnnl::cpu_isa::avx512_core_bf16);
  return yes;
}

bool has_amx() {
  static const bool yes = has_isa(dnnl::cpu_isa::avx512_core_amx);
  return yes;
}

namespace {

struct GemmKey {
  bool ta, tb, acc;
  int64_t m, n, k, lda, ldb, ldc;
  bool operator==(const GemmKey&) const = default;
};
struct GemmKeyHash {
  size_t operator()(const GemmKey& g) const {
    size_t h = size_t(g.ta) | size_t(g.tb) << 1 | size_t(g.acc) << 2;
    for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc}) h = h * 1000003u ^ size_t(v);
    return h;
  }
};
struct GemmPrim {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c, scratch;
};

}  // namespace

void gemm_bf16(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
               int64_t ldb, float beta, float* c, int64_t ldc) {
  OAR_CHECK(beta == 0.0f || beta == 1.0f, Runtime, "[oar] internal: gemm_bf16 takes beta 0 or 1, got ", beta);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0f)
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  // Kernels call this from their own parallel loops: each thread keeps its
  // primitives (a few block shapes per call) and its scratchpad.
  thread_local std::unordered_map<GemmKey, GemmPrim, GemmKeyHash> cache;
  thread_local std::vector<uint8_t> scratch;
  const GemmKey key{ta, tb, beta != 0.0f, m, n, k, lda, ldb, ldc};
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 256) cache.clear();
    using dt = dnnl::memory::data_type;
    GemmPrim g;
    g.a = dnnl::memory::desc({m, k}, dt::bf16, ta ? dnnl::memory::dims{1, lda} : dnnl::memory::dims{lda, 1});
    g.b = dnnl::memory::desc({k, n}, dt::bf16, tb ? dnnl::memory::dims{1, ldb} : dnnl::memory::dims{ldb, 1});
    g.c = dnnl::memory::desc({m, n}, dt::f32, dnnl::memory::dims{ldc, 1});
    dnnl::primitive_attr at = attr();
    if (key.acc) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      at.set_post_ops(po);
    }
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(g.a, g.b, g.c), at, engine());
      g.prim = dnnl::matmul(pd);
      g.scratch = pd.scratchpad_desc();
    } catch (const dnnl::error& e) {
      fail(ErrorKind::Runtime, "[oar] oneDNN could not make a bfloat16 matmul: ", e.what());
    }
    it = cache.emplace(key, std::move(g)).first;
  }
  const GemmPrim& g = it->second;
  if (scratch.size() < g.scratch.get_size()) scratch.resize(g.scratch.get_size());
  dnnl::engine& e = engine();
  dnnl::memory ma(g.a, e, const_cast<uint16_t*>(a)), mb(g.b, e, const_cast<uint16_t*>(b)), mc(g.c, e, c),
      ms(g.scratch, e, scratch.data());
  g.prim.execute(stream(), {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, ms}});
  stream().wait();
}

}  // namespace oar::cpu::dnnl_util

// Note [generated elementwise kernels]
// A fused_elementwise program (ops/fused.h) is compiled into one loop nest:
// every input element is loaded once, the instructions become C++
// expressions on scalars held in registers, and the result is stored once;
// no intermediate ever reaches memory, unlike the op-by-op kernels or the
// block interpreter (kernels/cpu/fused.cpp), which makes a pass over a
// block per instruction.
//
// Iteration space: the output's shape with size-1 dims dropped and dims
// merged where every operand is contiguous across them (the same collapse
// the elementwise kernels do), so most kernels see one or two dims. The
// generated function takes a range [begin, end) of flat output indices and
// walks it row by row (a row: one run of the innermost dim); oar's thread
// pool splits the range, so the kernels follow oar's thread settings.
//
// Specialisation (the cache key): the dtype, the program, and how each input
// is read along the innermost dim (Access). Sizes, strides and the rank are
// arguments, so one kernel serves every shape with the same access pattern:
// a graph with a dynamic batch dim compiles once (Note [symbolic dims]).
//
// Vectorisation: a row is processed in chunks of kChunk elements when the
// program calls vector math, else in one loop (chunk_len). The
// arithmetic of a chunk is `omp simd` loops that GCC vectorises for the
// CPU (-march=native); the transcendental functions (exp, tanh, erf, gelu,
// ...) are calls into oar's vector math (kernels/cpu/vmath.h) on chunk
// buffers that stay in L1, passed in as function pointers: the same
// functions, to the bit, as eager mode's kernels, and 2-3x faster than
// libm's vector forms (bias + gelu over 1M floats: 213 us against 425 us
// with glibc's libmvec erff). A call splits the chunk's work into a loop
// before it and one after it; values crossing a call live in chunk
// buffers. float16 and bfloat16 load into float and round back on the
// store, as the op-by-op kernels do. The source includes no header, which
// keeps a compile near 80-120 ms.
//
// Reductions (fused_reduce: the program's values reduced over some dims, as
// they are computed): the space is collapsed keeping reduced and kept dims
// apart. When the innermost dim is reduced ("inner"), each output's
// elements are reduced in vector registers (an `omp simd` reduction; max
// and min carry NaN in a flag, as vector max/min drop it) and the pool
// splits the outputs; a single output (a loss) is split along its elements
// instead, and the threads' partial accumulators are combined. When the
// innermost dim is kept ("outer", e.g. a bias gradient's column sums), a
// chunk of outputs accumulates one vector lane per output over every
// reduced position.
//
// Note [symbolic dims]
// Nothing of a tensor's size is baked into a kernel: a group compiled for
// [None, 128] serves every batch size, and so does one compiled for a fixed
// shape. What a new shape can change is the access pattern (a dim of size 1
// that broadcasts, a view's strides), and each pattern is its own kernel,
// compiled the first time it is met; there is no bucketing to do.
#include "compiler/codegen_cpu.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "compiler/expr.h"
#include "compiler/jit.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"
#include "ops/fused.h"

namespace oar::compiler {
namespace {

using ops::EwCode;

// The codes that run as calls into oar's vector math (kernels/cpu/vmath.h)
// over a chunk buffer: the same functions the op-by-op kernels call, so a
// fused group rounds them as eager mode does. -1 for the codes above.
int vmath_fn(EwCode c) {
  using cpu::vmath::Fn;
  switch (c) {
    case EwCode::Exp: return int(Fn::Exp);
    case EwCode::Log: return int(Fn::Log);
    case EwCode::Sin: return int(Fn::Sin);
    case EwCode::Cos: return int(Fn::Cos);
    case EwCode::Tanh: return int(Fn::Tanh);
    case EwCode::Sigmoid: return int(Fn::Sigmoid);
    case EwCode::Erf: return int(Fn::Erf);
    case EwCode::Silu: return int(Fn::Silu);
    case EwCode::Gelu: return int(Fn::Gelu);
    case EwCode::GeluTanh: return int(Fn::GeluTanh);
    case EwCode::Expm1: return int(Fn::Expm1);
    case EwCode::Log1p: return int(Fn::Log1p);
    default: return -1;
  }
}

// Elements per chunk: the buffers of a chunk stay in L1.
constexpr int kChunk = 256;
// The exported symbol of every generated library.
constexpr const char* kSymbol = "oar_kernel";

// Declarations the kernels need, in place of <cmath>: the vector-capable
// math functions of both precisions, and the 16-bit float conversions.
constexpr const char* kPrelude = R"(typedef long long i64;
typedef unsigned int u32;
typedef unsigned short u16;
extern "C" {
#pragma omp declare simd notinbranch
float powf(float, float);
#pragma omp declare simd notinbranch
double pow(double, double);
}
static inline float sqrtf_(float x) { return __builtin_sqrtf(x); }
static inline double sqrt_(double x) { return __builtin_sqrt(x); }
static inline float fabsf_(float x) { return __builtin_fabsf(x); }
static inline double fabs_(double x) { return __builtin_fabs(x); }
static inline u32 bits_(float f) { u32 u; __builtin_memcpy(&u, &f, 4); return u; }
static inline float float_(u32 u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline float load_bf16(u16 h) { return float_(u32(h) << 16); }
static inline u16 store_bf16(float f) {
  u32 u = bits_(f);
  u32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return u16((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : rounded);
}
static inline float load_f16(_Float16 h) { return float(h); }
static inline _Float16 store_f16(float f) { return _Float16(f); }
struct KArgs {
  i64 rank; const i64* shape; const void* const* in; const i64* strides; void* out; const void* vm;
  const i64* kept; i64 n_kept; const i64* red; i64 n_red; i64 count;
  i64 lo, hi, partial;
};
)";

TypeNames names_of(DType dt) { return type_names(dt, false); }

// Elements per chunk of a loop: kChunk when the program calls vmath (its
// buffers stay in L1), else a whole row in one loop (shorter loops and, in a
// reduction, one horizontal sum per row instead of one per chunk: 256 x 4096
// bfloat16 row sums 62 -> 33 us).
std::string chunk_len(const Dims& program) {
  for (size_t k = 0; k < program.size(); k += 3)
    if (vmath_fn(EwCode(program[k])) >= 0) return std::to_string(kChunk);
  return "(i64(1) << 40)";
}


// The chunk code of a program: the statements that evaluate it over the
// elements e < m of a chunk and hand its value to `consume`, split at vmath
// calls (see the Note). `input(j)` is the expression of input j at element
// e. `decls` gets the chunk buffers, declared once per kernel call.
struct Chunk {
  std::string decls, code;
};
Chunk emit_chunk(const TypeNames& tn, const Dims& program, int n_in, const std::function<std::string(int)>& input,
                 const std::function<std::string(const std::string&)>& consume, const std::string& indent,
                 const std::string& last_clauses = "") {
  const int n_instr = int(program.size() / 3), n_regs = n_in + n_instr;
  auto code_of = [&](int k) { return EwCode(program[size_t(3 * k)]); };
  auto is_call = [&](int k) { return vmath_fn(code_of(k)) >= 0; };
  auto operands = [&](int k) {
    std::vector<int> r{int(program[size_t(3 * k + 1)])};
    if (program[size_t(3 * k + 2)] >= 0) r.push_back(int(program[size_t(3 * k + 2)]));
    return r;
  };
  // A register read outside the loop that computes it, a call's operand and
  // every call's result live in chunk buffers b<reg>; a call whose operand
  // is an input gets the input copied into bi<k>.
  std::vector<int> loop_of(size_t(n_regs), -1);
  for (int k = 0, calls = 0; k < n_instr; ++k) {
    if (is_call(k)) ++calls;
    else loop_of[size_t(n_in + k)] = calls;
  }
  std::vector<char> buffered(size_t(n_regs), 0);
  for (int k = 0; k < n_instr; ++k) {
    if (is_call(k)) buffered[size_t(n_in + k)] = 1;
    for (int r : operands(k))
      if (r >= n_in && (is_call(k) || loop_of[size_t(r)] != loop_of[size_t(n_in + k)])) buffered[size_t(r)] = 1;
  }
  Chunk out;
  for (int r = n_in; r < n_regs; ++r)
    if (buffered[size_t(r)]) out.decls += "  T b" + std::to_string(r) + "[" + std::to_string(kChunk) + "];\n";
  for (int k = 0; k < n_instr; ++k)
    if (is_call(k) && operands(k)[0] < n_in)
      out.decls += "  T bi" + std::to_string(k) + "[" + std::to_string(kChunk) + "];\n";
  std::ostringstream s, body;
  const std::string in2 = indent + "  ";
  std::vector<char> loaded(size_t(n_in), 0), here(size_t(n_regs), 0);
  auto ref = [&](int r) -> std::string {
    if (r < n_in) {
      if (!loaded[size_t(r)]) body << in2 << "const T v" << r << " = " << input(r) << ";\n";
      loaded[size_t(r)] = 1;
      return reg_name("v", r);
    }
    return here[size_t(r)] ? reg_name("t", r) : reg_name("b", r) + "[e]";
  };
  auto flush = [&](const std::string& clauses) {
    const std::string b = body.str();
    if (!b.empty())
      s << "#pragma omp simd" << clauses << "\n" << indent << "for (i64 e = 0; e < m; ++e) {\n" << b << indent << "}\n";
    body.str("");
    std::fill(loaded.begin(), loaded.end(), 0);
    std::fill(here.begin(), here.end(), 0);
  };
  for (int k = 0; k < n_instr; ++k) {
    const std::vector<int> ops = operands(k);
    const int reg = n_in + k;
    if (is_call(k)) {
      std::string src = reg_name("b", ops[0]);
      if (ops[0] < n_in) {
        src = reg_name("bi", k);
        const std::string v = ref(ops[0]);  // (first: it may add the input's load to the body)
        body << in2 << src << "[e] = " << v << ";\n";
      }
      flush("");
      s << indent << "vm[" << vmath_fn(code_of(k)) << "](" << src << ", b" << reg << ", m);\n";
      continue;
    }
    const std::string a = ref(ops[0]), b = ops.size() > 1 ? ref(ops[1]) : "";
    body << in2 << "const T t" << reg << " = T(" << instantiate(scalar_expression(code_of(k), false), a, b, tn.suffix, "_") << ");\n";
    here[size_t(reg)] = 1;
    if (buffered[size_t(reg)]) body << in2 << "b" << reg << "[e] = t" << reg << ";\n";
  }
  const std::string v = ref(n_regs - 1);
  body << in2 << consume(v) << "\n";
  flush(last_clauses);
  out.code = s.str();
  return out;
}

// The kernel's opening: its signature, the vmath table and the inputs.
std::string kernel_head(const TypeNames& tn, std::span<const Access> access, const std::string& symbol) {
  std::ostringstream s;
  s << kPrelude << "typedef " << tn.compute << " T;\ntypedef " << tn.storage << " S;\n"
    << "typedef void (*VF)(const T*, T*, i64);\n"
    << "extern \"C\" __attribute__((visibility(\"default\"))) void " << symbol
    << "(const KArgs* A, i64 begin, i64 end) {\n"
    << "  const i64 R = A->rank;\n"
    << "  const VF* vm = (const VF*)A->vm;\n"
    << "  S* out = (S*)A->out;\n";
  const std::string load = tn.load;
  for (size_t j = 0; j < access.size(); ++j) {
    const std::string J = std::to_string(j);
    s << "  const S* in" << J << " = (const S*)A->in[" << J << "];\n"
      << "  const i64* st" << J << " = A->strides + " << J << " * R;\n";
    if (access[j] == Access::Scalar) s << "  const T k" << J << " = " << load << "(in" << J << "[0]);\n";
  }
  return s.str();
}

// Adds to each non-scalar input's offset o<j> the position of flat index
// `q` over the dims A-><list>[0 .. count).
std::string offsets_of(std::span<const Access> access, const std::string& q, const std::string& list,
                       const std::string& count, const std::string& indent) {
  std::ostringstream s;
  s << indent << "for (i64 d = " << count << " - 1, q = " << q << "; d >= 0; --d) {\n"
    << indent << "  const i64 dim = " << list << "[d], x = q % A->shape[dim];\n"
    << indent << "  q /= A->shape[dim];\n";
  for (size_t j = 0; j < access.size(); ++j)
    if (access[j] != Access::Scalar) s << indent << "  o" << j << " += x * st" << j << "[dim];\n";
  s << indent << "}\n";
  return s.str();
}

// Per input, from its offset o<j> and the innermost index `c` where the
// innermost loop starts: its pointer p<j> (or per-row value k<j>).
std::string pointers(const TypeNames& tn, std::span<const Access> access, const std::string& c,
                     const std::string& indent) {
  std::ostringstream s;
  for (size_t j = 0; j < access.size(); ++j) {
    const std::string J = std::to_string(j);
    switch (access[j]) {
      case Access::Dense: s << indent << "const S* p" << J << " = in" << J << " + o" << J << " + " << c << ";\n"; break;
      case Access::Strided:
        s << indent << "const i64 s" << J << " = st" << J << "[R - 1];\n"
          << indent << "const S* p" << J << " = in" << J << " + o" << J << " + " << c << " * s" << J << ";\n";
        break;
      case Access::PerRow: s << indent << "const T k" << J << " = " << tn.load << "(in" << J << "[o" << J << "]);\n"; break;
      case Access::Scalar: break;
    }
  }
  return s.str();
}

std::function<std::string(int)> chunk_input(const TypeNames& tn, std::span<const Access> access) {
  return [tn, access](int j) {
    const std::string J = std::to_string(j);
    switch (access[size_t(j)]) {
      case Access::Dense: return std::string(tn.load) + "(p" + J + "[c0 + e])";
      case Access::Strided: return std::string(tn.load) + "(p" + J + "[(c0 + e) * s" + J + "])";
      default: return "k" + J;
    }
  };
}

std::string zero_offsets(std::span<const Access> access, const std::string& from, const std::string& indent) {
  std::string s;
  for (size_t j = 0; j < access.size(); ++j)
    if (access[j] != Access::Scalar)
      s += indent + "i64 o" + std::to_string(j) + " = " + (from.empty() ? "0" : from + std::to_string(j)) + ";\n";
  return s;
}

// The offsets o<j> of the kept position, kept as base<j> for the reduced loop.
std::string bases(std::span<const Access> access) {
  std::string s;
  for (size_t j = 0; j < access.size(); ++j)
    if (access[j] != Access::Scalar) s += "    const i64 base" + std::to_string(j) + " = o" + std::to_string(j) + ";\n";
  return s;
}

// A reduction's start, step (in acc and v), end (in r), and its form as an
// OpenMP simd reduction clause for accumulators held in registers: max and
// min take NaN apart (a flag), as vector max/min drop it.
struct ReduceOps {
  const char* init;
  const char* step;      // acc combined with v (NaN-propagating for max and min)
  const char* finish;    // in r
  const char* clause;    // the OpenMP reduction of the register form
  const char* reg_step;  // acc combined with v in registers
  bool nan_flag;         // the register form drops NaN, which `nan` records
};
ReduceOps reduce_ops(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return {"T(0)", "acc + v", "r", "+", "acc += v", false};
    case ReduceKind::Mean: return {"T(0)", "acc + v", "r / T(A->count)", "+", "acc += v", false};
    case ReduceKind::Max:
      return {"-__builtin_inf()", "(v > acc || v != v) ? v : acc", "r", "max", "acc = v > acc ? v : acc; nan |= v != v",
              true};
    case ReduceKind::Min:
      return {"__builtin_inf()", "(v < acc || v != v) ? v : acc", "r", "min", "acc = v < acc ? v : acc; nan |= v != v",
              true};
  }
  return {"T(0)", "acc + v", "r", "+", "acc += v", false};
}

std::string with(const std::string& pattern, const std::string& acc, const std::string& v) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "acc") == 0) {
      out += acc;
      i += 2;
    } else if (pattern[i] == 'v' && (i + 1 == pattern.size() || !std::isalnum(static_cast<unsigned char>(pattern[i + 1]))) &&
               (i == 0 || !std::isalnum(static_cast<unsigned char>(pattern[i - 1])))) {
      out += v;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace

std::string elementwise_source(DType dt, const Dims& program, std::span<const Access> access,
                               const std::string& symbol) {
  const TypeNames tn = names_of(dt);
  const std::string store = tn.store, chunk = chunk_len(program);
  Chunk ch = emit_chunk(tn, program, int(access.size()), chunk_input(tn, access),
                        [&](const std::string& v) { return "po[c0 + e] = " + store + "(" + v + ");"; }, "      ");
  std::ostringstream s;
  s << kernel_head(tn, access, symbol) << ch.decls
    << "  const i64 inner = A->shape[R - 1];\n"
    << "  for (i64 i = begin; i < end;) {\n"
    << "    const i64 r = i / inner, c = i - r * inner, len = inner - c < end - i ? inner - c : end - i;\n"
    << zero_offsets(access, "", "    ");
  // the row's position over the outer dims 0 .. R-2
  s << "    for (i64 d = R - 2, q = r; d >= 0; --d) {\n"
    << "      const i64 x = q % A->shape[d];\n      q /= A->shape[d];\n";
  for (size_t j = 0; j < access.size(); ++j)
    if (access[j] != Access::Scalar) s << "      o" << j << " += x * st" << j << "[d];\n";
  s << "    }\n" << pointers(tn, access, "c", "    ") << "    S* po = out + i;\n"
    << "    for (i64 c0 = 0; c0 < len; c0 += " << chunk << ") {\n"
    << "      const i64 m = len - c0 < " << chunk << " ? len - c0 : " << chunk << ";\n"
    << ch.code << "    }\n    i += len;\n  }\n}\n";
  return s.str();
}

std::string reduce_source(DType dt, const Dims& program, std::span<const Access> access, ReduceKind kind,
                          bool inner, const std::string& symbol) {
  const TypeNames tn = names_of(dt);
  const ReduceOps ro = reduce_ops(kind);
  const int n_in = int(access.size());
  std::ostringstream s;
  if (inner) {
    // The innermost dim is reduced: one output at a time, its reduced
    // elements in chunks along that dim, each chunk's last loop reducing
    // into vector registers (an OpenMP simd reduction into s).
    const std::string chunk = chunk_len(program);
    const std::string clauses = std::string(" reduction(") + ro.clause + ":s)" + (ro.nan_flag ? " reduction(|:nan)" : "");
    Chunk ch = emit_chunk(tn, program, n_in, chunk_input(tn, access),
                          [&](const std::string& v) { return with(ro.reg_step, "s", v) + ";"; }, "        ", clauses);
    s << kernel_head(tn, access, symbol) << ch.decls
      << "  i64 outer = 1;\n  for (i64 d = 0; d + 1 < A->n_red; ++d) outer *= A->shape[A->red[d]];\n"
      << "  for (i64 o = begin; o < end; ++o) {\n"
      << zero_offsets(access, "", "    ") << offsets_of(access, "o", "A->kept", "A->n_kept", "    ");
    s << bases(access) << "    T r = " << ro.init << ";\n    int nan = 0;\n"
      << "    for (i64 t = 0; t < outer; ++t) {\n"
      << zero_offsets(access, "base", "      ") << offsets_of(access, "t", "A->red", "A->n_red - 1", "      ")
      << pointers(tn, access, "0", "      ")
      << "      for (i64 c0 = A->lo; c0 < A->hi; c0 += " << chunk << ") {\n"
      << "        const i64 m = A->hi - c0 < " << chunk << " ? A->hi - c0 : " << chunk << ";\n"
      << "        T s = " << ro.init << ";\n"
      << ch.code << "        r = " << with(ro.step, "r", "s") << ";\n"
      << "      }\n    }\n"
      << "    if (nan) r = __builtin_nan(\"\");\n"
      << "    if (A->partial) ((T*)A->out)[o] = r;\n"
      << "    else out[o] = " << tn.store << "(" << ro.finish << ");\n"
      << "  }\n}\n";
    return s.str();
  }
  // The innermost dim is kept: a chunk of outputs along it accumulates over
  // every reduced position, one vector lane per output.
  Chunk ch = emit_chunk(tn, program, n_in, chunk_input(tn, access),
                        [&](const std::string& v) { return "acc[e] = " + with(ro.step, "acc[e]", v) + ";"; },
                        "          ");
  s << kernel_head(tn, access, symbol) << ch.decls << "  T acc[" << kChunk << "];\n"
    << "  const i64 K = A->shape[R - 1];\n"
    << "  i64 total = 1;\n  for (i64 d = 0; d < A->n_red; ++d) total *= A->shape[A->red[d]];\n"
    << "  for (i64 i = begin; i < end;) {\n"
    << "    const i64 row = i / K, c = i - row * K, len = K - c < end - i ? K - c : end - i;\n"
    << zero_offsets(access, "", "    ") << offsets_of(access, "row", "A->kept", "A->n_kept - 1", "    ");
  s << bases(access) << "    for (i64 c0 = 0; c0 < len; c0 += " << kChunk << ") {\n"
    << "      const i64 m = len - c0 < " << kChunk << " ? len - c0 : " << kChunk << ";\n"
    << "      for (i64 e = 0; e < m; ++e) acc[e] = " << ro.init << ";\n"
    << "      for (i64 t = 0; t < total; ++t) {\n"
    << zero_offsets(access, "base", "        ") << offsets_of(access, "t", "A->red", "A->n_red", "        ")
    << pointers(tn, access, "c", "        ") << ch.code << "      }\n"
    << "      for (i64 e = 0; e < m; ++e) { const T r = acc[e]; out[i + c0 + e] = " << tn.store << "(" << ro.finish
    << "); }\n"
    << "    }\n    i += len;\n  }\n}\n";
  return s.str();
}

namespace {

using KernelFn = void (*)(const void* args, int64_t begin, int64_t end);

struct KArgs {
  int64_t rank;
  const int64_t* shape;
  const void* const* in;
  const int64_t* strides;
  void* out;
  const void* vm;  // vmath's functions of the compute type, indexed by vmath::Fn
  const int64_t* kept;  // reductions: the kept and the reduced dims of the space, in order
  int64_t n_kept;
  const int64_t* red;
  int64_t n_red;
  int64_t count;  // reduced elements per output (mean)
  // Inner reductions: the range of the innermost dim to reduce, and whether
  // to write the raw accumulator (compute type) instead of the result.
  int64_t lo, hi, partial;
};

// The iteration space collapsed: size-1 dims dropped, and neighbouring dims
// merged where both are reduced or both kept and every input is contiguous
// across them. Each input's element strides in it (0 where it broadcasts).
struct Space {
  Dims shape;
  std::vector<char> reduced;
  std::vector<int64_t> strides;  // n_in x rank
};
Space collapse(std::span<const Tensor> in, const Dims& shape, const std::vector<char>& reduced) {
  const size_t nd = shape.size(), n_in = in.size();
  std::vector<Dims> st(n_in, Dims(nd, 0));
  for (size_t j = 0; j < n_in; ++j) {
    const Tensor& t = in[j];
    const size_t off = nd - size_t(t.dim());
    for (size_t d = off; d < nd; ++d) st[j][d] = t.shape()[d - off] == 1 ? 0 : t.strides()[d - off];
  }
  Space s;
  std::vector<Dims> cs(n_in);
  for (size_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    bool merge = !s.shape.empty() && s.reduced.back() == reduced[d];
    for (size_t j = 0; j < n_in && merge; ++j) merge = cs[j].back() == st[j][d] * shape[d];
    if (merge) {
      s.shape.back() *= shape[d];
      for (size_t j = 0; j < n_in; ++j) cs[j].back() = st[j][d];
      continue;
    }
    s.shape.push_back(shape[d]);
    s.reduced.push_back(reduced[d]);
    for (size_t j = 0; j < n_in; ++j) cs[j].push_back(st[j][d]);
  }
  if (s.shape.empty()) {
    s.shape = {1};
    s.reduced = {0};
    for (auto& c : cs) c = {0};
  }
  for (const Dims& c : cs) s.strides.insert(s.strides.end(), c.begin(), c.end());
  return s;
}

std::vector<Access> accesses(const Space& space, size_t n_in) {
  const size_t rank = space.shape.size();
  std::vector<Access> out;
  for (size_t j = 0; j < n_in; ++j) {
    const int64_t* st = space.strides.data() + j * rank;
    bool all_zero = true;
    for (size_t d = 0; d < rank; ++d) all_zero = all_zero && st[d] == 0;
    const int64_t last = st[rank - 1];
    out.push_back(all_zero ? Access::Scalar
                  : last == 1 ? Access::Dense
                  : last == 0 ? Access::PerRow
                              : Access::Strided);
  }
  return out;
}

// Kernels by key; null entries remember a failure.
KernelFn kernel_for(const std::string& key, const std::function<std::string()>& source) {
  static std::mutex mu;
  static std::unordered_map<std::string, KernelFn> kernels;
  static int64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (epoch != cache_epoch()) {
      kernels.clear();
      epoch = cache_epoch();
    }
    auto it = kernels.find(key);
    if (it != kernels.end()) return it->second;
  }
  auto fn = reinterpret_cast<KernelFn>(load_symbol(source(), kSymbol));
  std::lock_guard<std::mutex> lock(mu);
  return kernels.emplace(key, fn).first->second;
}

std::string key_of(char family, DType dt, const std::vector<Access>& access, const Dims& program) {
  std::string key{family, char('A' + int(dt))};
  for (Access a : access) key += char(a);
  for (int64_t v : program) key += std::to_string(v) + ",";
  return key;
}

bool usable(const Tensor& out) {
  return enabled() && out.device().type == DeviceType::CPU && is_floating(out.dtype());
}

const void* vmath_table(DType dt) {
  const cpu::vmath::Table& vm = cpu::vmath::table();
  return dt == DType::Float64 ? static_cast<const void*>(vm.f64) : static_cast<const void*>(vm.f32);
}

std::vector<const void*> data_of(std::span<const Tensor> in) {
  std::vector<const void*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(t.raw_data());
  return ptrs;
}

Dims broadcast_of(std::span<const Tensor> in) {
  Dims shape;
  for (const Tensor& t : in) shape = t.shape() == shape ? shape : ops::broadcast_shapes(shape, t.shape(), "oar.fused_reduce");
  return shape;
}

// Reduces the single output of an inner reduction over `threads` slices of
// its innermost dim: each writes its raw accumulator, combined here as the
// kernel combines chunks (NaN wins max and min), then finished and stored.
template <typename C> void combine_partials(const std::vector<C>& parts, ReduceKind kind, int64_t count,
                                            Tensor& out) {
  C r = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const C v = parts[i];
    if (kind == ReduceKind::Sum || kind == ReduceKind::Mean) r += v;
    else if (r == r) r = (v != v || (kind == ReduceKind::Max ? v > r : v < r)) ? v : r;
  }
  if (kind == ReduceKind::Mean) r /= C(count);
  switch (out.dtype()) {
    case DType::Float64: *out.data<double>() = double(r); break;
    case DType::BFloat16: *out.data<bfloat16>() = bfloat16(float(r)); break;
    case DType::Float16: *out.data<float16>() = float16(float(r)); break;
    default: *out.data<float>() = float(r); break;
  }
}

void split_reduce(KernelFn fn, const KArgs& args, ReduceKind kind, Tensor& out, int threads) {
  const bool dbl = out.dtype() == DType::Float64;
  std::vector<double> pd(dbl ? size_t(threads) : 0);
  std::vector<float> pf(dbl ? 0 : size_t(threads));
  const int64_t len = args.hi;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    KArgs a = args;
    a.lo = len * t / threads;
    a.hi = len * (t + 1) / threads;
    a.partial = 1;
    a.out = dbl ? static_cast<void*>(&pd[size_t(t)]) : static_cast<void*>(&pf[size_t(t)]);
    fn(&a, 0, 1);
  }
  if (dbl) combine_partials(pd, kind, args.count, out);
  else combine_partials(pf, kind, args.count, out);
}

}  // namespace

bool run_elementwise(std::span<const Tensor> in, Tensor& out, const Dims& program) {
  if (!usable(out)) return false;
  const int64_t n = out.numel();
  if (n == 0) return true;
  const Space space = collapse(in, out.shape(), std::vector<char>(out.shape().size(), 0));
  const std::vector<Access> access = accesses(space, in.size());
  KernelFn fn = kernel_for(key_of('e', out.dtype(), access, program),
                           [&] { return elementwise_source(out.dtype(), program, access, kSymbol); });
  if (!fn) return false;
  const std::vector<const void*> ptrs = data_of(in);
  const KArgs args{int64_t(space.shape.size()), space.shape.data(), ptrs.data(), space.strides.data(),
                   out.raw_data(), vmath_table(out.dtype()), nullptr, 0, nullptr, 0, 0, 0, 0, 0};
  const int64_t n_instr = int64_t(program.size() / 3);
  const int64_t grain = std::max<int64_t>(4096, cpu::kParallelGrain / std::max<int64_t>(1, n_instr));
  cpu::parallel_for(n, grain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
  count_run();
  return true;
}

bool run_reduce(std::span<const Tensor> in, Tensor& out, const Dims& program, ReduceKind kind, const Dims& axes) {
  if (!usable(out)) return false;
  const int64_t n = out.numel();
  if (n == 0) return true;
  const Dims shape = broadcast_of(in);
  std::vector<char> reduced(shape.size(), 0);
  int64_t count = 1;
  for (int64_t ax : axes) {
    reduced[size_t(ax)] = 1;
    count *= shape[size_t(ax)];
  }
  const Space space = collapse(in, shape, reduced);
  const std::vector<Access> access = accesses(space, in.size());
  Dims kept, red;
  for (size_t d = 0; d < space.shape.size(); ++d) (space.reduced[d] ? red : kept).push_back(int64_t(d));
  const bool inner = space.reduced.back();
  std::string key = key_of(inner ? 'i' : 'o', out.dtype(), access, program) + char('0' + int(kind));
  KernelFn fn = kernel_for(key, [&] { return reduce_source(out.dtype(), program, access, kind, inner, kSymbol); });
  if (!fn) return false;
  const std::vector<const void*> ptrs = data_of(in);
  const int64_t last = space.shape.back();
  KArgs args{int64_t(space.shape.size()), space.shape.data(), ptrs.data(), space.strides.data(),
             out.raw_data(), vmath_table(out.dtype()), kept.data(), int64_t(kept.size()), red.data(),
             int64_t(red.size()), count, 0, inner ? last : 0, 0};
  const int64_t per_out = std::max<int64_t>(1, count * std::max<int64_t>(1, int64_t(program.size() / 3)));
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (inner && n == 1 && red.size() == 1 && threads > 1 && per_out >= 4 * cpu::kParallelGrain) {
    // One output (a loss): its elements split over the threads, each
    // reducing a slice into a partial accumulator, combined here.
    split_reduce(fn, args, kind, out, threads);
    count_run();
    return true;
  }
  // Work per output: its reduced elements times the program.
  const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / per_out);
  cpu::parallel_for(n, grain, [&](int64_t b, int64_t e) { fn(&args, b, e); });
  count_run();
  return true;
}

}  // namespace oar::compiler

// Kernels of fused_linear_act and fused_elementwise (definitions: ops/fused.cpp).
#include <cmath>
#include <vector>

#include "compiler/codegen_cpu.h"
#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cpu/vmath.h"
#include "ops/fused.h"

namespace oar::cpu {
namespace {

using ops::EwCode;
using detail::is_half_v;

// Elements per block: a few blocks of float64 stay within L1.
constexpr int64_t kBlock = 1024;

template <typename C> void vm(vmath::Fn fn, const C* x, C* y, int64_t m) {
  if constexpr (std::is_same_v<C, float>) vmath::apply_f32(fn, x, y, m);
  else vmath::apply_f64(fn, x, y, m);
}

// y = op(a[, b]) over m values; y may alias a or b. The declared ops run
// their one scalar function (kernels/cpu/scalar_fns.h), vectorised through
// vmath where it has one.
template <typename C> void eval(EwCode code, const C* a, const C* b, C* y, int64_t m) {
  using vmath::Fn;
  switch (code) {
#define OAR_EW_LOOP(EXPR)                          \
  {                                                \
    _Pragma("omp simd") for (int64_t i = 0; i < m; ++i) { \
      const C x = a[i];                            \
      y[i] = (EXPR);                               \
    }                                              \
    return;                                        \
  }
#define OAR_EW_LOOP2(EXPR)                         \
  {                                                \
    _Pragma("omp simd") for (int64_t i = 0; i < m; ++i) { \
      const C x = a[i], z = b[i];                  \
      y[i] = (EXPR);                               \
    }                                              \
    return;                                        \
  }
    case EwCode::Add: OAR_EW_LOOP2(scalar::op_add::apply(x, z))
    case EwCode::Subtract: OAR_EW_LOOP2(scalar::op_subtract::apply(x, z))
    case EwCode::Multiply: OAR_EW_LOOP2(scalar::op_multiply::apply(x, z))
    case EwCode::Divide: OAR_EW_LOOP2(scalar::op_divide::apply(x, z))
    case EwCode::Maximum: OAR_EW_LOOP2(scalar::op_maximum::apply(x, z))
    case EwCode::Minimum: OAR_EW_LOOP2(scalar::op_minimum::apply(x, z))
    case EwCode::Pow:
      for (int64_t i = 0; i < m; ++i) y[i] = std::pow(a[i], b[i]);
      return;
    case EwCode::Neg: OAR_EW_LOOP(scalar::op_neg::apply(x))
    case EwCode::Sqrt: OAR_EW_LOOP(scalar::op_sqrt::apply(x))
    case EwCode::Rsqrt: OAR_EW_LOOP(scalar::op_rsqrt::apply(x))
    case EwCode::Square: OAR_EW_LOOP(scalar::op_square::apply(x))
    case EwCode::Reciprocal: OAR_EW_LOOP(scalar::op_reciprocal::apply(x))
    case EwCode::Abs: OAR_EW_LOOP(scalar::op_abs::apply(x))
    case EwCode::Relu: OAR_EW_LOOP(scalar::op_relu::apply(x))
    case EwCode::Exp: return vm(Fn::Exp, a, y, m);
    case EwCode::Log: return vm(Fn::Log, a, y, m);
    case EwCode::Sin: return vm(Fn::Sin, a, y, m);
    case EwCode::Cos: return vm(Fn::Cos, a, y, m);
    case EwCode::Tanh: return vm(Fn::Tanh, a, y, m);
    case EwCode::Sigmoid: return vm(Fn::Sigmoid, a, y, m);
    case EwCode::Erf: return vm(Fn::Erf, a, y, m);
    case EwCode::Silu: return vm(Fn::Silu, a, y, m);
    case EwCode::Gelu: return vm(Fn::Gelu, a, y, m);
    case EwCode::GeluTanh: return vm(Fn::GeluTanh, a, y, m);
    case EwCode::Expm1: return vm(Fn::Expm1, a, y, m);
    case EwCode::Log1p: return vm(Fn::Log1p, a, y, m);
    case EwCode::kCount: return;
#undef OAR_EW_LOOP
#undef OAR_EW_LOOP2
  }
}

// ---------------------------------------------------------------- fused_linear_act

EwCode activation_code(const std::string& act) {
  if (act == "relu") return EwCode::Relu;
  if (act == "gelu") return EwCode::Gelu;
  if (act == "gelu_tanh") return EwCode::GeluTanh;
  if (act == "silu") return EwCode::Silu;
  if (act == "sigmoid") return EwCode::Sigmoid;
  return EwCode::Tanh;  // infer_meta admits nothing else
}

// The linear op's own kernel, then the activation in place over blocks of
// the (fresh, dense) output. One product over all rows, not one per row
// block: per-block products would stream the whole weight once per block,
// which measured several times slower than the second pass over the output.
void fused_linear_act_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (onednn_linear(in[0], in[1], in[2], out[0], a.s(0))) return;  // the activation inside the product
  const OpDef* linear = find_op("linear");
  KernelFn k = linear ? linear->kernels[int(DeviceType::CPU)][int(in[0].dtype())] : nullptr;
  OAR_CHECK(k, NotImplemented, "[oar.fused_linear_act] no linear kernel for dtype ", dtype_name(in[0].dtype()));
  k(in, out, Attrs{});
  const EwCode code = activation_code(a.s(0));
  Tensor& y = out[0];
  const int64_t n = y.numel();
  visit_float(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = y.data<T>();
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      if constexpr (is_half_v<T>) {
        float buf[kBlock];
        for (int64_t i = b; i < e; i += kBlock) {
          const int64_t m = std::min(kBlock, e - i);
          detail::widen_block(p + i, buf, m);
          eval<float>(code, buf, nullptr, buf, m);
          detail::narrow_block(buf, p + i, m);
        }
      } else {
        for (int64_t i = b; i < e; i += kBlock) eval<T>(code, p + i, nullptr, p + i, std::min(kBlock, e - i));
      }
    });
  });
}

KernelRegistrar r_linear_act("fused_linear_act", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_linear_act_kernel);

// ---------------------------------------------------------------- fused_elementwise

// Note [fused elementwise program] (ops/fused.h). Each thread walks its range
// in blocks of kBlock elements; every register lives in a block-sized slot of
// a per-thread scratch array (or is read in place), and a slot is reused as
// soon as the register in it is dead, so the intermediates of a block stay in
// L1 instead of making a round trip to memory per op.
struct Plan {
  // Per input: read in place (dense, output's shape, compute dtype), widened
  // per block (dense 16-bit), one value, or gathered per block through its
  // strides (broadcast or strided).
  enum Kind { Direct, Widen, Single, Gather };
  std::vector<Kind> kind;
  std::vector<int> slot;  // per register: its scratch slot (-1: read in place, or the output)
  int num_slots = 0;
};

Plan make_plan(std::span<const Tensor> in, const Dims& prog, const Dims& shape, bool half) {
  const int n_in = int(in.size()), n_instr = int(prog.size() / 3);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  Plan p;
  p.slot.assign(size_t(n_in + n_instr), -1);
  std::vector<int> free_slots;
  auto take = [&] {
    if (free_slots.empty()) return p.num_slots++;
    int s = free_slots.back();
    free_slots.pop_back();
    return s;
  };
  for (int j = 0; j < n_in; ++j) {
    const Tensor& t = in[size_t(j)];
    Plan::Kind k = Plan::Gather;
    if (t.numel() == 1 && numel != 1) k = Plan::Single;
    else if (t.shape() == shape && t.is_contiguous()) k = half ? Plan::Widen : Plan::Direct;
    p.kind.push_back(k);
    if (k != Plan::Direct) p.slot[size_t(j)] = take();
  }
  std::vector<int> last_use(size_t(n_in + n_instr), -1);
  for (int k = 0; k < n_instr; ++k)
    for (int o = 1; o <= 2; ++o)
      if (prog[size_t(3 * k + o)] >= 0) last_use[size_t(prog[size_t(3 * k + o)])] = k;
  std::vector<char> freed(size_t(n_in + n_instr), 0);
  for (int k = 0; k < n_instr; ++k) {
    // Intermediates dying here give their slot back first: the loops allow
    // the result to alias an operand. Inputs keep theirs (a single value is
    // filled once per thread).
    for (int o = 1; o <= 2; ++o) {
      const int64_t r = prog[size_t(3 * k + o)];
      if (r >= n_in && last_use[size_t(r)] == k && !freed[size_t(r)]) {
        free_slots.push_back(p.slot[size_t(r)]);
        freed[size_t(r)] = 1;
      }
    }
    if (k == n_instr - 1 && !half) continue;  // written straight into the output
    p.slot[size_t(n_in + k)] = take();
  }
  return p;
}

// Elements [start, start + m) of the output, read from `t` broadcast to
// `shape` through its strides (0 along broadcast dims), into dst.
template <typename T, typename C>
void gather(const Tensor& t, const Dims& shape, int64_t start, int64_t m, C* dst, std::vector<int64_t>& idx) {
  const int nd = int(shape.size());
  const int off = nd - int(t.dim());
  int64_t strides[16];
  for (int d = 0; d < nd; ++d) {
    const int td = d - off;
    strides[d] = td < 0 || t.shape()[td] == 1 ? 0 : t.strides()[td];
  }
  idx.assign(size_t(nd), 0);
  int64_t rem = start, pos = 0;
  for (int d = nd - 1; d >= 0; --d) {
    idx[size_t(d)] = rem % shape[d];
    rem /= shape[d];
    pos += idx[size_t(d)] * strides[d];
  }
  const T* base = t.data<T>();
  for (int64_t k = 0; k < m; ++k) {
    dst[k] = C(base[pos]);
    // step the multi-index like an odometer, keeping pos in step
    for (int d = nd - 1; d >= 0; --d) {
      pos += strides[d];
      if (++idx[size_t(d)] < shape[d]) break;
      pos -= strides[d] * shape[d];
      idx[size_t(d)] = 0;
    }
  }
}

template <typename T> void fused_elementwise_typed(std::span<const Tensor> in, Tensor& out, const Dims& prog) {
  using C = std::conditional_t<is_half_v<T>, float, T>;
  constexpr bool half = is_half_v<T>;
  const int64_t n = out.numel();
  if (n == 0) return;
  const Dims& shape = out.shape();
  OAR_CHECK(shape.size() <= 16, NotImplemented, "[oar.fused_elementwise] supports at most 16 dims, got ",
            shape.size());
  const int n_in = int(in.size()), n_instr = int(prog.size() / 3);
  const Plan plan = make_plan(in, prog, shape, half);
  const std::vector<int>& read_slot = plan.slot;
  std::vector<const T*> ptr(in.size());
  for (int j = 0; j < n_in; ++j) ptr[size_t(j)] = in[size_t(j)].template data<T>();
  T* o = out.data<T>();
  const int64_t grain = std::max<int64_t>(kBlock, kParallelGrain / std::max(1, n_instr));
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    std::vector<C> scratch(size_t(std::max(plan.num_slots, 1)) * size_t(kBlock));
    std::vector<int64_t> idx;
    auto slot = [&](int s) { return scratch.data() + size_t(s) * size_t(kBlock); };
    for (int j = 0; j < n_in; ++j)
      if (plan.kind[size_t(j)] == Plan::Single) std::fill_n(slot(read_slot[size_t(j)]), kBlock, C(ptr[size_t(j)][0]));
    std::vector<C*> regs(size_t(n_in + n_instr));
    for (int64_t i = b; i < e; i += kBlock) {
      const int64_t m = std::min(kBlock, e - i);
      for (int j = 0; j < n_in; ++j) {
        switch (plan.kind[size_t(j)]) {
          case Plan::Direct:
            if constexpr (!half) regs[size_t(j)] = const_cast<C*>(ptr[size_t(j)] + i);  // only read
            break;
          case Plan::Widen:
            if constexpr (half) detail::widen_block(ptr[size_t(j)] + i, slot(read_slot[size_t(j)]), m);
            regs[size_t(j)] = slot(read_slot[size_t(j)]);
            break;
          case Plan::Gather:
            gather<T, C>(in[size_t(j)], shape, i, m, slot(read_slot[size_t(j)]), idx);
            regs[size_t(j)] = slot(read_slot[size_t(j)]);
            break;
          case Plan::Single: regs[size_t(j)] = slot(read_slot[size_t(j)]); break;
        }
      }
      for (int k = 0; k < n_instr; ++k) {
        const int64_t ra = prog[size_t(3 * k + 1)], rb = prog[size_t(3 * k + 2)];
        C* dst;
        if constexpr (!half) dst = k == n_instr - 1 ? o + i : slot(read_slot[size_t(n_in + k)]);
        else dst = slot(read_slot[size_t(n_in + k)]);
        eval<C>(EwCode(prog[size_t(3 * k)]), regs[size_t(ra)], rb >= 0 ? regs[size_t(rb)] : nullptr, dst, m);
        regs[size_t(n_in + k)] = dst;
      }
      if constexpr (half) detail::narrow_block(regs[size_t(n_in + n_instr - 1)], o + i, m);
    }
  });
}

void fused_elementwise_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  // A generated kernel when one can be had (Note [generated elementwise kernels]), else the interpreter.
  if (compiler::run_elementwise(in, out[0], a.ints(0))) return;
  visit_float(out[0].dtype(), [&](auto tag) { fused_elementwise_typed<decltype(tag)>(in, out[0], a.ints(0)); });
}

KernelRegistrar r_elementwise("fused_elementwise", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_elementwise_kernel);

// ---------------------------------------------------------------- fused_reduce

// A generated kernel when one can be had; otherwise the program by the
// interpreter above, then the reduction op.
void fused_reduce_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  if (compiler::run_reduce(in, out[0], a.ints(0), compiler::ReduceKind(a.i(1)), a.ints(2))) return;
  ops::fused_reduce_by_ops(in, out, a);
}

KernelRegistrar r_reduce("fused_reduce", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_reduce_kernel);

}  // namespace
}  // namespace oar::cpu

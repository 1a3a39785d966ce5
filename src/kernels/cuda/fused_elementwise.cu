// CUDA kernel of fused_elementwise (Note [fused elementwise program],
// ops/fused.h; CPU kernel: kernels/cpu/fused.cpp): a device interpreter of
// the program over the scalar functions the CPU runs (kernels/cpu/
// scalar_fns.h). Each thread evaluates the whole program for one output
// element in the compute type (float for 16-bit inputs, as on the CPU).
//
// Note [CUDA fused elementwise]
// The program travels in the kernel's parameters (no copy to the device, no
// synchronisation). Inputs are read where an instruction uses them, through
// their broadcast strides; intermediates live in per-thread slots, a slot
// reused once the value in it is dead, so a long chain needs few. Programs
// beyond the parameter block's limits (inputs, instructions, slots) run one
// instruction per launch instead, with intermediates stored as full tensors
// in the compute type: slower, with the same results.
#include <algorithm>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/scalar_fns.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"
#include "ops/fused.h"

namespace oar::cuda {
namespace {

namespace scalar = oar::cpu::scalar;
using ops::EwCode;

constexpr const char* kApi = "oar.fused_elementwise";
constexpr int kMaxIn = 16, kMaxInstr = 96, kMaxSlots = 32;
constexpr int8_t kNone = 127;  // the second operand of a unary instruction

// An operand >= 0 is a slot; < 0 is input -(operand + 1).
struct Instr {
  int8_t code, a, b, dst;
};

struct Program {
  int ndim, n_in, n_instr, result;  // result: the slot holding the last instruction's value
  bool dense;                       // every input dense in the output's shape: input offset = index
  int64_t numel;
  int64_t shape[kMaxRank];              // the output's dims, folded (Note [CUDA operand geometry])
  int64_t strides[kMaxIn][kMaxRank];    // per input, in elements; 0 along broadcast dims
  const void* in[kMaxIn];
  void* out;
  Instr instr[kMaxInstr];
};
static_assert(sizeof(Program) <= 4096, "the program must fit the kernel parameter block");

template <typename C> __device__ C eval(int code, C x, C y) {
  switch (EwCode(code)) {
    case EwCode::Add: return scalar::op_add::apply(x, y);
    case EwCode::Subtract: return scalar::op_subtract::apply(x, y);
    case EwCode::Multiply: return scalar::op_multiply::apply(x, y);
    case EwCode::Divide: return scalar::op_divide::apply(x, y);
    case EwCode::Maximum: return scalar::op_maximum::apply(x, y);
    case EwCode::Minimum: return scalar::op_minimum::apply(x, y);
    case EwCode::Pow: return std::pow(x, y);
    case EwCode::Neg: return scalar::op_neg::apply(x);
    case EwCode::Exp: return scalar::op_exp::apply(x);
    case EwCode::Log: return scalar::op_log::apply(x);
    case EwCode::Sqrt: return scalar::op_sqrt::apply(x);
    case EwCode::Rsqrt: return scalar::op_rsqrt::apply(x);
    case EwCode::Square: return scalar::op_square::apply(x);
    case EwCode::Reciprocal: return scalar::op_reciprocal::apply(x);
    case EwCode::Sin: return scalar::op_sin::apply(x);
    case EwCode::Cos: return scalar::op_cos::apply(x);
    case EwCode::Tanh: return scalar::op_tanh::apply(x);
    case EwCode::Sigmoid: return scalar::op_sigmoid::apply(x);
    case EwCode::Erf: return scalar::op_erf::apply(x);
    case EwCode::Abs: return scalar::op_abs::apply(x);
    case EwCode::Relu: return scalar::op_relu::apply(x);
    case EwCode::Silu: return scalar::op_silu::apply(x);
    case EwCode::Gelu: return scalar::op_gelu::apply(x);
    case EwCode::GeluTanh: return scalar::op_gelu_tanh::apply(x);
    case EwCode::Expm1: return scalar::op_expm1::apply(x);
    case EwCode::Log1p: return scalar::op_log1p::apply(x);
    case EwCode::kCount: break;
  }
  return x;
}

// Inputs of storage type In, the output of type Out, computed in acc_t<In>.
template <typename In, typename Out> __global__ void run_program(const Program p) {
  using C = acc_t<In>;
  C slot[kMaxSlots];
  int64_t idx[kMaxRank];
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += int64_t(gridDim.x) * blockDim.x) {
    if (!p.dense) {
      int64_t rem = i;
      for (int d = p.ndim - 1; d >= 0; --d) {
        const int64_t q = rem / p.shape[d];
        idx[d] = rem - q * p.shape[d];
        rem = q;
      }
    }
    auto operand = [&](int r) -> C {
      if (r >= 0) return slot[r];
      const int j = -(r + 1);
      int64_t off = i;
      if (!p.dense) {
        off = 0;
        for (int d = 0; d < p.ndim; ++d) off += idx[d] * p.strides[j][d];
      }
      return C(ld(static_cast<const In*>(p.in[j]), off));
    };
    for (int k = 0; k < p.n_instr; ++k) {
      const Instr ins = p.instr[k];
      const C x = operand(ins.a);
      const C y = ins.b == kNone ? C(0) : operand(ins.b);
      slot[ins.dst] = eval<C>(ins.code, x, y);
    }
    st(static_cast<Out*>(p.out), i, slot[p.result]);
  }
}

// The output's folded dims and each operand's strides over them.
void set_geometry(Program& p, const Tensor& out, std::span<const Tensor* const> ins) {
  const int nd = int(out.dim()), n = int(ins.size());
  int64_t st[kMaxIn][kMaxRank];
  for (int k = 0; k < n; ++k) {
    const Tensor& t = *ins[size_t(k)];
    const int lead = nd - int(t.dim());
    for (int d = 0; d < nd; ++d) {
      const int td = d - lead;
      st[k][d] = (td < 0 || t.size(td) == 1) ? 0 : t.strides()[td];
    }
  }
  // The output is dense: size-1 dims are dropped, and dim d joins the kept
  // dim before it where every input steps over both as one.
  int m = 0;
  p.numel = 1;
  for (int d = 0; d < nd; ++d) {
    const int64_t s = out.size(d);
    p.numel *= s;
    if (s == 1) continue;
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < n; ++k) merge = merge && p.strides[k][m - 1] == st[k][d] * s;
      if (merge) {
        p.shape[m - 1] *= s;
        for (int k = 0; k < n; ++k) p.strides[k][m - 1] = st[k][d];
        continue;
      }
    }
    p.shape[m] = s;
    for (int k = 0; k < n; ++k) p.strides[k][m] = st[k][d];
    ++m;
  }
  p.ndim = m;
  p.dense = true;
  for (int k = 0; k < n; ++k) p.dense = p.dense && (m == 0 || (m == 1 && p.strides[k][0] == 1));
  p.n_in = n;
  for (int k = 0; k < n; ++k) p.in[k] = ins[size_t(k)]->raw_data();
  p.out = out.raw_data();
}

template <typename In, typename Out> void launch(const Program& p) {
  if (p.numel == 0) return;
  run_program<In, Out><<<blocks_for(p.numel), kThreads, 0, cudaStreamLegacy>>>(p);
  check_launch(kApi);
}

// Slots for the program's intermediates (Note [CUDA fused elementwise]);
// false if it needs more of anything than a Program holds.
bool compile(std::span<const Tensor> in, const Dims& prog, Program& p) {
  const int n_in = int(in.size()), n_instr = int(prog.size() / 3);
  if (n_in > kMaxIn || n_instr > kMaxInstr) return false;
  std::vector<int> last_use(size_t(n_in + n_instr), -1), slot(size_t(n_in + n_instr), -1), free_slots;
  for (int k = 0; k < n_instr; ++k)
    for (int o = 1; o <= 2; ++o)
      if (prog[size_t(3 * k + o)] >= 0) last_use[size_t(prog[size_t(3 * k + o)])] = k;
  int used = 0;
  auto take = [&] {
    if (free_slots.empty()) return used++;
    const int s = free_slots.back();
    free_slots.pop_back();
    return s;
  };
  auto ref = [&](int64_t r) { return int8_t(r < n_in ? -(r + 1) : slot[size_t(r)]); };
  for (int k = 0; k < n_instr; ++k) {
    const int64_t ra = prog[size_t(3 * k + 1)], rb = prog[size_t(3 * k + 2)];
    Instr& ins = p.instr[k];
    ins.code = int8_t(prog[size_t(3 * k)]);
    ins.a = ref(ra);
    ins.b = rb < 0 ? kNone : ref(rb);
    // Operands dying here give their slots back first: an instruction reads
    // its operands before it writes its result.
    for (int64_t r : {ra, rb})
      if (r >= n_in && last_use[size_t(r)] == k && slot[size_t(r)] >= 0) {
        free_slots.push_back(slot[size_t(r)]);
        last_use[size_t(r)] = -2;  // freed once, also when both operands are r
      }
    const int s = take();
    if (used > kMaxSlots) return false;
    slot[size_t(n_in + k)] = s;
    ins.dst = int8_t(s);
    if (last_use[size_t(n_in + k)] == -1 && k + 1 < n_instr) free_slots.push_back(s);  // never read
  }
  p.n_instr = n_instr;
  p.result = slot[size_t(n_in + n_instr - 1)];
  return true;
}

// One launch per instruction (Note [CUDA fused elementwise]), intermediates
// in the compute dtype.
template <typename T> void run_stepwise(std::span<const Tensor> in, const Dims& prog, Tensor& out) {
  using C = acc_t<T>;
  const DType cdt = dtype_of<C>();
  const int n_in = int(in.size()), n_instr = int(prog.size() / 3);
  std::vector<int> last_use(size_t(n_in + n_instr), -1);
  for (int k = 0; k < n_instr; ++k)
    for (int o = 1; o <= 2; ++o)
      if (prog[size_t(3 * k + o)] >= 0) last_use[size_t(prog[size_t(3 * k + o)])] = k;
  std::vector<Tensor> regs(size_t(n_in + n_instr));
  for (int j = 0; j < n_in; ++j) {
    const Tensor& t = in[size_t(j)];
    if (std::is_same_v<C, T>) {
      regs[size_t(j)] = t;
    } else {  // 16-bit inputs widened to float once
      Tensor w = empty_tensor(t.shape(), cdt, t.device());
      elementwise<C, T>(kApi, w, CopyBits{}, t);
      regs[size_t(j)] = w;
    }
  }
  for (int k = 0; k < n_instr; ++k) {
    const int64_t ra = prog[size_t(3 * k + 1)], rb = prog[size_t(3 * k + 2)];
    const bool last = k + 1 == n_instr;
    Tensor dst = last ? out : empty_tensor(out.shape(), cdt, out.device());
    const Tensor* ops[2] = {&regs[size_t(ra)], rb >= 0 ? &regs[size_t(rb)] : nullptr};
    Program p{};
    set_geometry(p, dst, std::span<const Tensor* const>(ops, rb >= 0 ? 2 : 1));
    p.n_instr = 1;
    p.result = 0;
    p.instr[0] = Instr{int8_t(prog[size_t(3 * k)]), -1, int8_t(rb >= 0 ? -2 : kNone), 0};
    if (last) launch<C, T>(p);
    else launch<C, C>(p);
    regs[size_t(n_in + k)] = dst;
    for (int64_t r : {ra, rb})
      if (r >= n_in && last_use[size_t(r)] == k) regs[size_t(r)] = Tensor();  // dead: back to the allocator
  }
}

// in: inputs of one float dtype broadcasting to out's shape; attrs: program.
void fused_elementwise_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor& y = out[0];
  if (y.numel() == 0) return;
  OAR_CHECK(y.dim() <= kMaxRank, NotImplemented, "[", kApi, "] supports at most ", kMaxRank, " dims, got ", y.dim());
  const Dims& prog = a.ints(0);
  DeviceGuard guard(y.device().index);
  cpu::visit_float(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Program p{};
    if (!compile(in, prog, p)) return run_stepwise<T>(in, prog, y);
    std::vector<const Tensor*> ins;
    for (const Tensor& t : in) ins.push_back(&t);
    set_geometry(p, y, ins);
    launch<T, T>(p);
  });
}

const bool fused_elementwise_reg = register_real("fused_elementwise", fused_elementwise_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

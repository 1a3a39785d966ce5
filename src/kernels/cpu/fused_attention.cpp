// Kernel of fused_attention (definition: ops/fused.cpp).
//
// Note [attention blocks]
// Work is split into tasks of (batch index, block of Bq query rows). A task
// computes the scores of its rows against all keys, S = Q K^T [Bq, Lk], with
// Bq chosen so that S stays in L2; scales, masks and softmaxes S in place;
// and multiplies it by V into the output rows. The [Lq, Lk] score matrix is
// never materialised, and with causal masking a block reads only the keys
// its last row can see. The softmax and every accumulation are in float32
// (float64 for float64 input). The products' operands are bfloat16 for
// bfloat16 input on CPUs that multiply it natively (AMX, AVX512-BF16:
// oneDNN's bfloat16 matmul; on an AMD Zen 4 1.4-1.6x the speed of widening
// the operands to float32, which repacks them per block), the probabilities
// and score gradients rounded to bfloat16 before their products as the
// library's bfloat16 matmul rounds its inputs; otherwise 16-bit inputs are
// widened to float32 while packed.
//
// Note [attention backward]
// fused_attention_grad recomputes a block's probabilities P exactly as the
// forward does (the same products, the same softmax code), so nothing of
// size [Lq, Lk] is saved between the passes. With dO the block's output
// gradient: dP = dO V^T, D_i = sum_j P_ij dP_ij (equal to rowsum(dO * O),
// without reading O), dS = scale * P (dP - D); then dQ = dS K for the
// block's own rows, and dK += dS^T Q, dV += P^T dO. A thread sums dK and dV
// over the consecutive blocks of one batch entry it owns and adds them to the
// result under that entry's lock when it moves on, so two threads sharing an
// entry never write the same memory at once.
#include <cblas.h>
#include <dnnl.h>

#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/rows.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

using detail::is_half_v;

// c[m x n] = beta c + op(a) op(b), with op(a) = a [m x k] (or a^T, a being
// [k x m], with ta) and op(b) = b [k x n] (or b^T with tb); row-major, on the
// calling thread (tasks run inside a parallel region).
template <typename C>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const C* a, int64_t lda, const C* b, int64_t ldb,
          C beta, C* c, int64_t ldc) {
  if (k == 0) {
    if (beta == C(0))
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, C(0));
    return;
  }
  if constexpr (std::is_same_v<C, float>) {
    dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n),
                int(k), 1.0, a, int(lda), b, int(ldb), beta, c, int(ldc));
  }
}

// c = beta c + op(a) op(b) with operands of type E: the compute type C, or
// bfloat16 (products in oneDNN's bfloat16 matmul, c in float32).
template <typename E, typename C>
void mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const E* a, int64_t lda, const E* b, int64_t ldb, C beta,
        C* c, int64_t ldc) {
  if constexpr (std::is_same_v<E, bfloat16>) {
    dnnl_util::gemm_bf16(ta, tb, m, n, k, reinterpret_cast<const uint16_t*>(a), lda,
                         reinterpret_cast<const uint16_t*>(b), ldb, beta, c, ldc);
  } else {
    gemm<C>(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
}

// v[0..n) (compute type) as product operands: itself, or rounded into buf.
template <typename E, typename C> const E* as_operand(const C* v, E* buf, int64_t n) {
  if constexpr (std::is_same_v<E, C>) {
    return v;
  } else {
    detail::narrow_block(v, buf, n);
    return buf;
  }
}

// A [..., L, E] operand: per-batch element offsets and its row stride; its
// rows are read in place when they are dense in the operand type, otherwise
// packed into a buffer.
struct Operand {
  const void* base;
  std::vector<int64_t> batch_off;
  int64_t rs, cs;
  bool direct;
};

Operand operand(const Tensor& t, int64_t nb, bool convert) {
  Operand o{t.raw_data(), std::vector<int64_t>(size_t(nb)), t.strides()[t.dim() - 2], t.strides()[t.dim() - 1], false};
  const int64_t nd = t.dim();
  const int64_t rows = t.shape()[nd - 2], cols = t.shape()[nd - 1];
  if (cols == 1) o.cs = 1;
  o.direct = !convert && o.cs == 1 && (rows == 1 || o.rs >= cols);
  if (rows == 1) o.rs = std::max<int64_t>(cols, 1);
  for (int64_t b = 0; b < nb; ++b) {
    int64_t rem = b, off = 0;
    for (int64_t d = nd - 3; d >= 0; --d) {
      const int64_t i = rem % t.shape()[d];
      rem /= t.shape()[d];
      off += i * t.strides()[d];
    }
    o.batch_off[size_t(b)] = off;
  }
  return o;
}

// Rows [r0, r0 + n) of batch b as a dense [n, cols] block: in place, or packed into buf.
template <typename T, typename C>
const C* rows_of(const Operand& o, int64_t b, int64_t r0, int64_t n, int64_t cols, C* buf, int64_t* ld) {
  const T* p = static_cast<const T*>(o.base) + o.batch_off[size_t(b)] + r0 * o.rs;
  if (o.direct) {
    if constexpr (std::is_same_v<T, C>) {
      *ld = o.rs;
      return p;
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    const T* src = p + r * o.rs;
    C* dst = buf + r * cols;
    if (o.cs == 1 && is_half_v<T> && std::is_same_v<C, float>) {
      if constexpr (is_half_v<T> && std::is_same_v<C, float>) detail::widen_block(src, dst, cols);
    } else {
      for (int64_t j = 0; j < cols; ++j) dst[j] = C(src[j * o.cs]);
    }
  }
  *ld = cols;
  return buf;
}

template <typename C> void exp_inplace(C* x, int64_t n) {
  if constexpr (std::is_same_v<C, float>) vmath::apply_f32(vmath::Fn::Exp, x, x, n);
  else vmath::apply_f64(vmath::Fn::Exp, x, x, n);
}

// The additive mask broadcast to the scores [..., Lq, Lk]: per-batch element
// offsets, and row/column strides that are 0 along broadcast dims.
template <typename T> struct MaskView {
  const T* p = nullptr;
  std::vector<int64_t> off;
  int64_t rs = 0, cs = 0;
};

template <typename T> MaskView<T> mask_view(const Tensor& mask, const Tensor& q, int64_t nb) {
  MaskView<T> m;
  if (!mask.defined()) return m;
  const int64_t nd = q.dim(), md = mask.dim();
  auto stride = [&](int64_t dim) {
    const int64_t e = dim - (nd - md);
    return e >= 0 && mask.shape()[e] != 1 ? mask.strides()[e] : int64_t(0);
  };
  m.p = mask.data<T>();
  m.rs = stride(nd - 2);
  m.cs = stride(nd - 1);
  m.off.assign(size_t(nb), 0);
  for (int64_t b = 0; b < nb; ++b) {
    int64_t rem = b, off = 0;
    for (int64_t dim = nd - 3; dim >= 0; --dim) {
      const int64_t i = rem % q.shape()[dim];
      rem /= q.shape()[dim];
      off += i * stride(dim);
    }
    m.off[size_t(b)] = off;
  }
  return m;
}

// The keys and values of one batch entry as product operands: read in place,
// or packed once for all the entry's query blocks (a thread's tasks are
// consecutive, so it packs each entry it meets once).
template <typename T, typename E> struct KeysValues {
  const Operand &K, &V;
  int64_t lk, d, dv;
  E *kbuf, *vbuf;
  int64_t b = -1, ldk = 0, ldv = 0;
  const E *k = nullptr, *v = nullptr;
  KeysValues(const Operand& K_, const Operand& V_, int64_t lk_, int64_t d_, int64_t dv_, E* kb, E* vb)
      : K(K_), V(V_), lk(lk_), d(d_), dv(dv_), kbuf(kb), vbuf(vb) {}
  void load(int64_t entry) {
    if (entry == b) return;
    b = entry;
    k = rows_of<T, E>(K, b, 0, lk, d, kbuf, &ldk);
    v = rows_of<T, E>(V, b, 0, lk, dv, vbuf, &ldv);
  }
};

// The blocking both passes share: blocks of bq query rows, so that a block's
// scores [bq, Lk] stay in L2.
struct Blocks {
  int64_t bq, count;
  Blocks(int64_t lq, int64_t lk) : bq(std::clamp<int64_t>(32768 / std::max<int64_t>(lk, 1), 4, 64)) {
    count = (lq + bq - 1) / bq;
  }
  // Keys the last of `rows` rows from i0 can see.
  static int64_t visible(bool causal, int64_t lk, int64_t i0, int64_t rows) {
    return causal ? std::min(lk, i0 + rows) : lk;
  }
};

// Turns the raw products S = Q K^T of rows [i0, i0 + rows) of batch entry b
// (row stride kv) into probabilities in place: scale, mask, causal mask,
// softmax. As the softmax kernel: an all -inf row becomes NaN, +inf entries NaN.
template <typename T, typename C>
void probabilities(C* S, int64_t rows, int64_t kv, int64_t i0, int64_t b, const MaskView<T>& mv, C sc,
                   bool causal) {
  for (int64_t r = 0; r < rows; ++r) {
    C* row = S + r * kv;
    const int64_t i = i0 + r;
    if (mv.p) {
      const T* mrow = mv.p + mv.off[size_t(b)] + i * mv.rs;
      for (int64_t j = 0; j < kv; ++j) row[j] = row[j] * sc + C(mrow[j * mv.cs]);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < kv; ++j) row[j] *= sc;
    }
    if (causal)
      for (int64_t j = i + 1; j < kv; ++j) row[j] = -std::numeric_limits<C>::infinity();
    C mx = row_max(row, kv);
    if (!std::isfinite(mx)) mx = std::isnan(mx) ? mx : (mx > 0 ? mx : C(0));
#pragma omp simd
    for (int64_t j = 0; j < kv; ++j) row[j] -= mx;
    exp_inplace(row, kv);
    C sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < kv; ++j) sum += row[j];
    const C inv = C(1) / sum;
#pragma omp simd
    for (int64_t j = 0; j < kv; ++j) row[j] *= inv;
  }
}

template <typename T, typename E>
void attention_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, double scale,
                     bool causal) {
  using C = std::conditional_t<is_half_v<T>, float, T>;
  constexpr bool half = is_half_v<T>;
  constexpr bool convert = !std::is_same_v<T, E>;  // operands packed into another type
  constexpr bool round = !std::is_same_v<E, C>;    // probabilities rounded to the operand type
  const int64_t nd = q.dim();
  const int64_t lq = q.shape()[nd - 2], d = q.shape()[nd - 1], lk = k.shape()[nd - 2], dv = v.shape()[nd - 1];
  if (out.numel() == 0) return;
  const int64_t nb = out.numel() / (lq * dv);
  T* op = out.data<T>();
  if (lk == 0) {  // softmax over no keys times no values: zeros, as the composite
    std::fill_n(op, out.numel(), T(0));
    return;
  }
  const Operand Q = operand(q, nb, convert), K = operand(k, nb, convert), V = operand(v, nb, convert);
  const MaskView<T> mv = mask_view<T>(mask, q, nb);
  const Blocks blk(lq, lk);
  const int64_t bq = blk.bq, nqb = blk.count;
  const int64_t per_task = bq * lk * (d + dv);
  const C sc = C(scale);
  parallel_for(nb * nqb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_task, 1)),
               [&](int64_t t0, int64_t t1) {
    std::vector<E> qbuf(size_t(bq * d)), kbuf(size_t(lk * d)), vbuf(size_t(lk * dv)), pbuf(round ? size_t(bq * lk) : 0);
    std::vector<C> s(size_t(bq * lk)), obuf(half ? size_t(bq * dv) : 0);
    KeysValues<T, E> kvs(K, V, lk, d, dv, kbuf.data(), vbuf.data());
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t b = task / nqb, i0 = (task % nqb) * bq;
      const int64_t rows = std::min(bq, lq - i0);
      const int64_t kv = Blocks::visible(causal, lk, i0, rows);
      int64_t ldq;
      const E* qp = rows_of<T, E>(Q, b, i0, rows, d, qbuf.data(), &ldq);
      kvs.load(b);
      const E *kp = kvs.k, *vp = kvs.v;
      const int64_t ldk = kvs.ldk, ldv = kvs.ldv;
      C* S = s.data();
      mm<E, C>(false, true, rows, kv, d, qp, ldq, kp, ldk, C(0), S, kv);
      probabilities(S, rows, kv, i0, b, mv, sc, causal);
      const E* P = as_operand<E, C>(S, pbuf.data(), rows * kv);
      T* orow = op + (b * lq + i0) * dv;
      if constexpr (half) {
        mm<E, C>(false, false, rows, dv, kv, P, kv, vp, ldv, C(0), obuf.data(), dv);
        detail::narrow_block(obuf.data(), orow, rows * dv);
      } else {
        mm<E, C>(false, false, rows, dv, kv, P, kv, vp, ldv, C(0), orow, dv);
      }
    }
  });
}

// Note [attention backward]. in: q, k, v, mask, dout; out: dq, dk, dv (dense).
template <typename T, typename E>
void attention_grad_typed(std::span<const Tensor> in, std::span<Tensor> out, double scale, bool causal) {
  using C = std::conditional_t<is_half_v<T>, float, T>;
  constexpr bool half = is_half_v<T>;
  constexpr bool convert = !std::is_same_v<T, E>;
  constexpr bool round = !std::is_same_v<E, C>;
  const Tensor &q = in[0], &k = in[1], &v = in[2], &mask = in[3], &dout = in[4];
  const int64_t nd = q.dim();
  const int64_t lq = q.shape()[nd - 2], d = q.shape()[nd - 1], lk = k.shape()[nd - 2], dv = v.shape()[nd - 1];
  T *gq = out[0].data<T>(), *gk = out[1].data<T>(), *gv = out[2].data<T>();
  int64_t nb = 1;
  for (int64_t dim = 0; dim < nd - 2; ++dim) nb *= q.shape()[dim];
  if (nb == 0 || lq == 0 || lk == 0) {  // nothing flows: zeros
    for (Tensor& t : out) std::fill_n(t.data<T>(), t.numel(), T(0));
    return;
  }
  // dQ's rows are written once each; dK and dV accumulate from zero.
  if constexpr (!half) {
    std::fill_n(gk, out[1].numel(), T(0));
    std::fill_n(gv, out[2].numel(), T(0));
  }
  // dK and dV accumulate in C: in the results themselves, or in float buffers for 16-bit types.
  std::vector<C> kacc(half ? size_t(nb * lk * d) : 0), vacc(half ? size_t(nb * lk * dv) : 0);
  C* kdst = half ? kacc.data() : reinterpret_cast<C*>(gk);
  C* vdst = half ? vacc.data() : reinterpret_cast<C*>(gv);
  const Operand Q = operand(q, nb, convert), K = operand(k, nb, convert), V = operand(v, nb, convert),
                G = operand(dout, nb, convert);
  const MaskView<T> mv = mask_view<T>(mask, q, nb);
  const Blocks blk(lq, lk);
  const int64_t bq = blk.bq, nqb = blk.count;
  const int64_t per_task = 3 * bq * lk * (d + dv);
  const C sc = C(scale);
  std::array<std::mutex, 64> locks;
  parallel_for(nb * nqb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_task, 1)),
               [&](int64_t t0, int64_t t1) {
    std::vector<E> qbuf(size_t(bq * d)), kbuf(size_t(lk * d)), vbuf(size_t(lk * dv)), gbuf(size_t(bq * dv)),
        pbuf(round ? size_t(bq * lk) : 0), dsbuf(round ? size_t(bq * lk) : 0);
    std::vector<C> p(size_t(bq * lk)), ds(size_t(bq * lk)), dq(half ? size_t(bq * d) : 0), kloc(size_t(lk * d)),
        vloc(size_t(lk * dv));
    KeysValues<T, E> kvs(K, V, lk, d, dv, kbuf.data(), vbuf.data());
    int64_t cur = -1, kv_used = 0;
    auto flush = [&] {
      if (cur < 0 || kv_used == 0) return;
      std::lock_guard<std::mutex> hold(locks[size_t(cur) % locks.size()]);
      C* kd = kdst + cur * lk * d;
      C* vd = vdst + cur * lk * dv;
#pragma omp simd
      for (int64_t e = 0; e < kv_used * d; ++e) kd[e] += kloc[size_t(e)];
#pragma omp simd
      for (int64_t e = 0; e < kv_used * dv; ++e) vd[e] += vloc[size_t(e)];
    };
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t b = task / nqb, i0 = (task % nqb) * bq;
      const int64_t rows = std::min(bq, lq - i0);
      const int64_t kv = Blocks::visible(causal, lk, i0, rows);
      if (b != cur) {
        flush();
        cur = b;
        kv_used = 0;
      }
      int64_t ldq, ldg;
      const E* qp = rows_of<T, E>(Q, b, i0, rows, d, qbuf.data(), &ldq);
      kvs.load(b);
      const E *kp = kvs.k, *vp = kvs.v;
      const int64_t ldk = kvs.ldk, ldv = kvs.ldv;
      const E* gp = rows_of<T, E>(G, b, i0, rows, dv, gbuf.data(), &ldg);
      C* P = p.data();
      C* dS = ds.data();
      mm<E, C>(false, true, rows, kv, d, qp, ldq, kp, ldk, C(0), P, kv);
      probabilities(P, rows, kv, i0, b, mv, sc, causal);
      mm<E, C>(false, true, rows, kv, dv, gp, ldg, vp, ldv, C(0), dS, kv);  // dP = dO V^T
      for (int64_t r = 0; r < rows; ++r) {
        const C* pr = P + r * kv;
        C* g = dS + r * kv;
        C dsum = 0;
#pragma omp simd reduction(+ : dsum)
        for (int64_t j = 0; j < kv; ++j) dsum += pr[j] * g[j];
#pragma omp simd
        for (int64_t j = 0; j < kv; ++j) g[j] = sc * (pr[j] * (g[j] - dsum));
      }
      // The accumulators cover the keys seen so far in this batch entry (a
      // causal block sees more keys than the blocks before it).
      if (kv > kv_used) {
        std::fill(kloc.begin() + kv_used * d, kloc.begin() + kv * d, C(0));
        std::fill(vloc.begin() + kv_used * dv, vloc.begin() + kv * dv, C(0));
        kv_used = kv;
      }
      const E* dSe = as_operand<E, C>(dS, dsbuf.data(), rows * kv);
      const E* Pe = as_operand<E, C>(P, pbuf.data(), rows * kv);
      mm<E, C>(true, false, kv, d, rows, dSe, kv, qp, ldq, C(1), kloc.data(), d);   // dK += dS^T Q
      mm<E, C>(true, false, kv, dv, rows, Pe, kv, gp, ldg, C(1), vloc.data(), dv);  // dV += P^T dO
      T* qrow = gq + (b * lq + i0) * d;
      if constexpr (half) {
        mm<E, C>(false, false, rows, d, kv, dSe, kv, kp, ldk, C(0), dq.data(), d);  // dQ = dS K
        detail::narrow_block(dq.data(), qrow, rows * d);
      } else {
        mm<E, C>(false, false, rows, d, kv, dSe, kv, kp, ldk, C(0), qrow, d);
      }
    }
    flush();
  });
  if constexpr (half) {
    detail::narrow_block(kacc.data(), gk, nb * lk * d);
    detail::narrow_block(vacc.data(), gv, nb * lk * dv);
  }
}

// Runs f<T, E>() for the input dtype, E the products' operand type.
template <template <typename, typename> class Run, typename... Args> void by_dtype(DType dt, Args&&... args) {
  visit_float(dt, [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<is_half_v<T>, float, T>;
    if constexpr (std::is_same_v<T, bfloat16>) {
      if (dnnl_util::native_bf16()) return Run<T, bfloat16>::run(args...);
    }
    Run<T, C>::run(args...);
  });
}

template <typename T, typename E> struct Forward {
  static void run(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
    attention_typed<T, E>(in[0], in[1], in[2], in[3], out[0], a.f(0), a.b(1));
  }
};
template <typename T, typename E> struct Backward {
  static void run(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
    attention_grad_typed<T, E>(in, out, a.f(0), a.b(1));
  }
};

void fused_attention_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  by_dtype<Forward>(in[0].dtype(), in, out, a);
}

void fused_attention_grad_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  by_dtype<Backward>(in[0].dtype(), in, out, a);
}

KernelRegistrar r("fused_attention", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_attention_kernel);
KernelRegistrar rg("fused_attention_grad", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_attention_grad_kernel);

}  // namespace
}  // namespace oar::cpu

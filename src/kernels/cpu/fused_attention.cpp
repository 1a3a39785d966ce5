// Kernel of fused_attention (definition: ops/fused.cpp).
//
// Note [attention blocks]
// Work is split into tasks of (batch index, block of Bq query rows). A task
// computes the scores of its rows against all keys, S = Q K^T [Bq, Lk], with
// Bq chosen so that S stays in L2; scales, masks and softmaxes S in place;
// and multiplies it by V into the output rows. The [Lq, Lk] score matrix is
// never materialised, and with causal masking a block reads only the keys
// its last row can see. 16-bit inputs are widened to float32 while packed,
// and every product and the softmax accumulate in float32 (float64 for
// float64 input).
#include <cblas.h>
#include <dnnl.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/rows.h"
#include "kernels/cpu/vmath.h"

namespace oar::cpu {
namespace {

using detail::is_half_v;

// c[m x n] = a[m x k] b (b is [k x n], or [n x k] with tb), row-major, on the
// calling thread (tasks run inside a parallel region).
template <typename C>
void gemm(bool tb, int64_t m, int64_t n, int64_t k, const C* a, int64_t lda, const C* b, int64_t ldb, C* c,
          int64_t ldc) {
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, C(0));
    return;
  }
  if constexpr (std::is_same_v<C, float>) {
    dnnl_sgemm('N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0, a,
                int(lda), b, int(ldb), 0.0, c, int(ldc));
  }
}

// A [..., L, E] operand: per-batch element offsets and its row stride; its
// rows are read in place when they are dense in the compute type, otherwise
// packed into a buffer.
struct Operand {
  const void* base;
  std::vector<int64_t> batch_off;
  int64_t rs, cs;
  bool direct;
};

Operand operand(const Tensor& t, int64_t nb, bool half) {
  Operand o{t.raw_data(), std::vector<int64_t>(size_t(nb)), t.strides()[t.dim() - 2], t.strides()[t.dim() - 1], false};
  const int64_t nd = t.dim();
  const int64_t rows = t.shape()[nd - 2], cols = t.shape()[nd - 1];
  if (cols == 1) o.cs = 1;
  o.direct = !half && o.cs == 1 && (rows == 1 || o.rs >= cols);
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
    if (o.cs == 1 && is_half_v<T>) {
      if constexpr (is_half_v<T>) detail::widen_block(src, dst, cols);
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

template <typename T>
void attention_typed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, double scale,
                     bool causal) {
  using C = std::conditional_t<is_half_v<T>, float, T>;
  constexpr bool half = is_half_v<T>;
  const int64_t nd = q.dim();
  const int64_t lq = q.shape()[nd - 2], d = q.shape()[nd - 1], lk = k.shape()[nd - 2], dv = v.shape()[nd - 1];
  if (out.numel() == 0) return;
  const int64_t nb = out.numel() / (lq * dv);
  T* op = out.data<T>();
  if (lk == 0) {  // softmax over no keys times no values: zeros, as the composite
    std::fill_n(op, out.numel(), T(0));
    return;
  }
  const Operand Q = operand(q, nb, half), K = operand(k, nb, half), V = operand(v, nb, half);
  // The mask, broadcast to [..., Lq, Lk]: stride 0 along broadcast dims.
  std::vector<int64_t> mask_off(size_t(nb), 0);
  int64_t m_rs = 0, m_cs = 0;
  const T* mp = nullptr;
  if (mask.defined()) {
    mp = mask.data<T>();
    const int64_t md = mask.dim();
    auto stride = [&](int64_t dim) {
      const int64_t e = dim - (nd - md);
      return e >= 0 && mask.shape()[e] != 1 ? mask.strides()[e] : int64_t(0);
    };
    m_rs = stride(nd - 2);
    m_cs = stride(nd - 1);
    for (int64_t b = 0; b < nb; ++b) {
      int64_t rem = b, off = 0;
      for (int64_t dim = nd - 3; dim >= 0; --dim) {
        const int64_t i = rem % out.shape()[dim];
        rem /= out.shape()[dim];
        off += i * stride(dim);
      }
      mask_off[size_t(b)] = off;
    }
  }
  const int64_t bq = std::clamp<int64_t>(32768 / lk, 4, 64);
  const int64_t nqb = (lq + bq - 1) / bq;
  const int64_t per_task = bq * lk * (d + dv);
  const C sc = C(scale);
  parallel_for(nb * nqb, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_task, 1)),
               [&](int64_t t0, int64_t t1) {
    std::vector<C> qbuf(size_t(bq * d)), kbuf(size_t(lk * d)), vbuf(size_t(lk * dv)), s(size_t(bq * lk)),
        obuf(half ? size_t(bq * dv) : 0);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t b = task / nqb, i0 = (task % nqb) * bq;
      const int64_t rows = std::min(bq, lq - i0);
      const int64_t kv = causal ? std::min(lk, i0 + rows) : lk;  // keys the block's last row can see
      int64_t ldq, ldk, ldv;
      const C* qp = rows_of<T, C>(Q, b, i0, rows, d, qbuf.data(), &ldq);
      const C* kp = rows_of<T, C>(K, b, 0, kv, d, kbuf.data(), &ldk);
      const C* vp = rows_of<T, C>(V, b, 0, kv, dv, vbuf.data(), &ldv);
      C* S = s.data();
      gemm<C>(true, rows, kv, d, qp, ldq, kp, ldk, S, kv);
      for (int64_t r = 0; r < rows; ++r) {
        C* row = S + r * kv;
        const int64_t i = i0 + r;
        if (mp) {
          const T* mrow = mp + mask_off[size_t(b)] + i * m_rs;
          for (int64_t j = 0; j < kv; ++j) row[j] = row[j] * sc + C(mrow[j * m_cs]);
        } else {
#pragma omp simd
          for (int64_t j = 0; j < kv; ++j) row[j] *= sc;
        }
        if (causal)
          for (int64_t j = i + 1; j < kv; ++j) row[j] = -std::numeric_limits<C>::infinity();
        // As the softmax kernel: an all -inf row becomes NaN, +inf entries NaN.
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
      T* orow = op + (b * lq + i0) * dv;
      if constexpr (half) {
        gemm<C>(false, rows, dv, kv, S, kv, vp, ldv, obuf.data(), dv);
        detail::narrow_block(obuf.data(), orow, rows * dv);
      } else {
        gemm<C>(false, rows, dv, kv, S, kv, vp, ldv, orow, dv);
      }
    }
  });
}

void fused_attention_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  visit_float(in[0].dtype(), [&](auto tag) {
    attention_typed<decltype(tag)>(in[0], in[1], in[2], in[3], out[0], a.f(0), a.b(1));
  });
}

KernelRegistrar r("fused_attention", DeviceType::CPU, OAR_FLOAT_DTYPES, fused_attention_kernel);

}  // namespace
}  // namespace oar::cpu

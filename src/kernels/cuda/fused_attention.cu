// CUDA kernel of fused_attention (definition: ops/fused.cpp; CPU kernel:
// kernels/cpu/fused_attention.cpp): softmax(q k^T * scale + mask [+ causal
// mask]) v over the last two dims.
//
// Note [CUDA attention]
// A direct form: q, k and v are made dense in the compute type (float for
// 16-bit inputs and float32, double for float64), as the CPU packs them;
// scores S = q k^T for a group of batch items and a block of query rows come
// from one strided-batched cuBLAS product; a row kernel scales, masks and
// softmaxes S in place (Note [CUDA row kernels]); a second product multiplies
// S by v into the output rows. The groups and blocks keep S within
// kScoreBytes, and with causal masking a block reads only the keys its last
// row can see. The softmax follows the CPU's: an all -inf row gives NaN.
#include <algorithm>
#include <limits>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cuda/nn_blas.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/rows.cuh"

namespace oar::cuda {
namespace {

constexpr const char* kApi = "oar.fused_attention";
constexpr int64_t kScoreBytes = int64_t(256) << 20;

// The mask broadcast to the scores [..., Lq, Lk]: strides (in elements, 0
// along broadcast dims) of the leading dims, of a row and of a column.
struct MaskGeometry {
  int lead = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  int64_t rs = 0, cs = 0;
  __device__ int64_t batch_offset(int64_t b) const {
    int64_t off = 0;
    for (int d = lead - 1; d >= 0; --d) {
      const int64_t q = b / shape[d];
      off += (b - q * shape[d]) * stride[d];
      b = q;
    }
    return off;
  }
};

// Rows r of s [n_rows, kv] are query i0 + r % rows of batch item b0 + r / rows:
// s = softmax(s * scale + mask, with keys j > i at -inf when causal).
template <typename T, typename C>
__global__ void scores_softmax(C* s, int64_t n_rows, int64_t rows, int64_t kv, int64_t b0, int64_t i0, C scale,
                               bool causal, const T* mask, MaskGeometry mg) {
  __shared__ C smem[32];
  for (int64_t r = row_begin(); r < n_rows; r += row_step()) {
    C* row = s + r * kv;
    const int64_t i = i0 + r % rows;
    const T* mrow = mask ? mask + mg.batch_offset(b0 + r / rows) + i * mg.rs : nullptr;
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = threadIdx.x; j < kv; j += blockDim.x) {
      C v = mrow ? row[j] * scale + C(ld(mrow, j * mg.cs)) : row[j] * scale;
      if (causal && j > i) v = -std::numeric_limits<C>::infinity();
      row[j] = v;
      m = MaxOp{}(m, v);
    }
    m = finite_max(row_reduce(m, MaxOp{}, smem));
    C sum = 0;
    for (int64_t j = threadIdx.x; j < kv; j += blockDim.x) {
      const C e = std::exp(row[j] - m);
      row[j] = e;
      sum += e;
    }
    const C inv = C(1) / row_reduce(sum, SumOp{}, smem);
    for (int64_t j = threadIdx.x; j < kv; j += blockDim.x) row[j] *= inv;
  }
}

// t as a dense tensor of the compute type C: t itself, or a converted copy.
template <typename T, typename C> Tensor dense_compute(const Tensor& t) {
  if (std::is_same_v<T, C> && t.is_contiguous()) return t;
  Tensor d = empty_tensor(t.shape(), dtype_of<C>(), t.device());
  elementwise<C, T>(kApi, d, CopyBits{}, t);
  return d;
}

MaskGeometry mask_geometry(const Tensor& mask, const Tensor& out) {
  MaskGeometry g;
  const int64_t nd = out.dim(), md = mask.dim();
  auto stride = [&](int64_t dim) {
    const int64_t e = dim - (nd - md);
    return e >= 0 && mask.shape()[e] != 1 ? mask.strides()[e] : int64_t(0);
  };
  g.lead = int(nd - 2);
  for (int64_t d = 0; d < nd - 2; ++d) {
    g.shape[d] = out.shape()[d];
    g.stride[d] = stride(d);
  }
  g.rs = stride(nd - 2);
  g.cs = stride(nd - 1);
  return g;
}

template <typename T>
void attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, Tensor& out, double scale,
               bool causal) {
  using C = acc_t<T>;
  const GemmType gt = std::is_same_v<C, double> ? GemmType::Float64 : GemmType::Float32;
  const int64_t nd = q.dim();
  const int64_t lq = q.shape()[nd - 2], d = q.shape()[nd - 1], lk = k.shape()[nd - 2], dv = v.shape()[nd - 1];
  const int64_t nb = out.numel() / (lq * dv);
  if (lk == 0) {  // softmax over no keys times no values: zeros, as the composite
    cuda_check(cudaMemsetAsync(out.raw_data(), 0, size_t(out.numel()) * out.itemsize(), cudaStreamLegacy), kApi,
               "cudaMemsetAsync");
    return;
  }
  const Tensor Q = dense_compute<T, C>(q), K = dense_compute<T, C>(k), V = dense_compute<T, C>(v);
  const MaskGeometry mg = mask.defined() ? mask_geometry(mask, out) : MaskGeometry{};
  // Note [CUDA attention]: rq query rows of gb batch items per step.
  const int64_t budget = kScoreBytes / int64_t(sizeof(C));
  const int64_t rq = std::clamp<int64_t>(budget / lk, 1, lq);
  const int64_t gb = std::clamp<int64_t>(budget / (rq * lk), 1, nb);
  Tensor S = empty_tensor({gb * rq * lk}, dtype_of<C>(), out.device());
  Tensor O = std::is_same_v<T, C> ? out : empty_tensor(out.shape(), dtype_of<C>(), out.device());
  const C* qp = Q.data<C>();
  const C* kp = K.data<C>();
  const C* vp = V.data<C>();
  C* sp = S.data<C>();
  C* op = O.data<C>();
  for (int64_t b0 = 0; b0 < nb; b0 += gb) {
    const int64_t g = std::min(gb, nb - b0);
    for (int64_t i0 = 0; i0 < lq; i0 += rq) {
      const int64_t rows = std::min(rq, lq - i0);
      const int64_t kv = causal ? std::min(lk, i0 + rows) : lk;  // keys the block's last row can see
      // S_b [rows, kv] = Q_b[i0 : i0 + rows] K_b[0 : kv]^T (column-major: K Q^T)
      if (d > 0) {
        nn_gemm(kApi, gt, true, false, kv, rows, d, kp + b0 * lk * d, d, lk * d, qp + (b0 * lq + i0) * d, d, lq * d,
                sp, kv, rows * kv, g);
      } else {
        cuda_check(cudaMemsetAsync(sp, 0, size_t(g * rows * kv) * sizeof(C), cudaStreamLegacy), kApi,
                   "cudaMemsetAsync");
      }
      const RowLaunch l = row_launch(g * rows, kv);
      scores_softmax<T, C><<<l.grid, l.block, 0, cudaStreamLegacy>>>(
          sp, g * rows, rows, kv, b0, i0, C(scale), causal, mask.defined() ? mask.data<T>() : nullptr, mg);
      check_launch(kApi);
      // O_b[i0 : i0 + rows] = S_b V_b[0 : kv] (column-major: V^T S^T)
      nn_gemm(kApi, gt, false, false, dv, rows, kv, vp + b0 * lk * dv, dv, lk * dv, sp, kv, rows * kv,
              op + (b0 * lq + i0) * dv, dv, lq * dv, g);
    }
  }
  if (!std::is_same_v<T, C>) elementwise<T, C>(kApi, out, CopyBits{}, O);
}

// in: q [..., Lq, D], k [..., Lk, D], v [..., Lk, Dv], mask (optional,
// broadcasting to [..., Lq, Lk]); out [..., Lq, Dv]; attrs: scale, causal.
void fused_attention_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  Tensor& o = out[0];
  if (o.numel() == 0) return;
  DeviceGuard guard(o.device().index);
  cpu::visit_float(in[0].dtype(), [&](auto tag) {
    attention<decltype(tag)>(in[0], in[1], in[2], in[3], o, a.f(0), a.b(1));
  });
}

const bool fused_attention_reg = register_real("fused_attention", fused_attention_kernel, OAR_FLOAT_DTYPES);

}  // namespace
}  // namespace oar::cuda

// Batched, broadcasting matmul on oneDNN/BLAS (float, double, complex) with a plain
// loop for integers. 16-bit floats are widened to float around sgemm.
#include <cblas.h>
#include <dnnl.h>

#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/onednn.h"
#include "ops/ops.h"

namespace oar::cpu {
namespace {

// A matrix operand: pointer, leading dimension and whether BLAS must transpose it.
struct MatArg {
  int64_t ld;
  bool trans;
};

// Describes a [rows x cols] matrix with element strides (rs, cs) as a BLAS
// row-major operand, or returns false if neither stride is 1.
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, MatArg* m) {
  if (cols == 1) cs = 1;  // strides of size-1 dims do not matter
  if (rows == 1) rs = std::max<int64_t>(cols, 1);
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) { m->ld = rs; m->trans = false; return true; }
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) { m->ld = cs; m->trans = true; return true; }
  return false;
}

// c = a b (+ c with accumulate, float and double only).
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          int64_t ldc, bool accumulate = false) {
  auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    // oneDNN's sgemm (row-major) measured 1.1-1.2x faster than OpenBLAS's
    // here from 256 to 2048 (benchmarks/kernels.py); tiny products stay on
    // OpenBLAS, whose call overhead is lower.
    if (m * n * k >= 32 * 32 * 32) {
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
      return;
    }
    cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, 1.0, a, lda, b, ldb, accumulate ? 1.0 : 0.0, c, ldc);
  } else if constexpr (std::is_same_v<T, complex64>) {
    const complex64 one(1), zero(0);
    cblas_cgemm(CblasRowMajor, TA, TB, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  } else if constexpr (std::is_same_v<T, complex128>) {
    const complex128 one(1), zero(0);
    cblas_zgemm(CblasRowMajor, TA, TB, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  } else {
    // Integers: a plain loop, accumulating in the type itself (wrapping).
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T s = T(0);
        for (int64_t p = 0; p < k; ++p) {
          T av = ta ? a[p * lda + i] : a[i * lda + p];
          T bv = tb ? b[j * ldb + p] : b[p * ldb + j];
          s = T(s + av * bv);
        }
        c[i * ldc + j] = s;
      }
  }
}

template <typename T> void matmul_typed(const Tensor& x0, const Tensor& y0, Tensor& out, bool tx, bool ty) {
  int64_t nd = out.dim();
  int64_t M = out.shape()[nd - 2], N = out.shape()[nd - 1];
  int64_t K = x0.shape()[x0.dim() - (tx ? 2 : 1)];
  T* o = out.data<T>();
  if (out.numel() == 0) return;
  if (K == 0) { std::fill(o, o + out.numel(), T(0)); return; }
  // Logical (untransposed-op) matrix views of x: [M x K], y: [K x N].
  auto mat = [](const Tensor& t, bool trans, int64_t* rs, int64_t* cs) {
    int64_t r = t.strides()[t.dim() - 2], c = t.strides()[t.dim() - 1];
    *rs = trans ? c : r;
    *cs = trans ? r : c;
  };
  Tensor x = x0, y = y0;
  int64_t xrs, xcs, yrs, ycs;
  MatArg ax, ay;
  mat(x, tx, &xrs, &xcs);
  if (!blas_layout(M, K, xrs, xcs, &ax)) { x = ops::contiguous(x0); mat(x, tx, &xrs, &xcs); blas_layout(M, K, xrs, xcs, &ax); }
  mat(y, ty, &yrs, &ycs);
  if (!blas_layout(K, N, yrs, ycs, &ay)) { y = ops::contiguous(y0); mat(y, ty, &yrs, &ycs); blas_layout(K, N, yrs, ycs, &ay); }
  int64_t nb = out.numel() / (M * N);
  int64_t bnd = nd - 2;
  const T* xp = x.data<T>();
  const T* yp = y.data<T>();
  // A stack of row-major x matrices times one y (a Linear layer on [B, S, K]
  // input) is one gemm with B*M rows when x's rows continue across batches.
  int64_t ybatch = y.numel() / std::max<int64_t>(y.shape()[y.dim() - 1] * y.shape()[y.dim() - 2], 1);
  if (nb > 1 && ybatch == 1 && !ax.trans && x.numel() / std::max<int64_t>(M * K, 1) == nb) {
    bool rows_continue = true;
    int64_t expect = x.strides()[x.dim() - 2] * M;
    for (int64_t d = x.dim() - 3; d >= 0 && rows_continue; --d) {
      if (x.shape()[d] == 1) continue;
      rows_continue = x.strides()[d] == expect;
      expect *= x.shape()[d];
    }
    if (rows_continue) {
      gemm<T>(false, ay.trans, nb * M, N, K, xp, ax.ld, yp, ay.ld, o, N);
      return;
    }
  }
  auto one = [&](int64_t b) {
    int64_t rem = b, xo = 0, yo = 0;
    for (int64_t d = bnd - 1; d >= 0; --d) {
      int64_t i = rem % out.shape()[d];
      rem /= out.shape()[d];
      int64_t xd = d - (bnd - (x.dim() - 2)), yd = d - (bnd - (y.dim() - 2));
      if (xd >= 0 && x.shape()[xd] != 1) xo += i * x.strides()[xd];
      if (yd >= 0 && y.shape()[yd] != 1) yo += i * y.strides()[yd];
    }
    gemm<T>(ax.trans, ay.trans, M, N, K, xp + xo, ax.ld, yp + yo, ay.ld, o + b * M * N, N);
  };
  // Many small products (attention heads): threads take whole products, each
  // gemm single-threaded inside the region, instead of one fork/join per gemm.
  if (nb > 1 && M * N * K <= 128 * 128 * 128) {
    parallel_for(nb, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b);
    });
    return;
  }
  for (int64_t b = 0; b < nb; ++b) one(b);
}

// The operand as a [batch, rows, cols] strided matrix stack (logical, after
// the transpose flag), or false if its batch dims do not fold into one
// uniform stride or it must be broadcast along batch.
bool as_stack(const Tensor& t, bool trans, int64_t batch, dnnl::memory::dims* dims, dnnl::memory::dims* strides) {
  int64_t nd = t.dim();
  int64_t tb = 1;
  for (int64_t d = 0; d + 2 < nd; ++d) tb *= t.shape()[d];
  if (tb != batch && tb != 1) return false;
  int64_t bstride = 0;
  if (tb > 1) {
    int64_t expect = -1;
    for (int64_t d = nd - 3; d >= 0; --d) {
      if (t.shape()[d] == 1) continue;
      if (expect >= 0 && t.strides()[d] != expect) return false;
      if (expect < 0) bstride = t.strides()[d];
      expect = t.strides()[d] * t.shape()[d];
    }
  }
  int64_t r = t.shape()[nd - 2], c = t.shape()[nd - 1];
  int64_t rs = t.strides()[nd - 2], cs = t.strides()[nd - 1];
  if (trans) { std::swap(r, c); std::swap(rs, cs); }
  if (rs != 1 && cs != 1) return false;
  *dims = {tb, r, c};
  *strides = {tb > 1 ? bstride : r * c, r == 1 ? std::max<int64_t>(c, 1) : rs, c == 1 ? 1 : cs};
  return true;
}

// The operand with all of out's `nd` dims (leading size-1 dims added), each
// with its own stride, after the transpose flag; false unless one of the two
// matrix strides is 1.
bool as_nd(const Tensor& t, bool trans, int64_t nd, dnnl::memory::dims* dims, dnnl::memory::dims* strides) {
  int64_t td = t.dim();
  dims->assign(size_t(nd), 1);
  strides->assign(size_t(nd), 0);
  for (int64_t d = 0; d < td; ++d) {
    (*dims)[size_t(nd - td + d)] = t.shape()[d];
    (*strides)[size_t(nd - td + d)] = t.strides()[d];
  }
  if (trans) {
    std::swap((*dims)[size_t(nd - 1)], (*dims)[size_t(nd - 2)]);
    std::swap((*strides)[size_t(nd - 1)], (*strides)[size_t(nd - 2)]);
  }
  int64_t r = (*dims)[size_t(nd - 2)], c = (*dims)[size_t(nd - 1)];
  int64_t& rs = (*strides)[size_t(nd - 2)];
  int64_t& cs = (*strides)[size_t(nd - 1)];
  if (c == 1) cs = 1;
  if (r == 1) rs = std::max<int64_t>(c, 1);
  if (rs != 1 && cs != 1) return false;
  // size-1 batch dims: any stride works; give them the extent of what is inside
  for (int64_t d = nd - 3; d >= 0; --d)
    if ((*dims)[size_t(d)] == 1) {
      int64_t inner = 1;
      for (int64_t e = d + 1; e < nd; ++e) inner = std::max(inner, (*strides)[size_t(e)] * (*dims)[size_t(e)]);
      (*strides)[size_t(d)] = inner;
    }
  return true;
}

// float16/bfloat16 through oneDNN's matmul (AMX / AVX-512 BF16 / FP16 where
// the CPU has them), accumulating in float32. Returns false where the layout
// needs the general path (batch broadcasting of the left operand, odd strides).
bool lowp_matmul(const Tensor& x, const Tensor& y, Tensor& out, bool tx, bool ty, const Tensor* bias = nullptr) {
  using namespace dnnl_util;
  int64_t nd = out.dim();
  if (nd < 2 || x.dim() < 2) return false;  // a vector operand (linear's 1-D x): the caller's own path
  int64_t M = out.shape()[nd - 2], N = out.shape()[nd - 1];
  int64_t K = x.shape()[x.dim() - (tx ? 2 : 1)];
  int64_t batch = out.numel() / std::max<int64_t>(M * N, 1);
  if (out.numel() == 0 || K == 0 || !out.is_contiguous()) return false;
  dnnl::memory::dims xd, xs, yd, ys;
  dnnl::memory::dims od = {batch, M, N}, os = {M * N, N, 1};
  if (!as_stack(x, tx, batch, &xd, &xs) || !as_stack(y, ty, batch, &yd, &ys) || xd[0] != batch) {
    // Batch dims that do not fold into one stride (attention heads taken as
    // a transposed view): describe every dim with its own stride.
    if (!as_nd(x, tx, nd, &xd, &xs) || !as_nd(y, ty, nd, &yd, &ys)) return false;
    for (int64_t d = 0; d + 2 < nd; ++d)
      if (xd[size_t(d)] != out.shape()[d]) return false;  // oneDNN broadcasts only the weights' batch
    od.assign(out.shape().begin(), out.shape().end());
    os = dnnl::memory::dims(size_t(nd));
    for (int64_t d = nd - 1, st = 1; d >= 0; --d) {
      os[size_t(d)] = st;
      st *= std::max<int64_t>(out.shape()[d], 1);
    }
  } else if (batch > 1 && yd[0] == 1 && xs[2] == 1 && xs[0] == M * xs[1]) {
    // A stack of row-major matrices times one matrix: one [batch*M, K] product.
    xd = {1, batch * M, K};
    xs = {batch * M * xs[1], xs[1], 1};
    od = {1, batch * M, N};
    os = {batch * M * N, N, 1};
  }
  auto dt = data_type(x.dtype());
  dnnl::memory::desc xmd(xd, dt, xs), ymd(yd, dt, ys), omd(od, dt, os);
  dnnl::memory::desc bmd;
  if (bias) bmd = dnnl::memory::desc({1, 1, N}, dt, {N, N, 1});
  std::string key = std::string(bias ? "linear:" : "matmul:") + std::to_string(int(x.dtype()));
  for (auto* v : {&xd, &xs, &yd, &ys, &od}) {
    key += "|";
    for (int64_t e : *v) key += std::to_string(e) + ",";
  }
  Prim p = cached(key, [&] {
    dnnl::matmul::primitive_desc pd(bias ? dnnl::matmul::desc(xmd, ymd, bmd, omd) : dnnl::matmul::desc(xmd, ymd, omd),
                                    attr(), engine());
    return Prim{dnnl::matmul(pd), {xmd, ymd, omd}};
  });
  if (bias)
    execute(p, {{DNNL_ARG_SRC, &x, xmd, xmd, false}, {DNNL_ARG_WEIGHTS, &y, ymd, ymd, false},
                {DNNL_ARG_BIAS, bias, bmd, bmd, false}, {DNNL_ARG_DST, &out, omd, omd, true}}, key);
  else
    execute(p, {{DNNL_ARG_SRC, &x, xmd, xmd, false}, {DNNL_ARG_WEIGHTS, &y, ymd, ymd, false},
                {DNNL_ARG_DST, &out, omd, omd, true}}, key);
  return true;
}

void matmul_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  bool tx = a.b(0), ty = a.b(1);
  DType t = in[0].dtype();
  if (t == DType::Float16 || t == DType::BFloat16) {
    try {
      if (lowp_matmul(in[0], in[1], out[0], tx, ty)) return;
    } catch (const dnnl::error&) {
      // no oneDNN implementation for this layout: take the float32 path
    }
    Tensor xf = ops::cast(in[0], DType::Float32), yf = ops::cast(in[1], DType::Float32);
    Tensor of = empty_tensor(out[0].shape(), DType::Float32);
    matmul_typed<float>(xf, yf, of, tx, ty);
    Tensor o = out[0];
    ops::copy_(o, of);
    return;
  }
  visit_numeric(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return;
    else matmul_typed<T>(in[0], in[1], out[0], tx, ty);
  });
}

KernelRegistrar r("matmul", DeviceType::CPU, OAR_NUMERIC_DTYPES, matmul_kernel);

}  // namespace

bool onednn_linear(const Tensor& x0, const Tensor& w, const Tensor& b0, Tensor& out, const std::string& act) {
  using namespace dnnl_util;
  if (x0.dtype() != DType::Float32 || w.dtype() != DType::Float32 || !out.is_contiguous() || out.numel() == 0)
    return false;
  const int64_t K = w.shape()[0], N = w.shape()[1], R = out.numel() / N;
  MatArg aw;
  if (K == 0 || R * N * K < 32 * 32 * 32 || !blas_layout(K, N, w.strides()[0], w.strides()[1], &aw)) return false;
  const Tensor x = ops::contiguous(x0), b = ops::contiguous(b0);
  const bool packed = w.storage().read_only();
  using md = dnnl::memory::desc;
  const auto f32 = dnnl::memory::data_type::f32;
  md xmd({R, K}, f32, {K, 1}), omd({R, N}, f32, {N, 1}), bmd({1, N}, f32, {N, 1});
  md wmd({K, N}, f32, aw.trans ? dnnl::memory::dims{1, aw.ld} : dnnl::memory::dims{aw.ld, 1});
  const std::string key = "linear_f32" + key_dims({R, K, N, aw.ld, int64_t(aw.trans), int64_t(packed)}) + act;
  try {
    Prim p = cached(key, [&] {
      dnnl::post_ops po;
      if (!act.empty()) {
        float alpha, beta;
        dnnl::algorithm alg = eltwise_alg(act, 0.0f, 0.0f, &alpha, &beta);
        po.append_eltwise(1.0f, alg, alpha, beta);
      }
      dnnl::primitive_attr pa = attr();
      pa.set_post_ops(po);
      md want = packed ? md({K, N}, f32, dnnl::memory::format_tag::any) : wmd;
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(xmd, want, bmd, omd), pa, engine());
      return Prim{dnnl::matmul(pd), {pd.weights_desc()}};
    });
    execute(p, {{DNNL_ARG_SRC, &x, xmd, xmd, false}, {DNNL_ARG_WEIGHTS, &w, wmd, p.mds[0], false},
                {DNNL_ARG_BIAS, &b, bmd, bmd, false}, {DNNL_ARG_DST, &out, omd, omd, true}}, key);
  } catch (const dnnl::error&) {
    return false;  // no oneDNN matmul for this case: the caller's own path
  }
  return true;
}

namespace {

// in: x [..., K], w [K, N], b [N]. float32 first tries onednn_linear. Float and
// double: the output rows start as copies of b and one gemm over all rows of
// x accumulates onto them. 16-bit: oneDNN's matmul with its bias argument.
template <typename T> void linear_typed(const Tensor& x0, const Tensor& w0, const Tensor& b, Tensor& out) {
  const int64_t K = w0.shape()[0], N = w0.shape()[1];
  const int64_t R = out.numel() / std::max<int64_t>(N, 1);
  T* o = out.data<T>();
  if (out.numel() == 0) return;
  const T* bp = b.data<T>();
  const int64_t bs = b.strides()[0];
  parallel_for(R, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(N, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < N; ++j) o[r * N + j] = bp[j * bs];
  });
  if (K == 0) return;
  Tensor x = ops::contiguous(x0);
  MatArg aw;
  Tensor w = w0;
  if (!blas_layout(K, N, w.strides()[0], w.strides()[1], &aw)) {
    w = ops::contiguous(w0);
    blas_layout(K, N, w.strides()[0], w.strides()[1], &aw);
  }
  gemm<T>(false, aw.trans, R, N, K, x.data<T>(), K, w.data<T>(), aw.ld, o, N, true);
}

void linear_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  DType t = in[0].dtype();
  if (t == DType::Float16 || t == DType::BFloat16) {
    Tensor b = ops::contiguous(in[2]);
    try {
      if (lowp_matmul(in[0], in[1], out[0], false, false, &b)) return;
    } catch (const dnnl::error&) {
      // no oneDNN implementation for this layout: float32 below
    }
    Tensor of = empty_tensor(out[0].shape(), DType::Float32);
    linear_typed<float>(ops::cast(in[0], DType::Float32), ops::cast(in[1], DType::Float32),
                        ops::cast(in[2], DType::Float32), of);
    Tensor o = out[0];
    ops::copy_(o, of);
    return;
  }
  if (t == DType::Float64) linear_typed<double>(in[0], in[1], in[2], out[0]);
  else if (!onednn_linear(in[0], in[1], in[2], out[0], "")) linear_typed<float>(in[0], in[1], in[2], out[0]);
}

KernelRegistrar r_linear("linear", DeviceType::CPU, OAR_FLOAT_DTYPES, linear_kernel);

}  // namespace
}  // namespace oar::cpu

// General eigendecomposition (geev), LU with partial pivoting (getrf) and
// triangular solves (BLAS trsm). eig and lu copy each matrix into a
// column-major buffer (Note [row-major and LAPACK] in lapack.cpp: neither
// factorisation of A^T gives A's); trsm reads A^T in place with the triangle
// and the transposition flipped. Inputs arrive contiguous and validated
// (ops/linalg_lapack.cpp).
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/lapack_util.h"
#include "kernels/cpu/loops.h"

extern "C" {
void sgeev_(const char*, const char*, const int*, float*, const int*, float*, float*, float*, const int*, float*,
            const int*, float*, const int*, int*, size_t, size_t);
void dgeev_(const char*, const char*, const int*, double*, const int*, double*, double*, double*, const int*,
            double*, const int*, double*, const int*, int*, size_t, size_t);
void cgeev_(const char*, const char*, const int*, std::complex<float>*, const int*, std::complex<float>*,
            std::complex<float>*, const int*, std::complex<float>*, const int*, std::complex<float>*, const int*,
            float*, int*, size_t, size_t);
void zgeev_(const char*, const char*, const int*, std::complex<double>*, const int*, std::complex<double>*,
            std::complex<double>*, const int*, std::complex<double>*, const int*, std::complex<double>*,
            const int*, double*, int*, size_t, size_t);
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, std::complex<float>*, const int*, int*, int*);
void zgetrf_(const int*, const int*, std::complex<double>*, const int*, int*, int*);
#define OAR_TRSM_DECL(P, T)                                                                                     \
  void P##trsm_(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*, \
                const int*, T*, const int*, size_t, size_t, size_t, size_t);
OAR_TRSM_DECL(s, float)
OAR_TRSM_DECL(d, double)
OAR_TRSM_DECL(c, std::complex<float>)
OAR_TRSM_DECL(z, std::complex<double>)
#undef OAR_TRSM_DECL
}

namespace oar::cpu {
namespace {

using namespace lapack;

// geev for the right eigenvectors only; wr/wi (real) or w (complex).
template <typename T> void geev(int n, T* a, real_t<T>* wr, real_t<T>* wi, std::complex<real_t<T>>* w, T* vr,
                                T* work, int lwork, real_t<T>* rwork, int* info) {
  char jl = 'N', jr = 'V';
  int one = 1;
  if constexpr (std::is_same_v<T, float>) sgeev_(&jl, &jr, &n, a, &n, wr, wi, nullptr, &one, vr, &n, work, &lwork, info, 1, 1);
  else if constexpr (std::is_same_v<T, double>) dgeev_(&jl, &jr, &n, a, &n, wr, wi, nullptr, &one, vr, &n, work, &lwork, info, 1, 1);
  else if constexpr (std::is_same_v<T, complex64>) cgeev_(&jl, &jr, &n, a, &n, w, nullptr, &one, vr, &n, work, &lwork, rwork, info, 1, 1);
  else zgeev_(&jl, &jr, &n, a, &n, w, nullptr, &one, vr, &n, work, &lwork, rwork, info, 1, 1);
}

// ---- eig: in x [.., n, n] (real or complex); out w [.., n], V [.., n, n] complex.
template <typename T> void eig_impl(std::span<const Tensor> in, std::span<Tensor> out) {
  using R = real_t<T>;
  using C = std::complex<R>;
  const Tensor& x = in[0];
  int n = int(x.shape().back());
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  if (n == 0 || batch == 0) return;
  const T* xp = x.data<T>();
  C* wp = out[0].data<C>();
  C* vp = out[1].data<C>();
  for_batch(batch, nn * n * 10, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(nn)), vr(static_cast<size_t>(nn));
    std::vector<R> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), rwork(static_cast<size_t>(2 * n));
    T wq{};
    int info = 0;
    geev<T>(n, buf.data(), wr.data(), wi.data(), wp, vr.data(), &wq, -1, rwork.data(), &info);
    std::vector<T> work(static_cast<size_t>(ws_size(wq)));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = xp + b * nn;
      C* w = wp + b * n;
      C* v = vp + b * nn;
      bool ok = true;
      for (int64_t i = 0; i < nn && ok; ++i) ok = finite(src[i]);
      if (ok) {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) buf[size_t(i + j * n)] = src[i * n + j];
        geev<T>(n, buf.data(), wr.data(), wi.data(), w, vr.data(), work.data(), int(work.size()), rwork.data(),
                &info);
      }
      // Non-finite input or no convergence: NaN results, as svd and eigh.
      if (!ok || info != 0) {
        R nan = std::numeric_limits<R>::quiet_NaN();
        std::fill(w, w + n, C(nan, nan));
        std::fill(v, v + nn, C(nan, nan));
        continue;
      }
      if constexpr (is_complex_v<T>) {
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) v[i * n + j] = vr[size_t(i + j * n)];
      } else {
        // A complex pair (wi[j] > 0) stores re and im of its vector in columns j and j+1.
        for (int64_t j = 0; j < n; ++j) {
          w[j] = C(wr[size_t(j)], wi[size_t(j)]);
          if (wi[size_t(j)] != R(0) && j + 1 < n) {
            w[j + 1] = C(wr[size_t(j + 1)], wi[size_t(j + 1)]);
            for (int64_t i = 0; i < n; ++i) {
              C z(vr[size_t(i + j * n)], vr[size_t(i + (j + 1) * n)]);
              v[i * n + j] = z;
              v[i * n + j + 1] = std::conj(z);
            }
            ++j;
          } else {
            for (int64_t i = 0; i < n; ++i) v[i * n + j] = C(vr[size_t(i + j * n)], R(0));
          }
        }
      }
    }
  });
}

template <typename T> void getrf(int m, int n, T* a, int lda, int* ipiv, int* info) {
  if constexpr (std::is_same_v<T, float>) sgetrf_(&m, &n, a, &lda, ipiv, info);
  else if constexpr (std::is_same_v<T, double>) dgetrf_(&m, &n, a, &lda, ipiv, info);
  else if constexpr (std::is_same_v<T, complex64>) cgetrf_(&m, &n, a, &lda, ipiv, info);
  else zgetrf_(&m, &n, a, &lda, ipiv, info);
}

// ---- lu: in x [.., m, n]; out LU [.., m, n], pivots int32 [.., k], infos int32 [..],
// iperm int64 [.., m, 1].
template <typename T> void lu_impl(std::span<const Tensor> in, std::span<Tensor> out) {
  const Tensor& x = in[0];
  int m = int(x.shape()[x.dim() - 2]), n = int(x.shape()[x.dim() - 1]), k = std::min(m, n);
  int64_t batch = batch_of(x, 2), mn = int64_t(m) * n;
  const T* xp = x.data<T>();
  T* lp = out[0].data<T>();
  int32_t* pp = out[1].data<int32_t>();
  int32_t* ip = out[2].data<int32_t>();
  int64_t* qp = out[3].data<int64_t>();
  for_batch(batch, mn * k, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(std::max<int64_t>(1, mn)));
    std::vector<int> ipiv(static_cast<size_t>(std::max(1, k)));
    std::vector<int64_t> perm(static_cast<size_t>(m));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = xp + b * mn;
      int info = 0;
      if (k > 0) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) buf[size_t(i + j * m)] = src[i * n + j];
        getrf<T>(m, n, buf.data(), m, ipiv.data(), &info);
      }
      T* lu = lp + b * mn;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) lu[i * n + j] = buf[size_t(i + j * m)];
      ip[b] = info < 0 ? 0 : info;
      for (int64_t i = 0; i < m; ++i) perm[size_t(i)] = i;
      for (int i = 0; i < k; ++i) {
        pp[b * k + i] = ipiv[size_t(i)];
        std::swap(perm[size_t(i)], perm[size_t(ipiv[size_t(i)] - 1)]);
      }
      // Row i of L U is row perm[i] of A.
      for (int64_t i = 0; i < m; ++i) qp[b * m + perm[size_t(i)]] = i;
    }
  });
}

template <typename T> void trsm(char uplo, char trans, char diag, int n, int nrhs, const T* a, T* b) {
  char side = 'L';
  T one(1);
  if constexpr (std::is_same_v<T, float>) strsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &one, a, &n, b, &n, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<T, double>) dtrsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &one, a, &n, b, &n, 1, 1, 1, 1);
  else if constexpr (std::is_same_v<T, complex64>) ctrsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &one, a, &n, b, &n, 1, 1, 1, 1);
  else ztrsm_(&side, &uplo, &trans, &diag, &n, &nrhs, &one, a, &n, b, &n, 1, 1, 1, 1);
}

// ---- triangular_solve: in A [.., n, n], B [.., n, k] (same batch); attrs upper,
// transpose, unitriangular; out X [.., n, k]. A zero pivot gives inf/NaN, as trsm does.
template <typename T> void trisolve_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  int n = int(A.shape().back()), k = int(B.shape().back());
  int64_t batch = batch_of(A, 2), nn = int64_t(n) * n, nk = int64_t(n) * k;
  if (n == 0 || k == 0 || batch == 0) return;
  // LAPACK reads row-major A as A^T: the other triangle, and the other transposition.
  char uplo = a.b(0) ? 'L' : 'U', trans = a.b(1) ? 'N' : 'T', diag = a.b(2) ? 'U' : 'N';
  const T* ap = A.data<T>();
  const T* bp = B.data<T>();
  T* xp = out[0].data<T>();
  for_batch(batch, nn * k, [&](int64_t b0, int64_t e0) {
    std::vector<T> rhs(static_cast<size_t>(nk));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = bp + b * nk;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) rhs[size_t(i + j * n)] = src[i * k + j];
      trsm<T>(uplo, trans, diag, n, k, ap + b * nn, rhs.data());
      T* dst = xp + b * nk;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) dst[i * k + j] = rhs[size_t(i + j * n)];
    }
  });
}

template <template <typename> class K> void run_typed(std::span<const Tensor> in, std::span<Tensor> out) {
  switch (in[0].dtype()) {
    case DType::Float64: return K<double>::run(in, out);
    case DType::Complex64: return K<complex64>::run(in, out);
    case DType::Complex128: return K<complex128>::run(in, out);
    default: return K<float>::run(in, out);
  }
}
template <typename T> struct eig_k {
  static void run(std::span<const Tensor> in, std::span<Tensor> out) { eig_impl<T>(in, out); }
};
template <typename T> struct lu_k {
  static void run(std::span<const Tensor> in, std::span<Tensor> out) { lu_impl<T>(in, out); }
};
template <typename T> struct trisolve_k {
  static void run(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) { trisolve_impl<T>(in, out, a); }
};
void trisolve_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  switch (in[0].dtype()) {
    case DType::Float64: return trisolve_k<double>::run(in, out, a);
    case DType::Complex64: return trisolve_k<complex64>::run(in, out, a);
    case DType::Complex128: return trisolve_k<complex128>::run(in, out, a);
    default: return trisolve_k<float>::run(in, out, a);
  }
}
void eig_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) { run_typed<eig_k>(in, out); }
void lu_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) { run_typed<lu_k>(in, out); }

#define OAR_LAPACK_DTYPES { DType::Float32, DType::Float64, DType::Complex64, DType::Complex128 }
KernelRegistrar r_eig("linalg_eig", DeviceType::CPU, OAR_LAPACK_DTYPES, eig_kernel);
KernelRegistrar r_lu("linalg_lu", DeviceType::CPU, OAR_LAPACK_DTYPES, lu_kernel);
KernelRegistrar r_trisolve("linalg_triangular_solve", DeviceType::CPU, OAR_LAPACK_DTYPES, trisolve_kernel);

}  // namespace
}  // namespace oar::cpu

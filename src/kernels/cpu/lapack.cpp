// Dense decompositions on LAPACK (the Fortran symbols exported by the linked
// OpenBLAS): svd, eigh, qr, inv, det, slogdet, solve, cholesky.
//
// Note [row-major and LAPACK]
// oar tensors are row-major, LAPACK is column-major: a contiguous row-major
// m x n matrix A is, read by LAPACK, the n x m matrix A^T. Each kernel uses
// that instead of transposing where it can:
//  - svd: gesdd on A^T = U' S V'^H gives VH = U' read row-major and U = V'^H
//    read row-major, written straight into the outputs;
//  - inv: getri on A^T gives inv(A)^T, which read row-major is inv(A);
//  - det/slogdet: det(A^T) = det(A);
//  - solve: getrs with trans='T' on the factorised A^T solves A X = B;
//  - cholesky: potrf('U') of A^T is the row-major lower factor L (and 'L' the
//    upper one), since for Hermitian A, A^T = conj(A);
//  - eigh: syevd/heevd of A^T = conj(A) with the triangle flag swapped; its
//    eigenvectors are conj(V), transposed on the way out.
// qr copies into a column-major buffer, since A^T's QR is not A's.
//
// Inputs arrive contiguous (the C++ API makes them so) and validated (shapes,
// dtypes, int32 range for LAPACK's dims). The batch runs in parallel when it is
// large; LAPACK errors are collected per matrix and raised after the parallel
// region, never inside it.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "kernels/cpu/dtype_lists.h"
#include "kernels/cpu/lapack_util.h"
#include "kernels/cpu/loops.h"

extern "C" {
// Character arguments carry a hidden length after the last argument (gfortran ABI).
#define OAR_LAPACK_DECL(P, T, R)                                                                              \
  void P##gesdd_(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,  \
                 const int*, OAR_GESDD_RWORK(R) int*, int*, size_t);                                          \
  void P##getrf_(const int*, const int*, T*, const int*, int*, int*);                                        \
  void P##getri_(const int*, T*, const int*, const int*, T*, const int*, int*);                              \
  void P##getrs_(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*,   \
                 size_t);                                                                                    \
  void P##geqrf_(const int*, const int*, T*, const int*, T*, T*, const int*, int*);                          \
  void P##potrf_(const char*, const int*, T*, const int*, int*, size_t);
#define OAR_GESDD_RWORK(R)
OAR_LAPACK_DECL(s, float, float)
OAR_LAPACK_DECL(d, double, double)
#undef OAR_GESDD_RWORK
#define OAR_GESDD_RWORK(R) R*,
OAR_LAPACK_DECL(c, std::complex<float>, float)
OAR_LAPACK_DECL(z, std::complex<double>, double)
#undef OAR_GESDD_RWORK
#undef OAR_LAPACK_DECL
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*, int*, const int*,
             int*, size_t, size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*,
             const int*, int*, size_t, size_t);
void cheevd_(const char*, const char*, const int*, std::complex<float>*, const int*, float*, std::complex<float>*,
             const int*, float*, const int*, int*, const int*, int*, size_t, size_t);
void zheevd_(const char*, const char*, const int*, std::complex<double>*, const int*, double*,
             std::complex<double>*, const int*, double*, const int*, int*, const int*, int*, size_t, size_t);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void cungqr_(const int*, const int*, const int*, std::complex<float>*, const int*, const std::complex<float>*,
             std::complex<float>*, const int*, int*);
void zungqr_(const int*, const int*, const int*, std::complex<double>*, const int*, const std::complex<double>*,
             std::complex<double>*, const int*, int*);
}

namespace oar::cpu {
namespace {

using namespace lapack;

// ---- typed LAPACK entry points
#define OAR_DISPATCH4(call, ...)                                                   \
  if constexpr (std::is_same_v<T, float>) s##call(__VA_ARGS__);                     \
  else if constexpr (std::is_same_v<T, double>) d##call(__VA_ARGS__);               \
  else if constexpr (std::is_same_v<T, complex64>) c##call(__VA_ARGS__);            \
  else z##call(__VA_ARGS__);

template <typename T> void getrf(int m, int n, T* a, int lda, int* ipiv, int* info) {
  OAR_DISPATCH4(getrf_, &m, &n, a, &lda, ipiv, info)
}
template <typename T> void getri(int n, T* a, int lda, const int* ipiv, T* work, int lwork, int* info) {
  OAR_DISPATCH4(getri_, &n, a, &lda, ipiv, work, &lwork, info)
}
template <typename T> void getrs(char trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb,
                                 int* info) {
  OAR_DISPATCH4(getrs_, &trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1)
}
template <typename T> void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) {
  OAR_DISPATCH4(geqrf_, &m, &n, a, &lda, tau, work, &lwork, info)
}
template <typename T> void potrf(char uplo, int n, T* a, int lda, int* info) {
  OAR_DISPATCH4(potrf_, &uplo, &n, a, &lda, info, 1)
}
template <typename T> void orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, int* info) {
  if constexpr (std::is_same_v<T, float>) sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
  else if constexpr (std::is_same_v<T, double>) dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
  else if constexpr (std::is_same_v<T, complex64>) cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
  else zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
template <typename T> void gesdd(char jobz, int m, int n, T* a, int lda, real_t<T>* s, T* u, int ldu, T* vt, int ldvt,
                                 T* work, int lwork, real_t<T>* rwork, int* iwork, int* info) {
  if constexpr (std::is_same_v<T, float>) sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
  else if constexpr (std::is_same_v<T, double>) dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
  else if constexpr (std::is_same_v<T, complex64>) cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
  else zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
template <typename T> void evd(char uplo, int n, T* a, int lda, real_t<T>* w, T* work, int lwork, real_t<T>* rwork,
                               int lrwork, int* iwork, int liwork, int* info) {
  char jobz = 'V';
  if constexpr (std::is_same_v<T, float>) ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  else if constexpr (std::is_same_v<T, double>) dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
  else if constexpr (std::is_same_v<T, complex64>) cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
  else zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
#undef OAR_DISPATCH4


// The first failing matrix, raised after the parallel region.
void raise_first(const std::vector<int>& info, int64_t batch, const char* api, const char* prefix,
                 const char* suffix) {
  for (int64_t b = 0; b < batch; ++b) {
    if (info[b] <= 0) continue;
    int i = info[b] - 1;
    if (batch > 1)
      fail(ErrorKind::Value, "[", api, "] ", prefix, i, ",", i, suffix, " (batch item ", b, ")");
    fail(ErrorKind::Value, "[", api, "] ", prefix, i, ",", i, suffix);
  }
}

template <typename T> void fill_nan(T* p, int64_t n) {
  using R = real_t<T>;
  for (int64_t i = 0; i < n; ++i) p[i] = T(std::numeric_limits<R>::quiet_NaN());
}
template <typename T> void fill_eye(T* p, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = T(i == j ? 1 : 0);
}

// ---- svd: in x [.., m, n]; out U [.., m, ku], S [.., k], VH [.., kv, n].
template <typename T> void svd_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  using R = real_t<T>;
  const Tensor& x = in[0];
  bool full = a.b(0);
  int m = int(x.shape()[x.dim() - 2]), n = int(x.shape()[x.dim() - 1]), k = std::min(m, n);
  int ku = full ? m : k, kv = full ? n : k;
  int64_t batch = batch_of(x, 2);
  const T* xp = x.data<T>();
  T* up = out[0].data<T>();
  R* sp = out[1].data<R>();
  T* vp = out[2].data<T>();
  int64_t mn = int64_t(m) * n, usz = int64_t(m) * ku, vsz = int64_t(kv) * n;
  if (k == 0) {
    for (int64_t b = 0; b < batch; ++b) {
      fill_eye(up + b * usz, m, ku);
      fill_eye(vp + b * vsz, kv, n);
    }
    return;
  }
  char jobz = full ? 'A' : 'S';
  int mx = std::max(m, n);
  int64_t lrwork = is_complex_v<T> ? std::max<int64_t>(1, int64_t(k) * std::max<int64_t>(5 * int64_t(k) + 7, 2 * int64_t(mx) + 2 * int64_t(k) + 1)) : 1;
  for_batch(batch, mn * k, [&](int64_t b0, int64_t e0) {
    // LAPACK sees the n x m matrix A^T (Note [row-major and LAPACK]).
    std::vector<T> buf(static_cast<size_t>(mn));
    std::vector<R> rwork(static_cast<size_t>(lrwork));
    std::vector<int> iwork(static_cast<size_t>(8) * size_t(k));
    T wq{};
    int info = 0;
    gesdd<T>(jobz, n, m, buf.data(), n, sp, vp, n, up, ku, &wq, -1, rwork.data(), iwork.data(), &info);
    std::vector<T> work(static_cast<size_t>(ws_size(wq)));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = xp + b * mn;
      bool ok = true;
      for (int64_t i = 0; i < mn && ok; ++i) ok = finite(src[i]);
      if (ok) {
        std::copy(src, src + mn, buf.begin());
        gesdd<T>(jobz, n, m, buf.data(), n, sp + b * k, vp + b * vsz, n, up + b * usz, ku, work.data(),
                 int(work.size()), rwork.data(), iwork.data(), &info);
      }
      // Non-finite input or no convergence: NaN results rather than an error
      // deep inside a training step (the caller sees them at once).
      if (!ok || info != 0) {
        fill_nan(up + b * usz, usz);
        fill_nan(sp + b * k, k);
        fill_nan(vp + b * vsz, vsz);
      }
    }
  });
}

// ---- eigh: in x [.., n, n]; out w [.., n] (ascending), V [.., n, n].
template <typename T> void eigh_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  using R = real_t<T>;
  const Tensor& x = in[0];
  bool lower = a.s(0) == "L";
  int n = int(x.shape()[x.dim() - 1]);
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  if (n == 0) return;
  const T* xp = x.data<T>();
  R* wp = out[0].data<R>();
  T* vp = out[1].data<T>();
  char uplo = lower ? 'U' : 'L';  // the triangles swap in the transposed view
  for_batch(batch, nn * n, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(nn));
    T wq{};
    R rq{};
    int iq = 0, info = 0;
    evd<T>(uplo, n, buf.data(), n, wp, &wq, -1, &rq, -1, &iq, -1, &info);
    std::vector<T> work(static_cast<size_t>(ws_size(wq)));
    std::vector<R> rwork(static_cast<size_t>(is_complex_v<T> ? ws_size(rq) : 1));
    std::vector<int> iwork(static_cast<size_t>(std::max(1, iq)));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = xp + b * nn;
      bool ok = true;
      for (int64_t i = 0; i < n && ok; ++i)
        for (int64_t j = lower ? 0 : i; j < (lower ? i + 1 : n) && ok; ++j) ok = finite(src[i * n + j]);
      if (ok) {
        std::copy(src, src + nn, buf.begin());
        evd<T>(uplo, n, buf.data(), n, wp + b * n, work.data(), int(work.size()), rwork.data(), int(rwork.size()),
               iwork.data(), int(iwork.size()), &info);
      }
      T* v = vp + b * nn;
      if (!ok || info != 0) {
        fill_nan(wp + b * n, n);
        fill_nan(v, nn);
        continue;
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) v[i * n + j] = conj_of(buf[size_t(i + j * n)]);
    }
  });
}

// ---- qr: in x [.., m, n]; out Q [.., m, kq], R [.., kq, n]; kq = m ("complete") or min(m, n).
template <typename T> void qr_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  bool complete = a.s(0) == "complete";
  int m = int(x.shape()[x.dim() - 2]), n = int(x.shape()[x.dim() - 1]), k = std::min(m, n);
  int kq = complete ? m : k;
  int64_t batch = batch_of(x, 2), mn = int64_t(m) * n;
  const T* xp = x.data<T>();
  T* qp = out[0].data<T>();
  T* rp = out[1].data<T>();
  int64_t qsz = int64_t(m) * kq, rsz = int64_t(kq) * n;
  if (k == 0) {
    for (int64_t b = 0; b < batch; ++b) {
      fill_eye(qp + b * qsz, m, kq);
      std::fill(rp + b * rsz, rp + (b + 1) * rsz, T(0));
    }
    return;
  }
  int cols = std::max(n, kq);
  for_batch(batch, mn * k, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(int64_t(m) * cols)), tau(static_cast<size_t>(k));
    T q1{}, q2{};
    int info = 0;
    geqrf<T>(m, n, buf.data(), m, tau.data(), &q1, -1, &info);
    orgqr<T>(m, kq, k, buf.data(), m, tau.data(), &q2, -1, &info);
    std::vector<T> work(static_cast<size_t>(std::max(ws_size(q1), ws_size(q2))));
    for (int64_t b = b0; b < e0; ++b) {
      const T* src = xp + b * mn;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) buf[size_t(i + j * m)] = src[i * n + j];
      geqrf<T>(m, n, buf.data(), m, tau.data(), work.data(), int(work.size()), &info);
      T* r = rp + b * rsz;
      for (int64_t i = 0; i < kq; ++i)
        for (int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? buf[size_t(i + j * m)] : T(0);
      orgqr<T>(m, kq, k, buf.data(), m, tau.data(), work.data(), int(work.size()), &info);
      T* q = qp + b * qsz;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < kq; ++j) q[i * kq + j] = buf[size_t(i + j * m)];
    }
  });
}

// ---- inv: in x [.., n, n]; out [.., n, n].
template <typename T> void inv_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  int n = int(x.shape()[x.dim() - 1]);
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  if (n == 0 || batch == 0) return;
  const T* xp = x.data<T>();
  T* yp = out[0].data<T>();
  std::vector<int> bad(static_cast<size_t>(batch), 0);
  for_batch(batch, nn * n, [&](int64_t b0, int64_t e0) {
    std::vector<int> ipiv(static_cast<size_t>(n));
    T wq{};
    int info = 0;
    getri<T>(n, yp, n, ipiv.data(), &wq, -1, &info);
    std::vector<T> work(static_cast<size_t>(ws_size(wq)));
    for (int64_t b = b0; b < e0; ++b) {
      T* y = yp + b * nn;
      std::copy(xp + b * nn, xp + (b + 1) * nn, y);
      getrf<T>(n, n, y, n, ipiv.data(), &info);
      if (info > 0) {
        bad[size_t(b)] = info;
        continue;
      }
      getri<T>(n, y, n, ipiv.data(), work.data(), int(work.size()), &info);
    }
  });
  raise_first(bad, batch, "oar.linalg.inv", "the matrix is singular (U[", "] is exactly zero) and has no inverse");
}

// LU factorisation of one matrix in `buf` (the transposed view); returns the
// product of U's diagonal with the permutation's sign folded in as `neg`.
template <typename T> int lu_diag(T* buf, int n, int* ipiv, bool* neg) {
  int info = 0;
  getrf<T>(n, n, buf, n, ipiv, &info);
  bool odd = false;
  for (int i = 0; i < n; ++i) odd ^= ipiv[i] != i + 1;
  *neg = odd;
  return info;
}

// ---- det: in x [.., n, n]; out [..].
template <typename T> void det_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& x = in[0];
  int n = int(x.shape()[x.dim() - 1]);
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  const T* xp = x.data<T>();
  T* dp = out[0].data<T>();
  for_batch(batch, nn * n, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(std::max<int64_t>(1, nn)));
    std::vector<int> ipiv(static_cast<size_t>(std::max(1, n)));
    for (int64_t b = b0; b < e0; ++b) {
      if (n == 0) { dp[b] = T(1); continue; }
      std::copy(xp + b * nn, xp + (b + 1) * nn, buf.begin());
      bool neg = false;
      lu_diag<T>(buf.data(), n, ipiv.data(), &neg);
      T d = T(1);
      for (int i = 0; i < n; ++i) d *= buf[size_t(i) * (n + 1)];
      dp[b] = neg ? -d : d;
    }
  });
}

// ---- slogdet: in x [.., n, n]; out [2, ..]: the sign (d/|d| for complex) and log|d|.
template <typename T> void slogdet_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  using R = real_t<T>;
  const Tensor& x = in[0];
  int n = int(x.shape()[x.dim() - 1]);
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  const T* xp = x.data<T>();
  T* sp = out[0].data<T>();
  T* lp = sp + batch;
  for_batch(batch, nn * n, [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(std::max<int64_t>(1, nn)));
    std::vector<int> ipiv(static_cast<size_t>(std::max(1, n)));
    for (int64_t b = b0; b < e0; ++b) {
      if (n == 0) { sp[b] = T(1); lp[b] = T(0); continue; }
      std::copy(xp + b * nn, xp + (b + 1) * nn, buf.begin());
      bool neg = false;
      lu_diag<T>(buf.data(), n, ipiv.data(), &neg);
      T sign = T(neg ? -1 : 1);
      R logabs = 0;
      for (int i = 0; i < n; ++i) {
        T u = buf[size_t(i) * (n + 1)];
        R au = std::abs(u);
        if (au == R(0)) { sign = T(0); logabs = -std::numeric_limits<R>::infinity(); break; }
        sign *= u / T(au);
        logabs += std::log(au);
      }
      sp[b] = sign;
      lp[b] = T(logabs);
    }
  });
}

// ---- solve: in A [.., n, n], B [.., n, k] (same batch); out X [.., n, k].
template <typename T> void solve_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs&) {
  const Tensor& A = in[0];
  const Tensor& B = in[1];
  int n = int(A.shape()[A.dim() - 1]), k = int(B.shape()[B.dim() - 1]);
  int64_t batch = batch_of(A, 2), nn = int64_t(n) * n, nk = int64_t(n) * k;
  if (n == 0 || batch == 0) return;
  const T* ap = A.data<T>();
  const T* bp = B.data<T>();
  T* xp = out[0].data<T>();
  std::vector<int> bad(static_cast<size_t>(batch), 0);
  for_batch(batch, nn * (n + k), [&](int64_t b0, int64_t e0) {
    std::vector<T> buf(static_cast<size_t>(nn)), rhs(static_cast<size_t>(std::max<int64_t>(1, nk)));
    std::vector<int> ipiv(static_cast<size_t>(n));
    int info = 0;
    for (int64_t b = b0; b < e0; ++b) {
      std::copy(ap + b * nn, ap + (b + 1) * nn, buf.begin());
      getrf<T>(n, n, buf.data(), n, ipiv.data(), &info);
      if (info > 0) {
        bad[size_t(b)] = info;
        continue;
      }
      if (k == 0) continue;
      const T* src = bp + b * nk;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) rhs[size_t(i + j * n)] = src[i * k + j];
      getrs<T>('T', n, k, buf.data(), n, ipiv.data(), rhs.data(), n, &info);
      T* dst = xp + b * nk;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) dst[i * k + j] = rhs[size_t(i + j * n)];
    }
  });
  raise_first(bad, batch, "oar.linalg.solve", "the matrix x is singular (U[", "] is exactly zero)");
}

// ---- cholesky: in x [.., n, n]; out the lower (or upper) factor.
template <typename T> void cholesky_impl(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {
  const Tensor& x = in[0];
  bool upper = a.b(0);
  int n = int(x.shape()[x.dim() - 1]);
  int64_t batch = batch_of(x, 2), nn = int64_t(n) * n;
  if (n == 0 || batch == 0) return;
  const T* xp = x.data<T>();
  T* lp = out[0].data<T>();
  std::vector<int> bad(static_cast<size_t>(batch), 0);
  for_batch(batch, nn * n, [&](int64_t b0, int64_t e0) {
    for (int64_t b = b0; b < e0; ++b) {
      T* l = lp + b * nn;
      std::copy(xp + b * nn, xp + (b + 1) * nn, l);
      int info = 0;
      potrf<T>(upper ? 'L' : 'U', n, l, n, &info);
      // OpenBLAS's potrf lets NaN through; a NaN pivot is no positive one either.
      for (int i = 0; i < n && info == 0; ++i)
        if (!finite(l[int64_t(i) * (n + 1)])) info = i + 1;
      if (info > 0) {
        bad[size_t(b)] = info;
        continue;
      }
      // The other triangle still holds the input.
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (upper ? j < i : j > i) l[i * n + j] = T(0);
    }
  });
  for (int64_t b = 0; b < batch; ++b) {
    if (bad[size_t(b)] <= 0) continue;
    if (batch > 1)
      fail(ErrorKind::Value, "[oar.linalg.cholesky] the matrix is not positive definite (its leading minor of order ",
           bad[size_t(b)], " is not positive) (batch item ", b, ")");
    fail(ErrorKind::Value, "[oar.linalg.cholesky] the matrix is not positive definite (its leading minor of order ",
         bad[size_t(b)], " is not positive)");
  }
}

template <template <typename> class K> void run_lapack(std::span<const Tensor> in, std::span<Tensor> out,
                                                       const Attrs& a) {
  switch (in[0].dtype()) {
    case DType::Float64: return K<double>::run(in, out, a);
    case DType::Complex64: return K<complex64>::run(in, out, a);
    case DType::Complex128: return K<complex128>::run(in, out, a);
    default: return K<float>::run(in, out, a);
  }
}

#define OAR_LAPACK_KERNEL(name)                                                                      \
  template <typename T> struct name##_k {                                                            \
    static void run(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {             \
      name##_impl<T>(in, out, a);                                                                    \
    }                                                                                                \
  };                                                                                                 \
  void name##_kernel(std::span<const Tensor> in, std::span<Tensor> out, const Attrs& a) {           \
    run_lapack<name##_k>(in, out, a);                                                                \
  }
OAR_LAPACK_KERNEL(svd)
OAR_LAPACK_KERNEL(eigh)
OAR_LAPACK_KERNEL(qr)
OAR_LAPACK_KERNEL(inv)
OAR_LAPACK_KERNEL(det)
OAR_LAPACK_KERNEL(slogdet)
OAR_LAPACK_KERNEL(solve)
OAR_LAPACK_KERNEL(cholesky)
#undef OAR_LAPACK_KERNEL

#define OAR_LAPACK_DTYPES { DType::Float32, DType::Float64, DType::Complex64, DType::Complex128 }
KernelRegistrar r_svd("linalg_svd", DeviceType::CPU, OAR_LAPACK_DTYPES, svd_kernel);
KernelRegistrar r_eigh("linalg_eigh", DeviceType::CPU, OAR_LAPACK_DTYPES, eigh_kernel);
KernelRegistrar r_qr("linalg_qr", DeviceType::CPU, OAR_LAPACK_DTYPES, qr_kernel);
KernelRegistrar r_inv("linalg_inv", DeviceType::CPU, OAR_LAPACK_DTYPES, inv_kernel);
KernelRegistrar r_det("linalg_det", DeviceType::CPU, OAR_LAPACK_DTYPES, det_kernel);
KernelRegistrar r_slogdet("linalg_slogdet", DeviceType::CPU, OAR_LAPACK_DTYPES, slogdet_kernel);
KernelRegistrar r_solve("linalg_solve", DeviceType::CPU, OAR_LAPACK_DTYPES, solve_kernel);
KernelRegistrar r_cholesky("linalg_cholesky", DeviceType::CPU, OAR_LAPACK_DTYPES, cholesky_kernel);

}  // namespace
}  // namespace oar::cpu

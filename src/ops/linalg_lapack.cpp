// Decompositions with LAPACK kernels (kernels/cpu/lapack.cpp) and their
// gradient rules, written with the op API so that they differentiate again.
//
// Gradient rules follow the conjugate-Wirtinger convention; mH is the
// conjugate transpose of the last two dims. The svd/eigh/qr rules are the
// standard real formulas and raise NotImplementedError for complex inputs,
// except for functions of the singular values / eigenvalues alone.
#include "ops/linalg_lapack.h"

#include <climits>
#include <cmath>

#include "ops/grad.h"
#include "ops/dispatch.h"
#include "ops/index.h"
#include "ops/manip.h"
#include "ops/reduce_ext.h"

namespace oar {
namespace {

using namespace ops;

// ---- validation shared by the metas
void check_dtype(const Tensor& x, const char* api) {
  DType t = x.dtype();
  OAR_CHECK(t == DType::Float32 || t == DType::Float64 || t == DType::Complex64 || t == DType::Complex128, Type,
            "[", api, "] supports float32, float64, complex64 and complex128 inputs, got ", dtype_name(t));
}
void check_matrix(const Tensor& x, const char* api, const char* what = "x") {
  OAR_CHECK(x.dim() >= 2, Value, "[", api, "] ", what, " must have at least 2 dims [..., M, N], got shape ",
            shape_str(x.shape()));
  // LAPACK indexes with 32-bit ints.
  for (int64_t d = x.dim() - 2; d < x.dim(); ++d)
    OAR_CHECK(x.shape()[d] <= INT_MAX / 8, Value, "[", api, "] matrix dim ", x.shape()[d], " is too large");
}
void check_square(const Tensor& x, const char* api, const char* what = "x") {
  check_matrix(x, api, what);
  OAR_CHECK(x.shape()[x.dim() - 1] == x.shape()[x.dim() - 2], Value, "[", api, "] ", what,
            " must be a square matrix (or a batch of them), got shape ", shape_str(x.shape()));
}
Dims batch_dims(const Tensor& x) { return Dims(x.shape().begin(), x.shape().end() - 2); }
Dims with(Dims b, std::initializer_list<int64_t> tail) {
  for (int64_t t : tail) b.push_back(t);
  return b;
}

// ---- helpers for the gradient rules
Tensor mT(const Tensor& x) { return swapaxes(x, x.dim() - 2, x.dim() - 1); }
Tensor mH(const Tensor& x) { return conj(mT(x)); }
Tensor eye_like(int64_t n, DType dt) { return eye(n, n, dt); }
// s [.., k] -> [.., k, k] with s on the diagonal.
Tensor diag_embed(const Tensor& s, DType dt) {
  int64_t k = s.shape().back();
  return multiply(unsqueeze(cast(s, dt), Dims{s.dim()}), eye_like(k, dt));
}
Tensor col(const Tensor& s) { return unsqueeze(s, Dims{s.dim()}); }      // [.., k, 1]
Tensor row(const Tensor& s) { return unsqueeze(s, Dims{s.dim() - 1}); }  // [.., 1, k]
void no_complex_grad(const Tensor& x, const char* api) {
  OAR_CHECK(!is_complex(x.dtype()), NotImplemented, "[", api, "] the gradient for complex inputs is not implemented");
}

// ---- svd
Metas svd_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_dtype(x, "oar.linalg.svd");
  check_matrix(x, "oar.linalg.svd");
  int64_t m = x.shape()[x.dim() - 2], n = x.shape()[x.dim() - 1], k = std::min(m, n);
  bool full = a.b(0);
  Dims b = batch_dims(x);
  return {TensorMeta{with(b, {m, full ? m : k}), x.dtype()}, TensorMeta{with(b, {k}), to_real(x.dtype())},
          TensorMeta{with(b, {full ? n : k, n}), x.dtype()}};
}

Tensors svd_grad(const GradCtx& c) {
  const Tensor& U = c.out(0);
  const Tensor& S = c.out(1);
  const Tensor& Vh = c.out(2);
  int64_t m = U.shape()[U.dim() - 2], n = Vh.shape()[Vh.dim() - 1], k = S.shape().back();
  OAR_CHECK(!c.attr().b(0) || m == n, NotImplemented,
            "[oar.linalg.svd] the gradient with full_matrices=True is implemented only for square matrices, got ",
            m, "x", n);
  DType dt = U.dtype();
  bool has_u = c.grads[0].defined(), has_v = c.grads[2].defined();
  Tensor gS = c.grad(1);
  // Functions of S alone (norms, svdvals): U diag(gS) VH.
  if (!has_u && !has_v) return {matmul(multiply(U, cast(row(gS), dt)), Vh)};
  no_complex_grad(U, "oar.linalg.svd");
  Tensor Sr = row(S), Sc = col(S);
  // E_jk = S_k^2 - S_j^2 off the diagonal, 1 on it (where the numerator is 0).
  Tensor E = add(subtract(square(Sr), square(Sc)), eye_like(k, dt));
  Tensor inner = diag_embed(gS, dt);
  Tensor gU, gV, UhgU, VhgV;
  if (has_u) {
    gU = c.grad(0);
    UhgU = matmul(mH(U), gU);
    inner = add(inner, multiply(divide(subtract(UhgU, mH(UhgU)), E), Sr));
  }
  if (has_v) {
    gV = mH(c.grad(2));
    VhgV = matmul(Vh, gV);
    inner = add(inner, multiply(Sc, divide(subtract(VhgV, mH(VhgV)), E)));
  }
  Tensor gA = matmul(matmul(U, inner), Vh);
  // The parts of gU / gV outside the spans of U / V (rectangular inputs).
  if (has_u && m > k) {
    Tensor gUS = divide(subtract(gU, matmul(U, UhgU)), Sr);
    gA = add(gA, matmul(gUS, Vh));
  }
  if (has_v && n > k) {
    Tensor gVh = mH(gV);
    Tensor SgV = divide(subtract(gVh, matmul(matmul(gVh, mH(Vh)), Vh)), Sc);
    gA = add(gA, matmul(U, SgV));
  }
  return {gA};
}

// ---- eigh
Metas eigh_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  check_dtype(x, "oar.linalg.eigh");
  check_square(x, "oar.linalg.eigh");
  int64_t n = x.shape().back();
  Dims b = batch_dims(x);
  return {TensorMeta{with(b, {n}), to_real(x.dtype())}, TensorMeta{x.shape(), x.dtype()}};
}

Tensors eigh_grad(const GradCtx& c) {
  const Tensor& w = c.out(0);
  const Tensor& V = c.out(1);
  DType dt = V.dtype();
  int64_t n = w.shape().back();
  Tensor inner = diag_embed(c.grad(0), dt);
  // Eigenvalues alone: V diag(gw) V^H, for complex inputs too.
  if (c.grads[1].defined()) {
    no_complex_grad(V, "oar.linalg.eigh");
    // (V^H gV)_ij / (w_j - w_i) off the diagonal.
    Tensor E = add(subtract(row(w), col(w)), eye_like(n, dt));
    Tensor off = subtract(ones(Dims{n, n}, dt), eye_like(n, dt));
    inner = add(inner, multiply(divide(matmul(mH(V), c.grad(1)), E), off));
  }
  return {matmul(matmul(V, inner), mH(V))};
}

// ---- qr
Metas qr_meta(std::span<const Tensor> in, const Attrs& a) {
  const Tensor& x = in[0];
  check_dtype(x, "oar.linalg.qr");
  check_matrix(x, "oar.linalg.qr");
  int64_t m = x.shape()[x.dim() - 2], n = x.shape()[x.dim() - 1];
  int64_t kq = a.s(0) == "complete" ? m : std::min(m, n);
  Dims b = batch_dims(x);
  return {TensorMeta{with(b, {m, kq}), x.dtype()}, TensorMeta{with(b, {kq, n}), x.dtype()}};
}

Tensors qr_grad(const GradCtx& c) {
  const Tensor& Q = c.out(0);
  const Tensor& R = c.out(1);
  no_complex_grad(Q, "oar.linalg.qr");
  int64_t m = Q.shape()[Q.dim() - 2], n = R.shape()[R.dim() - 1];
  OAR_CHECK(m >= n && Q.shape().back() == n, NotImplemented,
            "[oar.linalg.qr] the gradient is implemented for M >= N with mode 'reduced' (or square inputs), got ",
            m, "x", n);
  // gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q, where copyltu
  // mirrors the lower triangle onto the upper one.
  Tensor gQ = c.grad(0), gR = c.grad(1);
  Tensor M = subtract(matmul(R, mH(gR)), matmul(mH(gQ), Q));
  Tensor low = tril(M, -1);
  Tensor sym = add(add(low, mH(low)), multiply(M, eye_like(n, M.dtype())));
  Tensor B = add(gQ, matmul(Q, sym));
  // B R^-H = (R^-1 B^H)^H.
  return {mH(linalg::solve(R, mH(B)))};
}

// ---- inv, det, slogdet
Metas square_meta(const Tensor& x, const char* api) {
  check_dtype(x, api);
  check_square(x, api);
  return {TensorMeta{x.shape(), x.dtype()}};
}
Metas inv_meta(std::span<const Tensor> in, const Attrs&) { return square_meta(in[0], "oar.linalg.inv"); }
Tensors inv_grad(const GradCtx& c) {
  Tensor Yh = mH(c.out(0));
  return {neg(matmul(matmul(Yh, c.grad(0)), Yh))};
}

Metas det_meta(std::span<const Tensor> in, const Attrs&) {
  square_meta(in[0], "oar.linalg.det");
  return {TensorMeta{batch_dims(in[0]), in[0].dtype()}};
}
Tensors det_grad(const GradCtx& c) {
  // d det / dA = det * A^-T.
  Tensor g = col(col(multiply(c.grad(0), conj(c.out(0)))));
  return {multiply(g, mH(linalg::inv(c.in(0))))};
}

Metas slogdet_meta(std::span<const Tensor> in, const Attrs&) {
  square_meta(in[0], "oar.linalg.slogdet");
  Dims s{2};
  for (int64_t d : batch_dims(in[0])) s.push_back(d);
  return {TensorMeta{s, in[0].dtype()}};
}
Tensors slogdet_grad(const GradCtx& c) {
  const Tensor& x = c.in(0);
  no_complex_grad(x, "oar.linalg.slogdet");
  // Only log|det| has a gradient (the sign is piecewise constant): A^-T.
  Tensor g = c.grad(0);
  Tensor gl = reshape(strided_slice(g, Dims{0}, Dims{1}, Dims{2}, Dims{1}), batch_dims(x));
  return {multiply(col(col(gl)), mT(linalg::inv(x)))};
}

// ---- solve
Metas solve_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  check_dtype(x, "oar.linalg.solve");
  check_square(x, "oar.linalg.solve");
  check_matrix(y, "oar.linalg.solve", "y");
  OAR_CHECK(x.dtype() == y.dtype(), Type, "[oar.linalg.solve] x and y must have the same dtype, got ",
            dtype_name(x.dtype()), " and ", dtype_name(y.dtype()));
  OAR_CHECK(y.dim() == x.dim() && batch_dims(x) == batch_dims(y) && y.shape()[y.dim() - 2] == x.shape().back(),
            Value, "[oar.linalg.solve] y must have shape [..., ", x.shape().back(), ", K] matching x of shape ",
            shape_str(x.shape()), ", got ", shape_str(y.shape()));
  return {TensorMeta{y.shape(), y.dtype()}};
}
Tensors solve_grad(const GradCtx& c) {
  // X = A^-1 B: gB = A^-H g, gA = -gB X^H.
  Tensor gB = linalg::solve(mH(c.in(0)), c.grad(0));
  Tensor gA = neg(matmul(gB, mH(c.out(0))));
  return {gA, gB};
}

// ---- cholesky
Metas cholesky_meta(std::span<const Tensor> in, const Attrs&) { return square_meta(in[0], "oar.linalg.cholesky"); }
Tensors cholesky_grad(const GradCtx& c) {
  bool upper = c.attr().b(0);
  Tensor L = upper ? mH(c.out(0)) : c.out(0);
  Tensor gL = upper ? mH(c.grad(0)) : c.grad(0);
  int64_t n = L.shape().back();
  // gA = L^-H Phi(L^H gL) L^-1 (Phi: the lower triangle with the diagonal
  // halved), then its Hermitian part, as only that part of A is used.
  Tensor P = matmul(mH(L), gL);
  P = subtract(tril(P), scale(multiply(P, eye_like(n, P.dtype())), 0.5));
  Tensor Lh = mH(L);
  Tensor T = linalg::solve(Lh, P);                 // L^-H P
  Tensor gA = mH(linalg::solve(Lh, mH(T)));        // (L^-H T^H)^H = T L^-1
  return {scale(add(gA, mH(gA)), 0.5)};
}

OpDef& kSvd = OpBuilder("linalg_svd").attrs({"full_matrices"}).meta(svd_meta).grad(svd_grad).saves(false, true);
OpDef& kEigh = OpBuilder("linalg_eigh").attrs({"UPLO"}).meta(eigh_meta).grad(eigh_grad).saves(false, true);
OpDef& kQr = OpBuilder("linalg_qr").attrs({"mode"}).meta(qr_meta).grad(qr_grad).saves(false, true);
OpDef& kInv = OpBuilder("linalg_inv").meta(inv_meta).grad(inv_grad).saves(false, true);
OpDef& kDet = OpBuilder("linalg_det").meta(det_meta).grad(det_grad).saves(true, true);
OpDef& kSlogdet = OpBuilder("linalg_slogdet").meta(slogdet_meta).grad(slogdet_grad).saves(true, false);
OpDef& kSolve = OpBuilder("linalg_solve").meta(solve_meta).grad(solve_grad).saves(true, true);
OpDef& kCholesky = OpBuilder("linalg_cholesky").attrs({"upper"}).meta(cholesky_meta).grad(cholesky_grad)
                       .saves(false, true);

// ---- eig (general, geev): w [.., n] and V [.., n, n], complex.
Metas eig_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  check_dtype(x, "oar.linalg.eig");
  check_square(x, "oar.linalg.eig");
  DType ct = to_complex(x.dtype());
  return {TensorMeta{with(batch_dims(x), {x.shape().back()}), ct}, TensorMeta{x.shape(), ct}};
}
Tensors eig_grad(const GradCtx& c) {
  // gA = V^-H (diag(gw) + off(V^H gV - V^H V diag(re diag(V^H gV))) / conj(E)) V^H with
  // E_ij = w_j - w_i; real inputs take the real part.
  const Tensor& w = c.out(0);
  const Tensor& V = c.out(1);
  DType ct = V.dtype();
  int64_t n = w.shape().back();
  Tensor inner = diag_embed(c.grad(0), ct);
  if (c.grads[1].defined()) {
    Tensor Vh = mH(V);
    Tensor VhgV = matmul(Vh, c.grad(1));
    Tensor d = cast(real(diagonal(VhgV, 0, VhgV.dim() - 2, VhgV.dim() - 1)), ct);
    Tensor num = subtract(VhgV, matmul(Vh, multiply(V, row(d))));
    Tensor wc = conj(w);
    Tensor E = add(subtract(row(wc), col(wc)), eye_like(n, ct));
    Tensor off = subtract(ones(Dims{n, n}, ct), eye_like(n, ct));
    inner = add(inner, multiply(divide(num, E), off));
  }
  Tensor gA = linalg::solve(mH(V), matmul(inner, mH(V)));
  return {is_complex(c.in(0).dtype()) ? gA : cast(real(gA), c.in(0).dtype())};
}

// ---- lu (getrf with partial pivoting): LU packed [.., m, n], pivots int32
// [.., k] (1-based, LAPACK's), infos int32 [..], and the inverse row
// permutation int64 [.., m, 1] (row j of A is row iperm[j] of L U) for the gradient.
Metas lu_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  check_dtype(x, "oar.linalg.lu");
  check_matrix(x, "oar.linalg.lu");
  int64_t m = x.shape()[x.dim() - 2], n = x.shape()[x.dim() - 1];
  Dims b = batch_dims(x);
  return {TensorMeta{x.shape(), x.dtype()}, TensorMeta{with(b, {std::min(m, n)}), DType::Int32},
          TensorMeta{b, DType::Int32}, TensorMeta{with(b, {m, 1}), DType::Int64}};
}
Tensor rows(const Tensor& x, int64_t b, int64_t e) {
  return strided_slice(x, Dims{x.dim() - 2}, Dims{b}, Dims{e}, Dims{1});
}
Tensor cols(const Tensor& x, int64_t b, int64_t e) {
  return strided_slice(x, Dims{x.dim() - 1}, Dims{b}, Dims{e}, Dims{1});
}
Tensor cat2(const Tensor& a, const Tensor& b, int64_t axis) {
  Tensor xs[2] = {a, b};
  return concat(std::span<const Tensor>(xs, 2), axis);
}
// X U^-H for square U.
Tensor right_solve_h(const Tensor& X, const Tensor& U) { return mH(linalg::solve(U, mH(X))); }
Tensors lu_grad(const GradCtx& c) {
  const Tensor& LU = c.out(0);
  const Tensor& iperm = c.out(3);
  int64_t m = LU.shape()[LU.dim() - 2], n = LU.shape()[LU.dim() - 1], k = std::min(m, n);
  DType dt = LU.dtype();
  Tensor g = c.grad(0);
  // L [m, k] unit lower, U [k, n] upper; their gradients from the packed one.
  Tensor L = add(cols(tril(LU, -1), 0, k), eye(m, k, dt)), U = rows(triu(LU), 0, k);
  Tensor gL = cols(tril(g, -1), 0, k), gU = rows(triu(g), 0, k);
  Tensor gA;
  if (m <= n) {
    Tensor U1 = cols(U, 0, k);
    Tensor T = right_solve_h(tril(subtract(matmul(mH(L), gL), matmul(gU, mH(U))), -1), U1);
    T = k == n ? add(T, gU) : cat2(add(T, cols(gU, 0, k)), cols(gU, k, n), -1);
    gA = linalg::solve(mH(L), T);
  } else {
    Tensor L1 = rows(L, 0, k);
    Tensor T = linalg::solve(mH(L1), triu(subtract(matmul(gU, mH(U)), matmul(mH(L), gL))));
    T = cat2(add(T, rows(gL, 0, k)), rows(gL, k, m), -2);
    gA = right_solve_h(T, U);
  }
  // A = P L U: undo the row permutation.
  Dims full = iperm.shape();
  full.back() = n;
  return {take_along_axis(gA, expand(iperm, full), gA.dim() - 2, false)};
}

// ---- triangular_solve (trsm): op(A) X = B with A the upper/lower triangle of
// x (unit diagonal with unitriangular), op(A) = A or A^T.
Metas trisolve_meta(std::span<const Tensor> in, const Attrs&) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  const char* api = "oar.linalg.triangular_solve";
  check_dtype(x, api);
  check_square(x, api);
  check_matrix(y, api, "y");
  OAR_CHECK(x.dtype() == y.dtype(), Type, "[", api, "] x and y must have the same dtype, got ", dtype_name(x.dtype()),
            " and ", dtype_name(y.dtype()));
  OAR_CHECK(y.dim() == x.dim() && batch_dims(x) == batch_dims(y) && y.shape()[y.dim() - 2] == x.shape().back(),
            Value, "[", api, "] y must have shape [..., ", x.shape().back(), ", K] matching x of shape ",
            shape_str(x.shape()), ", got ", shape_str(y.shape()));
  return {TensorMeta{y.shape(), y.dtype()}};
}
Tensors trisolve_grad(const GradCtx& c) {
  bool upper = c.attr().b(0), trans = c.attr().b(1), unit = c.attr().b(2);
  const Tensor& x = c.in(0);
  // gB = op(A)^-H g: op(A)^H is conj(A)^T (no transpose) or conj(A).
  Tensor gB = linalg::triangular_solve(conj(x), c.grad(0), upper, !trans, unit);
  Tensor gOp = neg(matmul(gB, mH(c.out(0))));
  Tensor gA = trans ? mT(gOp) : gOp;
  // Only the triangle that is read (without its diagonal when that is taken as ones).
  gA = upper ? triu(gA, unit ? 1 : 0) : tril(gA, unit ? -1 : 0);
  return {gA, gB};
}

OpDef& kTrisolve = OpBuilder("linalg_triangular_solve").attrs({"upper", "transpose", "unitriangular"})
                       .meta(trisolve_meta).grad(trisolve_grad).saves(true, true);
OpDef& kEig = OpBuilder("linalg_eig").meta(eig_meta).grad(eig_grad).saves(true, true);
OpDef& kLu = OpBuilder("linalg_lu").meta(lu_meta).grad(lu_grad).saves(false, true);

// Integer and bool inputs compute in the default float dtype; everything is
// made contiguous for the kernels.
Tensor prep(const Tensor& x) {
  Tensor t = is_inexact(x.dtype()) ? x : cast(x, default_float_dtype());
  return contiguous(t);
}

Tensors run(OpDef& op, std::initializer_list<Tensor> in, const Attrs& a = {}) {
  return dispatch(op, std::span<const Tensor>(in.begin(), in.size()), a);
}

}  // namespace

namespace ops::linalg {

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full_matrices) {
  Tensors r = run(kSvd, {prep(x)}, Attrs{full_matrices});
  return {r[0], r[1], r[2]};
}

Tensor svdvals(const Tensor& x) { return std::get<1>(svd(x, false)); }

std::pair<Tensor, Tensor> eigh(const Tensor& x, const std::string& UPLO) {
  OAR_CHECK(UPLO == "L" || UPLO == "U", Value, "[oar.linalg.eigh] UPLO must be 'L' or 'U', got '", UPLO, "'");
  Tensors r = run(kEigh, {prep(x)}, Attrs{UPLO});
  return {r[0], r[1]};
}

Tensor eigvalsh(const Tensor& x, const std::string& UPLO) {
  OAR_CHECK(UPLO == "L" || UPLO == "U", Value, "[oar.linalg.eigvalsh] UPLO must be 'L' or 'U', got '", UPLO, "'");
  return eigh(x, UPLO).first;
}

std::pair<Tensor, Tensor> qr(const Tensor& x, const std::string& mode) {
  OAR_CHECK(mode == "reduced" || mode == "complete" || mode == "r", Value,
            "[oar.linalg.qr] mode must be 'reduced', 'complete' or 'r', got '", mode, "'");
  Tensors r = run(kQr, {prep(x)}, Attrs{mode == "r" ? std::string("reduced") : mode});
  if (mode == "r") return {r[1], Tensor()};
  return {r[0], r[1]};
}

Tensor inv(const Tensor& x) { return run(kInv, {prep(x)})[0]; }
Tensor det(const Tensor& x) { return run(kDet, {prep(x)})[0]; }
Tensor slogdet(const Tensor& x) { return run(kSlogdet, {prep(x)})[0]; }

Tensor solve(const Tensor& x0, const Tensor& y0) {
  const char* api = "oar.linalg.solve";
  Tensor x = prep(x0), y = prep(y0);
  check_square(x, api);
  DType dt = promote_types(x.dtype(), y.dtype());
  x = cast(x, dt);
  y = cast(y, dt);
  bool vec = y.dim() == 1;
  if (vec) {
    OAR_CHECK(y.shape()[0] == x.shape().back(), Value, "[oar.linalg.solve] y of shape ", shape_str(y.shape()),
              " does not match x of shape ", shape_str(x.shape()));
    y = unsqueeze(y, Dims{1});
  }
  check_matrix(y, api, "y");
  OAR_CHECK(y.shape()[y.dim() - 2] == x.shape().back(), Value, "[oar.linalg.solve] y must have shape [..., ",
            x.shape().back(), ", K] for x of shape ", shape_str(x.shape()), ", got ", shape_str(y.shape()));
  Dims b = broadcast_shapes(batch_dims(x), batch_dims(y), api);
  Tensor xe = contiguous(expand(x, with(b, {x.shape()[x.dim() - 2], x.shape().back()})));
  Tensor ye = contiguous(expand(y, with(b, {y.shape()[y.dim() - 2], y.shape().back()})));
  Tensor r = run(kSolve, {xe, ye})[0];
  return vec ? squeeze(r, Dims{r.dim() - 1}) : r;
}

Tensor cholesky(const Tensor& x, bool upper) { return run(kCholesky, {prep(x)}, Attrs{upper})[0]; }

Tensor matrix_power(const Tensor& x0, int64_t n) {
  Tensor x = x0;
  const char* api = "oar.linalg.matrix_power";
  check_square(x, api);
  if (n == 0) return expand(eye(x.shape().back(), x.shape().back(), x.dtype()), x.shape());
  if (n < 0) x = inv(x);
  // Binary powering: O(log n) products, over |n| as unsigned (|INT64_MIN| fits).
  uint64_t m = n < 0 ? uint64_t(0) - uint64_t(n) : uint64_t(n);
  Tensor result, base = x;
  while (m > 0) {
    if (m & 1) result = result.defined() ? matmul(result, base) : base;
    m >>= 1;
    if (m > 0) base = matmul(base, base);
  }
  return result;
}

Tensor svd_matrix_norm(const Tensor& x, int64_t a0, int64_t a1, bool nuc, double p, bool keepdim,
                       const char* api) {
  // Move the two axes last (a0 rows, a1 columns), take the singular values.
  Dims perm;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != a0 && d != a1) perm.push_back(d);
  perm.push_back(a0);
  perm.push_back(a1);
  Tensor xt = transpose(x, perm);
  int64_t k = std::min(x.shape()[a0], x.shape()[a1]);
  OAR_CHECK(nuc || k > 0, Value, "[", api, "] the spectral norm of a zero-size matrix is undefined, got shape ",
            shape_str(x.shape()));
  Tensor s = svdvals(xt);
  int64_t last = s.dim() - 1;
  Tensor r = nuc ? sum(s, Dims{last}) : (p > 0 ? amax(s, Dims{last}) : amin(s, Dims{last}));
  if (!keepdim) return r;
  Dims ax{std::min(a0, a1), std::max(a0, a1)};
  return unsqueeze(r, ax);
}

std::pair<Tensor, Tensor> eig(const Tensor& x) {
  Tensors r = run(kEig, {prep(x)});
  return {r[0], r[1]};
}

Tensor triangular_solve(const Tensor& x0, const Tensor& y0, bool upper, bool transpose, bool unitriangular) {
  const char* api = "oar.linalg.triangular_solve";
  Tensor x = prep(x0), y = prep(y0);
  check_square(x, api);
  check_matrix(y, api, "y");
  DType dt = promote_types(x.dtype(), y.dtype());
  x = cast(x, dt);
  y = cast(y, dt);
  OAR_CHECK(y.shape()[y.dim() - 2] == x.shape().back(), Value, "[", api, "] y must have shape [..., ",
            x.shape().back(), ", K] for x of shape ", shape_str(x.shape()), ", got ", shape_str(y.shape()));
  Dims b = broadcast_shapes(batch_dims(x), batch_dims(y), api);
  Tensor xe = contiguous(expand(x, with(b, {x.shape()[x.dim() - 2], x.shape().back()})));
  Tensor ye = contiguous(expand(y, with(b, {y.shape()[y.dim() - 2], y.shape().back()})));
  return run(kTrisolve, {xe, ye}, Attrs{upper, transpose, unitriangular})[0];
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& x) {
  Tensors r = run(kLu, {prep(x)});
  return {r[0], r[1], r[2]};
}

}  // namespace ops::linalg
}  // namespace oar

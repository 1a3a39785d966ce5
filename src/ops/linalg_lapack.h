// Dense decompositions and what is built on them (paddle.linalg): svd, eigh,
// qr, inv, det, slogdet, solve, cholesky, eig, lu and triangular_solve are ops with LAPACK kernels
// (kernels/cpu/lapack.cpp); svdvals, eigvalsh, pinv, matrix_power,
// matrix_rank, cond and the spectral/nuclear matrix norms are composites of
// them. All work on the last two dims and batch over the leading ones.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "ops/ops.h"

namespace oar::ops::linalg {

// (U, S, VH) with x = U @ diag(S) @ VH; S descending, real.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full_matrices = false);
Tensor svdvals(const Tensor& x);
// (eigenvalues ascending, eigenvectors as columns); only the UPLO triangle is read.
std::pair<Tensor, Tensor> eigh(const Tensor& x, const std::string& UPLO = "L");
Tensor eigvalsh(const Tensor& x, const std::string& UPLO = "L");
// mode "reduced", "complete" or "r" (then the first result is R and the second undefined).
std::pair<Tensor, Tensor> qr(const Tensor& x, const std::string& mode = "reduced");
Tensor inv(const Tensor& x);
Tensor det(const Tensor& x);
// Stacked [sign, log|det|] of shape [2, *batch] (Paddle's layout).
Tensor slogdet(const Tensor& x);
// x [.., n, n], y [.., n, k] or [n]; batch dims broadcast.
Tensor solve(const Tensor& x, const Tensor& y);
Tensor cholesky(const Tensor& x, bool upper = false);
Tensor matrix_power(const Tensor& x, int64_t n);
// General eigendecomposition (geev): complex eigenvalues [.., n] and unit-norm
// eigenvectors as columns [.., n, n]; a real x gives complex results.
std::pair<Tensor, Tensor> eig(const Tensor& x);
// LU with partial pivoting (getrf): (packed L\U [.., m, n], 1-based pivots
// int32 [.., min(m, n)], infos int32 [..], 0 or the 1-based index of U's first zero pivot).
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& x);
// Solves op(A) X = y, A the upper (or lower) triangle of x [.., n, n] (its
// diagonal taken as ones with unitriangular), op(A) = A or A^T; y [.., n, k],
// batch dims broadcast. A zero on A's diagonal gives inf/NaN, not an error.
Tensor triangular_solve(const Tensor& x, const Tensor& y, bool upper = true, bool transpose = false,
                        bool unitriangular = false);
// Matrix norm over axes (a0, a1) from the singular values: "nuc" (their sum),
// 2 (the largest) or -2 (the smallest).
Tensor svd_matrix_norm(const Tensor& x, int64_t a0, int64_t a1, bool nuc, double p, bool keepdim,
                       const char* api);

}  // namespace oar::ops::linalg

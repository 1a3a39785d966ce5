"""Batched matmul layouts with their own code paths: a stack of matrices
times one matrix (folded into a single product when rows continue across
the batch, looped otherwise) and many small products spread over threads."""
import numpy as np
import pytest

import oar


def _check(a, b, dtype, **kw):
    got = oar.matmul(oar.to_tensor(a).astype(dtype), oar.to_tensor(b).astype(dtype), **kw).numpy()
    if kw.get("transpose_x"):
        a = np.swapaxes(a, -1, -2)
    if kw.get("transpose_y"):
        b = np.swapaxes(b, -1, -2)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max(initial=1.0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stack_times_matrix_folds(dtype):
    rng = np.random.default_rng(0)
    _check(rng.standard_normal((4, 7, 5)), rng.standard_normal((5, 3)), dtype)
    _check(rng.standard_normal((2, 3, 7, 5)), rng.standard_normal((5, 3)), dtype)
    _check(rng.standard_normal((2, 3, 7, 5)), rng.standard_normal((1, 5, 3)), dtype)
    _check(rng.standard_normal((4, 7, 5)), rng.standard_normal((3, 5)), dtype, transpose_y=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stack_whose_rows_do_not_continue(dtype):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((7, 4, 5))
    x = oar.to_tensor(base).astype(dtype).transpose([1, 0, 2])  # [4, 7, 5], batch stride 5
    b = rng.standard_normal((5, 3))
    got = oar.matmul(x, oar.to_tensor(b).astype(dtype)).numpy()
    np.testing.assert_allclose(got, np.transpose(base, (1, 0, 2)) @ b, rtol=1e-5)
    _check(rng.standard_normal((4, 5, 7)), b, dtype, transpose_x=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_many_small_products(dtype):
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, (6, 4, 9, 8)).astype(np.float64)
    b = rng.integers(-3, 4, (6, 4, 8, 9)).astype(np.float64)
    if dtype == "int64":
        got = oar.matmul(oar.to_tensor(a.astype(np.int64)), oar.to_tensor(b.astype(np.int64))).numpy()
        np.testing.assert_array_equal(got, (a @ b).astype(np.int64))
    else:
        _check(a, b, dtype)
        _check(a, b, dtype, transpose_x=True, transpose_y=True)
    old = oar.get_num_threads()
    try:
        oar.set_num_threads(1)
        _check(a, b, "float64")
    finally:
        oar.set_num_threads(old)

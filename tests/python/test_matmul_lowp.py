"""float16/bfloat16 matmul (oneDNN path and its fallbacks) against NumPy on the
same rounded inputs, over the layouts training produces."""
import numpy as np
import pytest

import oar

CASES = [
    ((64, 32), (32, 48), False, False),
    ((3, 5, 7), (3, 7, 4), False, False),  # batched
    ((3, 7, 5), (7, 4), True, False),  # transposed left, broadcast right
    ((2, 3, 5, 7), (2, 3, 4, 7), False, True),  # 4-D, transposed right
    ((5, 7), (2, 7, 4), False, False),  # broadcast left (general path)
    ((1, 7), (7, 1), False, False),
    ((4, 0), (0, 3), False, False),  # K == 0
    ((0, 4), (4, 3), False, False),
]
# one rounding of the float32-accumulated result to the storage type
TOL = {"bfloat16": 2 ** -7, "float16": 2 ** -10}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("xs,ys,tx,ty", CASES)
def test_lowp_matmul(dtype, xs, ys, tx, ty):
    rng = np.random.default_rng(0)
    ta = oar.to_tensor(rng.standard_normal(xs).astype(np.float32)).astype(dtype)
    tb = oar.to_tensor(rng.standard_normal(ys).astype(np.float32)).astype(dtype)
    got = oar.matmul(ta, tb, transpose_x=tx, transpose_y=ty)
    assert str(got.dtype) == f"paddle.{dtype}"
    a = ta.astype("float64").numpy()
    b = tb.astype("float64").numpy()
    if tx:
        a = np.swapaxes(a, -1, -2)
    if ty:
        b = np.swapaxes(b, -1, -2)
    want = a @ b
    np.testing.assert_allclose(got.astype("float64").numpy(), want, rtol=TOL[dtype],
                               atol=TOL[dtype] * max(1.0, np.abs(want).max(initial=0.0)))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_lowp_matmul_on_strided_views(dtype):
    rng = np.random.default_rng(1)
    base = oar.to_tensor(rng.standard_normal((16, 8)).astype(np.float32)).astype(dtype)
    a = base.astype("float64").numpy()
    got = oar.matmul(base.t(), base).astype("float64").numpy()
    np.testing.assert_allclose(got, a.T @ a, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(a.T @ a).max())
    sl = base[::2, 1:5]  # rows with a step: neither stride is the row length
    got = oar.matmul(sl, sl.t()).astype("float64").numpy()
    s = a[::2, 1:5]
    np.testing.assert_allclose(got, s @ s.T, rtol=TOL[dtype], atol=TOL[dtype] * np.abs(s @ s.T).max())

"""grid_sample on 5-D input (N, C, D, H, W) against a loop-based NumPy reference."""
import itertools
import math

import numpy as np
import pytest

import oar
import oar.nn.functional as F
from grid_ref import numeric_grad, unnormalize

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _fresh_rng():
    # each test draws the same numbers however the tests are selected or ordered
    global RNG
    RNG = np.random.default_rng(11)


def np_grid_sample_3d(x, grid, mode, padding, ac):
    n, c, d, h, w = x.shape
    _, do, ho, wo, _ = grid.shape

    def unnorm(g, size):
        return unnormalize(g, size, padding, ac)

    def at(b, xi, yi, zi):
        if 0 <= xi < w and 0 <= yi < h and 0 <= zi < d:
            return x[b, :, zi, yi, xi]
        return np.zeros(c)

    def rnd(v):  # round half away from zero
        return int(math.copysign(math.floor(abs(v) + 0.5), v))

    out = np.zeros((n, c, do, ho, wo))
    for b, i, j, k in itertools.product(range(n), range(do), range(ho), range(wo)):
        gx, gy, gz = grid[b, i, j, k]
        px, py, pz = unnorm(gx, w), unnorm(gy, h), unnorm(gz, d)
        if mode == "nearest":
            out[b, :, i, j, k] = at(b, rnd(px), rnd(py), rnd(pz))
            continue
        x0, y0, z0 = math.floor(px), math.floor(py), math.floor(pz)
        fx, fy, fz = px - x0, py - y0, pz - z0
        acc = np.zeros(c)
        for dz, dy, dx in itertools.product((0, 1), repeat=3):
            wgt = (fx if dx else 1 - fx) * (fy if dy else 1 - fy) * (fz if dz else 1 - fz)
            acc = acc + at(b, x0 + dx, y0 + dy, z0 + dz) * wgt
        out[b, :, i, j, k] = acc
    return out


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [True, False])
def test_forward_float64(mode, padding, ac):
    x = RNG.standard_normal((2, 3, 3, 4, 5))
    grid = RNG.uniform(-1.7, 1.7, (2, 2, 3, 2, 3))
    out = F.grid_sample(oar.to_tensor(x), oar.to_tensor(grid), mode, padding, ac)
    assert out.shape == [2, 3, 2, 3, 2]
    np.testing.assert_allclose(out.numpy(), np_grid_sample_3d(x, grid, mode, padding, ac), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "reflection"])
def test_forward_float32_and_size_one_axes(mode, padding):
    x = RNG.standard_normal((1, 2, 1, 3, 2)).astype("float32")  # D = 1 exercises the degenerate axis
    grid = RNG.uniform(-1.3, 1.3, (1, 2, 2, 3, 3)).astype("float32")
    out = F.grid_sample(oar.to_tensor(x), oar.to_tensor(grid), mode, padding, False)
    assert out.dtype == oar.float32
    ref = np_grid_sample_3d(x.astype(np.float64), grid.astype(np.float64), mode, padding, False)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_known_values():
    # the centre of a 2x2x2 cube is the mean of its corners; corners map exactly with align_corners
    v = np.arange(8, dtype=np.float64).reshape(1, 1, 2, 2, 2)
    grid = np.array([[[[[0.0, 0.0, 0.0], [1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]]]]])
    out = F.grid_sample(oar.to_tensor(v), oar.to_tensor(grid)).numpy().reshape(-1)
    np.testing.assert_allclose(out, [3.5, v[0, 0, 1, 0, 1], v[0, 0, 0, 1, 0]])


def test_non_contiguous_and_zero_size():
    base = RNG.standard_normal((1, 3, 4, 2, 2))
    view = oar.to_tensor(base).transpose([0, 4, 1, 2, 3])  # [1, 2, 3, 4, 2], non-contiguous
    dense = base.transpose(0, 4, 1, 2, 3).copy()
    grid = RNG.uniform(-1, 1, (1, 2, 2, 2, 3))
    np.testing.assert_allclose(F.grid_sample(view, oar.to_tensor(grid)).numpy(),
                               np_grid_sample_3d(dense, grid, "bilinear", "zeros", True), rtol=1e-10, atol=1e-12)
    empty = F.grid_sample(oar.to_tensor(dense), oar.zeros([1, 0, 2, 2, 3], dtype="float64"))
    assert empty.shape == [1, 2, 0, 2, 2]


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [True, False])
def test_grad_trilinear(padding, ac):
    x = RNG.standard_normal((1, 2, 3, 3, 4))
    # keep sample points away from integer pixels and from clip/reflection kinks so finite
    # differences are smooth there
    grid = RNG.uniform(-1.2, 1.2, (1, 2, 2, 1, 3))
    fn = lambda a, g: F.grid_sample(a, g, "bilinear", padding, ac)  # noqa: E731
    ts = [oar.to_tensor(a, stop_gradient=False) for a in (x, grid)]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * oar.to_tensor(w)).sum().backward()
    nx, ng = numeric_grad(fn, [x, grid], w)
    np.testing.assert_allclose(ts[0].grad.numpy(), nx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ts[1].grad.numpy(), ng, rtol=1e-5, atol=1e-7)


def test_grad_nearest():
    # nearest: the input gradient scatters w to the picked voxels; the grid gradient is zero
    x = RNG.standard_normal((1, 2, 2, 3, 3))
    grid = RNG.uniform(-0.9, 0.9, (1, 2, 2, 2, 3))
    fn = lambda a, g: F.grid_sample(a, g, "nearest", "zeros", False)  # noqa: E731
    ts = [oar.to_tensor(a, stop_gradient=False) for a in (x, grid)]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * oar.to_tensor(w)).sum().backward()
    nx, ng = numeric_grad(fn, [x, grid], w)
    np.testing.assert_allclose(ts[0].grad.numpy(), nx, rtol=1e-6, atol=1e-8)
    g = ts[1].grad
    np.testing.assert_array_equal(np.zeros_like(grid) if g is None else g.numpy(), ng)


def test_errors():
    x5 = oar.ones([1, 1, 2, 2, 2])
    for bad in ([1, 2, 2, 2, 2], [1, 2, 2, 3], [2, 2, 2, 2, 3], [1, 2, 2, 2, 2, 3]):
        with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
            F.grid_sample(x5, oar.ones(bad))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(oar.ones([1, 1, 2, 2]), oar.ones([1, 2, 2, 2, 3]))
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(x5, oar.ones([1, 2, 2, 2, 3]), mode="bicubic")
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(x5, oar.ones([1, 2, 2, 2, 3]), padding_mode="circular")
    with pytest.raises(ValueError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(oar.ones([1, 1, 0, 2, 2]), oar.ones([1, 2, 2, 2, 3]))
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(x5, oar.ones([1, 2, 2, 2, 3], dtype="float64"))
    with pytest.raises(TypeError, match=r"^\[oar.nn.functional.grid_sample\]"):
        F.grid_sample(oar.ones([1, 1, 2, 2, 2], dtype="int64"), oar.ones([1, 2, 2, 2, 3], dtype="int64"))

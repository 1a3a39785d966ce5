"""oar.sparse.nn convolutions and max pooling against a dense NumPy convolution of the same data."""
import itertools

import numpy as np
import pytest

import oar
from test_sparse_util import check_grad, rand_dense

F = oar.sparse.nn.functional


def _np_conv(x, w, stride, padding, dilation):
    """Dense channels-last convolution: x [N, *sp, C], w [*k, C, M] -> [N, *out, M]; padding per dim is an
    int or a (front, back) pair."""
    s = x.ndim - 2
    k = w.shape[:s]
    padding = [p if isinstance(p, tuple) else (p, p) for p in padding]
    xp = np.pad(x, [(0, 0)] + padding + [(0, 0)])
    out_sp = [(x.shape[1 + i] + sum(padding[i]) - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(s)]
    out = np.zeros([x.shape[0]] + out_sp + [w.shape[-1]])
    for off in itertools.product(*[range(n) for n in k]):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (out_sp[i] - 1) + 1, stride[i])
                   for i in range(s))
        out += np.einsum("...c,cm->...m", xp[(slice(None),) + sl], w[off])
    return out


def _np_reach(x, k, stride, padding, dilation):
    """Which outputs some stored input position reaches (the pattern of a regular sparse convolution)."""
    s = x.ndim - 2
    occ = (np.abs(x).sum(axis=-1, keepdims=True) > 0).astype(np.float64)
    return _np_conv(occ, np.ones(list(k) + [1, 1]), stride, padding, dilation)[..., 0] > 0


def _sparse_input(shape, seed, dtype="float64"):
    d = rand_dense(shape, density=0.25, seed=seed).astype(dtype)
    d[..., 0] = np.where(np.abs(d).sum(axis=-1) > 0, d[..., 0] + 3.0, 0.0)  # no stored position is all zero
    return d


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s,stride,padding,dilation", [(3, 1, 0, 1), (3, 2, 1, 1), (3, [1, 2, 1], [1, 0, 2], [1, 1, 2]),
                                                        (2, 1, 1, 1), (2, 2, 0, 2)])
def test_conv_matches_dense(dtype, s, stride, padding, dilation):
    shape = [2] + [5] * s + [3]
    d = _sparse_input(shape, seed=1, dtype=dtype)
    w = np.random.default_rng(2).normal(size=[3] * s + [3, 4]).astype(dtype)
    b = np.random.default_rng(3).normal(size=[4]).astype(dtype)
    x = oar.to_tensor(d).to_sparse_coo(s + 1)
    fn = F.conv3d if s == 3 else F.conv2d
    out = fn(x, oar.to_tensor(w), oar.to_tensor(b), stride=stride, padding=padding, dilation=dilation)
    st, pa, di = ([v] * s if isinstance(v, int) else v for v in (stride, padding, dilation))
    ref = _np_conv(d.astype(np.float64), w.astype(np.float64), st, pa, di)
    reach = _np_reach(d, [3] * s, st, pa, di)
    assert out.shape == list(ref.shape) and out.nnz() == int(reach.sum()) and out.sparse_dim() == s + 1
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(reach[..., None], ref + b, 0.0), **tol)


@pytest.mark.parametrize("s", [2, 3])
def test_subm_conv_keeps_the_pattern(s):
    shape = [2] + [5] * s + [3]
    d = _sparse_input(shape, seed=4)
    w = np.random.default_rng(5).normal(size=[3] * s + [3, 2])
    x = oar.to_tensor(d).to_sparse_coo(s + 1)
    fn = F.subm_conv3d if s == 3 else F.subm_conv2d
    out = fn(x, oar.to_tensor(w), padding=1)
    mask = np.abs(d).sum(axis=-1) > 0
    np.testing.assert_array_equal(out.indices().numpy(), x.indices().numpy())
    ref = _np_conv(d, w, [1] * s, [1] * s, [1] * s)
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(mask[..., None], ref, 0.0), rtol=1e-10, atol=1e-10)
    igemm = F.subm_conv3d_igemm if s == 3 else F.subm_conv2d_igemm
    np.testing.assert_array_equal(igemm(x, oar.to_tensor(w), padding=1).values().numpy(), out.values().numpy())
    with pytest.raises(ValueError, match=r"stride must be 1"):
        fn(x, oar.to_tensor(w), stride=2)


def test_conv_grads():
    d = _sparse_input([1, 3, 3, 3, 2], seed=6)
    x0 = oar.to_tensor(d).to_sparse_coo(4)
    w0 = np.random.default_rng(7).normal(size=[2, 2, 2, 2, 3])
    ind = x0.indices()

    def loss(fn, **kw):
        def f(v, w, b):
            x = oar.sparse.sparse_coo_tensor(ind, v, x0.shape, stop_gradient=False)
            out = fn(x, w, b, **kw).values()
            return (out * out).sum()
        return f

    b0 = np.array([0.1, -0.2, 0.3])
    # the loss reaches ~1e3, so finite differences carry ~1e-6 absolute error
    check_grad(loss(F.conv3d, padding=1), x0.values().numpy(), w0, b0, atol=1e-5)
    check_grad(loss(F.subm_conv3d, padding=[1, 0, 1]), x0.values().numpy(), w0, b0, atol=1e-5)


def test_max_pool3d():
    d = _sparse_input([2, 4, 4, 4, 3], seed=8)
    d[0, 0, 0, 0] = [-5.0, -1.0, -2.0]  # a window whose only entry is negative stays negative
    x = oar.to_tensor(d).to_sparse_coo(4)
    out = F.max_pool3d(x, 2)
    stored = np.abs(d).sum(axis=-1) > 0
    win = np.where(stored[..., None], d, -np.inf).reshape(2, 2, 2, 2, 2, 2, 2, 3).max(axis=(2, 4, 6))
    reach = stored.reshape(2, 2, 2, 2, 2, 2, 2).any(axis=(2, 4, 6))
    assert out.shape == [2, 2, 2, 2, 3] and out.nnz() == int(reach.sum())
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(reach[..., None], win, 0.0), rtol=1e-12)
    np.testing.assert_allclose(oar.sparse.nn.MaxPool3D(2)(x).to_dense().numpy(), out.to_dense().numpy())
    x0 = oar.to_tensor(_sparse_input([1, 2, 2, 4, 2], seed=9)).to_sparse_coo(4)
    check_grad(lambda v: (F.max_pool3d(oar.sparse.sparse_coo_tensor(x0.indices(), v, x0.shape, stop_gradient=False),
                                       [2, 2, 2], stride=[1, 1, 2], padding=[0, 0, 1]).values() ** 2).sum(),
               x0.values().numpy())


def test_conv_layers():
    oar.seed(10)
    x = oar.to_tensor(_sparse_input([1, 4, 4, 4, 2], seed=11).astype(np.float32)).to_sparse_coo(4)
    conv = oar.sparse.nn.Conv3D(2, 5, 3, padding=1)
    assert conv.weight.shape == [3, 3, 3, 2, 5] and conv.bias.shape == [5]
    ref = F.conv3d(x, conv.weight, conv.bias, padding=1)
    np.testing.assert_array_equal(conv(x).to_dense().numpy(), ref.to_dense().numpy())
    sub = oar.sparse.nn.SubmConv3D(2, 5, 3, 1, 1, 1, 1, "zeros", "cache-key", None, False)  # Paddle's order
    assert sub.weight.shape == [3, 3, 3, 2, 5]
    assert sub.bias is None and sub(x).nnz() == x.nnz()
    x2 = oar.to_tensor(_sparse_input([1, 4, 4, 2], seed=12).astype(np.float32)).to_sparse_coo(3)
    assert oar.sparse.nn.Conv2D(2, 3, 2)(x2).shape == [1, 3, 3, 3]
    assert oar.sparse.nn.SubmConv2D(2, 3, 3, padding=1)(x2).nnz() == x2.nnz()
    loss = (conv(x).values() ** 2).sum()
    loss.backward()
    assert conv.weight.grad is not None and conv.bias.grad is not None


def test_conv_errors():
    x = oar.to_tensor(_sparse_input([1, 3, 3, 3, 2], seed=13)).to_sparse_coo(4)
    w = oar.ones([3, 3, 3, 2, 1], dtype="float64")
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] x must be a SparseCooTensor"):
        F.conv3d(oar.to_tensor(_sparse_input([1, 3, 3, 3, 2], seed=13)).to_sparse_coo(5), w)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] weight must be a dense Tensor"):
        F.conv3d(x, oar.ones([3, 3, 3, 4, 1], dtype="float64"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] the output would be empty"):
        F.conv3d(x, oar.ones([4, 4, 4, 2, 1], dtype="float64"))
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] padding must be"):
        F.conv3d(x, w, padding=-1)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] only groups=1"):
        F.conv3d(x, w, groups=2)
    with pytest.raises(TypeError, match=r"^\[oar.sparse.nn.functional.conv3d\] x and weight must have the same"):
        F.conv3d(x, oar.ones([3, 3, 3, 2, 1], dtype="float32"))


@pytest.mark.parametrize("padding,pairs,stride", [
    ([1, 0, 0, 2, 2, 1], [(1, 0), (0, 2), (2, 1)], 1),
    ([[0, 0], [1, 0], [0, 2], [2, 1], [0, 0]], [(1, 0), (0, 2), (2, 1)], 1),
    ("VALID", [(0, 0)] * 3, 2),
    ("same", [(1, 1), (1, 1), (1, 1)], 1),
    ("SAME", [(0, 1), (0, 1), (0, 1)], 2),  # 6 cells, stride 2: 3 outputs need 1 more cell, put at the back
])
def test_conv_padding_forms(padding, pairs, stride):
    d = _sparse_input([1, 6, 6, 6, 2], seed=14)
    w = np.random.default_rng(15).normal(size=[3, 3, 3, 2, 2])
    out = F.conv3d(oar.to_tensor(d).to_sparse_coo(4), oar.to_tensor(w), stride=stride, padding=padding)
    ref = _np_conv(d, w, [stride] * 3, pairs, [1] * 3)
    reach = _np_reach(d, [3] * 3, [stride] * 3, pairs, [1] * 3)
    assert out.shape == list(ref.shape)
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(reach[..., None], ref, 0.0), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match=r"^\[oar.sparse.nn.functional.conv3d\] padding as a string must be"):
        F.conv3d(oar.to_tensor(d).to_sparse_coo(4), oar.to_tensor(w), padding="full")

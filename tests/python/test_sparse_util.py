"""Shared helpers of the oar.sparse tests (random sparse data, finite-difference gradients) and their tests."""
import numpy as np

import oar

TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def rand_dense(shape, density=0.4, dtype="float64", seed=0, low=-2.0, high=2.0):
    """A dense NumPy array with about `density` of its entries nonzero."""
    rng = np.random.default_rng(seed)
    vals = rng.uniform(low, high, size=shape)
    keep = rng.random(size=shape) < density
    return np.where(keep, vals, 0.0).astype(dtype)


def make(dense, layout, sparse_dim=None):
    """The NumPy array `dense` as an oar sparse tensor of `layout` ('coo' or 'csr')."""
    t = oar.to_tensor(dense)
    if layout == "coo":
        return t.to_sparse_coo(sparse_dim or dense.ndim)
    return t.to_sparse_csr()


def with_values(x, values):
    """x's pattern with new values (a Tensor), rebuilt through the public constructors."""
    if x.is_sparse_coo():
        return oar.sparse.sparse_coo_tensor(x.indices(), values, x.shape, stop_gradient=False)
    return oar.sparse.sparse_csr_tensor(x.crows(), x.cols(), values, x.shape, stop_gradient=False)


def check_grad(fn, *arrays, eps=1e-6, rtol=1e-6, atol=1e-7):
    """Compares the autograd gradient of scalar fn(*tensors) with central differences, in float64."""
    tensors = [oar.to_tensor(a, dtype="float64", stop_gradient=False) for a in arrays]
    out = fn(*tensors)
    out.backward()
    for i, a in enumerate(arrays):
        num = np.zeros_like(a, dtype=np.float64)
        flat = num.reshape(-1)
        for j in range(a.size):
            plus, minus = [np.array(b, dtype=np.float64) for b in arrays], [np.array(b, dtype=np.float64)
                                                                          for b in arrays]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            fp = fn(*[oar.to_tensor(b) for b in plus]).item()
            fm = fn(*[oar.to_tensor(b) for b in minus]).item()
            flat[j] = (fp - fm) / (2 * eps)
        got = tensors[i].grad
        assert got is not None, f"no gradient reached argument {i}"
        np.testing.assert_allclose(got.numpy(), num, rtol=rtol, atol=atol, err_msg=f"argument {i}")


def weights(shape, seed=7):
    """Fixed random weights for turning a tensor into a scalar loss."""
    return oar.to_tensor(np.random.default_rng(seed).uniform(-1, 1, size=shape))


def test_check_grad_catches_a_wrong_gradient():
    # a function whose autograd gradient (through detach) is wrong must fail the check
    import pytest
    with pytest.raises(AssertionError):
        check_grad(lambda v: (v.detach() * v).sum(), np.array([1.0, 2.0]))
    check_grad(lambda v: (v * v).sum(), np.array([1.0, 2.0]))


def test_rand_dense_has_zeros_and_nonzeros():
    d = rand_dense([6, 5], density=0.4)
    assert 0 < np.count_nonzero(d) < d.size

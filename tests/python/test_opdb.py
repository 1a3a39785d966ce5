"""Checks every op in the op database: forward vs NumPy, gradients vs finite differences, error inputs."""
import numpy as np
import pytest

import oar
from opdb import OP_DB, LOW_PRECISION, ref_array, to_oar

FWD = [(info, d) for info in OP_DB for d in info.dtypes]
GRAD = [info for info in OP_DB if info.grad]
GRADGRAD = [info for info in OP_DB if info.gradgrad]
CGRAD = [info for info in OP_DB if info.complex_grad]
ERR = [(info, i) for info in OP_DB for i in range(len(info.errors()))]


def _ids(x):
    return x.name if hasattr(x, "name") else str(x)


def _build(info, sample, dtype, stop_gradient=True):
    args = [to_oar(a, dtype, sample.noncontig, stop_gradient) if isinstance(a, np.ndarray) else a
            for a in sample.args]
    return args


def _call(info, args, kwargs, dtype=None):
    if info.creation:
        return info.op(*args, dtype=dtype, **kwargs)
    return info.op(*args, **kwargs)


@pytest.mark.parametrize("info,dtype", FWD, ids=[f"{i.name}-{d}" for i, d in FWD])
def test_forward(info, dtype):
    atol, rtol = info.tolerance(dtype)
    for sample in info.samples(dtype):
        args = _build(info, sample, dtype)
        if sample.noncontig:
            # Views whose dims are all > 1 cannot be contiguous after the transpose/stride.
            assert all(not a.is_contiguous() for a in args if isinstance(a, oar.Tensor) and a.ndim >= 1
                       and min(a.shape) > 1), sample
        out = _call(info, args, sample.kwargs, dtype)
        if info.creation:
            expected = info.ref(*args, dtype=dtype, **sample.kwargs)
        else:
            expected = info.ref(*[ref_array(a) if isinstance(a, oar.Tensor) else a for a in args], **sample.kwargs)
        expected = np.asarray(expected)
        got = out.numpy()
        assert list(got.shape) == list(expected.shape), (sample, got.shape, expected.shape)
        if info.out_dtype is not None and sample.check_dtype and not info.creation:
            assert str(out.dtype).split(".")[-1] == info.out_dtype(dtype), (sample, out.dtype)
        if info.creation:
            assert str(out.dtype).split(".")[-1] == dtype, (sample, out.dtype)
        if info.name == "cast" and sample.args[1] in LOW_PRECISION:
            atol, rtol = info.tolerance(sample.args[1])
        if got.dtype.kind in "biu" or expected.dtype.kind in "b":
            np.testing.assert_array_equal(got, expected.astype(got.dtype), err_msg=repr(sample))
        else:
            np.testing.assert_allclose(got.astype(np.complex128 if got.dtype.kind == "c" else np.float64),
                                       expected, atol=atol, rtol=rtol, equal_nan=True, err_msg=repr(sample))


# ---------------------------------------------------------------- gradients

def _loss_parts(info, sample, dtype):
    rng = np.random.default_rng(11)
    idx = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype != np.bool_]
    base = [a.astype(np.complex128 if dtype == "complex128" else np.float64) if i in idx else a
            for i, a in enumerate(sample.args)]

    def forward(arrs, stop=True):
        args = [to_oar(a, dtype, sample.noncontig, stop) if isinstance(a, np.ndarray) else a for a in arrs]
        return args, info.op(*args, **sample.kwargs)

    _, out0 = forward(base)
    shape = out0.shape
    v = rng.standard_normal(shape)
    if out0.dtype.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return idx, base, forward, v


def _scalar_loss(out_np, v):
    return float(np.sum(np.real(np.conj(v) * out_np)))


def _fd_grad(f, arr, eps=1e-6):
    """Central differences of the real function f at arr; complex arr gives d/dRe + i d/dIm."""
    g = np.zeros(arr.shape, dtype=arr.dtype)
    flat = arr.reshape(-1)
    gflat = g.reshape(-1)
    for k in range(flat.size):
        for step in ([1.0, 1j] if np.iscomplexobj(arr) else [1.0]):
            p, m = flat.copy(), flat.copy()
            p[k] += eps * step
            m[k] -= eps * step
            d = (f(p.reshape(arr.shape)) - f(m.reshape(arr.shape))) / (2 * eps)
            gflat[k] += d * step
    return g


def _grad_samples(info, dtype):
    return [s for s in info.samples(dtype) if s.grad and
            sum(a.size for a in s.args if isinstance(a, np.ndarray)) <= 60]


def _check_grad(info, dtype):
    tol_a, tol_r = info.grad_tol
    for sample in _grad_samples(info, dtype):
        idx, base, forward, v = _loss_parts(info, sample, dtype)
        if not idx:
            continue
        args, out = forward(base, stop=False)
        tens = [args[i] for i in idx]
        grads = oar.grad([out], tens, grad_outputs=[oar.to_tensor(v).astype(out.dtype)], allow_unused=True)
        for j, i in enumerate(idx):
            def f(a, i=i):
                arrs = list(base)
                arrs[i] = a
                return _scalar_loss(forward(arrs)[1].numpy(), v)
            expected = _fd_grad(f, base[i])
            got = np.zeros_like(expected) if grads[j] is None else grads[j].numpy()
            assert got.shape == expected.shape, sample
            np.testing.assert_allclose(got, expected, atol=tol_a, rtol=tol_r, err_msg=f"input {i} of {sample}")


@pytest.mark.parametrize("info", GRAD, ids=_ids)
def test_grad_float64(info):
    _check_grad(info, "float64")


@pytest.mark.parametrize("info", CGRAD, ids=_ids)
def test_grad_complex128(info):
    if "complex128" not in info.dtypes:
        pytest.skip("no complex128 support declared")
    _check_grad(info, "complex128")


@pytest.mark.parametrize("info", GRADGRAD, ids=_ids)
def test_gradgrad_float64(info):
    rng = np.random.default_rng(12)
    for sample in _grad_samples(info, "float64")[:4]:
        idx, base, forward, v = _loss_parts(info, sample, "float64")
        if not idx:
            continue
        w = [rng.standard_normal(base[i].shape) for i in idx]

        def first_grad_dot_w(arrs, create):
            args, out = forward(arrs, stop=False)
            tens = [args[i] for i in idx]
            gs = oar.grad([out], tens, grad_outputs=[oar.to_tensor(v)], create_graph=create, allow_unused=True)
            return tens, gs

        tens, gs = first_grad_dot_w(base, True)
        used = [(j, g) for j, g in enumerate(gs) if g is not None and not g.stop_gradient]
        if not used:
            continue
        total = None
        for j, g in used:
            term = oar.sum(g * oar.to_tensor(w[j]))
            total = term if total is None else total + term
        seconds = oar.grad([total], tens, allow_unused=True)

        def f(a, i):
            arrs = list(base)
            arrs[i] = a
            _, g2 = first_grad_dot_w(arrs, False)
            return float(sum(np.sum(g2[j].numpy() * w[j]) for j, _ in used))

        for j, i in enumerate(idx):
            expected = _fd_grad(lambda a: f(a, i), base[i])
            got = np.zeros_like(expected) if seconds[j] is None else seconds[j].numpy()
            np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-4, err_msg=f"input {i} of {sample}")


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("info,k", ERR, ids=[f"{i.name}-{k}" for i, k in ERR])
def test_error_inputs(info, k):
    e = info.errors()[k]
    with pytest.raises(e.exc) as exc:
        e.fn()
    assert str(exc.value).startswith(e.prefix), str(exc.value)

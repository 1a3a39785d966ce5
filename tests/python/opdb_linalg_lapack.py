"""Op-database entries for the declared functions of paddle.linalg
(src/ops/linalg_lapack.toml) that opdb_core.py and opdb_linalg.py do not
cover: svdvals, eigvalsh and matrix_power, against NumPy's linalg."""
import numpy as np

import oar
from opdb import ErrorInput, OpInfo, Sample, register

F32_64 = ("float32", "float64")
LA = oar.linalg
_TOL = {"float32": (1e-4, 1e-4)}


def _err(fn, exc, name):
    return ErrorInput(fn, exc, f"[oar.linalg.{name}]")


def _rng(seed):
    return np.random.default_rng(seed)


def _svdvals_samples(dtype):
    r = _rng(700)
    return [Sample((r.uniform(-1, 1, (3, 3)),)), Sample((r.uniform(-1, 1, (4, 2)),)),
            Sample((r.uniform(-1, 1, (2, 4)),)), Sample((r.uniform(-1, 1, (2, 3, 2)),)),
            Sample((r.uniform(-1, 1, (3, 3)),), noncontig=True)]


register(OpInfo("linalg.svdvals", LA.svdvals, lambda x: np.linalg.svd(x, compute_uv=False), F32_64,
                _svdvals_samples, grad=True, gradgrad=True, tol=_TOL,
                errors=lambda: [_err(lambda: LA.svdvals(oar.ones([3])), ValueError, "svdvals"),
                                _err(lambda: LA.svdvals([[1.0]]), TypeError, "svdvals")]))


# eigvalsh reads one triangle; its gradient is the symmetric one, so the
# gradient samples symmetrise their input first (sym=True).

def _eigvalsh(x, UPLO="L", sym=False):  # noqa: N803 - Paddle's argument name
    if sym:
        x = (x + oar.swapaxes(x, -1, -2)) * 0.5
    return LA.eigvalsh(x, UPLO)


def _np_eigvalsh(x, UPLO="L", sym=False):  # noqa: N803
    if sym:
        x = (x + np.swapaxes(x, -1, -2)) / 2
    else:
        t = np.tril(x) if UPLO == "L" else np.triu(x)
        x = t + np.swapaxes(t, -1, -2) - t * np.eye(x.shape[-1])
    return np.linalg.eigvalsh(x)


def _eigvalsh_samples(dtype):
    r = _rng(710)
    return [Sample((r.uniform(-1, 1, (3, 3)),), grad=False),
            Sample((r.uniform(-1, 1, (3, 3)),), {"UPLO": "U"}, grad=False),
            Sample((r.uniform(-1, 1, (2, 4, 4)),), grad=False), Sample((r.uniform(-1, 1, (3, 3)),), {"sym": True}),
            Sample((r.uniform(-1, 1, (2, 3, 3)),), {"sym": True, "UPLO": "U"}), Sample((r.uniform(-1, 1, (1, 1)),))]


register(OpInfo("linalg.eigvalsh", _eigvalsh, _np_eigvalsh, F32_64, _eigvalsh_samples, grad=True, gradgrad=True,
                tol=_TOL,
                errors=lambda: [_err(lambda: LA.eigvalsh(oar.ones([2, 3])), ValueError, "eigvalsh"),
                                _err(lambda: LA.eigvalsh(oar.eye(2), UPLO="X"), ValueError, "eigvalsh"),
                                _err(lambda: LA.eigvalsh(oar.eye(2), UPLO=None), ValueError, "eigvalsh")]))


def _power_samples(dtype):
    def well(seed, *shape):
        return _rng(seed).uniform(-1, 1, shape) + 2.0 * np.eye(shape[-1])
    return [Sample((well(720, 3, 3), 3)), Sample((well(721, 3, 3), 0), grad=False), Sample((well(722, 3, 3), 1)),
            Sample((well(723, 2, 3, 3), -2)), Sample((well(724, 3, 3), np.int64(2))),
            Sample((well(725, 3, 3), 2), noncontig=True), Sample((well(726, 0, 2, 2), 2), grad=False)]


register(OpInfo("linalg.matrix_power", LA.matrix_power, lambda x, n: np.linalg.matrix_power(x, int(n)), F32_64,
                _power_samples, grad=True, gradgrad=True, tol=_TOL,
                errors=lambda: [_err(lambda: LA.matrix_power(oar.eye(2), 2.0), TypeError, "matrix_power"),
                                _err(lambda: LA.matrix_power(oar.eye(2), True), TypeError, "matrix_power"),
                                _err(lambda: LA.matrix_power(oar.ones([2, 3]), 2), ValueError, "matrix_power")]))

"""Finite-difference reference for gradient tests."""
import numpy as np


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at x (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g

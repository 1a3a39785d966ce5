"""NumPy-side helpers shared by the grid_sample reference tests."""
import math

import numpy as np

import oar


def reflect(v, lo2, hi2):
    """v reflected into [lo2 / 2, hi2 / 2] (bounds given doubled, as in the
    align_corners / not-align_corners conventions)."""
    if lo2 == hi2:
        return 0.0
    low, span = lo2 / 2, (hi2 - lo2) / 2
    v = abs(v - low)
    flips = math.floor(v / span)
    extra = v - flips * span
    return extra + low if flips % 2 == 0 else span - extra + low


def unnormalize(g, size, padding, align_corners):
    """A grid coordinate in [-1, 1] as a pixel position, after padding_mode."""
    p = (g + 1) * (size - 1) / 2 if align_corners else ((g + 1) * size - 1) / 2
    if padding == "border":
        p = min(max(p, 0), size - 1)
    elif padding == "reflection":
        p = reflect(p, 0, 2 * (size - 1)) if align_corners else reflect(p, -1, 2 * size - 1)
        p = min(max(p, 0), size - 1)
    return p


def numeric_grad(fn, arrays, w, eps=1e-6):
    """Central differences of sum(fn(*arrays) * w) with respect to each array."""
    grads = []
    for a in arrays:
        num = np.zeros_like(a)
        flat = a.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            fp = (fn(*[oar.to_tensor(b) for b in arrays]).numpy() * w).sum()
            flat[i] = old - eps
            fm = (fn(*[oar.to_tensor(b) for b in arrays]).numpy() * w).sum()
            flat[i] = old
            num.reshape(-1)[i] = (fp - fm) / (2 * eps)
        grads.append(num)
    return grads

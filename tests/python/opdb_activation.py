"""Op-database entries of the declared activations of oar.nn.functional
(src/ops/activation.toml) that opdb_core.py does not cover."""
import numpy as np

import oar
import oar.nn.functional as F
from opdb import FLOATS, OpInfo, _err, register
from opdb_core import LOW_TOL, _act_samples


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    bx = beta * x
    return np.where(bx > threshold, x, np.logaddexp(0, bx) / beta)


_SELU_SCALE, _SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
_ACTIVATIONS = [
    # name, reference, samples (seed, kinks, kwargs), twice differentiable away from the kinks
    ("relu6", lambda x: np.clip(x, 0, 6), _act_samples(110, lo=-3.0, hi=9.0, kinks=(0.0, 6.0))),
    ("leaky_relu", lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
     lambda d: _act_samples(120)(d) + _act_samples(121, kwargs={"negative_slope": 0.3})(d)),
    ("elu", lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)),
     lambda d: _act_samples(130)(d) + _act_samples(131, kwargs={"alpha": 0.5})(d)),
    ("selu", lambda x, scale=_SELU_SCALE, alpha=_SELU_ALPHA: scale * np.where(x > 0, x, alpha * np.expm1(x)),
     _act_samples(140)),
    ("softplus", _softplus,
     lambda d: _act_samples(150, kinks=())(d) + _act_samples(151, kinks=(5.0,), kwargs={"beta": 2, "threshold": 10})(d)),
    ("softsign", lambda x: x / (1 + np.abs(x)), _act_samples(160)),
    ("sigmoid", _sigmoid, _act_samples(170, kinks=())),
    ("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, _act_samples(180, lo=-5.0, hi=5.0, kinks=(-3.0, 3.0))),
    ("hardsigmoid", lambda x, slope=0.1666667, offset=0.5: np.clip(slope * x + offset, 0, 1),
     _act_samples(190, lo=-5.0, hi=5.0, kinks=(-3.0, 3.0))),
    ("mish", lambda x: x * np.tanh(np.logaddexp(0, x)), _act_samples(200, kinks=())),
    ("tanh", np.tanh, _act_samples(210, kinks=())),
]

for _name, _ref, _samples in _ACTIVATIONS:
    _fn = getattr(F, _name)
    register(OpInfo(f"nn.functional.{_name}", _fn, _ref, FLOATS, _samples, grad=True,
                    gradgrad=_name not in ("relu6", "hardswish", "hardsigmoid"), tol=LOW_TOL,
                    errors=(lambda fn=_fn, n=_name: [
                        _err(lambda: fn([1.0]), TypeError, f"nn.functional.{n}"),
                    ] + ([] if n in ("sigmoid", "tanh") else  # these take complex input too
                         [_err(lambda: fn(oar.to_tensor([1j])), TypeError, f"nn.functional.{n}")]))))

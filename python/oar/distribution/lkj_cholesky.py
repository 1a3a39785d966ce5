"""The LKJ distribution over Cholesky factors of correlation matrices.

Note [LKJ density]
------------------
LKJ(eta) gives a d x d correlation matrix C a density proportional to det(C)^(eta - 1).
Over the lower Cholesky factor L of C (unit-norm rows, positive diagonal), measured by
the strictly lower entries, the density is prod_{i=2..d} L_ii^(d - i + 2 eta - 2) / Z
with log Z = d (d - 1) / 4 log(pi) + sum_{j=1..d-1} lgamma(eta + (d - 1 - j) / 2)
- (d - 1) lgamma(eta + (d - 1) / 2). For d = 2 this is the law of the correlation
r = 2 B - 1, B ~ Beta(eta, eta).

Two samplers give the same law (Lewandowski, Kurowicka and Joe, 2009):
- onion: row i (i = 1..d-1, from 0) of L is sqrt(y_i) times a uniform direction in R^i,
  y_i ~ Beta(i / 2, eta + (d - 2 - (i - 1)) / 2), and its diagonal entry completes the
  unit norm;
- cvine: partial correlations p_ki ~ 2 Beta(b_k, b_k) - 1 with b_k = eta + (d - 2 - k) / 2
  for column k (from 0) break each row's unit norm like a stick:
  L_ik = p_ki prod_{j<k} sqrt(1 - p_ji^2).
"""
import math

import oar

from .. import _C
from . import _params
from .distribution import Distribution


def _beta_draws(a, b):
    """Beta(a, b) draws of the broadcast shape of a and b (no gradient)."""
    x = oar.standard_gamma(a)
    y = oar.standard_gamma(b)
    return x / (x + y)


class LKJCholesky(Distribution):
    r"""The LKJ distribution over lower Cholesky factors of ``dim`` x ``dim`` correlation
    matrices, with density proportional to det(L L^T)^(concentration - 1) (Note [LKJ density]).

    Args:
        dim (int): the matrix size, at least 2.
        concentration (float|list|numpy.ndarray|Tensor): eta, positive; 1 is uniform over
            correlation matrices, larger values favour the identity.
        sample_method (str): ``"onion"`` (default) or ``"cvine"``.

    >>> import oar
    >>> from oar.distribution import LKJCholesky
    >>> d = LKJCholesky(3, 2.0)
    >>> L = d.sample([4])
    >>> L.shape
    [4, 3, 3]
    >>> c = L @ L.transpose([0, 2, 1])
    >>> [round(v, 4) for v in oar.diagonal(c, 0, -2, -1)[0].numpy().tolist()]
    [1.0, 1.0, 1.0]
    >>> round(float(LKJCholesky(2, 1.0).log_prob(oar.eye(2))), 4)  # uniform r on (-1, 1)
    -0.6931
    """

    def __init__(self, dim=2, concentration=1.0, sample_method="onion"):
        api = self._api()
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 2:
            raise ValueError(f"[{api}] dim must be an int of at least 2, got {dim!r}")
        if sample_method not in ("onion", "cvine"):
            raise ValueError(f"[{api}] sample_method must be 'onion' or 'cvine', got {sample_method!r}")
        (self.concentration,) = _params.params(api, ("concentration",), (concentration,))
        _params.check(api, "concentration", self.concentration, "positive")
        self.dim = dim
        self.sample_method = sample_method
        self.dtype = self._dtype = self.concentration.dtype
        super().__init__(batch_shape=tuple(self.concentration.shape), event_shape=(dim, dim))

    def sample(self, shape=()):
        """Cholesky factors of shape ``shape + batch_shape + [dim, dim]``."""
        sshape = _params.sample_shape(self._api("sample"), shape)
        out = list(sshape) + list(self.batch_shape)
        d = self.dim
        with oar.no_grad():
            eta = self.concentration.expand(out).unsqueeze(-1)
            if self.sample_method == "onion":
                return self._onion(out, eta, d)
            return self._cvine(out, eta, d)

    def _onion(self, out, eta, d):
        i = _C.arange(0, d, 1, self._dtype)
        a = (0.5 * i).clip(min=0.5)  # row 0 has no free entries; its draw is discarded
        b = eta + 0.5 * (d - 1 - i)
        y = _beta_draws(a.expand(out + [d]), b.expand(out + [d]))
        y = _C.where(i == 0, _C.zeros_like(y), y)
        z = _C.tril(_C.standard_normal(out + [d, d], self._dtype), -1)
        norm = z.square().sum(axis=-1, keepdim=True).sqrt()
        direction = z / norm.clip(min=1e-30)
        w = y.sqrt().unsqueeze(-1) * direction
        diag = (1 - w.square().sum(axis=-1)).clip(min=0.0).sqrt()
        return w + oar.diag_embed(diag)

    def _cvine(self, out, eta, d):
        k = _C.arange(0, d, 1, self._dtype)
        b = (eta + 0.5 * (d - 2 - k)).clip(min=1e-30)  # column k's Beta parameters (the last is unused)
        b = b.unsqueeze(-2).expand(out + [d, d])
        p = 2 * _beta_draws(b, b) - 1
        p = _C.tril(p, -1)  # p[i, k]: partial correlation of row i with column k < i
        # remaining stick before column k: prod_{j<k} sqrt(1 - p[i, j]^2)
        keep = (1 - p.square()).sqrt()
        ones = _C.ones(out + [d, 1], self._dtype)
        before = _C.cumprod(_C.concat([ones, keep[..., :-1]], -1), -1)
        lower = p * before
        diag = _C.diagonal(before, 0, -2, -1)
        return _C.tril(lower, -1) + oar.diag_embed(diag)

    def rsample(self, shape=()):
        """Not available: the samplers are not differentiable in the concentration."""
        raise NotImplementedError(f"[{self._api('rsample')}] LKJCholesky has no reparameterised sampler; "
                                  "use sample()")

    def _log_normalizer(self):
        d = self.dim
        eta = self.concentration
        total = d * (d - 1) / 4 * math.log(math.pi) - (d - 1) * _C.lgamma(eta + 0.5 * (d - 1))
        for j in range(1, d):
            total = total + _C.lgamma(eta + 0.5 * (d - 1 - j))
        return total

    def log_prob(self, value):
        """``sum_{i>=2} (d - i + 2 eta - 2) log L_ii - log Z`` (Note [LKJ density])."""
        v = self._value(value)
        d = self.dim
        if len(v.shape) < 2 or v.shape[-1] != d or v.shape[-2] != d:
            raise ValueError(f"[{self._api('log_prob')}] value must be [..., {d}, {d}], got shape {list(v.shape)}")
        diag = _C.diagonal(v, 0, -2, -1)[..., 1:]
        i = _C.arange(2, d + 1, 1, self._dtype)
        order = 2 * (self.concentration.unsqueeze(-1) - 1) + d - i
        return (order * diag.log()).sum(axis=-1) - self._log_normalizer()

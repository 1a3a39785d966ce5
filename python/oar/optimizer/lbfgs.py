"""L-BFGS with an optional strong-Wolfe line search.

It works on the parameters as one flat vector, so it is written over tensor
ops (concat, dot, in-place add) rather than as a fused per-parameter update.
"""
import math

from .. import _C
from ..autograd import enable_grad, no_grad
from .lr import LRScheduler
from .optimizer import Optimizer

__all__ = ["LBFGS"]

# What each saved state entry holds, so set_state_dict can check and copy it. Paddle
# saves the step length `t` as 'alpha' ('t' is oar's earlier name), and 'al', the
# scratch list of the two-loop recursion, which is recomputed before it is read.
_STATE_KEYS = {"func_evals": "int", "n_iter": "int", "t": "float", "H_diag": "float", "prev_loss": "float",
               "ro": "floats", "d": "vector", "prev_flat_grad": "vector", "old_yk": "vectors", "old_sk": "vectors",
               "alpha": "float", "al": "scratch"}


def _to_float(v):
    return float(v.item()) if isinstance(v, _C.Tensor) else float(v)


def _dot(a, b):
    return float((a * b).sum().item())


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds.
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Returns (f_new, g_new, t, evaluations) satisfying the strong Wolfe conditions."""
    d_norm = float(d.abs().max().item())
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    # Bracketing phase.
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
        bracket_gtd = [gtd, gtd_new]
    # Zoom phase: shrink the bracket until a point satisfies the conditions.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                t, f_new, g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                    bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos] = \
                t, f_new, g_new, gtd_new
    t = bracket[low_pos]
    return bracket_f[low_pos], bracket_g[low_pos], t, ls_func_evals


class LBFGS(Optimizer):
    """Limited-memory BFGS. ``step(closure)`` runs up to ``max_iter`` iterations;
    ``closure`` clears the gradients, recomputes the loss, calls ``backward()``
    and returns the loss.

    Args:
        learning_rate (float): step length (the initial step of the line search).
        max_iter (int): iterations per ``step``. max_eval (int): closure calls per
            ``step`` (default ``max_iter * 1.25``).
        tolerance_grad, tolerance_change (float): stop when the largest gradient
            entry, or the change of the loss or the step, falls below these.
        history_size (int): curvature pairs kept.
        line_search_fn (None | 'strong_wolfe').

    >>> import oar
    >>> import oar.optimizer
    >>> x = oar.to_tensor([3.0, -2.0], dtype='float64', stop_gradient=False)
    >>> opt = oar.optimizer.LBFGS(learning_rate=1.0, parameters=[x], line_search_fn='strong_wolfe')
    >>> def closure():
    ...     opt.clear_grad()
    ...     loss = ((x - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 6) for v in x.numpy().tolist()]
    [1.0, 1.0]
    """

    def __init__(self, learning_rate=1.0, max_iter=20, max_eval=None, tolerance_grad=1e-07, tolerance_change=1e-09,
                 history_size=100, line_search_fn=None, parameters=None, weight_decay=None, grad_clip=None,
                 name=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        if not isinstance(max_iter, int) or max_iter <= 0:
            raise ValueError(f"[oar.optimizer.LBFGS] max_iter must be a positive int, got {max_iter}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if not isinstance(history_size, int) or history_size <= 0:
            raise ValueError(f"[oar.optimizer.LBFGS] history_size must be a positive int, got {history_size}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"[oar.optimizer.LBFGS] line_search_fn must be None or 'strong_wolfe', "
                             f"got {line_search_fn!r}")
        self.max_iter = max_iter
        self.max_eval = max_eval
        self.tolerance_grad = tolerance_grad
        self.tolerance_change = tolerance_change
        self.history_size = history_size
        self.line_search_fn = line_search_fn
        self.state = {"func_evals": 0, "n_iter": 0}

    def _params(self):
        return [p for p in self._parameter_list if not p.stop_gradient]

    def _gather_flat_grad(self):
        views = []
        for p in self._params():
            g = p.grad
            if g is None:
                views.append(_C.zeros([p.size], p.dtype))
            else:
                l1, l2 = self._coupled_decay(p, self._group_of[id(p)])
                if l2:
                    g = g + p * l2
                if l1:
                    g = g + p.sign() * l1
                views.append(g.reshape([-1]))
        return _C._concat(views, 0) if len(views) > 1 else views[0].clone()

    def _add_grad(self, t, d):
        offset = 0
        with no_grad():
            for p in self._params():
                n = p.size
                upd = d[offset:offset + n].reshape(p.shape)
                p.add_((upd * t).astype(p.dtype))
                offset += n

    def _clone_params(self):
        return [p.clone().detach() for p in self._params()]

    def _set_params(self, data):
        with no_grad():
            for p, v in zip(self._params(), data):
                p.copy_(v)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_params(x)
        return loss, flat_grad

    def step(self, closure):
        """Runs the iterations and returns the loss from the first closure call."""
        if not callable(closure):
            raise TypeError("[oar.optimizer.LBFGS] step needs a closure that recomputes the loss")
        lr = self.get_lr()
        state = self.state
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(flat_grad.abs().max().item()) <= self.tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_yk", []), state.get("old_sk", []), state.get("ro", [])
        h_diag = state.get("H_diag", 1.0)
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        with no_grad():
            while n_iter < self.max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_stps, ro = [], [], []
                    h_diag = 1.0
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = _dot(y, s)
                    if ys > 1e-10:
                        if len(old_dirs) == self.history_size:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / _dot(y, y)
                    # Two-loop recursion: d = -H g.
                    al = [0.0] * len(old_dirs)
                    q = -flat_grad
                    for i in range(len(old_dirs) - 1, -1, -1):
                        al[i] = _dot(old_stps[i], q) * ro[i]
                        q = q - old_dirs[i] * al[i]
                    r = q * h_diag
                    for i in range(len(old_dirs)):
                        be_i = _dot(old_dirs[i], r) * ro[i]
                        r = r + old_stps[i] * (al[i] - be_i)
                    d = r
                prev_flat_grad = flat_grad.clone()
                prev_loss = loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / float(flat_grad.abs().sum().item())) * lr
                else:
                    t = lr
                gtd = _dot(flat_grad, d)
                if gtd > -self.tolerance_change:
                    break
                ls_func_evals = 0
                if self.line_search_fn == "strong_wolfe":
                    x_init = self._clone_params()

                    def obj_func(x, step, direction):
                        return self._directional_evaluate(closure, x, step, direction)

                    loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                      tolerance_change=self.tolerance_change)
                    self._add_grad(t, d)
                    opt_cond = float(flat_grad.abs().max().item()) <= self.tolerance_grad
                else:
                    self._add_grad(t, d)
                    opt_cond = False
                    if n_iter != self.max_iter:
                        with enable_grad():
                            loss = float(closure())
                        flat_grad = self._gather_flat_grad()
                        opt_cond = float(flat_grad.abs().max().item()) <= self.tolerance_grad
                        ls_func_evals = 1
                current_evals += ls_func_evals
                state["func_evals"] += ls_func_evals
                if n_iter == self.max_iter or current_evals >= self.max_eval or opt_cond:
                    break
                if float((d * t).abs().max().item()) <= self.tolerance_change:
                    break
                if abs(loss - prev_loss) < self.tolerance_change:
                    break
        state.update(d=d, t=t, old_yk=old_dirs, old_sk=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    # ---- save / restore
    def state_dict(self):
        """The optimizer state as Paddle lays it out: ``{'state': {...}}`` with the
        counters ``func_evals`` and ``n_iter``, the last direction ``d`` and step length ``alpha``,
        the curvature history ``old_yk`` / ``old_sk`` (lists of flat tensors) with
        ``ro`` (1 / y.s per pair), ``H_diag``, ``prev_flat_grad``, ``prev_loss`` and, once there is
        history, ``al`` (``history_size`` zeros: scratch space that Paddle's LBFGS expects);
        plus ``'LR_Scheduler'`` when the learning rate is a scheduler. Scalars stay
        Python numbers so that a save/load round trip is exact.

        >>> import oar
        >>> import oar.optimizer
        >>> x = oar.to_tensor([3.0, -2.0], dtype='float64', stop_gradient=False)
        >>> opt = oar.optimizer.LBFGS(parameters=[x], max_iter=3, max_eval=10)
        >>> def closure():
        ...     opt.clear_grad()
        ...     loss = ((x - 1.0) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> state = opt.state_dict()["state"]
        >>> state["n_iter"], len(state["old_yk"])
        (2, 1)
        """
        out = {}
        for k, v in self.state.items():
            out["alpha" if k == "t" else k] = list(v) if isinstance(v, list) else v
        if self.state.get("old_yk"):
            out["al"] = [0.0] * self.history_size
        res = {"state": out}
        if isinstance(self._learning_rate, LRScheduler):
            res["LR_Scheduler"] = self._learning_rate.state_dict()
        return res

    def set_state_dict(self, state_dict):
        """Restores ``state_dict()`` output (also after ``oar.save`` / ``oar.load``);
        tensors are copied, so a resumed run continues exactly.

        >>> import oar
        >>> import oar.optimizer
        >>> x = oar.to_tensor([3.0, -2.0], dtype='float64', stop_gradient=False)
        >>> opt = oar.optimizer.LBFGS(parameters=[x])
        >>> opt.set_state_dict({"state": {"func_evals": 4, "n_iter": 3}})
        >>> opt.state_dict()["state"]["n_iter"]
        3
        """
        api = "[oar.optimizer.LBFGS]"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{api} state_dict must be a dict, got {type(state_dict).__name__}")
        state = state_dict.get("state")
        if not isinstance(state, dict):
            raise ValueError(f"{api} state_dict must hold the optimizer state under 'state' (as state_dict() "
                             f"returns it), got keys {sorted(map(str, state_dict))}")
        unknown = set(state) - set(_STATE_KEYS)
        if unknown:
            raise ValueError(f"{api} unknown state entries {sorted(map(str, unknown))}; expected some of "
                             f"{list(_STATE_KEYS)}")
        numel = sum(p.size for p in self._params())
        new = {}
        for k, v in state.items():
            kind = _STATE_KEYS[k]
            if k == "alpha":
                k = "t"
            if kind == "scratch":
                continue
            if v is None:
                new[k] = None
            elif kind == "int":
                new[k] = int(v.item()) if isinstance(v, _C.Tensor) else int(v)
            elif kind == "float":
                new[k] = _to_float(v)
            elif kind == "floats":
                new[k] = [_to_float(e) for e in v]
            else:
                vs = list(v) if kind == "vectors" else [v]
                copies = []
                for e in vs:
                    if not isinstance(e, _C.Tensor):
                        raise TypeError(f"{api} state entry {k!r} must hold Tensors, got {type(e).__name__}")
                    if e.size != numel:
                        raise ValueError(f"{api} state entry {k!r} holds a vector of {e.size} elements, but "
                                         f"the parameters have {numel} in all")
                    copies.append(e.detach().clone().reshape([-1]))
                new[k] = copies if kind == "vectors" else copies[0]
        hist = [len(new.get(k, [])) for k in ("old_yk", "old_sk", "ro")]
        if len(set(hist)) != 1:
            raise ValueError(f"{api} old_yk, old_sk and ro must have the same length, got {hist}")
        sched = state_dict.get("LR_Scheduler")
        if sched is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(sched)
        new.setdefault("func_evals", 0)
        new.setdefault("n_iter", 0)
        self.state = new

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None):
        raise NotImplementedError("[oar.optimizer.LBFGS] minimize is not supported; call step(closure)")

"""``BuildStrategy``: which graph passes run on a captured program (Paddle's
``paddle.static.BuildStrategy``).

Paddle's field names are accepted. The ones oar's passes implement map onto
them (``fuse_gemm_epilogue`` is ``fuse_linear_act``, ``fused_attention`` is
``fuse_attention``, ``fuse_elewise_add_act_ops`` and ``enable_auto_fusion``
turn on ``fuse_elementwise``); the others (``enable_inplace``,
``memory_optimize``, ``fuse_bn_act_ops``, ...) are kept for the code that
reads them, such as the inference runtime's memory planner, and change no
pass here.

Unlike Paddle, oar turns the fusions on by default: each fused op's
gradient is the gradient of the ops it replaces, so fused programs train
exactly as unfused ones. ``fold_conv_bn`` is the exception: it bakes the
current weights into new constants, so by default it runs only for
inference (``pass_flags(inference=True)``).
"""

__all__ = ["BuildStrategy"]

# Paddle name -> oar pass flag it sets.
_ALIASES = {
    "fuse_gemm_epilogue": "fuse_linear_act",
    "fused_attention": "fuse_attention",
    "fuse_elewise_add_act_ops": "fuse_elementwise",
    "enable_auto_fusion": "fuse_elementwise",
    "build_cinn_pass": "fuse_elementwise",  # the fused groups oar's compiler generates kernels for
}

# Paddle fields with no pass of their own here, with Paddle's defaults.
_KEPT = {
    "enable_inplace": False,
    "memory_optimize": None,
    "enable_addto": False,
    "fuse_bn_act_ops": False,
    "fuse_bn_add_act_ops": True,
    "fuse_relu_depthwise_conv": False,
    "fuse_broadcast_ops": None,
    "fuse_all_optimizer_ops": False,
    "fuse_all_reduce_ops": None,
    "fused_feedforward": False,
    "sequential_execution": False,
    "sync_batch_norm": False,
    "remove_unnecessary_lock": True,
    "debug_graphviz_path": "",
    "num_trainers": 1,
    "trainer_id": 0,
}

_PASSES = ("dce", "cse", "constant_folding", "fold_conv_bn", "fuse_softmax_layer_norm", "fuse_linear_act",
           "fuse_conv_act", "fuse_attention", "fuse_elementwise")


def _no_passes():
    """A BuildStrategy with every pass off: programs kept as traced (what jit.save writes)."""
    bs = BuildStrategy()
    for p in _PASSES:
        setattr(bs, p, False)
    return bs


class BuildStrategy:
    """Switches for the graph passes, Paddle-style.

    oar pass flags: ``dce``, ``cse``, ``constant_folding`` (default True),
    ``fuse_softmax_layer_norm``, ``fuse_linear_act``, ``fuse_conv_act``, ``fuse_attention``,
    ``fuse_elementwise`` (default True: the groups that oar.compiler generates kernels for; Paddle's
    ``build_cinn_pass`` and ``enable_auto_fusion`` set it too) and ``fold_conv_bn`` (None: on for inference only; True/False to
    force it). ``pass_flags(inference)`` gives the keyword arguments of
    ``Program.optimize``.

    >>> from oar.static import build_strategy
    >>> bs = build_strategy.BuildStrategy()
    >>> bs.fuse_gemm_epilogue = False          # Paddle's name for linear + activation fusion
    >>> bs.fuse_linear_act
    False
    >>> flags = bs.pass_flags(inference=True)
    >>> flags["fuse_linear_act"], flags["fold_conv_bn"], flags["fuse_attention"]
    (False, True, True)
    >>> bs.pass_flags()["fold_conv_bn"]
    False
    """

    __slots__ = ("_flags", "_kept")

    def __init__(self):
        object.__setattr__(self, "_flags", {p: True for p in _PASSES})
        self._flags["fold_conv_bn"] = None
        object.__setattr__(self, "_kept", dict(_KEPT))

    def __getattr__(self, name):
        name = _ALIASES.get(name, name)
        if name in self._flags:
            return self._flags[name]
        if name in self._kept:
            return self._kept[name]
        raise AttributeError(f"[oar.static.BuildStrategy] has no field '{name}'")

    def __setattr__(self, name, value):
        flag = _ALIASES.get(name, name)
        if flag in self._flags:
            if not (value is None or isinstance(value, bool)) or (value is None and flag != "fold_conv_bn"):
                raise TypeError(f"[oar.static.BuildStrategy] {name} must be a bool"
                                f"{' or None' if flag == 'fold_conv_bn' else ''}, got {value!r}")
            self._flags[flag] = value
        elif name in self._kept:
            self._kept[name] = value
        else:
            raise AttributeError(f"[oar.static.BuildStrategy] has no field '{name}'")

    def pass_flags(self, inference=False):
        """The keyword arguments of Program.optimize for a training (or, with
        inference=True, an inference) program."""
        f = self._flags
        conv_bn = bool(inference) if f["fold_conv_bn"] is None else f["fold_conv_bn"]
        return {"dce": f["dce"], "cse": f["cse"], "fold": f["constant_folding"], "fold_conv_bn": conv_bn,
                "fuse_softmax_layer_norm": f["fuse_softmax_layer_norm"], "fuse_linear_act": f["fuse_linear_act"],
                "fuse_conv_act": f["fuse_conv_act"], "fuse_attention": f["fuse_attention"],
                "fuse_elementwise": f["fuse_elementwise"]}

    def __repr__(self):
        on = [k for k, v in self._flags.items() if v]
        return f"BuildStrategy(passes on: {', '.join(on)}; fold_conv_bn={self._flags['fold_conv_bn']})"

"""``to_static(full_graph=False)``: symbolic bytecode execution with guards
and graph breaks (Note [segments and graph breaks] in interpreter.py).

A function converted with full_graph=False is run by a bytecode interpreter
written in Python. Stretches of it (segments) are captured as programs,
guarded by the Python values they depend on, and cached per instruction; what
cannot be captured (a graph break) runs eagerly, and capture resumes after
it. Results are those of eager execution.
"""
from .interpreter import Runner
from .report import GraphBreak, SotReport, SotStats, register, sot_report

__all__ = ["GraphBreak", "SotReport", "sot_report"]


def run(static_function, stats, args, kwargs):
    """Runs one call of a StaticFunction with full_graph=False; returns its result."""
    runner = Runner(stats, static_function._named_state)
    runner.build_strategy = static_function._build_strategy
    if static_function._input_spec is not None:
        runner.dynamic = _dynamic_dims(static_function, args, kwargs, stats)
    stats.calls += 1
    out = runner.run_top(static_function._target, args, kwargs)
    program = runner.whole_program()
    if program is not None:
        # No break: the call was one program, which program_cache shows.
        key = ("sot", id(program))
        if key not in static_function._cache:
            static_function._cache._put(key, program)
    return out


def _dynamic_dims(static_function, args, kwargs, stats):
    """Checks the call against the input_spec; id(tensor) -> the axes it marks dynamic (-1)."""
    from ..api import _flatten, _spec_check

    pos, kw = static_function._bind(args, kwargs)
    specs = static_function._input_spec
    if len(specs) > len(pos):
        raise ValueError(f"[oar.jit.to_static] {static_function._name}: input_spec has {len(specs)} entries but "
                         f"the call has {len(pos)} positional arguments")
    leaves, leaf_specs, names = [], [], []
    for i, v in enumerate(pos):
        _flatten(v, specs[i] if i < len(specs) else None, static_function._positional_name(i), leaves, leaf_specs,
                 names)
    out = {}
    for t, spec, name in zip(leaves, leaf_specs, names):
        if spec is not None:
            _spec_check(t, spec, name)
            axes = [i for i, d in enumerate(spec.shape) if d == -1]
            if axes and not stats.exact_shapes:
                out[id(t)] = axes
    return out

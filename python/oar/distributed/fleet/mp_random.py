"""Named random-number streams for model parallelism (Paddle's
``fleet.meta_parallel.get_rng_state_tracker`` / ``model_parallel_random_seed``).

oar has one random stream per process, whose state is (seed, offset). A
tracker keeps further named states; ``with tracker.rng_state(name):`` swaps
the named state in, and on leaving keeps its advanced value and swaps the
previous one back. Model-parallel code draws dropout masks of split
activations from the ``"model_parallel_rng"`` stream (seeded differently on
each model-parallel rank) and those of replicated activations from the
global stream (seeded alike).
"""
import contextlib

import numpy as np

from ..._random import get_rng_state, seed as _seed, set_rng_state

__all__ = ["RNGStatesTracker", "get_rng_state_tracker", "model_parallel_random_seed", "MODEL_PARALLEL_RNG"]

MODEL_PARALLEL_RNG = "model_parallel_rng"
_API = "oar.distributed.fleet.meta_parallel.RNGStatesTracker"


class RNGStatesTracker:
    """Named random states.

    >>> import oar
    >>> from oar.distributed.fleet.meta_parallel import RNGStatesTracker
    >>> t = RNGStatesTracker()
    >>> t.add("mine", 123)
    >>> with t.rng_state("mine"):
    ...     a = oar.rand([2])
    >>> _ = oar.seed(123); b = oar.rand([2])
    >>> bool((a == b).all())
    True
    """

    def __init__(self):
        self.states_ = {}
        self.seeds_ = set()

    def reset(self):
        self.states_ = {}
        self.seeds_ = set()

    def add(self, name, seed):
        """A new stream ``name`` starting from ``seed`` (names and seeds must be new)."""
        if seed in self.seeds_:
            raise ValueError(f"[{_API}.add] seed {seed} already exists")
        if name in self.states_:
            raise ValueError(f"[{_API}.add] state {name!r} already exists")
        outer = get_rng_state()
        try:
            _seed(seed)
            self.states_[name] = get_rng_state()
        finally:
            set_rng_state(outer)
        self.seeds_.add(seed)

    def get_states_tracker(self):
        """{name: state} of every stream (for checkpoints)."""
        return dict(self.states_)

    def set_states_tracker(self, states):
        """Restores streams saved by ``get_states_tracker``."""
        for name, st in states.items():
            if name not in self.states_:
                raise ValueError(f"[{_API}.set_states_tracker] state {name!r} does not exist")
            self.states_[name] = st

    @contextlib.contextmanager
    def rng_state(self, name=MODEL_PARALLEL_RNG):
        """Draws inside the block come from stream ``name``."""
        if name not in self.states_:
            raise ValueError(f"[{_API}.rng_state] state {name!r} does not exist")
        outer = get_rng_state()
        set_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = get_rng_state()
            set_rng_state(outer)


_TRACKER = RNGStatesTracker()


def get_rng_state_tracker():
    """The process's tracker (the one ``model_parallel_random_seed`` sets up).

    >>> from oar.distributed.fleet.meta_parallel import get_rng_state_tracker
    >>> get_rng_state_tracker() is get_rng_state_tracker()
    True
    """
    return _TRACKER


def model_parallel_random_seed(seed=None):
    """Seeds the global stream with ``seed`` (the same on every rank) and the
    tracker's ``"model_parallel_rng"`` stream with
    ``seed + 1 + mp_rank * pp_degree + stage`` (distinct per model-parallel
    rank and stage), as Paddle does. Without ``seed`` (None) a random one is
    drawn with NumPy. Needs ``fleet.init``.

    >>> from oar.distributed import fleet
    >>> from oar.distributed.fleet.meta_parallel import get_rng_state_tracker, model_parallel_random_seed
    >>> _ = fleet.init(is_collective=True)
    >>> model_parallel_random_seed(100)
    >>> sorted(get_rng_state_tracker().get_states_tracker())
    ['model_parallel_rng']
    >>> import oar.distributed as dist
    >>> dist.destroy_process_group()
    """
    from .base.topology import _current_hcg

    hcg = _current_hcg()
    if hcg is None:
        raise RuntimeError("[oar.distributed.fleet.meta_parallel.model_parallel_random_seed] call fleet.init() first")
    global_seed = int(np.random.randint(0, 10000)) if seed is None else int(seed)
    local = global_seed + 1 + hcg.get_model_parallel_rank() * hcg.get_pipe_parallel_world_size() + hcg.get_stage_id()
    _TRACKER.reset()
    _TRACKER.add(MODEL_PARALLEL_RNG, local)
    _seed(global_seed)

"""Distributed training: process groups and collectives over OpenMPI, the
launcher (``python -m oar.distributed.launch``, ``spawn``), data parallel,
manual and semi-automatic parallelism, and ``fleet``."""
from .collective import *  # noqa: F401,F403
from .collective import __all__ as _collective_all

from .parallel import DataParallel, sync_params_buffers  # noqa: F401
from .auto_parallel import *  # noqa: F401,F403
from .auto_parallel import __all__ as _auto_all
from . import fleet  # noqa: F401
from . import io  # noqa: F401
from . import launch  # noqa: F401
from .fleet.base.topology import ParallelMode  # noqa: F401
from .gloo import gloo_barrier, gloo_init_parallel_env, gloo_release  # noqa: F401
from .spawn import spawn  # noqa: F401
from .checkpoint import *  # noqa: F401,F403
from .checkpoint import __all__ as _ckpt_all
from .pipeline import *  # noqa: F401,F403
from .pipeline import __all__ as _pipeline_all
from .sharding import *  # noqa: F401,F403
from .sharding import __all__ as _sharding_all
from .intermediate import *  # noqa: F401,F403
from .intermediate import __all__ as _intermediate_all
from .dist_model import *  # noqa: F401,F403
from .dist_model import __all__ as _dist_model_all
from .dtensor_utils import *  # noqa: F401,F403
from .dtensor_utils import __all__ as _dtensor_utils_all
from .sharded_state import *  # noqa: F401,F403
from .sharded_state import __all__ as _sharded_state_all

__all__ = (list(_collective_all) + ["DataParallel", "sync_params_buffers", "ParallelMode", "io", "launch", "spawn",
                                    "gloo_init_parallel_env", "gloo_barrier", "gloo_release"]
           + list(_auto_all) + list(_sharding_all) + list(_ckpt_all) + list(_pipeline_all) + list(_intermediate_all)
           + list(_dist_model_all) + list(_dtensor_utils_all) + list(_sharded_state_all))

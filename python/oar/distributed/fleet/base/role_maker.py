"""Who this process is in a fleet job (Paddle's ``fleet.Role``,
``fleet.PaddleCloudRoleMaker``, ``fleet.UserDefinedRoleMaker``).

oar trains collectively (every process is a worker); a role maker reads the
worker's index and the number of workers from the environment the launcher
sets (``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, ...) or from the
user's arguments, and runs the small collectives of ``fleet.util`` over the
job's ranks. Parameter-server roles (server, heter worker, coordinator) are
not implemented and raise ``NotImplementedError``.
"""
import os

import numpy as np

from ... import collective as _coll

__all__ = ["Role", "RoleMakerBase", "PaddleCloudRoleMaker", "UserDefinedRoleMaker"]

_PS = "parameter-server training is not implemented in oar; every process of an oar job is a worker"


class Role:
    """The roles of a fleet job's processes.

    >>> from oar.distributed.fleet import Role
    >>> Role.WORKER, Role.SERVER
    (1, 2)
    """

    WORKER = 1
    SERVER = 2
    HETER_WORKER = 3
    ALL = 4
    COORDINATOR = 5


def _env_list(name):
    v = os.environ.get(name, "")
    return [x for x in v.split(",") if x]


class RoleMakerBase:
    """The base of role makers: the worker's index and count, and the
    collectives ``fleet.util`` runs among workers. ``PaddleCloudRoleMaker``
    and ``UserDefinedRoleMaker`` fill them in.

    >>> from oar.distributed.fleet.base.role_maker import RoleMakerBase
    >>> rm = RoleMakerBase(is_collective=True)
    >>> rm._worker_index(), rm._worker_num(), rm._is_first_worker(), rm._is_non_distributed()
    (0, 1, True, True)
    """

    _API = "oar.distributed.fleet.RoleMakerBase"

    def __init__(self, is_collective=False, **kwargs):
        if not isinstance(is_collective, bool):
            raise TypeError(f"[{self._API}] is_collective must be a bool, got {type(is_collective).__name__}")
        self._is_collective = is_collective
        self._kwargs = kwargs
        self._role = Role.WORKER
        self._current_id = 0
        self._trainers_num = 1
        self._worker_endpoints = []
        self._server_endpoints = []
        self._nodes_num = 1
        self._role_is_generated = False

    # --- the role ------------------------------------------------------------
    def _generate_role(self):
        self._role_is_generated = True

    def _is_worker(self):
        return self._role == Role.WORKER

    def _is_server(self):
        return self._role == Role.SERVER

    def _is_coordinator(self):
        return self._role == Role.COORDINATOR

    def _is_heter_worker(self):
        return self._role == Role.HETER_WORKER

    def _is_first_worker(self):
        return self._is_worker() and self._current_id == 0

    def _worker_index(self):
        return self._current_id

    def _role_id(self):
        return self._current_id

    def _server_index(self):
        raise NotImplementedError(f"[{self._API}] {_PS}")

    def _worker_num(self):
        return self._trainers_num

    def _server_num(self):
        return len(self._server_endpoints)

    def _heter_worker_num(self):
        return 0

    def _node_num(self):
        return self._nodes_num

    _get_node_num = _node_num

    def _get_local_rank(self):
        return os.environ.get("PADDLE_LOCAL_RANK", os.environ.get("PADDLE_RANK_IN_NODE"))

    def _get_local_device_ids(self):
        return os.environ.get("PADDLE_LOCAL_DEVICE_IDS")

    def _get_world_device_ids(self):
        return os.environ.get("PADDLE_WORLD_DEVICE_IDS")

    def _get_trainer_endpoints(self):
        return list(self._worker_endpoints)

    def _get_trainer_endpoint(self):
        eps = self._worker_endpoints
        return eps[self._current_id] if self._current_id < len(eps) else None

    def _get_pserver_endpoints(self):
        return list(self._server_endpoints)

    def _is_non_distributed(self):
        return self._trainers_num <= 1

    # --- collectives among workers -------------------------------------------
    def _world(self, comm_world, api):
        if comm_world not in ("worker", "all"):
            raise ValueError(f"[{api}] comm_world must be 'worker' or 'all' (an oar job has no servers), "
                             f"got {comm_world!r}")
        return _coll.init_parallel_env()

    def _barrier(self, comm_world="worker"):
        _coll.barrier(self._world(comm_world, "oar.distributed.fleet.util.barrier"))

    def _all_reduce(self, input, mode="sum", comm_world="worker"):  # noqa: A002 - Paddle's name
        api = "oar.distributed.fleet.util.all_reduce"
        ops = {"sum": _coll.ReduceOp.SUM, "max": _coll.ReduceOp.MAX, "min": _coll.ReduceOp.MIN}
        if mode not in ops:
            raise ValueError(f"[{api}] mode must be 'sum', 'max' or 'min', got {mode!r}")
        arr = np.asarray(input)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"[{api}] input must be numbers, got an array of {arr.dtype}")
        g = self._world(comm_world, api)
        from ....creation import to_tensor

        t = to_tensor(np.ascontiguousarray(arr))
        _coll.all_reduce(t, ops[mode], group=g)
        return t.numpy()

    def _all_gather(self, input, comm_world="worker"):  # noqa: A002 - Paddle's name
        out = []
        _coll.all_gather_object(out, input, group=self._world(comm_world, "oar.distributed.fleet.util.all_gather"))
        return out


def _check_ps_role(api, role):
    if role in (Role.SERVER, Role.HETER_WORKER, Role.COORDINATOR):
        raise NotImplementedError(f"[{api}] role {role} is not supported: {_PS}")
    if role not in (Role.WORKER, Role.ALL):
        raise ValueError(f"[{api}] role must be a fleet.Role, got {role!r}")


class PaddleCloudRoleMaker(RoleMakerBase):
    """The role from the environment of the launcher: worker
    ``PADDLE_TRAINER_ID`` of ``PADDLE_TRAINERS_NUM`` (after
    ``init_parallel_env``, the job's rank and size); ``PADDLE_TRAINER_ENDPOINTS``
    and ``PADDLE_NNODES`` when set. ``TRAINING_ROLE`` other than ``TRAINER``
    (a parameter server) is not supported.

    >>> from oar.distributed import fleet
    >>> rm = fleet.PaddleCloudRoleMaker(is_collective=True)
    >>> rm._generate_role()
    >>> rm._worker_index(), rm._worker_num(), rm._is_first_worker()
    (0, 1, True)
    """

    _API = "oar.distributed.fleet.PaddleCloudRoleMaker"

    def _generate_role(self):
        if self._role_is_generated:
            return
        training_role = os.environ.get("TRAINING_ROLE", "TRAINER").upper()
        if training_role != "TRAINER":
            raise NotImplementedError(f"[{self._API}] TRAINING_ROLE={training_role} is not supported: {_PS}")
        self._role = Role.WORKER
        self._current_id = _coll.get_rank()
        self._trainers_num = _coll.get_world_size()
        self._worker_endpoints = _env_list("PADDLE_TRAINER_ENDPOINTS")
        self._server_endpoints = _env_list("PADDLE_PSERVERS_IP_PORT_LIST")
        hosts = {e.split(":")[0] for e in self._worker_endpoints}
        self._nodes_num = int(os.environ.get("PADDLE_NNODES", len(hosts) or 1))
        self._role_is_generated = True


class UserDefinedRoleMaker(PaddleCloudRoleMaker):
    """A role given by the caller: ``current_id`` (this worker's index),
    ``role`` (``Role.WORKER``), and ``worker_num`` or ``worker_endpoints``
    (``worker_endpoints`` is required with ``is_collective=True``).

    >>> from oar.distributed import fleet
    >>> rm = fleet.UserDefinedRoleMaker(current_id=1, role=fleet.Role.WORKER, worker_num=3,
    ...                                 server_endpoints=["127.0.0.1:6001"])
    >>> rm._generate_role()
    >>> rm._worker_index(), rm._worker_num(), rm._is_first_worker()
    (1, 3, False)
    """

    _API = "oar.distributed.fleet.UserDefinedRoleMaker"

    def __init__(self, is_collective=False, init_gloo=False, **kwargs):
        super().__init__(is_collective=is_collective, **kwargs)
        self._init_gloo = init_gloo

    def _generate_role(self):
        if self._role_is_generated:
            return
        kw, api = self._kwargs, self._API
        cur = kw.get("current_id")
        if isinstance(cur, bool) or not isinstance(cur, int) or cur < 0:
            raise ValueError(f"[{api}] current_id must be an int >= 0, got {cur!r}")
        eps = kw.get("worker_endpoints") or []
        if not isinstance(eps, (list, tuple)) or not all(isinstance(e, str) for e in eps):
            raise TypeError(f"[{api}] worker_endpoints must be a list of 'ip:port' strings, got {eps!r}")
        if self._is_collective:
            if not eps:
                raise ValueError(f"[{api}] is_collective=True needs worker_endpoints")
            num = len(eps)
        else:
            _check_ps_role(api, kw.get("role", Role.WORKER))
            num = kw.get("worker_num", 0) or len(eps)
            if isinstance(num, bool) or not isinstance(num, int) or num < 1:
                raise ValueError(f"[{api}] worker_num must be a positive int (or give worker_endpoints), "
                                 f"got {kw.get('worker_num')!r}")
        if cur >= num:
            raise ValueError(f"[{api}] current_id {cur} must be less than the number of workers {num}")
        self._role = Role.WORKER
        self._current_id = cur
        self._trainers_num = num
        self._worker_endpoints = list(eps)
        self._server_endpoints = list(kw.get("server_endpoints") or [])
        self._nodes_num = len({e.split(":")[0] for e in eps}) or 1
        self._role_is_generated = True

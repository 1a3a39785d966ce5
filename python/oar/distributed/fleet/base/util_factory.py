"""``fleet.util``: small helpers among the workers of a fleet job (Paddle's ``UtilBase``)."""
import numpy as np

__all__ = ["UtilBase"]

_API = "oar.distributed.fleet.UtilBase"


class UtilBase:
    """Collectives on numbers and objects among workers, file sharding and
    printing on one rank. ``fleet.util`` is the instance ``fleet.init`` sets
    up; a ``UtilBase`` of your own needs a role maker (``_set_role_maker``).

    >>> from oar.distributed import fleet
    >>> _ = fleet.init(is_collective=True)
    >>> fleet.util.all_reduce([1, 2], "sum").tolist()
    [1, 2]
    >>> fleet.util.get_file_shard(["a", "b", "c"])
    ['a', 'b', 'c']
    >>> import oar.distributed as dist
    >>> dist.destroy_process_group()
    """

    def __init__(self):
        self.role_maker = None

    def _set_role_maker(self, role_maker):
        self.role_maker = role_maker

    def _rm(self, api):
        if self.role_maker is None:
            raise RuntimeError(f"[{api}] no role maker: call fleet.init() first")
        return self.role_maker

    def all_reduce(self, input, mode="sum", comm_world="worker"):  # noqa: A002 - Paddle's name
        """Reduces ``input`` (numbers, a list or a NumPy array) over the
        workers with ``mode`` ('sum', 'max', 'min'); returns a NumPy array."""
        if isinstance(input, tuple):
            input = list(input)
        return self._rm(f"{_API}.all_reduce")._all_reduce(input, mode, comm_world)

    def barrier(self, comm_world="worker"):
        """Blocks until every worker has reached it."""
        self._rm(f"{_API}.barrier")._barrier(comm_world)

    def all_gather(self, input, comm_world="worker"):  # noqa: A002 - Paddle's name
        """The list of every worker's ``input``, in worker order."""
        return self._rm(f"{_API}.all_gather")._all_gather(input, comm_world)

    def get_file_shard(self, files):
        """This worker's share of ``files``: contiguous blocks, the first
        ``len(files) % workers`` workers taking one file more.

        >>> from oar.distributed import fleet
        >>> u = fleet.UtilBase()
        >>> u._set_role_maker(fleet.UserDefinedRoleMaker(current_id=1, role=fleet.Role.WORKER, worker_num=2))
        >>> u.get_file_shard(["a", "b", "c", "d", "e"])
        ['d', 'e']
        """
        api = f"{_API}.get_file_shard"
        if not isinstance(files, list):
            raise TypeError(f"[{api}] files must be a list of file names, got {type(files).__name__}")
        rm = self._rm(api)
        rm._generate_role()
        n, i = rm._worker_num(), rm._worker_index()
        sizes = np.full(n, len(files) // n)
        sizes[:len(files) % n] += 1
        start = int(sizes[:i].sum())
        return files[start:start + int(sizes[i])]

    def print_on_rank(self, message, rank_id):
        """Prints ``message`` on worker ``rank_id`` only."""
        rm = self._rm(f"{_API}.print_on_rank")
        rm._generate_role()
        if rm._worker_index() == rank_id:
            print(message, flush=True)

"""The script each rank of ``oar.distributed.spawn`` runs: ``_spawn_entry.py PAYLOAD``.

Imports the spawning process's main script as ``__mp_main__`` (so functions
defined there unpickle), then calls the pickled function with its arguments.
"""
import importlib.util
import os
import pickle
import sys


def _run(payload):
    with open(payload, "rb") as f:
        head = pickle.load(f)
        for p in reversed(head["sys_path"]):
            if p not in sys.path:
                sys.path.insert(0, p)
        main = head["main"]
        if main is not None:
            spec = importlib.util.spec_from_file_location("__mp_main__", main)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["__mp_main__"] = mod
            sys.modules["__main__"] = mod
            sys.path.insert(0, os.path.dirname(main))
            spec.loader.exec_module(mod)
        func, args = pickle.load(f)
    func(*args)


if __name__ == "__main__":
    _run(sys.argv[1])

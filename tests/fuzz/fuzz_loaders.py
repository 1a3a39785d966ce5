"""The Python loader fuzzer (`make fuzz-loaders`; a short deterministic run is
part of `make test`, tests/python/test_fuzz_ops.py): mutated checkpoint and
model files fed to oar.load (safetensors and Paddle pickles) and oar.jit.load
and oar.inference, in a child process. What loads is then used: every loaded
tensor goes through a small model (reductions, an elementwise chain, a matrix
product with its own transpose, a reshape), and every loaded program is run on
an input of its declared shape, eagerly and through a predictor.

A case passes when the loader returns and the model runs, or when the loader
raises a typed error whose message starts with the loader's name
("[oar.load]", "[oar.jit.load]", "[oar.inference.create_predictor]"). It fails
on a crash, a hang, a memory blow-up (the child's address space is capped),
any other error, or a model run that fails on what the loader accepted.

Usage: python tests/fuzz/fuzz_loaders.py [--seconds S] [--seed N] [--quick]
"""
import json
import os
import pickle
import random
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzz_ops  # noqa: E402  (the child protocol and the worker)

LOADERS = ("oar.load", "oar.jit.load", "oar.inference.create_predictor", "oar.inference.Predictor.run",
           "oar.jit.TranslatedLayer")


def _seeds(folder):
    """{name: (kind, bytes)} of valid files: oar.save outputs, Paddle pickles, a saved model."""
    import numpy as np
    import oar
    from oar.static import InputSpec
    out = {}

    def saved(name, obj):
        p = os.path.join(folder, name)
        oar.save(obj, p)
        with open(p, "rb") as f:
            out[name] = ("load", f.read())

    saved("flat", {"w": oar.ones([3, 4]), "b": oar.zeros([4], "int64"), "h": oar.ones([2, 2], "bfloat16")})
    saved("nested", {"model": {"w": oar.ones([2, 3])}, "opt": [oar.ones([1]), 3, 2.5, "x"], "c":
                     oar.to_tensor(np.ones(2, np.complex128))})
    saved("scalar", oar.to_tensor(3.0))
    for proto in (2, 4):
        out[f"pickle{proto}"] = ("load", pickle.dumps({"w": np.ones((2, 3), np.float32), "n": [np.arange(3)]},
                                                      protocol=proto))
    oar.seed(0)
    net = oar.nn.Sequential(oar.nn.Linear(4, 8), oar.nn.ReLU(), oar.nn.Linear(8, 2))
    net.eval()
    prefix = os.path.join(folder, "m")
    oar.jit.save(net, prefix, [InputSpec([None, 4], "float32", name="x")])
    with open(prefix + ".json", "rb") as f:
        prog = f.read()
    with open(prefix + ".safetensors", "rb") as f:
        weights = f.read()
    out["model_weights"] = ("jit_weights", weights)
    out["model_program"] = ("jit_program", prog)
    out["_model"] = ("", json.dumps([prog.decode(), weights.hex()]).encode())
    return out


def _mutate(data, rng):
    """A few random edits of the kinds that find loader bugs."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        if not data:
            data += b"\0"
        i = rng.randrange(len(data))
        if op == 0:  # flip a bit
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # set a byte to an interesting value
            data[i] = rng.choice([0, 1, 0x7f, 0x80, 0xff, ord("{"), ord("-"), ord("9")])
        elif op == 2:  # insert bytes
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3:  # delete bytes
            del data[i:i + rng.randint(1, 8)]
        elif op == 4:  # the header length off by a little
            if len(data) >= 8:
                n = int.from_bytes(data[:8], "little") + rng.choice([-9, -8, -1, 1, 8, 1 << 20, 1 << 40])
                data[:8] = (n % (1 << 64)).to_bytes(8, "little")
        elif op == 5:  # a number in the text made huge, negative or high-rank
            text = bytes(data)
            nums = [m.span() for m in re.finditer(rb"\d+", text)]
            if nums:
                a, b = rng.choice(nums)
                data[a:b] = rng.choice([b"0", b"1", b"-1", b"4294967296", b"9223372036854775807",
                                        b"99999999999999999999", b"1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"])
        elif op == 6:  # truncate
            del data[rng.randrange(len(data) + 1):]
        else:  # append
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(data)


def _use_tensor(t):
    import oar
    if not isinstance(t, oar.Tensor):
        return
    x = t.astype("float32") if t.dtype not in (oar.complex64, oar.complex128) else t
    (x * 2 + 1).sum()
    x.reshape([-1]).abs().max() if x.size else None
    if x.ndim == 2 and x.size:
        oar.matmul(x, x.T)
    x.numpy()


def _walk(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _walk(v)
    else:
        yield obj


def _child(mem_mb):
    import numpy as np
    import oar
    import warnings
    warnings.simplefilter("ignore")
    folder = tempfile.mkdtemp(prefix="oar-fuzz-loaders-")
    seeds = _seeds(folder)
    prog, weights = json.loads(seeds.pop("_model")[1])
    prog, weights = prog.encode(), bytes.fromhex(weights)
    fuzz_ops.limit_memory(mem_mb)
    out = sys.stdout
    sys.stdout = open(os.devnull, "w")
    out.write(json.dumps({"ready": sorted(seeds)}) + "\n")
    out.flush()
    for line in sys.stdin:
        case = json.loads(line)
        rng = random.Random(case["seed"])
        kind, data = seeds[case["target"]]
        data = _mutate(data, rng)
        res = {"status": "ok"}
        stage = "load"
        try:
            if kind == "load":
                p = os.path.join(folder, "case.pdparams")
                with open(p, "wb") as f:
                    f.write(data)
                stage = "oar.load"
                obj = oar.load(p)
                stage = "model"
                for t in _walk(obj):
                    _use_tensor(t)
            else:
                prefix = os.path.join(folder, "case")
                with open(prefix + ".json", "wb") as f:
                    f.write(data if kind == "jit_program" else prog)
                with open(prefix + ".safetensors", "wb") as f:
                    f.write(data if kind == "jit_weights" else weights)
                stage = "oar.jit.load"
                layer = oar.jit.load(prefix)
                x = np.ones((3, 4), np.float32)
                stage = "oar.jit.TranslatedLayer"
                ys = layer(oar.to_tensor(x))
                for y in _walk(ys):
                    _use_tensor(y)
                stage = "oar.inference.create_predictor"
                pred = oar.inference.create_predictor(oar.inference.Config(prefix))
                stage = "oar.inference.Predictor.run"
                for y in pred.run([x]):
                    np.asarray(y).sum()
        except Exception as e:  # noqa: B902 - judged below
            msg = str(e)
            m = re.match(r"\[([\w.]+)\]", msg)
            if stage == "model":
                res = {"status": "fail", "why": f"a loaded tensor failed in the model: {type(e).__name__}: "
                                                 f"{msg[:300]}"}
            elif isinstance(e, MemoryError):
                res = {"status": "fail", "why": f"memory blow-up in {stage}: {msg[:300]}"}
            elif not m or m.group(1) not in LOADERS:
                res = {"status": "fail", "why": f"{stage}: message does not name the loader: "
                                                 f"{type(e).__name__}: {msg[:300]}"}
            elif not isinstance(e, (ValueError, TypeError, NotImplementedError, RuntimeError, IndexError,
                                    pickle.UnpicklingError, FileNotFoundError)):
                res = {"status": "fail", "why": f"{stage}: untyped error {type(e).__name__}: {msg[:300]}"}
            else:
                res = {"status": "error"}
        out.write(json.dumps(res) + "\n")
        out.flush()


def main():
    a = fuzz_ops.campaign_args(__doc__, "300 cases per seed file, fixed seeds").parse_args()
    if a.child:
        _child(a.mem_mb)
        return 0
    t0 = time.time()
    camp = fuzz_ops.Campaign(a.mem_mb, a.timeout, os.path.abspath(__file__))
    names = camp.worker.targets
    per_seed = {n: 0 for n in names}
    rng = random.Random(a.seed)
    n = 0
    while True:
        if a.quick:
            if n >= 300 * len(names):
                break
            target, seed = names[n % len(names)], n
        else:
            if time.time() - t0 > a.seconds:
                break
            target, seed = rng.choice(names), rng.randrange(1 << 40)
        n += 1
        camp.run({"target": target, "seed": seed})
        per_seed[target] += 1
    camp.close()
    counts = camp.counts
    print(f"fuzz-loaders: {n} cases over {len(names)} seed files; {counts['ok']} loaded and ran, "
          f"{counts['error']} refused with a typed error, {counts['fail']} failures; {time.time() - t0:.0f} s")
    print("cases per seed file: " + ", ".join(f"{k} {v}" for k, v in sorted(per_seed.items())))
    return camp.report(lambda case: f"seed={case['seed']}")


if __name__ == "__main__":
    sys.exit(main())

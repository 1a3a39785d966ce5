"""CPU kernel throughput: float32 matmul GFLOP/s and memory-bound ops in GB/s.

GB/s counts the bytes each op must read and write once (add: 2 inputs + 1
output; exp, gelu, softmax: 1 in + 1 out; row sum: the input + the small
output). Attention is causal scaled-dot-product attention ([batch, seq, heads, 64], the small GPT's
shapes) through each framework's fused function, forward alone and forward + backward; its
GFLOP/s count the products a causal kernel must do (2 b h L^2 d forward, three times that for
forward + backward). The bandwidth of a numpy copy, timed in the oar worker in turn with
the other rows, is the practical ceiling for these rows. The frameworks take turns run by run
(common.run_all's interleave: each timed run lasts about 0.2 s, 7 per case
and round), and each figure is a framework's fastest run (a shared machine's
interference only ever adds time).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

F32 = 4
COPY = "numpy copy"


def sizes(quick):
    if quick:
        return dict(matmul=(256, 512), elems=1 << 20, rows=(1024, 1024), attention=(2, 128, 4, 64))
    return dict(matmul=(256, 512, 1024, 2048), elems=16 << 20, rows=(4096, 4096), attention=(16, 128, 4, 64))


def cases(fw, name, quick):
    # Every closure binds its operands now (default arguments): the serving
    # worker builds all cases before it times any.
    rng = np.random.default_rng(0)
    sz = sizes(quick)
    axis = "dim" if name == "torch" else "axis"
    tensor = lambda *shape: common.to_tensor(fw, name, rng.standard_normal(shape, dtype=np.float32))

    for n in sz["matmul"]:
        a, b = tensor(n, n), tensor(n, n)
        yield f"matmul {n}x{n}", lambda a=a, b=b: fw.matmul(a, b), 2 * n**3, "GFLOP/s"

    n = sz["elems"]
    a, b = tensor(n), tensor(n)
    label = f"{n >> 20}M"
    if name == "oar":  # the reference, timed in turn with the rows it bounds
        src = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
        dst = np.empty_like(src)
        yield f"{COPY} {label}", lambda: np.copyto(dst, src), 2 * n * F32, "GB/s"
    yield f"add {label}", lambda: a + b, 3 * n * F32, "GB/s"
    yield f"exp {label}", lambda: fw.exp(a), 2 * n * F32, "GB/s"
    yield f"gelu {label}", lambda: fw.nn.functional.gelu(a), 2 * n * F32, "GB/s"

    r, c = sz["rows"]
    x = tensor(r, c)
    yield f"sum rows {r}x{c}", lambda: x.sum(**{axis: -1}), (r * c + r) * F32, "GB/s"
    yield f"softmax rows {r}x{c}", lambda: fw.nn.functional.softmax(x, **{axis: -1}), 2 * r * c * F32, "GB/s"

    yield from attention_cases(fw, name, sz["attention"], tensor)


def attention_cases(fw, name, shape, tensor):
    b, s, h, d = shape
    torch = name == "torch"  # its layout is [batch, heads, seq, dim]
    q, k, v, g = (tensor(*((b, h, s, d) if torch else (b, s, h, d))) for _ in range(4))
    sdpa = fw.nn.functional.scaled_dot_product_attention
    flops = 2 * b * h * s * s * d
    label = f"attention {b}x{s}x{h}x{d} causal"
    yield f"{label} fwd", lambda: sdpa(q, k, v, is_causal=True), flops, "GFLOP/s"
    for t in (q, k, v):
        if torch:
            t.requires_grad_()
        else:
            t.stop_gradient = False

    def fwd_bwd():
        sdpa(q, k, v, is_causal=True).backward(g)
        for t in (q, k, v):
            if torch:
                t.grad = None
            else:
                t.clear_gradient(False)
    yield f"{label} fwd+bwd", fwd_bwd, 3 * flops, "GFLOP/s"


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="1,2")
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers="best")
    label = f"{COPY} {sizes(args.quick)['elems'] >> 20}M"
    copy = {r["threads"]: r["results"][label]["value"] for r in runs
            if r["framework"] == "oar" and label in r.get("results", {})}
    for threads, gbps in sorted(copy.items()):
        print(f"reference: {label} float32 in the oar worker with {threads} thread(s) = {gbps:.4g} GB/s "
              "(read + write; numpy copies on one thread)")
    common.save_json(args.json, "kernels", info, runs, {"copy_gbps": copy})


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases, stat=min)  # throughput: the fastest run
    else:
        main()

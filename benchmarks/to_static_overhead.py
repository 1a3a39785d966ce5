"""Per-call cost of captured functions (to_static, torch.compile) against eager calls.

Microseconds per call of a small MLP (8x16 -> 16 -> 4, no gradient), eager and captured, and
of a function with a data-dependent branch.

At this size the arithmetic is small, so the figures are the fixed costs of each mode: a
whole captured program (oar full_graph=True, Paddle full_graph=True), the graph-breaking
modes with their guards (oar and Paddle full_graph=False; torch.compile with the "eager"
backend, which runs Dynamo's guards and graph breaks without generating code), and a
graph break at `if x.sum() > 0`.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def _capture(fw, name, fn, full_graph):
    if name == "torch":
        return fw.compile(fn, backend="eager", fullgraph=full_graph)
    return fw.jit.to_static(fn, full_graph=full_graph)


def cases(fw, name, quick):
    rng = np.random.default_rng(0)
    x = common.to_tensor(fw, name, rng.standard_normal((8, 16), dtype=np.float32))
    nn = fw.nn
    if name == "torch":
        fw.manual_seed(0)
        net = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        no_grad = fw.no_grad
    else:
        fw.seed(0)
        net = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
        no_grad = fw.no_grad

    def mlp(t):
        return net(t)

    def branchy(t):
        h = net(t)
        if h.sum() > 0:
            h = h * 2.0
        return h

    variants = [("eager", mlp, None), ("captured, whole graph", mlp, True), ("captured, graph breaks", mlp, False),
                ("if on a tensor, eager", branchy, None), ("if on a tensor, graph breaks", branchy, False)]
    for label, fn, full_graph in variants:
        f = fn if full_graph is None else _capture(fw, name, fn, full_graph)

        def call(f=f):
            with no_grad():
                f(x)

        call()  # capture outside the timing
        yield label, call, None, "us"


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="1")
    info = common.machine_info()
    runs = common.run_all(__file__, args)
    common.print_header(info, runs)
    common.table(runs, ratio_peers=[p for p in common.PEERS if p in args.frameworks])
    common.save_json(args.json, "to_static_overhead", info, runs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases)
    else:
        main()

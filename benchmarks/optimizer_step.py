"""Optimizer step time (milliseconds per optimizer.step()) over the parameters
of two models: the small GPT of training.py (4 layers, width 256: 54 tensors,
3.4M elements, many of them 256-element biases and norm weights) and ResNet18
(10 classes: 62 tensors, 11.2M elements), and over the GPT's small tensors
alone (those of at most 1024 elements: 35 biases and norm weights, where the
per-tensor overheads are all there is to the step). The gradients are fixed
random tensors set once; nothing else runs in the timed call.

Rows, per model and optimizer (AdamW, Momentum):
- per-tensor: oar with its merged (multi-tensor) update switched off
  (Note [multi-tensor optimizer step]: one fused op per parameter, as before
  the merged ops); torch with foreach=False (a loop of per-tensor ops).
- multi-tensor: oar's default (one merged op per group of parameters that
  share dtype and hyperparameters); torch with foreach=True.
- fused: oar's default again (its merged op is its fused form); torch with
  fused=True (AdamW only: torch has no fused SGD-momentum on the CPU).
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import paddle_models  # noqa: E402
import torch_models  # noqa: E402
from training import GPT  # noqa: E402

MODES = ("per-tensor", "multi-tensor", "fused")
SMALL = 1024  # elements: the biases and norm weights of the GPT


def _oar_cases(fw):
    from oar.optimizer import optimizer as opt_mod

    gpt = lambda: paddle_models.gpt(fw, GPT).parameters()
    models = {"gpt": gpt, "gpt small tensors": lambda: [p for p in gpt() if p.size <= SMALL],
              "resnet18": lambda: fw.vision.models.resnet18(num_classes=10).parameters()}
    for model_name, build in models.items():
        fw.seed(0)
        params = [p for p in build() if not p.stop_gradient]
        rng = np.random.default_rng(0)
        for p in params:
            p.grad = fw.to_tensor(rng.standard_normal(p.shape).astype(np.float32))
        for opt_name in ("adamw", "momentum"):
            for mode in MODES:
                if mode == "fused" and opt_name == "momentum":
                    continue
                if opt_name == "adamw":
                    opt = fw.optimizer.AdamW(learning_rate=1e-4, parameters=params, weight_decay=0.01)
                else:
                    opt = fw.optimizer.Momentum(learning_rate=1e-4, momentum=0.9, parameters=params)

                def step(opt=opt, multi=mode != "per-tensor"):
                    prev, opt_mod._MULTI_TENSOR = getattr(opt_mod, "_MULTI_TENSOR", True), multi
                    try:
                        opt.step()
                    finally:
                        opt_mod._MULTI_TENSOR = prev
                yield f"{model_name} {opt_name} {mode} ({len(params)} tensors)", step, 1, "ms"


def _torch_cases(torch):
    twins = torch_models.build(torch)
    gpt = lambda: list(twins.Gpt(GPT).parameters())
    models = {"gpt": gpt, "gpt small tensors": lambda: [p for p in gpt() if p.numel() <= SMALL],
              "resnet18": lambda: list(twins.ResNet18(num_classes=10).parameters())}
    for model_name, build in models.items():
        torch.manual_seed(0)
        params = [p for p in build() if p.requires_grad]
        rng = np.random.default_rng(0)
        for p in params:
            p.grad = torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        for opt_name in ("adamw", "momentum"):
            for mode in MODES:
                flags = {"per-tensor": dict(foreach=False), "multi-tensor": dict(foreach=True),
                         "fused": dict(fused=True)}[mode]
                if opt_name == "adamw":
                    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, **flags)
                elif mode == "fused":
                    continue
                else:
                    opt = torch.optim.SGD(params, lr=1e-4, momentum=0.9, **flags)
                yield f"{model_name} {opt_name} {mode} ({len(params)} tensors)", opt.step, 1, "ms"


def cases(fw, name, quick):
    yield from (_oar_cases(fw) if name == "oar" else _torch_cases(fw))


def main():
    args = common.parse_args(__doc__.splitlines()[0], default_threads="1,2", frameworks=("oar", "torch"))
    info = common.machine_info()
    runs = common.run_all(__file__, args, interleave=True)
    common.print_header(info, runs)
    common.table(runs, ratio_peers=["torch"], peers=("torch",))
    common.save_json(args.json, "optimizer_step", info, runs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        common.worker_main(cases, stat=min)  # interference only ever adds time
    else:
        main()

"""GPU benchmarks: oar against torch on the same GPU in the same run.

    python benchmarks/gpu.py                      # every case, both frameworks, a table of ratios
    python benchmarks/gpu.py --only matmul        # cases whose name contains "matmul"

Each framework runs in its own process (oar with this interpreter, torch with --torch-python,
default `python3`), one case at a time, alternating; each case reports the best of several timed
runs after warm-up, every run ending in a device synchronisation. Every figure is a time per unit
of work, and ratios are oar time / torch time (below 1: oar is faster).

Cases:
- matmul bf16 N: an N x N x N bfloat16 product (TFLOP/s printed);
- launch add: the time per eager `a + b` on 1-element tensors, synchronised at the end (the
  framework's per-op launch overhead);
- resnet50 train: one training step (forward, backward, SGD with momentum) of ResNet50 on 64
  images of 224x224 under bfloat16 autocast (images/s printed);
- gpt2 train: one AdamW step of GPT-2 small (124M parameters, 12 layers, width 768) on 8
  sequences of 1024 tokens under bfloat16 autocast (tokens/s and MFU against the GPU's dense
  bfloat16 peak printed).
"""
import argparse
import json
import os
import subprocess
import sys
import time

MATMUL_SIZES = (4096, 8192)


def _cases():
    cases = [f"matmul bf16 {n}" for n in MATMUL_SIZES]
    cases += ["launch add", "resnet50 train", "gpt2 train"]
    return cases


PEAK_BF16 = 989e12  # H100 SXM dense bfloat16 FLOP/s (the MFU denominator)
GPT2 = dict(layers=12, width=768, heads=12, vocab=50257, seq=1024, batch=8)


def _gpt2_flops_per_token(n_params):
    g = GPT2
    return 6 * n_params + 12 * g["layers"] * g["width"] * g["seq"]


# ---------------------------------------------------------------- workers

def _best(fn, sync, reps, runs=5, warm=3):
    for _ in range(warm):
        fn()
    sync()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def _run_case(fw, case):
    if fw == "torch":
        import torch
        dev = "cuda"
        sync = torch.cuda.synchronize

        def randn(shape, dtype):
            return torch.randn(*shape, device=dev).to(getattr(torch, dtype))
        mm = torch.matmul
    else:
        import numpy as np

        import oar
        sync = oar.device.cuda.synchronize

        def randn(shape, dtype):
            return oar.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32")).cuda().astype(dtype)
        mm = oar.matmul
    if case.startswith("matmul"):
        n = int(case.split()[-1])
        a, b = randn((n, n), "bfloat16"), randn((n, n), "bfloat16")
        reps = 20 if n <= 4096 else 5
        t = _best(lambda: mm(a, b), sync, reps)
        return {"s": t, "extra": f"{2 * n ** 3 / t / 1e12:.0f} TFLOP/s"}
    if case == "launch add":
        a, b = randn((1,), "float32"), randn((1,), "float32")
        t = _best(lambda: a + b, sync, 2000)
        return {"s": t, "extra": ""}
    if case == "resnet50 train":
        step = _torch_resnet_step() if fw == "torch" else _oar_resnet_step()
        t = _best(step, sync, 5, runs=3, warm=3)
        return {"s": t, "extra": f"{64 / t:.0f} images/s"}
    if case == "gpt2 train":
        step, n_params = _torch_gpt_step() if fw == "torch" else _oar_gpt_step()
        t = _best(step, sync, 3, runs=3, warm=2)
        tokens = GPT2["batch"] * GPT2["seq"]
        mfu = tokens / t * _gpt2_flops_per_token(n_params) / PEAK_BF16
        return {"s": t, "extra": f"{tokens / t:.0f} tokens/s, MFU {100 * mfu:.0f}%"}
    raise ValueError(case)


def _torch_resnet_step():
    import torch
    import torchvision
    model = torchvision.models.resnet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (64,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def _oar_resnet_step():
    import numpy as np

    import oar
    from oar.vision.models import resnet50
    oar.set_device("gpu:0")
    model = resnet50()
    opt = oar.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = oar.to_tensor(rng.standard_normal((64, 3, 224, 224)).astype("float32"))
    y = oar.to_tensor(rng.integers(0, 1000, (64,)).astype("int64"))

    def step():
        with oar.amp.auto_cast(dtype="bfloat16"):
            loss = oar.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return step


def _torch_gpt_step():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    g = GPT2
    cfg = GPT2Config(n_layer=g["layers"], n_embd=g["width"], n_head=g["heads"], vocab_size=g["vocab"],
                     n_positions=g["seq"], resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, g["vocab"], (g["batch"], g["seq"]), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step, sum(p.numel() for p in model.parameters())


def _oar_gpt_step():
    import numpy as np

    import oar
    from oar.models import GPTConfig, GPTForCausalLM
    g = GPT2
    oar.set_device("gpu:0")
    cfg = GPTConfig(num_hidden_layers=g["layers"], hidden_size=g["width"], num_attention_heads=g["heads"],
                    vocab_size=g["vocab"], max_position_embeddings=g["seq"], hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0)
    model = GPTForCausalLM(cfg)
    opt = oar.optimizer.AdamW(learning_rate=1e-4, parameters=model.parameters())
    ids = oar.to_tensor(np.random.default_rng(0).integers(0, g["vocab"], (g["batch"], g["seq"])).astype("int64"))

    def step():
        with oar.amp.auto_cast(dtype="bfloat16"):
            loss = model(ids, labels=ids)[0]
        loss.backward()
        opt.step()
        opt.clear_grad()
    return step, sum(p.size for p in model.parameters())


def worker(fw, cases):
    for case in cases:
        try:
            r = _run_case(fw, case)
        except Exception as e:  # noqa: BLE001 - reported in the table
            r = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
        print(json.dumps({"case": case, **r}), flush=True)


# ---------------------------------------------------------------- driver

def _spawn(python, fw, cases, env=None):
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", fw, "--cases", json.dumps(cases)],
                         capture_output=True, text=True, env=env)
    rows = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            rows[r["case"]] = r
    if out.returncode != 0 and not rows:
        print(out.stderr[-2000:], file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--cases")
    ap.add_argument("--only", default="")
    ap.add_argument("--torch-python", default="python3")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, json.loads(args.cases))
        return
    cases = [c for c in _cases() if args.only in c]
    # torch runs in its own interpreter: oar's environment may not hold it.
    tenv = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    print("| case | oar | torch | oar/torch | oar | torch |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        o = _spawn(sys.executable, "oar", [case]).get(case, {"error": "no result"})
        t = _spawn(args.torch_python, "torch", [case], env=tenv).get(case, {"error": "no result"})

        def fmt(r):
            return f"{r['s'] * 1e6:.1f} us" if "s" in r else r["error"]
        ratio = f"{o['s'] / t['s']:.2f}x" if "s" in o and "s" in t else "-"
        print(f"| {case} | {fmt(o)} | {fmt(t)} | {ratio} | {o.get('extra', '')} | {t.get('extra', '')} |", flush=True)


if __name__ == "__main__":
    main()

"""bfloat16 autocast against float32 on the small GPT (4 layers, width 256,
4 heads, sequence 128, batch 16): 200 Adam steps on a noisy Markov chain whose
entropy floor is log(4) nats per token. Reports the final losses (mean of the
last 10 steps) and their relative difference; exits non-zero above 2%.

    .venv/bin/python benchmarks/amp_convergence.py [--steps 200] [--tiny]
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import oar  # noqa: E402
from oar.models import GPTConfig, GPTForCausalLM  # noqa: E402


def markov_batches(steps, batch, seq, vocab, seed=0):
    """next = (7 * prev + 3 + u) mod vocab with u uniform in {0, 1, 2, 3}."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = np.empty((batch, seq), np.int64)
        x[:, 0] = rng.integers(0, vocab, batch)
        for t in range(1, seq):
            x[:, t] = (7 * x[:, t - 1] + 3 + rng.integers(0, 4, batch)) % vocab
        yield oar.to_tensor(x)


def train(cfg, steps, batch, seq, dtype):
    oar.seed(0)
    model = GPTForCausalLM(GPTConfig(**cfg))
    opt = oar.optimizer.AdamW(learning_rate=3e-3, parameters=model.parameters(), weight_decay=0.0)
    losses = []
    for ids in markov_batches(steps, batch, seq, cfg["vocab_size"]):
        with oar.amp.auto_cast(enable=dtype == "bfloat16", dtype="bfloat16"):
            loss, _ = model(ids, labels=ids)
        loss = loss.astype("float32")
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses


def run(tiny=False, steps=200):
    if tiny:
        cfg = dict(vocab_size=64, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                   max_position_embeddings=32)
        batch, seq = 8, 32
    else:
        cfg = dict(vocab_size=1024, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                   max_position_embeddings=128)
        batch, seq = 16, 128
    final = {}
    for dtype in ("float32", "bfloat16"):
        t0 = time.time()
        losses = train(cfg, steps, batch, seq, dtype)
        final[dtype] = float(np.mean(losses[-10:]))
        print(f"{dtype}: first loss {losses[0]:.4f}, final (mean of last 10) {final[dtype]:.4f} "
              f"in {time.time() - t0:.1f} s")
    rel = abs(final["bfloat16"] - final["float32"]) / final["float32"]
    print(f"entropy floor {math.log(4):.4f}; bfloat16 vs float32: {100 * rel:.2f}% (goal <= 2%)")
    return final, rel


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    _, rel = run(a.tiny, a.steps)
    sys.exit(0 if rel <= 0.02 else 1)

"""Seed corpus for the model-loader fuzzer (``make fuzz``, tests/fuzz).

Saves a few small models with oar.jit.save (an MLP, LeNet, a layer with
cond and while_loop regions, a small GPT) and writes each model's files as
seeds in the fuzzer's input layout (tests/fuzz/fuzz_model_loader.cpp): the
selector byte, then

- 0: the program JSON
- 1: the safetensors file
- 2, 5, 8, 11: a 4-byte little-endian program length, the program JSON, the
  safetensors file (full runtime load without/with graph passes and bf16)

Usage: python tools/fuzz_corpus.py OUT_DIR
"""
import os
import struct
import sys
import tempfile

import oar
from oar import nn
from oar.models import GPTConfig, GPTForCausalLM
from oar.static import InputSpec
from oar.static import nn as snn
from oar.vision.models import LeNet


MAX_SEED = 64 << 10  # the fuzzer's -max_len (Makefile FUZZ_MAX_LEN)


class _MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return oar.nn.functional.softmax(self.fc2(oar.nn.functional.relu(self.fc1(x))), axis=-1)


class _ControlFlow(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = snn.cond(x.sum() > 0, lambda: self.fc(x) * 2.0, lambda: x - 1.0)
        return snn.while_loop(lambda v: v.abs().sum() < 100.0, lambda v: v * 3.0 + 1.0, [y])[0]


def _models():
    oar.seed(0)
    yield "mlp", _MLP(), [InputSpec([None, 4], "float32", "x")]
    yield "lenet", LeNet(), [InputSpec([None, 1, 28, 28], "float32", "x")]
    yield "control_flow", _ControlFlow(), [InputSpec([2, 3], "float32", "x")]
    gpt = GPTForCausalLM(GPTConfig(vocab_size=17, max_position_embeddings=8, hidden_size=8, num_hidden_layers=1,
                                   num_attention_heads=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    yield "gpt", gpt, [InputSpec([None, 4], "int64", "input_ids")]


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, net, spec in _models():
            net.eval()
            prefix = os.path.join(tmp, name)
            oar.jit.save(net, prefix, input_spec=spec)
            with open(prefix + ".json", "rb") as f:
                program = f.read()
            with open(prefix + ".safetensors", "rb") as f:
                weights = f.read()
            seeds = {"program": b"\x00" + program, "weights": b"\x01" + weights}
            for sel, what in ((2, "load"), (5, "load-passes"), (8, "load-bf16"), (11, "load-passes-bf16")):
                seeds[what] = bytes([sel]) + struct.pack("<I", len(program)) + program + weights
            for what, data in seeds.items():
                if len(data) > MAX_SEED:
                    continue  # LeNet's weights: mutating a quarter megabyte per run would slow the fuzzer down
                with open(os.path.join(out_dir, f"{name}-{what}"), "wb") as f:
                    f.write(data)
    print(f"wrote seeds to {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

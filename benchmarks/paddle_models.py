"""The benchmarks' small GPT written with the Paddle API, so that oar and
paddle run the same model code (its torch.nn twin is in torch_models.py)."""
import math

import numpy as np


def gpt(fw, c):
    """A GPT of `c` (vocab, width, layers, heads, seq) built with framework `fw` (oar or paddle)."""
    nn, F = fw.nn, fw.nn.functional

    class Block(nn.Layer):
        def __init__(self, w, h):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(w), nn.LayerNorm(w)
            self.qkv, self.proj = nn.Linear(w, 3 * w), nn.Linear(w, w)
            self.fc1, self.fc2 = nn.Linear(w, 4 * w), nn.Linear(4 * w, w)
            self.h = h

        def forward(self, x, mask):
            b, s, w = x.shape
            q, k, v = fw.split(self.qkv(self.ln1(x)), 3, axis=-1)
            q, k, v = [t.reshape([b, s, self.h, w // self.h]).transpose([0, 2, 1, 3]) for t in (q, k, v)]
            att = F.softmax(fw.matmul(q, k, transpose_y=True) * (1.0 / math.sqrt(w // self.h)) + mask, axis=-1)
            y = fw.matmul(att, v).transpose([0, 2, 1, 3]).reshape([b, s, w])
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Gpt(nn.Layer):
        def __init__(self, c):
            super().__init__()
            self.tok, self.pos = nn.Embedding(c["vocab"], c["width"]), nn.Embedding(c["seq"], c["width"])
            self.blocks = nn.LayerList([Block(c["width"], c["heads"]) for _ in range(c["layers"])])
            self.ln = nn.LayerNorm(c["width"])
            self.head = nn.Linear(c["width"], c["vocab"])
            self.mask = fw.to_tensor(np.triu(np.full((c["seq"], c["seq"]), -1e9, np.float32), 1))
            self.pos_ids = fw.arange(c["seq"])

        def forward(self, ids):
            x = self.tok(ids) + self.pos(self.pos_ids)
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    return Gpt(c)

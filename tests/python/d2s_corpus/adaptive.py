"""Networks whose computation depends on the data: early exits on confidence,
mixture-of-experts routing on an argmax, adaptive computation time, dynamic
depth and cascades.
"""
import oar
import oar.nn as nn
import oar.nn.functional as F

from .registry import add, arr, randn, seeded

A = ("adaptive",)
D = 8


class EarlyExitNet(nn.Layer):
    """Returns the first exit whose batch-mean confidence passes the threshold."""

    def __init__(self, threshold=0.6):
        super().__init__()
        self.blocks = nn.LayerList([nn.Sequential(nn.Linear(D, D), nn.Tanh()) for _ in range(3)])
        self.exits = nn.LayerList([nn.Linear(D, 4) for _ in range(3)])
        self.threshold = threshold

    def forward(self, x):
        for block, head in zip(self.blocks, self.exits):
            x = block(x)
            logits = head(x)
            if F.softmax(logits, axis=-1).max(axis=-1).mean() > self.threshold:
                return logits
        return logits


add("early_exit_confidence", seeded(EarlyExitNet), [randn(2, D, scale=0.1), randn(2, D, scale=20.0),
                                                    randn(1, D, scale=3.0)], A)


class EarlyExitWithDepth(nn.Layer):
    """Early exit that also returns how many blocks ran (a tensor counter)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(D, D) for _ in range(4)])
        self.head = nn.Linear(D, 2)

    def forward(self, x):
        depth = oar.zeros([], "int64")
        for blk in self.blocks:
            x = F.relu(blk(x)) + x
            depth = depth + 1
            if x.abs().mean() > 2.0:
                break
        return self.head(x), depth


add("early_exit_depth_counter", seeded(EarlyExitWithDepth), [randn(1, D, scale=0.1), randn(1, D, scale=3.0)], A)


class Top1MoE(nn.Layer):
    """One expert for the whole batch, chosen by the argmax of the mean gate."""

    def __init__(self, n=3):
        super().__init__()
        self.gate = nn.Linear(D, n)
        self.experts = nn.LayerList([nn.Linear(D, D) for _ in range(n)])

    def forward(self, x):
        choice = self.gate(x).mean(axis=0).argmax()
        if choice == 0:
            return self.experts[0](x)
        elif choice == 1:
            return F.relu(self.experts[1](x))
        return oar.tanh(self.experts[2](x))


_moe = seeded(Top1MoE)
add("moe_top1_batch_branch", _moe, [randn(2, D), randn(3, D, scale=4.0), -randn(2, D, scale=4.0)], A)


class TokenMoE(nn.Layer):
    """Per-token top-1 routing: a loop over experts that skips experts with no token."""

    def __init__(self, n=4):
        super().__init__()
        self.gate = nn.Linear(D, n)
        self.experts = nn.LayerList([nn.Linear(D, D) for _ in range(n)])

    def forward(self, x):
        probs = F.softmax(self.gate(x), axis=-1)
        idx = probs.argmax(axis=-1)
        out = oar.zeros_like(x)
        for e, expert in enumerate(self.experts):
            mask = idx == e
            if not mask.any():
                continue
            w = (probs[:, e] * mask.astype("float32")).unsqueeze(-1)
            out = out + w * expert(x)
        return out


add("moe_token_routing_skip_empty", seeded(TokenMoE), [randn(6, D), randn(1, D), randn(3, D, scale=5.0)], A)


class GatherMoE(nn.Layer):
    """Per-token routing that gathers each expert's tokens (data-dependent sizes) and scatters back."""

    def __init__(self, n=3):
        super().__init__()
        self.gate = nn.Linear(D, n)
        self.experts = nn.LayerList([nn.Linear(D, D) for _ in range(n)])

    def forward(self, x):
        idx = self.gate(x).argmax(axis=-1)
        out = oar.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = oar.nonzero(idx == e).flatten()
            if rows.shape[0] == 0:
                continue
            out = oar.scatter(out, rows, expert(oar.gather(x, rows)))
        return out


add("moe_gather_scatter", seeded(GatherMoE), [randn(5, D), randn(2, D), randn(7, D, scale=3.0)], A)


class ACT(nn.Layer):
    """Adaptive computation time: ponder until the halting probability reaches 1 - eps."""

    def __init__(self, max_steps=6, eps=0.01):
        super().__init__()
        self.step = nn.Linear(D, D)
        self.halt = nn.Linear(D, 1)
        self.max_steps, self.eps = max_steps, eps

    def forward(self, x):
        halt_sum = oar.zeros([])
        out = oar.zeros_like(x)
        n = 0
        while halt_sum < 1.0 - self.eps and n < self.max_steps:
            x = oar.tanh(self.step(x))
            p = F.sigmoid(self.halt(x)).mean()
            p = oar.minimum(p, 1.0 - halt_sum)
            out = out + p * x
            halt_sum = halt_sum + p
            n += 1
        return out, halt_sum


_act = seeded(ACT)
add("adaptive_computation_time", _act, [randn(1, D), randn(1, D, scale=10.0), randn(2, D, scale=0.01)], A)


class DynamicDepth(nn.Layer):
    """Runs as many shared-weight layers as a tensor argument says."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(D, D)

    def forward(self, x, depth):
        for _ in range(depth):
            x = F.gelu(self.layer(x))
        return x


add("dynamic_depth_tensor", seeded(DynamicDepth),
    [(randn(2, D), arr(1, "int64")), (randn(2, D), arr(4, "int64")), (randn(2, D), arr(0, "int64"))], A)


class Cascade(nn.Layer):
    """A cheap model answers when it is sure; otherwise a bigger one runs."""

    def __init__(self):
        super().__init__()
        self.small = nn.Linear(D, 3)
        self.big = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, x):
        p = F.softmax(self.small(x), axis=-1)
        if p.max(axis=-1).min() > 0.9:
            return p
        return F.softmax(self.big(x), axis=-1)


add("confidence_cascade", seeded(Cascade), [randn(2, D, scale=30.0), randn(2, D, scale=0.1)], A)


class SkipSmallResidual(nn.Layer):
    """Skips a residual block when its input norm is small."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(D, D) for _ in range(3)])

    def forward(self, x):
        for blk in self.blocks:
            if oar.norm(x) < 1.0:
                continue
            x = x + 0.5 * oar.tanh(blk(x))
        return x


add("skip_block_small_norm", seeded(SkipSmallResidual), [randn(1, D, scale=0.05), randn(1, D, scale=2.0)], A)


class IterativeRefinement(nn.Layer):
    """Refines its estimate until the update is small (at most 20 steps)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)

    def forward(self, x):
        y = oar.zeros_like(x)
        for _ in range(20):
            new = 0.5 * y + 0.5 * oar.tanh(self.fc(y) + x)
            delta = (new - y).abs().max()
            y = new
            if delta < 1e-3:
                break
        return y


add("iterative_refinement", seeded(IterativeRefinement), [randn(1, D), randn(2, D, scale=0.01)], A)


class CapacityMoE(nn.Layer):
    """Top-1 routing with a capacity: tokens beyond an expert's capacity pass through unchanged."""

    def __init__(self, n=2, capacity=2):
        super().__init__()
        self.gate = nn.Linear(D, n)
        self.experts = nn.LayerList([nn.Linear(D, D) for _ in range(n)])
        self.capacity = capacity

    def forward(self, x):
        idx = self.gate(x).argmax(axis=-1)
        out = x
        for e, expert in enumerate(self.experts):
            mask = (idx == e).astype("int64")
            position = oar.cumsum(mask, axis=0) * mask
            routed = (position > 0) & (position <= self.capacity)
            out = oar.where(routed.unsqueeze(-1), expert(x), out)
        return out


add("moe_capacity_cumsum", seeded(CapacityMoE), [randn(5, D), randn(3, D)], A)


class GatedBranches(nn.Layer):
    """A per-sample gate decides between two branches with a Python loop over the batch."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D, 1)
        self.a = nn.Linear(D, D)
        self.b = nn.Linear(D, D)

    def forward(self, x):
        rows = []
        for i in range(x.shape[0]):
            xi = x[i:i + 1]
            if self.gate(xi).sum() > 0:
                rows.append(self.a(xi))
            else:
                rows.append(self.b(xi))
        return oar.concat(rows, axis=0)


add("per_sample_gated_branches", seeded(GatedBranches), [randn(3, D), randn(2, D, scale=5.0)], A)

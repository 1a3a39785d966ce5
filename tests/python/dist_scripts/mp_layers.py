"""Manual tensor parallelism on the ranks of this job against one process:
VocabParallelEmbedding -> ColumnParallelLinear (no gather) -> ReLU ->
RowParallelLinear (input is parallel) -> ColumnParallelLinear to the
vocabulary (no gather) -> ParallelCrossEntropy. Loss, input gradients and
every weight gradient equal a plain model on the same weights; a few SGD
steps keep them equal."""
import numpy as np

import oar
import oar.distributed as dist
import oar.nn.functional as F
from oar.distributed.fleet import meta_parallel as mp

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
V, H, FF, B, T = 8 * n, 8, 4 * n, 3, 5
rng = np.random.default_rng(7)
full = {
    "emb": rng.standard_normal((V, H)).astype("float32"),
    "w1": rng.standard_normal((H, FF)).astype("float32") * 0.3,
    "b1": rng.standard_normal((FF,)).astype("float32") * 0.1,
    "w2": rng.standard_normal((FF, H)).astype("float32") * 0.3,
    "b2": rng.standard_normal((H,)).astype("float32") * 0.1,
    "wo": rng.standard_normal((H, V)).astype("float32") * 0.3,
}
ids = rng.integers(0, V, (B, T)).astype("int64")
labels = rng.integers(0, V, (B, T)).astype("int64")
labels[0, 0] = -100  # ignored


class TP(oar.nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = mp.VocabParallelEmbedding(V, H)
        self.up = mp.ColumnParallelLinear(H, FF, gather_output=False)
        self.down = mp.RowParallelLinear(FF, H, input_is_parallel=True)
        self.out = mp.ColumnParallelLinear(H, V, gather_output=False, has_bias=False)
        self.ce = mp.ParallelCrossEntropy()

    def forward(self, x, y):
        h = self.emb(x)
        h = self.down(F.relu(self.up(h))) + h
        # cross_entropy's 'mean' with ignore_index < 0 divides by every label, ignored ones included (as Paddle)
        return self.ce(self.out(h), y).sum() / float(labels.size)


def load(p, value):
    with oar.no_grad():
        p._local_value().copy_(dist.shard_tensor(oar.to_tensor(value), p.process_mesh, p.placements)
                               ._local_value(), False)


model = TP()
for p, k in [(model.emb.weight, "emb"), (model.up.weight, "w1"), (model.up.bias, "b1"), (model.down.weight, "w2"),
             (model.down.bias, "b2"), (model.out.weight, "wo")]:
    load(p, full[k])
    assert p.is_dist() and list(p.shape) == list(full[k].shape)

ref = {k: oar.to_tensor(v, stop_gradient=False) for k, v in full.items()}


def ref_loss():
    h = F.embedding(oar.to_tensor(ids), ref["emb"])
    h = oar.matmul(F.relu(oar.matmul(h, ref["w1"]) + ref["b1"]), ref["w2"]) + ref["b2"] + h
    logits = oar.matmul(h, ref["wo"])
    return F.cross_entropy(logits, oar.to_tensor(labels), ignore_index=-100, reduction="mean")


opt = oar.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
checks = 0
for step in range(4):
    loss = model(oar.to_tensor(ids), oar.to_tensor(labels))
    want = ref_loss()
    np.testing.assert_allclose(float(loss), float(want), rtol=1e-5, err_msg=f"rank {rank} step {step} loss")
    loss.backward()
    want.backward()
    for p, k in [(model.emb.weight, "emb"), (model.up.weight, "w1"), (model.up.bias, "b1"),
                 (model.down.weight, "w2"), (model.down.bias, "b2"), (model.out.weight, "wo")]:
        g = dist.unshard_dtensor(p.grad).numpy()
        np.testing.assert_allclose(g, ref[k].grad.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"rank {rank} step {step} grad {k}")
        checks += 1
    opt.step()
    opt.clear_grad()
    with oar.no_grad():
        for k, t in ref.items():
            t.copy_(t - 0.5 * t.grad, False)
            t.clear_grad()
    checks += 1
print(f"rank {rank}: {checks} mp-layer checks passed; loss {float(want):.4f}", flush=True)

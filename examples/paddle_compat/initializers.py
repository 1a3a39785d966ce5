"""paddle.nn.initializer: deterministic initializers exactly, random ones by their statistics."""
import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.initializer as I

from _common import show

arr = np.arange(6, dtype="float32").reshape(2, 3) / 10
lin = nn.Linear(2, 3, weight_attr=paddle.ParamAttr(initializer=I.Assign(arr)),
                bias_attr=paddle.ParamAttr(initializer=I.Constant(0.25)))
show("assign_weight", lin.weight, rtol=1e-6)
show("constant_bias", lin.bias)
conv = nn.Conv2D(3, 3, 3, weight_attr=I.Dirac(), bias_attr=False)
show("dirac_center", conv.weight[:, :, 1, 1], rtol=1e-6)
show("dirac_sum", conv.weight.sum())
show("gains", [I.calculate_gain("tanh"), I.calculate_gain("relu"), I.calculate_gain("leaky_relu", 0.1),
               I.calculate_gain("selu"), I.calculate_gain("conv2d")], rtol=1e-6)

paddle.seed(7)
checks = {
    "xavier_uniform": (I.XavierUniform(), [256, 128]),
    "xavier_normal": (I.XavierNormal(), [256, 128]),
    "kaiming_uniform": (I.KaimingUniform(), [256, 128]),
    "kaiming_normal": (I.KaimingNormal(), [256, 128]),
    "normal": (I.Normal(mean=1.0, std=2.0), [200, 100]),
    "truncated_normal": (I.TruncatedNormal(mean=0.0, std=1.0, a=-2.0, b=2.0), [200, 100]),
    "uniform": (I.Uniform(low=-0.5, high=1.5), [200, 100]),
}
for name, (init, shape) in checks.items():
    v = paddle.create_parameter(shape, "float32", default_initializer=init).numpy()
    # Random draws differ between frameworks: compare statistics, with room for sampling noise.
    show(f"{name}_std", v.std(), rtol=3e-2)
    show(f"{name}_mean", v.mean(), rtol=0.0, atol=round(float(0.05 * v.std() + 1e-3), 4))
xavier_bound = np.sqrt(6.0 / (256 + 128))
v = paddle.create_parameter([256, 128], "float32", default_initializer=I.XavierUniform()).numpy()
show("xavier_uniform_within_bound", bool(np.abs(v).max() <= xavier_bound + 1e-6))
truncated = I.TruncatedNormal(std=1.0, a=-2.0, b=2.0)
v = paddle.create_parameter([200, 100], "float32", default_initializer=truncated).numpy()
show("truncated_normal_within_bounds", bool(v.min() >= -2.0 and v.max() <= 2.0))
q = paddle.create_parameter([6, 4], "float32", default_initializer=I.Orthogonal(gain=2.0))
show("orthogonal_gram", paddle.matmul(q, q, transpose_x=True), rtol=1e-4, atol=1e-5)
emb = nn.Embedding(5, 3, weight_attr=paddle.ParamAttr(initializer=I.Constant(0.5)), padding_idx=0)
show("embedding_padding_row", emb.weight[0])
paddle.nn.initializer.set_global_initializer(I.Constant(0.125), I.Constant(-1.0))
g = nn.Linear(2, 2)
show("global_initializer", [float(g.weight[0, 0]), float(g.bias[0])])
paddle.nn.initializer.set_global_initializer(None)

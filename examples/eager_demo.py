"""A short eager session: build tensors, differentiate, print the results."""
import math

import numpy as np

import oar

x = oar.to_tensor([[0.5, -1.0], [2.0, 0.25]], stop_gradient=False)
w = oar.to_tensor(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32), stop_gradient=False)
print("x =", x)

# Forward: a small two-layer computation, then backward.
y = oar.tanh(x @ w).sum()
y.backward()
print("y =", float(y))
print("dy/dx =", x.grad.numpy().round(4).tolist())
print("dy/dw =", w.grad.numpy().round(4).tolist())

# Derivatives of any order: d^3/dt^3 tanh(t) = -2 (1 - tanh^2)(1 - 3 tanh^2).
t = oar.to_tensor(0.3, dtype="float64", stop_gradient=False)
(d1,) = oar.grad(oar.tanh(t), t, create_graph=True)
(d2,) = oar.grad(d1, t, create_graph=True)
(d3,) = oar.grad(d2, t)
th = math.tanh(0.3)
print(f"third derivative of tanh at 0.3: {float(d3):.10f} (closed form {-2 * (1 - th**2) * (1 - 3 * th**2):.10f})")

# Complex numbers, broadcasting and views.
z = oar.complex(oar.to_tensor([1.0, 2.0]), oar.to_tensor([0.5, -1.0]))
print("|z| =", oar.abs(z).numpy().tolist())
m = oar.arange(12, dtype="float32").reshape([3, 4])
print("m[:, 1::2].T =", m[:, 1::2].T.numpy().tolist())
print("memory allocated (bytes):", oar.device.memory_allocated())

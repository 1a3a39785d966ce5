"""Small networks shared by the graph-capture tests."""
from oar import nn


class MLP(nn.Layer):
    """4 -> 8 -> ReLU -> 3."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))

"""Train a 2-layer MLP on scikit-learn's handwritten digits, bit-reproducibly.

Run it twice, with different thread counts, and compare the digests:

    python examples/train_mlp.py --threads 1
    python examples/train_mlp.py --threads 2
"""
from __future__ import annotations

import torch
from digits import run
from torch import nn


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)


if __name__ == "__main__":
    run(__doc__, make_model, make_optimizer, default_epochs=20)

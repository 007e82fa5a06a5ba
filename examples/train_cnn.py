"""Train a small CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout, AdaptiveAvgPool2d, Linear;
SGD with momentum, cosine learning rate) on scikit-learn's handwritten digits, bit-reproducibly.

    python examples/train_cnn.py --threads 1
    python examples/train_cnn.py --threads 2
"""
from __future__ import annotations

import torch
from digits import cosine_schedule, run
from torch import nn


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),                                            # 8x8 -> 4x4
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Dropout(0.1),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        return self.classifier(self.features(x.view(-1, 1, 8, 8)).flatten(1))


MODEL = DigitsCNN  # what benchmarks/run.py times


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)


if __name__ == "__main__":
    run(__doc__, DigitsCNN, make_optimizer, default_epochs=8, scheduler_factory=cosine_schedule)

"""Train an LSTM that reads the 8x8 digit images row by row (8 steps of 8 pixels) on
scikit-learn's handwritten digits, bit-reproducibly; Adam with a cosine learning rate.

    python examples/train_lstm.py --threads 1
    python examples/train_lstm.py --threads 2
"""
from __future__ import annotations

import torch
from digits import cosine_schedule, run
from torch import nn


class DigitsLSTM(nn.Module):
    def __init__(self, hidden: int = 64):
        super().__init__()
        self.lstm = nn.LSTM(input_size=8, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        out, _ = self.lstm(x.view(-1, 8, 8))  # (N, rows, pixels)
        return self.head(out[:, -1])


MODEL = DigitsLSTM  # what benchmarks/run.py times


def make_optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.Adam(model.parameters(), lr=1e-2)


if __name__ == "__main__":
    run(__doc__, DigitsLSTM, make_optimizer, default_epochs=10, scheduler_factory=cosine_schedule)

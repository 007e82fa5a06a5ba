"""LSTM training step (8 rows of 8 pixels → LSTM(8, 64) → Linear(64, 10), batch 64): native
torch vs repmode, alternating runs, best of several. Usage: python benchmarks/bench_recurrent.py [threads]"""
from __future__ import annotations

import sys

import torch
from timing import best_time
from torch import nn

import repmode


def main(threads: int = 2):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    lstm, head = nn.LSTM(8, 64, batch_first=True), nn.Linear(64, 10)
    opt = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.01)
    x, y = torch.randn(64, 8, 8), torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        out, _ = lstm(x)
        nn.functional.cross_entropy(head(out[:, -1]), y).backward()
        opt.step()

    def forward():
        with torch.no_grad():
            lstm(x)

    for name, fn in (("train step", step), ("forward (no_grad)", forward)):
        native = rep = float("inf")
        for _ in range(3):
            native = min(native, best_time(fn, 10))
            with repmode.enabled():
                rep = min(rep, best_time(fn, 10))
        print(f"LSTM(8,64) T=8 B=64 {name} @ {threads} threads: native {native * 1e3:.2f} ms, "
              f"repmode {rep * 1e3:.2f} ms, ratio {rep / native:.1f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)

"""Per-op dispatch cost of repmode on tiny tensors, against a bare pass-through mode, for a few
overload shapes that exercise different registration paths (the elementwise hot path, keyword
arguments read through the schema adapter, an out= overload, a reduction over a dim).

    python benchmarks/bench_dispatch.py [--repeats N]

Prints µs per call for each case; the rows in BENCHMARKS.md's dispatch line come from
benchmarks/run.py, this script is the finer probe used when the registry's plumbing changes.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import PassThroughMode  # noqa: E402
from timing import best_time  # noqa: E402

import repmode  # noqa: E402


def cases():
    x, y = torch.randn(4), torch.randn(4)
    m = torch.randn(4, 4)
    out = torch.empty(4)
    return {
        "x + y": lambda: x + y,
        "clamp(x, min=0.1)": lambda: torch.clamp(x, min=0.1),
        "sum(m, dim=1)": lambda: m.sum(dim=1),
        "add(x, y, out=out)": lambda: torch.add(x, y, out=out),
        "mm(m, m)": lambda: m @ m,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name, fn in cases().items():
        bare = rep = float("inf")
        for _ in range(args.repeats):  # interleaved: slow drifts of the machine hit both alike
            with PassThroughMode():
                bare = min(bare, best_time(fn, 3, 5000))
            with repmode.enabled():
                rep = min(rep, best_time(fn, 3, 5000))
        print(f"{name:24s} pass-through {bare * 1e6:6.2f} µs   repmode {rep * 1e6:6.2f} µs   "
              f"+{(rep - bare) * 1e6:5.2f} µs")


if __name__ == "__main__":
    main()

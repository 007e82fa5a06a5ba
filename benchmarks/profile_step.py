"""Per-op breakdown of one training step: for each aten overload, the time native torch spends in
it next to the time repmode spends (its kernel, or its composite's parts, plus its own Python),
so every loss of a model benchmark can be traced to an op.

    python benchmarks/profile_step.py resnet18            # a model of benchmarks/models.py
    python benchmarks/profile_step.py gpt --top 15 --threads 2

A timing dispatch mode sits above repmode's (or alone, for native) and times each call from
entry to return; a composite's parts are timed inside it and are not listed apart (repmode runs
them without re-entering the mode). Times are the best of --repeats steps per overload total.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from models import MODELS, build  # noqa: E402

import repmode  # noqa: E402


class OpTimer(TorchDispatchMode):
    """Accumulates wall time and call counts per overload of the ops that reach it."""

    def __init__(self):
        super().__init__()
        self.time = collections.Counter()
        self.calls = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        t0 = time.perf_counter()
        out = func(*args, **(kwargs or {}))
        self.time[func] += time.perf_counter() - t0
        self.calls[func] += 1
        return out


def profile(step, under_repmode: bool, repeats: int) -> tuple[dict, dict, float]:
    """(best seconds per overload, calls per step, best whole step seconds)."""
    best: dict = {}
    calls: dict = {}
    whole = float("inf")
    step()  # warm up (allocations, lazy inits)
    for _ in range(repeats):
        timer = OpTimer()
        t0 = time.perf_counter()
        if under_repmode:
            with repmode.enabled(), timer:
                step()
        else:
            with timer:
                step()
        whole = min(whole, time.perf_counter() - t0)
        for op, t in timer.time.items():
            best[op] = min(best.get(op, float("inf")), t)
        calls = dict(timer.calls)
    return best, calls, whole


def breakdown(name: str, repeats: int = 3, top: int = 25) -> str:
    _, _, step = build(name)
    native, calls, n_whole = profile(step, False, repeats)
    _, _, step = build(name)
    rep, rep_calls, r_whole = profile(step, True, repeats)
    ops = sorted(set(native) | set(rep), key=lambda op: -(rep.get(op, 0.0) - native.get(op, 0.0)))
    lines = [f"# {MODELS[name][0]}: one AdamW step at {torch.get_num_threads()} threads",
             f"whole step (timing mode on): native {n_whole * 1e3:.2f} ms, repmode {r_whole * 1e3:.2f} ms "
             f"({r_whole / n_whole:.2f}×)", "",
             "| aten overload | calls | native ms | repmode ms | repmode − native ms |", "|---|---:|---:|---:|---:|"]
    for op in ops[:top]:
        n, r = native.get(op, 0.0), rep.get(op, 0.0)
        c = rep_calls.get(op, calls.get(op, 0))
        lines.append(f"| `{op}` | {c} | {n * 1e3:.3f} | {r * 1e3:.3f} | {(r - n) * 1e3:+.3f} |")
    total_n, total_r = sum(native.values()), sum(rep.values())
    lines.append(f"| all ops | {sum(rep_calls.values())} | {total_n * 1e3:.3f} | {total_r * 1e3:.3f} | "
                 f"{(total_r - total_n) * 1e3:+.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top", type=int, default=25, help="list the overloads with the largest losses")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    sys.stdout.write(breakdown(a.model, a.repeats, a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Timing helpers shared by benchmarks/run.py and the per-family scripts (bench_*.py).

Times are the best of several repeats (the machine is shared and noisy; the minimum is the
least disturbed), and native torch and repmode are timed alternately so that both see the
same machine state.
"""
from __future__ import annotations

import time

import repmode


def best_time(fn, repeats: int, inner: int = 1) -> float:
    """Seconds per call: the best of `repeats` timings of `inner` calls."""
    fn()  # warm up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def compare(fn, repeats: int, inner: int = 1, rounds: int = 2):
    """(native seconds, repmode seconds): `rounds` alternations of native and repmode timings."""
    native, rep = float("inf"), float("inf")
    for _ in range(rounds):
        native = min(native, best_time(fn, repeats, inner))
        with repmode.enabled():
            rep = min(rep, best_time(fn, repeats, inner))
    return native, rep

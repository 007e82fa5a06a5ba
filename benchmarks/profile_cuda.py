"""Where the time of repmode's GPU cases goes: each case of bench_cuda.py run a few times in strict
mode under torch.profiler (CUDA activity: every kernel, repmode's own too), printing per case the
host time per call, the GPU time per call and the kernels that take most of it.

    python benchmarks/profile_cuda.py [--only softmax conv cnn transformer] [--top 12] [--host transformer]

A GPU time well below the host time means the case waits on the host (Python dispatch, launches):
the cases named by --host then also get a cProfile of their Python side; otherwise the top kernels
are the ones to tune. Exits 2 without a GPU or repmode._C_cuda.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch
from bench_cuda import STEPS, conv_workloads, softmax_workload, step_workload  # the same cases
from torch.profiler import ProfilerActivity, profile

import repmode
from repmode import _ext


def workloads() -> dict:
    """Name -> a no-argument callable running that case of bench_cuda.py once."""
    cases = {"softmax": softmax_workload(), "conv": conv_workloads()[1]}
    for name, (module, _, kwargs) in STEPS.items():
        cases[name] = step_workload(module, **kwargs)
    return cases


def _gpu_us(event) -> float:
    """An event's own GPU time in microseconds (the attribute's name differs across torch versions)."""
    for attr in ("self_device_time_total", "self_cuda_time_total"):
        if hasattr(event, attr):
            return getattr(event, attr)
    return 0.0


def profile_case(name: str, fn, calls: int, top: int) -> None:
    with repmode.enabled():
        fn()  # warm-up (allocations, first launches)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / calls
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    gpu = sum(_gpu_us(e) for e in events) / calls / 1e3
    print(f"\n## {name}: wall {wall * 1e3:.3f} ms per call, GPU busy {gpu:.3f} ms per call, "
          f"{sum(e.count for e in events) / calls:.0f} kernels per call", flush=True)
    for e in sorted(events, key=lambda e: -_gpu_us(e))[:top]:
        print(f"  {_gpu_us(e) / calls / 1e3:8.3f} ms  x{e.count // calls:<4d} {e.key[:150]}")


def profile_host(name: str, fn, calls: int, top: int) -> None:
    """The Python side of a case: cProfile over `calls` calls in strict mode, the functions with the
    most time of their own (where the host time per launch goes)."""
    import cProfile
    import pstats
    with repmode.enabled():
        fn()
        torch.cuda.synchronize()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        prof.disable()
    print(f"\n## {name}: host functions by own time ({calls} calls)", flush=True)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--host", nargs="*", default=["transformer"],
                        help="cases whose Python side is also profiled with cProfile (default: transformer)")
    args = parser.parse_args()
    if _ext.CUDA is None or not torch.cuda.is_available():
        print("profile_cuda: needs a GPU and repmode._C_cuda (docs/cuda.md)", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for name, fn in workloads().items():
        if args.only and name not in args.only:
            continue
        profile_case(name, fn, args.calls, args.top)
        if name in args.host:
            profile_host(name, fn, args.calls, 3 * args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""DDP over gloo: a training step of the digits CNN and a bare all-reduce, native vs repmode.

Launched by benchmarks/run.py (case ``ddp``) as

    torchrun --standalone --nproc_per_node=2 benchmarks/bench_ddp.py --threads 1

Every rank runs the same interleaved timings (collectives need all ranks); rank 0 prints one
JSON line with the results. Communication volume is measured, not computed: the bytes the
loopback interface carried (/proc/net/dev, all ranks together) during a number of all-reduces
of a 1M-element float32 tensor, native and repmode.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import best_time  # noqa: E402

import repmode  # noqa: E402


def loopback_bytes() -> int | None:
    """Bytes sent on the loopback interface so far (Linux), else None."""
    try:
        with open("/proc/net/dev") as f:
            for line in f:
                name, _, counters = line.partition(":")
                if name.strip() == "lo":
                    return int(counters.split()[8])  # transmit bytes
    except OSError:
        pass
    return None


def timed_interleaved(fn, repeats: int, inner: int, rounds: int = 3) -> tuple[float, float]:
    """(native seconds, repmode seconds) per call, native and repmode alternating."""
    native = rep = float("inf")
    for _ in range(rounds):
        dist.barrier()
        native = min(native, best_time(fn, repeats, inner))
        dist.barrier()
        with repmode.enabled():
            rep = min(rep, best_time(fn, repeats, inner))
    return native, rep


def ddp_step_times(batch: int) -> tuple[float, float]:
    from train_cnn import DigitsCNN, make_optimizer

    torch.manual_seed(0)
    model = DigitsCNN()
    ddp = DistributedDataParallel(model)
    optimizer = make_optimizer(model)
    generator = torch.Generator().manual_seed(dist.get_rank())
    x, y = torch.rand(batch, 64, generator=generator), torch.randint(0, 10, (batch,), generator=generator)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        optimizer.step()

    return timed_interleaved(step, repeats=5, inner=5)


def allreduce_measurements(numel: int, calls: int) -> dict:
    tensor = torch.rand(numel)

    def allreduce():
        dist.all_reduce(tensor)

    native, rep = timed_interleaved(allreduce, repeats=3, inner=3)
    volume = {}
    for label in ("native", "repmode"):
        dist.barrier()
        before = loopback_bytes()
        if label == "native":
            for _ in range(calls):
                allreduce()
        else:
            with repmode.enabled():
                for _ in range(calls):
                    allreduce()
        dist.barrier()
        after = loopback_bytes()
        volume[label] = None if before is None else (after - before) / calls
    return {"allreduce_native_s": native, "allreduce_repmode_s": rep, "bytes_native": volume["native"],
            "bytes_repmode": volume["repmode"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--batch", type=int, default=32, help="per-rank batch")
    parser.add_argument("--numel", type=int, default=1 << 20, help="elements of the bare all-reduce")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    native, rep = ddp_step_times(args.batch)
    result = {"world": dist.get_world_size(), "threads": args.threads, "batch": args.batch,
              "ddp_native_s": native, "ddp_repmode_s": rep, "numel": args.numel,
              **allreduce_measurements(args.numel, calls=10)}
    if dist.get_rank() == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

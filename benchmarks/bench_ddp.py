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


def step_times(wrapped: torch.nn.Module, optimizer, batch: int, inner: int) -> tuple[float, float]:
    """(native, repmode) seconds of one training step of `wrapped` on this rank's random batch."""
    generator = torch.Generator().manual_seed(dist.get_rank())
    x, y = torch.rand(batch, 64, generator=generator), torch.randint(0, 10, (batch,), generator=generator)

    def step():
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(wrapped(x), y).backward()
        optimizer.step()

    return timed_interleaved(step, repeats=5, inner=inner)


def ddp_step_times(batch: int) -> tuple[float, float]:
    from train_cnn import DigitsCNN, make_optimizer

    torch.manual_seed(0)
    model = DigitsCNN()
    return step_times(DistributedDataParallel(model), make_optimizer(model), batch, inner=5)


def fsdp_step_times(batch: int) -> tuple[float, float]:
    """FSDP2 (fully_shard per Linear and at the root) on examples/train_fsdp.py's MLP."""
    from torch.distributed.fsdp import fully_shard
    from train_fsdp import make_model

    torch.manual_seed(0)
    model = make_model()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    return step_times(model, torch.optim.AdamW(model.parameters(), lr=1e-3), batch, inner=3)


def tree_vs_ddp(global_batch: int, micro: int, steps: int) -> dict:
    """Under repmode, on train_mlp.py's model: a DDP step (each rank global_batch / world samples)
    against a repmode.TreeGradients step over the same global batch (micro-batches of `micro`),
    time per step and loopback bytes per step (all ranks together)."""
    from train_mlp import make_model

    world, rank = dist.get_world_size(), dist.get_rank()
    generator = torch.Generator().manual_seed(0)
    x, y = torch.rand(global_batch, 64, generator=generator), torch.randint(0, 10, (global_batch,), generator=generator)
    with repmode.enabled():
        torch.manual_seed(0)
        model = make_model()
        ddp = DistributedDataParallel(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        share = slice(rank * global_batch // world, (rank + 1) * global_batch // world)

        def ddp_step():
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(ddp(x[share]), y[share]).backward()
            optimizer.step()

        tree_model = make_model()
        tree_optimizer = torch.optim.SGD(tree_model.parameters(), lr=0.01)
        tree = repmode.TreeGradients(tree_model.parameters(), global_batch // micro)

        def tree_step():
            for i in tree.local_micro_batches():
                tree.seed(0, i)
                part = slice(i * micro, (i + 1) * micro)
                (torch.nn.functional.cross_entropy(tree_model(x[part]), y[part]) / tree.micro_batches).backward()
                tree.add()
            tree.reduce()
            tree_optimizer.step()
            tree_optimizer.zero_grad()

        result = {}
        for label, fn in (("ddp", ddp_step), ("tree", tree_step)):
            fn()
            dist.barrier()
            result[f"{label}_s"] = best_time(fn, 5, 3)
            dist.barrier()
            before = loopback_bytes()
            for _ in range(steps):
                fn()
            dist.barrier()
            after = loopback_bytes()
            result[f"{label}_bytes"] = None if before is None else (after - before) / steps
    return result


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
    result["fsdp_native_s"], result["fsdp_repmode_s"] = fsdp_step_times(args.batch)
    result.update(tree_vs_ddp(global_batch=64, micro=8, steps=10))
    if dist.get_rank() == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

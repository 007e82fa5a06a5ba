"""Train the digits CNN (train_cnn.py) with DistributedDataParallel over gloo, bit-reproducibly:
every rank prints the same digests, run after run, at any thread count.

    torchrun --nproc_per_node=2 examples/train_ddp.py --threads 1
    torchrun --nproc_per_node=2 examples/train_ddp.py --threads 2
    torchrun --nproc_per_node=N examples/train_ddp.py --world-invariant --batch-size 64   # N = 1, 2, 4, 8

The training loop is the ordinary DDP one. Inside ``repmode.enabled()`` DDP's gradient
all-reduce is repmode's (a sum over ranks in rank order, docs/distributed.md), so the same world
size and per-rank batch give the same bits on any machine and backend. ``--native`` runs the same
script without repmode, for comparison.

``--world-invariant`` trains train_mlp.py's model without DDP: every rank walks the same global
batches and computes its share of their micro-batches, and ``repmode.TreeGradients`` sums the
micro-batch gradients in one fixed tree, so the digests are the same for any world size that
divides the micro-batches (docs/distributed.md).
"""
from __future__ import annotations

import argparse
import contextlib
import sys

import torch
import torch.distributed as dist
from digits import cosine_schedule, load_data
from torch.nn.parallel import DistributedDataParallel
from train_cnn import DigitsCNN, make_optimizer
from train_mlp import make_model as make_mlp
from train_mlp import make_optimizer as make_mlp_optimizer

import repmode


def shard(x: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Every world-th sample from ``rank`` on, all shards the same length (DDP needs the same
    number of steps on every rank)."""
    usable = len(x) // world * world
    return x[rank:usable:world]


def start(parser: argparse.ArgumentParser):
    """What the distributed examples share: the --threads and --native options, the gloo process
    group, the data and the block to train in (repmode's, or nothing with --native). Returns
    (args, rank, world, data, mode)."""
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads in every process")
    parser.add_argument("--native", action="store_true", help="run without repmode")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    x_train, y_train, x_test, y_test = load_data()

    mode = contextlib.nullcontext() if args.native else repmode.enabled(strict=True, seed=0)
    if args.native:
        torch.manual_seed(0)
    return args, rank, world, (x_train, y_train, x_test, y_test), mode


def full_state(model: torch.nn.Module) -> dict:
    """Every parameter and buffer whole (DTensor shards gathered, an exact all-gather), by name."""
    return {name: t.full_tensor() if hasattr(t, "full_tensor") else t for name, t in model.state_dict().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank (--world-invariant: global)")
    parser.add_argument("--world-invariant", action="store_true",
                        help="the same bits for any world size: train_mlp's model, gradients as a tree over "
                             "micro-batches (repmode.TreeGradients) instead of DDP")
    parser.add_argument("--micro-batch", type=int, default=8, help="--world-invariant: samples per micro-batch")
    args, rank, world, (x_train, y_train, x_test, y_test), mode = start(parser)
    if args.world_invariant:
        return train_world_invariant(args, rank, world, (x_train, y_train, x_test, y_test), mode)
    x_train, y_train = shard(x_train, rank, world), shard(y_train, rank, world)
    with mode:
        model = DigitsCNN()  # DDP copies rank 0's initial parameters to every rank
        ddp = DistributedDataParallel(model)
        initial = repmode.digest(model)
        optimizer = make_optimizer(model)
        batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train),
                                              batch_size=args.batch_size, shuffle=True,
                                              generator=torch.Generator().manual_seed(rank))
        scheduler = cosine_schedule(optimizer, args.epochs * len(batches))
        ddp.train()
        for _ in range(args.epochs):
            for xb, yb in batches:
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(ddp(xb), yb).backward()  # all-reduces the gradients
                optimizer.step()
                scheduler.step()
        # DDP copies rank 0's buffers to the others before each forward, so the last step's
        # BatchNorm running statistics are still rank-local: copy rank 0's, as the next step would
        for buffer in model.buffers():
            dist.broadcast(buffer, src=0)
        model.eval()
        with torch.no_grad():
            logits = model(x_test)
            accuracy = (logits.argmax(dim=1) == y_test).float().mean().item()

    finish(rank, world, initial, repmode.digest(model), logits, accuracy)


def train_world_invariant(args, rank: int, world: int, data, mode) -> None:
    """Every rank walks the same global batches; each computes its micro-batches, and
    TreeGradients combines their gradients in one fixed tree for any world size (docs/distributed.md).
    The model has no BatchNorm: its running statistics would see only a rank's micro-batches."""
    x_train, y_train, x_test, y_test = data
    micro_batches = args.batch_size // args.micro_batch
    with mode:
        model = make_mlp()  # the same seed on every rank: the same initial parameters
        initial = repmode.digest(model)
        optimizer = make_mlp_optimizer(model)
        tree = repmode.TreeGradients(model.parameters(), micro_batches)
        batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train),
                                              batch_size=args.batch_size, shuffle=True, drop_last=True,
                                              generator=torch.Generator().manual_seed(0))  # one order everywhere
        scheduler = cosine_schedule(optimizer, args.epochs * len(batches))
        model.train()
        step = 0
        for _ in range(args.epochs):
            for xb, yb in batches:
                for i in tree.local_micro_batches():
                    tree.seed(step, i)  # this micro-batch's dropout, wherever it runs
                    part = slice(i * args.micro_batch, (i + 1) * args.micro_batch)
                    loss = torch.nn.functional.cross_entropy(model(xb[part]), yb[part])
                    (loss / micro_batches).backward()  # the global batch's mean loss
                    tree.add()
                tree.reduce()
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
                step += 1
        model.eval()
        with torch.no_grad():
            logits = model(x_test)
            accuracy = (logits.argmax(dim=1) == y_test).float().mean().item()
    finish(rank, world, initial, repmode.digest(model), logits, accuracy)


def finish(rank: int, world: int, initial: str, trained: str, logits: torch.Tensor, accuracy: float) -> None:
    """Print this rank's digests and leave the process group (the distributed examples' end)."""
    # the ranks share one stdout: each writes its report in one write(), so lines never interleave
    sys.stdout.write(f"rank {rank}/{world}: initial parameters: {initial}\n"
                     f"rank {rank}/{world}: trained parameters: {trained}\n"
                     f"rank {rank}/{world}: test logits:        {repmode.digest(logits)}\n"
                     f"rank {rank}/{world}: test accuracy:      {accuracy:.4f}\n")
    sys.stdout.flush()
    # no rank tears down its gloo connections while another still uses them (a peer's gloo thread
    # then aborts the process: "terminate called without an active exception")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Train an MLP on the digits with FSDP2 (``fully_shard``) over gloo, bit-reproducibly: every rank
prints the same digests, run after run, at any thread count.

    torchrun --nproc_per_node=2 examples/train_fsdp.py --threads 1
    torchrun --nproc_per_node=2 examples/train_fsdp.py --threads 2
    torchrun --nproc_per_node=2 examples/train_fsdp.py --no-reshard --accumulate 2
    torchrun --nproc_per_node=2 examples/train_fsdp.py --ddp      # the same training with DDP instead

The training loop is the ordinary FSDP2 one: each Linear is sharded, then the root. Inside
``repmode.enabled()`` the parameters are DTensors whose ops run on their local shards through
repmode; FSDP2's packing ops are exact copies, and its gradient reduce-scatter is repmode's (a sum
over ranks in rank order, docs/distributed.md). ``--native`` runs the same script without repmode.
``--ddp`` wraps the model in DistributedDataParallel instead of sharding it: with two ranks (or any
power of two) it prints FSDP2's digests (docs/distributed.md, "FSDP2 and DDP").
"""
from __future__ import annotations

import argparse
import contextlib

import torch
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from train_ddp import finish, full_state, shard, start

import repmode


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 128), nn.GELU(),
                         nn.Linear(128, 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank and micro-step")
    parser.add_argument("--accumulate", type=int, default=1, help="micro-steps per optimizer step")
    parser.add_argument("--no-reshard", action="store_true", help="reshard_after_forward=False")
    parser.add_argument("--bf16", action="store_true", help="MixedPrecisionPolicy: bf16 parameters, fp32 reduce")
    parser.add_argument("--ddp", action="store_true", help="DistributedDataParallel instead of fully_shard")
    args, rank, world, (x_train, y_train, x_test, y_test), mode = start(parser)
    x_train, y_train = shard(x_train, rank, world), shard(y_train, rank, world)
    with mode:
        model = make_model()  # the same seed on every rank: the same initial parameters
        if args.ddp:
            model = nn.parallel.DistributedDataParallel(model)
        else:
            options = dict(reshard_after_forward=not args.no_reshard)
            if args.bf16:
                options["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            for layer in model:
                if isinstance(layer, nn.Linear):
                    fully_shard(layer, **options)
            fully_shard(model, **options)
        initial = repmode.digest(full_state(model.module if args.ddp else model))  # by the same names
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
        batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train),
                                              batch_size=args.batch_size, shuffle=True, drop_last=True,
                                              generator=torch.Generator().manual_seed(rank))
        model.train()
        for _ in range(args.epochs):
            for i, (xb, yb) in enumerate(batches):
                last_micro = (i + 1) % args.accumulate == 0
                if args.ddp:  # accumulate locally, reduce once
                    sync = contextlib.nullcontext() if last_micro else model.no_sync()
                else:
                    model.set_requires_gradient_sync(last_micro)
                    sync = contextlib.nullcontext()
                with sync:
                    loss = nn.functional.cross_entropy(model(xb), yb) / args.accumulate
                    loss.backward()
                if last_micro:
                    optimizer.step()
                    optimizer.zero_grad()
        model.eval()
        with torch.no_grad():
            logits = model(x_test)
            accuracy = (logits.argmax(dim=1) == y_test).float().mean().item()
        # DCP's state dict, gathered whole on every rank (inside the block: its collectives too)
        trained = repmode.digest(get_model_state_dict(model, options=StateDictOptions(full_state_dict=True)))

    finish(rank, world, initial, trained, logits, accuracy)


if __name__ == "__main__":
    main()

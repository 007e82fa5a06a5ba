"""Train a small Transformer block on the digits with tensor parallelism over gloo, bit-
reproducibly: every rank prints the same digests, run after run, at any thread count.

    torchrun --nproc_per_node=2 examples/train_tp.py --threads 1
    torchrun --nproc_per_node=2 examples/train_tp.py --threads 2

Each image is 8 tokens (its rows). The attention block's query/key/value projections are split by
columns (each rank owns half of the heads) and its output projection by rows; so are the MLP's two
Linears (``parallelize_module`` with ``ColwiseParallel`` / ``RowwiseParallel``). Every rank sees
the whole batch. Inside ``repmode.enabled()`` the DTensor parameters compute on their local shards
through repmode, and the partial sums of the row-split layers are combined by repmode's all-reduce
(a sum over ranks in rank order, docs/distributed.md). ``--native`` runs it without repmode.
"""
from __future__ import annotations

import argparse

import torch
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from train_ddp import finish, full_state, start

import repmode

D_MODEL, HEADS = 32, 4


class Block(nn.Module):
    """Pre-norm attention and MLP. Heads are found from the local width (``-1``), so a rank with
    half of the q/k/v columns runs half of the heads."""

    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.q, self.k, self.v, self.o = (nn.Linear(D_MODEL, D_MODEL) for _ in range(4))
        self.up, self.down = nn.Linear(D_MODEL, 4 * D_MODEL), nn.Linear(4 * D_MODEL, D_MODEL)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.norm1(x)
        q, k, v = (proj(h).view(b, t, -1, D_MODEL // HEADS).transpose(1, 2) for proj in (self.q, self.k, self.v))
        a = nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o(a)
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, D_MODEL)
        self.block = Block()
        self.head = nn.Linear(D_MODEL, 10)

    def forward(self, images):
        return self.head(self.block(self.embed(images.view(-1, 8, 8))).mean(dim=1))


PLAN = {"block.q": ColwiseParallel(), "block.k": ColwiseParallel(), "block.v": ColwiseParallel(),
        "block.o": RowwiseParallel(), "block.up": ColwiseParallel(), "block.down": RowwiseParallel()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    args, rank, world, (x_train, y_train, x_test, y_test), mode = start(parser)
    mesh = init_device_mesh("cpu", (world,))
    with mode:
        model = parallelize_module(Model(), mesh, PLAN)  # the same seed on every rank
        initial = repmode.digest(full_state(model))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        batches = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_train, y_train),
                                              batch_size=args.batch_size, shuffle=True,
                                              generator=torch.Generator().manual_seed(0))  # one order everywhere
        for _ in range(args.epochs):
            for xb, yb in batches:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(xb), yb).backward()
                optimizer.step()
        with torch.no_grad():
            logits = model(x_test)
            accuracy = (logits.argmax(dim=1) == y_test).float().mean().item()
        trained = repmode.digest(full_state(model))

    finish(rank, world, initial, trained, logits, accuracy)


if __name__ == "__main__":
    main()

"""Gradients whose bits do not depend on how many processes computed them (docs/distributed.md,
"Training that gives the same bits for any world size").

A global batch is cut into ``n`` micro-batches of equal size (``n`` a power of two). The gradient
of a step is defined as a complete binary tree of sums over the micro-batches' gradients, leaves in
micro-batch order: ``((g0 + g1) + (g2 + g3)) + ...``, each node one IEEE addition per element.
With ``W`` processes (``W`` a power of two dividing ``n``), rank ``r`` computes the micro-batches
``[r n/W, (r+1) n/W)``, which are exactly one subtree; it sums them in the tree's order as they
come, then the ranks exchange their subtree sums (an exact all-gather) and each rank adds them up
the rest of the tree. Every node is the same sum of the same numbers in the same order for any
``W``, a single process included, so the gradient, and the training run, has the same bits.

Each micro-batch's forward and backward is the same computation wherever it runs (repmode's bits
depend on shapes, not on the thread count or the machine); its randomness (dropout) is seeded from
the step and the micro-batch index by :meth:`TreeGradients.seed`. What this excludes: state that
a forward updates in place across micro-batches, such as BatchNorm's running statistics (each rank
sees only its own micro-batches), and anything a model computes across the micro-batches of a step.
"""
from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = ["TreeGradients"]


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class TreeGradients:
    """The tree of micro-batch gradients of the parameters ``params`` (see the module docstring).

    One step::

        for i in tree.local_micro_batches():
            tree.seed(step, i)
            (loss_of_micro_batch(i) / tree.micro_batches).backward()
            tree.add()
        tree.reduce()          # every parameter's .grad is now the step's gradient
        optimizer.step()

    ``group`` is the torch.distributed process group (default: the world, or one process when
    torch.distributed is not initialized).
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], micro_batches: int, group=None, seed: int = 0):
        self.params = [p for p in params if p.requires_grad]
        if not _power_of_two(micro_batches):
            raise ValueError(f"micro_batches must be a power of two, not {micro_batches}")
        self.micro_batches = micro_batches
        self.base_seed = seed
        self.group = group
        dist = torch.distributed
        distributed = dist.is_available() and dist.is_initialized()
        self.world = dist.get_world_size(group) if distributed else 1
        self.rank = dist.get_rank(group) if distributed else 0
        if not _power_of_two(self.world) or micro_batches % self.world:
            raise ValueError(f"the world size ({self.world}) must be a power of two dividing micro_batches "
                             f"({micro_batches})")
        self.per_rank = micro_batches // self.world
        self._stack: list[tuple[int, list[torch.Tensor]]] = []  # (height, one sum per parameter)
        self._added = 0

    def local_micro_batches(self) -> range:
        """The indices of the micro-batches this rank computes, in order."""
        return range(self.rank * self.per_rank, (self.rank + 1) * self.per_rank)

    def seed(self, step: int, index: int) -> None:
        """Seed the random stream for micro-batch ``index`` of ``step``: its dropout masks are then
        the same on whichever rank computes it."""
        torch.manual_seed(self.base_seed + (step * self.micro_batches + index) * 1_000_003)

    def add(self) -> None:
        """Take the parameters' ``.grad`` (of one micro-batch's backward) as the next leaf and
        clear it. A parameter without a gradient contributes zeros."""
        if self._added == self.per_rank:
            raise RuntimeError("add() called more often than this rank has micro-batches; call reduce() first")
        node = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
        for p in self.params:
            p.grad = None
        height = 0
        # A binary counter: two finished siblings of the same height become their parent.
        while self._stack and self._stack[-1][0] == height:
            _, left = self._stack.pop()
            node = [torch.add(a, b) for a, b in zip(left, node)]
            height += 1
        self._stack.append((height, node))
        self._added += 1

    def reduce(self) -> None:
        """Finish the tree: this rank's subtree, then the ranks' subtrees combined up the top of the
        tree (identically on every rank), written to every parameter's ``.grad``."""
        if self._added != self.per_rank:
            raise RuntimeError(f"reduce() after {self._added} of this rank's {self.per_rank} micro-batches")
        ((_, subtree),) = self._stack
        self._stack, self._added = [], 0
        if self.world == 1:
            total = subtree
        else:
            sizes = [t.numel() for t in subtree]
            flat = torch.cat([t.reshape(-1) for t in subtree])
            gathered = flat.new_empty(self.world * flat.numel())
            torch.distributed.all_gather_into_tensor(gathered, flat, group=self.group)  # exact data movement
            level = list(gathered.view(self.world, -1).unbind(0))
            while len(level) > 1:  # the top of the tree: siblings in rank order
                level = [torch.add(level[i], level[i + 1]) for i in range(0, len(level), 2)]
            total = [t.view_as(p) for t, p in zip(level[0].split(sizes), self.params)]
        for p, g in zip(self.params, total):
            p.grad = g

"""repmode.TreeGradients in one process: the tree over micro-batch gradients, its order, and its
errors. The multi-process equality (world sizes 1, 2, 4) is tests/system/test_distributed.py."""
from __future__ import annotations

import pytest
import torch

import repmode


def _grads_of(params, values):
    for p, v in zip(params, values):
        p.grad = v.clone()


def test_the_tree_adds_siblings_in_micro_batch_order():
    p = torch.nn.Parameter(torch.zeros(3))
    tree = repmode.TreeGradients([p], micro_batches=4)
    g = [torch.tensor([1e8, 1.0, -2.5]), torch.tensor([1.0, 2.0**-30, 3.0]),
         torch.tensor([-1e8, 7.0, 0.25]), torch.tensor([1.0, -1.0, 1e-3])]
    for i, gi in zip(tree.local_micro_batches(), g):
        _grads_of([p], [gi])
        tree.add()
        assert p.grad is None  # taken as a leaf, then cleared for the next micro-batch
    tree.reduce()
    want = (g[0] + g[1]) + (g[2] + g[3])
    assert torch.equal(p.grad, want)
    assert not torch.equal(want, ((g[0] + g[1]) + g[2]) + g[3])  # a sequential sum differs here


def test_a_parameter_without_gradient_contributes_zeros():
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    tree = repmode.TreeGradients([a, b], micro_batches=2)
    for _ in tree.local_micro_batches():
        a.grad = torch.full((2,), 0.5)
        tree.add()
    tree.reduce()
    assert torch.equal(a.grad, torch.ones(2)) and torch.equal(b.grad, torch.zeros(2))


def test_misuse_is_refused_with_a_clear_message():
    p = torch.nn.Parameter(torch.zeros(1))
    with pytest.raises(ValueError, match="power of two"):
        repmode.TreeGradients([p], micro_batches=6)
    tree = repmode.TreeGradients([p], micro_batches=2)
    with pytest.raises(RuntimeError, match="reduce\\(\\) after 0"):
        tree.reduce()
    tree.add()
    tree.add()
    with pytest.raises(RuntimeError, match="more often"):
        tree.add()


def test_seeding_depends_on_step_and_micro_batch_only():
    tree = repmode.TreeGradients([torch.nn.Parameter(torch.zeros(1))], micro_batches=4, seed=3)
    with repmode.enabled():
        tree.seed(5, 2)
        first = torch.rand(4)
        tree.seed(5, 3)
        other = torch.rand(4)
        tree.seed(5, 2)
        again = torch.rand(4)
    assert torch.equal(first, again) and not torch.equal(first, other)

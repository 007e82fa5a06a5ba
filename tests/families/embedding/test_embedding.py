"""Embedding forward (row copies) and backward (per-row sums in increasing position order)."""
from __future__ import annotations

import torch
from support import assert_bitwise_equal, assert_invariant


def _grads(weight, idx, grad):
    w = weight.detach().requires_grad_()
    out = torch.nn.functional.embedding(idx, w, padding_idx=3)
    out.backward(grad)
    return {"out": out.detach(), "grad": w.grad}


def test_embedding_invariant_and_exact_order(rng):
    weight = torch.randn(50, 16, generator=rng)
    idx = torch.randint(0, 50, (40, 30), generator=rng)
    idx[0, :10] = 7  # many repeats of one row
    idx[1, 0] = 3   # padding row
    grad = torch.randn(40, 30, 16, generator=rng)
    got = assert_invariant(lambda w, g: _grads(w, idx, g.reshape(40, 30, 16)), weight, grad.reshape(1200, 16))
    # the documented order: for each row, ((+0 + g[p1]) + g[p2]) + ... over increasing positions
    want = torch.zeros(50, 16)
    flat, rows = idx.reshape(-1), grad.reshape(-1, 16)
    for p in range(flat.numel()):
        r = int(flat[p])
        if r != 3:
            want[r] = want[r] + rows[p]
    assert_bitwise_equal(got["grad"], want)
    assert_bitwise_equal(got["out"], weight[idx])

"""scatter_add and index_add: each destination gets its contributions in increasing source
position, added sequentially (checked bit for bit against a plain loop); invariant."""
from __future__ import annotations

import torch
from support import assert_bitwise_equal, assert_invariant

import repmode


def _scatter_add_reference(self, dim, index, src):
    out = self.clone()
    for pos in torch.cartesian_prod(*[torch.arange(n) for n in index.shape]).reshape(-1, index.dim()).tolist():
        dest = list(pos)
        dest[dim] = int(index[tuple(pos)])
        out[tuple(dest)] = out[tuple(dest)] + src[tuple(pos)]
    return out


def _index_add_reference(self, dim, index, source, alpha):
    out = self.clone()
    scaled = source * alpha if alpha != 1 else source
    for j in range(index.numel()):
        o = out.select(dim, int(index[j]))
        o.copy_(o + scaled.select(dim, j))
    return out


def test_scatter_add_and_index_add_follow_the_sequential_order(rng):
    base = torch.randn(6, 5, generator=rng)
    src = torch.randn(9, 7, generator=rng) * 10
    index = torch.randint(0, 6, (9, 5), generator=rng)
    idx1 = torch.randint(0, 5, (11,), generator=rng)
    source = torch.randn(6, 11, generator=rng)
    with repmode.enabled():
        got = base.scatter_add(0, index, src)
        inplace = base.clone()
        inplace.scatter_add_(0, index, src)
        ia = base.index_add(1, idx1, source, alpha=0.5)
        ia1 = base.index_add(1, idx1, source)
    assert_bitwise_equal(got, _scatter_add_reference(base, 0, index, src))
    assert_bitwise_equal(inplace, got)
    with repmode.enabled():
        want_ia = _index_add_reference(base, 1, idx1, source, 0.5)
    assert_bitwise_equal(ia, want_ia)
    assert_bitwise_equal(ia1, _index_add_reference(base, 1, idx1, source, 1))


def test_invariant_to_threads_and_layout(rng):
    index = torch.randint(0, 40, (300, 30), generator=rng)
    rows = torch.randint(0, 30, (300,), generator=rng)

    def compute(x, y):
        return {"scatter_add": torch.zeros(40, 30).scatter_add(0, index, x),
                "index_add": torch.zeros(30, 129).index_add(0, rows, y)}
    assert_invariant(compute, torch.randn(300, 30, generator=rng), torch.randn(300, 129, generator=rng))

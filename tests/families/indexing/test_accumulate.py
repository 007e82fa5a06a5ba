"""scatter_add and index_add: each destination gets its contributions in increasing source
position, added sequentially (checked bit for bit against a plain loop); invariant."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

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


def _fold_reference(flat, dest, values):
    """The same order evaluated by rounds of distinct destinations (the path of other dtypes)."""
    from repmode.kernels.indexing import _canonical_nans, fold_segments
    fold_segments(flat, dest, values, torch.add)
    _canonical_nans(flat, dest)


def _loop(flat, dest, values):
    """The definition as a plain loop: Python's float64 addition, rounded to float32 after each step
    for float32 (that double rounding gives the correctly rounded float32 sum: 53 >= 2*24 + 2)."""
    out = flat.tolist()
    is32 = flat.dtype == torch.float32
    for d, v in zip(dest.tolist(), values.tolist()):
        s = out[d] + v
        out[d] = float(torch.tensor(s, dtype=torch.float64).float()) if is32 else s
    return torch.tensor(out, dtype=flat.dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n_out, n", [(1, 3000), (7, 5), (300, 20_000), (5000, 7001)])
def test_the_compiled_pass_is_the_sequential_order_and_the_rounds_give_the_same_bits(rng, dtype, n_out, n):
    from repmode.kernels.indexing import add_in_order
    base = torch.randn(n_out, generator=rng, dtype=dtype)
    dest = torch.randint(0, n_out, (n,), generator=rng)
    values = (torch.randn(n, generator=rng, dtype=dtype) * 10) ** 3  # wide magnitudes: order matters
    want = _loop(base, dest, values)
    rounds = base.clone()
    _fold_reference(rounds, dest, values)
    assert_bitwise_equal(rounds, want, "rounds of distinct destinations")
    for threads in (1, 2, 3):
        got = base.clone()
        with num_threads(threads):
            add_in_order(got, dest, values)
        assert_bitwise_equal(got, want, f"compiled pass, {threads} threads")


def test_a_16m_scatter_add_equals_the_rounds_of_distinct_destinations(rng):
    # the benchmark's shape (16M contributions, about 16 per destination) through both evaluations
    n, m = 16 * 2**20, 2**20
    src, index = torch.randn(n, generator=rng), torch.randint(0, m, (n,), generator=rng)
    base = torch.randn(m, generator=rng)
    with repmode.enabled():
        got = base.scatter_add(0, index, src)
    rounds = base.clone()
    _fold_reference(rounds, index, src)
    assert_bitwise_equal(got, rounds)


def test_a_nan_sum_is_the_canonical_nan_and_untouched_elements_keep_their_bits():
    base = torch.tensor([1.0, float("inf"), 3.0, 0.0])
    base.view(torch.int32)[3] = 0x7FC12345  # a NaN with a payload that no addition reaches
    src = torch.tensor([float("-inf"), float("inf"), 2.0])
    index = torch.tensor([1, 1, 0])
    with repmode.enabled():
        got = base.scatter_add(0, index, src)
        half = base.half().scatter_add(0, index, src.half())
    assert got.view(torch.int32).tolist() == [0x40400000, 0x7FC00000, 0x40400000, 0x7FC12345]
    assert half.view(torch.int16)[1].item() == 0x7E00


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,dim", [((7, 300), 0), ((3, 9, 40), 1), ((4, 5, 6), 2), ((50,), 0)])
def test_index_add_of_blocks_equals_the_element_by_element_definition(dtype, shape, dim):
    """The compiled block walk (threads split the columns) against the element-by-element ids of
    the definition (repmode.kernels.indexing._index_add_elements), bit for bit: duplicate indices
    with large and small values (so the order shows), inf - inf, NaN, at 1 and 2 threads."""
    from repmode.kernels.indexing import _index_add_elements

    g = torch.Generator().manual_seed(len(shape) * 10 + dim)
    n = 3 * shape[dim] + 1
    index = torch.randint(0, shape[dim], (n,), generator=g)
    index[:4] = 0  # a destination with several contributions in a row
    src_shape = list(shape)
    src_shape[dim] = n
    source = (torch.randn(src_shape, generator=g) * torch.tensor(1e8).pow(torch.rand(src_shape, generator=g))).to(dtype)
    flat = source.view(-1)
    flat[0], flat[1], flat[5] = float("inf"), float("-inf"), float("nan")
    self = torch.randn(shape, generator=g).to(dtype)
    want = self.clone()
    _index_add_elements(want, dim, index, source)
    for threads in (1, 2):
        with num_threads(threads), repmode.enabled(strict=True):
            got = torch.index_add(self, dim, index, source)
        assert_bitwise_equal(got, want, f"{threads} threads")
    assert torch.isnan(want).any()
    assert (want.view(torch.int32 if dtype == torch.float32 else torch.int64)[torch.isnan(want)]
            == (0x7FC00000 if dtype == torch.float32 else 0x7FF8000000000000)).all()  # canonical NaN

"""sum/mean: the canonical order, invariance to threads/ISA/layout/dims, accuracy."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from support import assert_bitwise_equal, assert_invariant, num_threads

import repmode
from repmode._ext import DTYPE_CODE, C

LANES, CHUNK = 32, 4096


def model_sum(values: np.ndarray) -> np.ndarray:
    """The canonical order written independently in numpy (dtype = values.dtype)."""
    dt = values.dtype.type
    if values.size == 0:
        return dt(0.0)
    level = values
    while True:
        chunks = []
        for start in range(0, level.size, CHUNK):
            chunk = level[start:start + CHUNK]
            lanes = np.full(LANES, dt(-0.0), dtype=values.dtype)
            for i, v in enumerate(chunk):
                lanes[i % LANES] = lanes[i % LANES] + v
            h = LANES // 2
            while h >= 1:
                lanes[:h] = lanes[:h] + lanes[h:2 * h]
                h //= 2
            chunks.append(lanes[0])
        level = np.array(chunks, dtype=values.dtype)
        if level.size == 1:
            return level[0]


@pytest.mark.parametrize("n", [0, 1, 5, 31, 32, 33, 4095, 4096, 4097, 9000])
def test_matches_independent_model_of_the_order(rng, n):
    x = torch.randn(n, generator=rng) * 100
    with repmode.enabled():
        got = x.sum()
    want = model_sum(x.numpy())
    assert np.float32(got.item()).tobytes() == np.float32(want).tobytes()


def test_long_sum_matches_reference_at_every_level(rng):
    # more than 4096 chunks: three levels of the tree
    x = torch.randn(4096 * 4096 + 12345, generator=rng)
    with repmode.enabled():
        got = x.sum()
    ref = torch.empty(1)
    C.sum_rows_reference(DTYPE_CODE[torch.float32], x.data_ptr(), 1, x.numel(), 0, 1, ref.data_ptr(), 1, False)
    assert_bitwise_equal(got.reshape(1), ref)
    assert abs(got.item() - math.fsum(x.double().tolist())) < 1e-2


SHAPE = (37, 1500)


def _sums(x):
    return {
        "all": x.sum(), "dim0": x.sum(0), "dim1": x.sum(1), "keep": x.sum(1, keepdim=True),
        "neg": x.sum(-1), "both": x.sum((0, 1)), "mean": x.mean(), "mean0": x.mean(0),
        "mean1_keep": x.mean(1, keepdim=True), "f64": x.sum(0, dtype=torch.float64),
    }


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_invariant_to_threads_isa_and_layout(rng, dtype):
    assert_invariant(_sums, torch.randn(SHAPE, generator=rng, dtype=dtype))


def test_every_walk_equals_the_reference(rng):
    """Row, column and generic walks of the same reduction give the reference's bits."""
    code = DTYPE_CODE[torch.float32]
    for M, N in [(1, 70000), (3, 9000), (130, 4100), (65, 33), (2, 1)]:
        x = torch.randn(M, N, generator=rng)
        ref = torch.empty(M)
        C.sum_rows_reference(code, x.data_ptr(), M, N, N, 1, ref.data_ptr(), 1, False)
        xt = x.t().contiguous()  # the same values stored column-major: the column walk
        xs = torch.zeros(M, N * 2)
        xs[:, ::2] = x           # strided terms: the generic walk
        for threads in (1, 2, 3):
            with num_threads(threads), repmode.enabled():
                for name, view in [("rows", x), ("cols", xt.t()), ("strided", xs[:, ::2])]:
                    assert_bitwise_equal(view.sum(1), ref, f"{name} M={M} N={N} threads={threads}")


def test_reduced_dims_follow_logical_row_major_order(rng):
    x = torch.randn(6, 7, 8, generator=rng)
    with repmode.enabled():
        got = x.sum((0, 2))
        got_perm = x.permute(2, 1, 0).contiguous().permute(2, 1, 0).sum((0, 2))
    want = torch.tensor([model_sum(x[:, j, :].contiguous().numpy().reshape(-1)) for j in range(7)])
    assert_bitwise_equal(got, want)
    assert_bitwise_equal(got_perm, want)


def test_batch_composition(rng):
    x = torch.randn(64, 5000, generator=rng)
    with repmode.enabled():
        rows = x.sum(1)
        for i in (0, 17, 63):
            assert_bitwise_equal(rows[i:i + 1], x[i:i + 1].sum(1))


def test_accuracy_against_float64(rng):
    x = torch.randn(200, 3000, generator=rng)
    with repmode.enabled():
        s = x.sum(1)
        m = x.mean(0)
    exact = x.double().sum(1)
    bound = 3000 * 2 ** -24 * x.abs().double().sum(1)  # classic n*eps*sum|x| bound, far from tight
    assert ((s.double() - exact).abs() <= bound).all()
    assert torch.allclose(m.double(), x.double().mean(0), atol=1e-6)


def test_edge_cases():
    ten = torch.arange(10)
    with repmode.enabled():
        empty_sum = torch.empty(0).sum()
        empty_mean = torch.empty(0, 3).mean(0)
        zero_dim = torch.tensor(2.5).sum()
        ints = ten.sum()
        neg_zero = torch.tensor([-0.0, -0.0]).sum()
    assert empty_sum.item() == 0.0 and not math.copysign(1, empty_sum.item()) < 0
    assert torch.isnan(empty_mean).all() and empty_mean.shape == (3,)
    assert zero_dim.item() == 2.5 and zero_dim.shape == ()
    assert ints.item() == 45 and ints.dtype == torch.int64
    assert math.copysign(1, neg_zero.item()) < 0  # -0 + -0 = -0: the lanes start at -0.0


def test_out_variant(rng):
    x = torch.randn(10, 20, generator=rng)
    out = torch.empty(0)
    with repmode.enabled():
        torch.sum(x, 1, out=out)
        want = x.sum(1)
    assert_bitwise_equal(out, want)

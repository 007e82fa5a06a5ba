"""CUDA row reductions (csrc/cuda/reduction.cu) against their CPU twins, bit for bit: sum_rows,
var_mean_rows, prod_rows, extreme_rows, logsumexp_rows and norm_rows over M rows of N terms
(strides sM, sN). The sizes hit the kernel's edges: a warp per 4096-term chunk (31/32/33 lanes,
4095/4096/4097 terms), the scratch levels (4096*32+1, 4096*300+7, 4096*4096+5 terms), many short
rows, transposed and strided rows (with 2048 or more chunks: a thread per chunk at level 1), and
empty rows."""
from __future__ import annotations

import math

import pytest
import torch
from support.cuda_helpers import needs_cuda, random_input
from support.cuda_reduce_helpers import CODE, DTYPES, SENTINEL, out_like, ptr, run_both

pytestmark = needs_cuda

LONG_N = [0, 1, 31, 32, 33, 4095, 4096, 4097, 4096 * 32 + 1, 4096 * 300 + 7]
HUGE_N = 4096 * 4096 + 5


def rows_args(x: torch.Tensor):
    """(x, M, N, sM, sN) of a 2-D tensor viewed as M rows of N terms."""
    M, N = x.shape
    return [x.data_ptr(), M, N, x.stride(0), x.stride(1)]


def layouts(M: int, N: int, dtype, seed: int, specials: bool = True, transform=None):
    """The same M x N values as contiguous rows, transposed (sM = 1) and strided (sN = 3) views."""
    base = random_input((M, N), dtype, seed, specials)
    if transform is not None:
        base = transform(base)
    yield "rows", base
    yield "transposed", base.t().contiguous().t()
    wide = torch.full((M, 3 * N + 1), SENTINEL, dtype=dtype)
    wide[:, : 3 * N : 3] = base
    yield "strided", wide[:, : 3 * N : 3]


# ---- sum_rows ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N", LONG_N)
@pytest.mark.parametrize("mean", [False, True])
def test_sum_one_long_row(dtype, N, mean):
    x = random_input((1, N), dtype, seed=N, specials=N < 4096)  # long rows: finite sums too
    run_both("sum_rows", [x], [out_like(1, dtype)],
             lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr(), 1, mean])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_huge_row(dtype):
    x = random_input((1, HUGE_N), dtype, seed=7, specials=False)
    for mean in (False, True):
        run_both("sum_rows", [x], [out_like(1, dtype)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr(), 1, mean])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1000, 7), (5000, 33), (257, 4096), (3, 4096 * 5 + 3), (40, 4097), (7, 0),
                                 (300, 1), (0, 10), (2047, 3), (2048, 3), (100, 4096 * 2 + 1), (1100, 4097)])
@pytest.mark.parametrize("mean", [False, True])
def test_sum_many_rows_layouts(dtype, M, N, mean):
    for what, x in layouts(M, N, dtype, seed=M + N):
        out = torch.full((M, 2), SENTINEL, dtype=dtype)  # s_out = 2
        run_both("sum_rows", [x], [out],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr(), 2, mean])


# ---- var_mean_rows ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 0), (1, 1), (1, 33), (1, 4097), (1, 4096 * 32 + 1), (2, 4096 * 300 + 7),
                                 (1000, 31), (64, 4096), (9, 5000), (3000, 20), (1100, 4097)])
@pytest.mark.parametrize("correction", [0.0, 1.0, 40.0])
def test_var_mean(dtype, M, N, correction):
    for what, x in layouts(M, N, dtype, seed=N, specials=N < 2000):
        for take_sqrt in (False, True):
            for with_mean in (False, True):
                mean = out_like(M, dtype) if with_mean else None
                run_both("var_mean_rows", [x], [out_like(M, dtype), mean],
                         lambda i, o: [CODE[dtype], *rows_args(i[0]), correction, o[0].data_ptr(), ptr(o[1]),
                                       take_sqrt])


# ---- prod_rows ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 0), (1, 1), (1, 31), (1, 32), (1, 33), (1, 4095), (1, 4096), (1, 4097),
                                 (1, 4096 * 32 + 1), (1, 4096 * 300 + 7), (500, 40), (4, 9000), (6, 0),
                                 (2100, 50)])
def test_prod(dtype, M, N):
    # products that stay finite for a while; specials still mixed in
    for what, x in layouts(M, N, dtype, seed=N, transform=lambda t: 1.0 + 1e-3 * t):
        run_both("prod_rows", [x], [out_like(M, dtype)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr()])


# ---- extreme_rows ----

def ties(M: int, N: int, dtype, seed: int, with_nan: bool):
    """Rows drawn from a few values, so maxima and minima repeat: +-0, +-1, +-inf (and NaN)."""
    g = torch.Generator().manual_seed(seed)
    vals = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf] + ([math.nan] if with_nan else [])
    pick = torch.randint(0, len(vals), (M, N), generator=g)
    return torch.tensor(vals, dtype=dtype)[pick]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 1), (1, 31), (1, 32), (1, 33), (1, 4095), (1, 4096), (1, 4097),
                                 (1, 4096 * 32 + 1), (1, 4096 * 300 + 7), (2000, 9), (33, 4097), (5, 0),
                                 (64, 4096 * 2 + 3), (1100, 4100)])
@pytest.mark.parametrize("is_max", [True, False])
def test_extreme_random(dtype, M, N, is_max):
    for what, x in layouts(M, N, dtype, seed=N):
        run_both("extreme_rows", [x], [out_like(M, dtype), torch.full((M,), -7, dtype=torch.int64)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), is_max, o[0].data_ptr(), o[1].data_ptr()])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 2), (1, 40), (1, 4097), (1, 4096 * 3 + 5), (700, 13), (20, 5000)])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("is_max", [True, False])
def test_extreme_ties(dtype, M, N, with_nan, is_max):
    # Only zeros: the +0 / -0 order decides alone; then mixed values with many equal extremes.
    zeros = torch.tensor([0.0, -0.0], dtype=dtype)[torch.randint(0, 2, (M, N), generator=torch.Generator()
                                                                 .manual_seed(N))]
    for x in (zeros, ties(M, N, dtype, seed=M * N, with_nan=with_nan)):
        for what, v in (("rows", x), ("transposed", x.t().contiguous().t())):
            for want_values, want_indices in ((True, True), (True, False), (False, True)):
                vals = out_like(M, dtype) if want_values else None
                idx = torch.full((M,), -7, dtype=torch.int64) if want_indices else None
                run_both("extreme_rows", [v], [vals, idx],
                         lambda i, o: [CODE[dtype], *rows_args(i[0]), is_max, ptr(o[0]), ptr(o[1])])


@pytest.mark.parametrize("dtype", DTYPES)
def test_extreme_nan_late_in_long_row(dtype):
    # The first NaN wins wherever it lies: in the last chunk, and twice (the earlier one counts).
    N = 4096 * 40 + 3
    x = random_input((1, N), dtype, seed=3, specials=False)
    x[0, N - 2] = math.nan
    run_both("extreme_rows", [x], [out_like(1, dtype), torch.full((1,), -7, dtype=torch.int64)],
             lambda i, o: [CODE[dtype], *rows_args(i[0]), True, o[0].data_ptr(), o[1].data_ptr()])
    x[0, 5000] = math.nan
    for is_max in (True, False):
        run_both("extreme_rows", [x], [out_like(1, dtype), torch.full((1,), -7, dtype=torch.int64)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), is_max, o[0].data_ptr(), o[1].data_ptr()])


# ---- logsumexp_rows ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 0), (1, 1), (1, 31), (1, 32), (1, 33), (1, 4095), (1, 4096), (1, 4097),
                                 (1, 4096 * 32 + 1), (1, 4096 * 300 + 7), (1000, 20), (17, 4097), (4, 0),
                                 (2100, 30)])
def test_logsumexp(dtype, M, N):
    for what, x in layouts(M, N, dtype, seed=N, specials=N < 4096):
        run_both("logsumexp_rows", [x], [out_like(M, dtype)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr()])


@pytest.mark.parametrize("dtype", DTYPES)
def test_logsumexp_infinite_rows(dtype):
    inf = math.inf
    x = torch.tensor([[-inf] * 40, [inf] + [1.0] * 39, [-inf] * 39 + [2.0], [0.0, -0.0] * 20,
                      [-0.0, 0.0] * 20, [math.nan] + [-inf] * 39], dtype=dtype)
    for what, v in (("rows", x), ("transposed", x.t().contiguous().t())):
        run_both("logsumexp_rows", [v], [out_like(x.shape[0], dtype)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), o[0].data_ptr()])


# ---- norm_rows ----

ORDS = [0.0, 1.0, 2.0, math.inf, -math.inf, 3.0, 0.5, -1.5]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N", [(1, 0), (1, 1), (1, 33), (1, 4096), (1, 4097), (1, 4096 * 32 + 1),
                                 (1, 4096 * 300 + 7), (800, 31), (12, 9000), (3, 0), (2500, 17)])
@pytest.mark.parametrize("ord", ORDS)
def test_norm(dtype, M, N, ord):
    for what, x in layouts(M, N, dtype, seed=N, specials=N < 4096):
        run_both("norm_rows", [x], [out_like(M, dtype)],
                 lambda i, o: [CODE[dtype], *rows_args(i[0]), ord, o[0].data_ptr()])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [math.inf, -math.inf])
def test_norm_extreme_ties(dtype, ord):
    x = ties(300, 4100, dtype, seed=11, with_nan=True)
    run_both("norm_rows", [x], [out_like(300, dtype)],
             lambda i, o: [CODE[dtype], *rows_args(i[0]), ord, o[0].data_ptr()])

"""CUDA softmax, log_softmax, their backwards and nll_loss (csrc/cuda/softmax_loss.cu) against
their CPU twins, bit for bit. Softmax rows run along n of contiguous (outer, n, inner) tensors:
inner == 1 (the CPU's contiguous fast path) and inner > 1 (rows of stride inner), n at the
chunk edges (31/32/33, 4095/4096/4097) and past them (scratch levels), many short rows, empty
tensors, and rows of -inf / NaN / +-0."""
from __future__ import annotations

import math

import pytest
import torch
from support.cuda_helpers import CPU, needs_cuda, random_input
from support.cuda_reduce_helpers import CODE, DTYPES, SENTINEL, ptr, run_both

pytestmark = needs_cuda

SHAPES = [(1, 1, 1), (1, 31, 1), (1, 32, 1), (1, 33, 1), (1, 4095, 1), (1, 4096, 1), (1, 4097, 1),
          (1, 4096 * 32 + 1, 1), (1, 4096 * 300 + 7, 1), (2000, 7, 1), (64, 33, 1), (3, 4097, 5),
          (5, 31, 7), (300, 9, 3), (2, 5000, 2), (40, 4097, 3), (700, 5, 4), (1, 4097, 1100),
          (0, 5, 1), (4, 0, 3), (3, 6, 0)]


def softmax_args(dtype, outer, n, inner):
    return lambda i, o: [CODE[dtype], i[0].data_ptr(), o[0].data_ptr(), outer, n, inner]


def backward_args(dtype, outer, n, inner):
    return lambda i, o: [CODE[dtype], i[0].data_ptr(), i[1].data_ptr(), o[0].data_ptr(), outer, n, inner]


def special_rows(dtype, n: int = 40, inner: int = 1):
    """Rows of -inf (safe softmax's zero rows), a NaN, +inf, and only zeros of both signs."""
    inf = math.inf
    rows = [[-inf] * n, [-inf] * (n - 1) + [3.0], [math.nan] + [1.0] * (n - 1), [inf] + [0.5] * (n - 1),
            [0.0, -0.0] * (n // 2), [-0.0, 0.0] * (n // 2), [-1000.0] + [-0.0] * (n - 1)]
    x = torch.tensor(rows, dtype=dtype)  # (outer, n)
    return x.unsqueeze(-1).expand(-1, -1, inner).contiguous()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("safe", [False, True])
def test_softmax(dtype, shape, safe):
    x = random_input(shape, dtype, seed=sum(shape), specials=shape[1] < 4096)
    run_both("softmax", [x], [torch.full(shape, SENTINEL, dtype=dtype)],
             lambda i, o: [*softmax_args(dtype, *shape)(i, o), safe])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inner", [1, 3])
@pytest.mark.parametrize("safe", [False, True])
def test_softmax_special_rows(dtype, inner, safe):
    x = special_rows(dtype, inner=inner)
    run_both("softmax", [x], [torch.full(x.shape, SENTINEL, dtype=dtype)],
             lambda i, o: [*softmax_args(dtype, *x.shape)(i, o), safe])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_log_softmax(dtype, shape):
    x = random_input(shape, dtype, seed=sum(shape) + 1, specials=shape[1] < 4096)
    run_both("log_softmax", [x], [torch.full(shape, SENTINEL, dtype=dtype)], softmax_args(dtype, *shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inner", [1, 3])
def test_log_softmax_special_rows(dtype, inner):
    x = special_rows(dtype, inner=inner)
    run_both("log_softmax", [x], [torch.full(x.shape, SENTINEL, dtype=dtype)], softmax_args(dtype, *x.shape))


def softmax_output(name, x):
    """y = the CPU's (log_)softmax of x: the backward kernels' second input."""
    y = torch.empty_like(x)
    extra = [False] if name == "softmax" else []
    getattr(CPU, name)(CODE[x.dtype], x.data_ptr(), y.data_ptr(), *x.shape, *extra, 2)
    return y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_backward(dtype, shape, name):
    x = random_input(shape, dtype, seed=sum(shape) + 2, specials=False)
    g = random_input(shape, dtype, seed=sum(shape) + 3, specials=shape[1] < 4096)
    y = softmax_output(name, x) if x.numel() else x.clone()
    run_both(f"{name}_backward", [g, y], [torch.full(shape, SENTINEL, dtype=dtype)],
             backward_args(dtype, *shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_backward_random_y(dtype, name):
    # y need not be an output of the forward: specials in both inputs.
    shape = (6, 4097, 2)
    g = random_input(shape, dtype, seed=5)
    y = random_input(shape, dtype, seed=6)
    run_both(f"{name}_backward", [g, y], [torch.full(shape, SENTINEL, dtype=dtype)],
             backward_args(dtype, *shape))


# ---- nll_loss ----

IGNORE = -100


def nll_inputs(N: int, C: int, dtype, seed: int, transposed: bool, weighted: bool):
    g = torch.Generator().manual_seed(seed)
    x = random_input((N, C), dtype, seed, specials=N < 4096)
    if transposed:
        x = x.t().contiguous().t()
    target = torch.randint(0, C, (N,), generator=g)
    target[torch.randint(0, 8, (N,), generator=g) == 0] = IGNORE
    weight = (torch.rand(C, generator=g, dtype=torch.float64) + 0.5).to(dtype) if weighted else None
    return x, target, weight


NLL_SIZES = [(0, 3), (1, 1), (1, 5), (33, 4), (4095, 3), (4096, 10), (4097, 2), (4096 * 3 + 1, 7),
             (4096 * 40 + 9, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C", NLL_SIZES)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_forward(dtype, N, C, reduction, weighted):
    for transposed in (False, True):
        x, target, weight = nll_inputs(N, C, dtype, seed=N + C, transposed=transposed, weighted=weighted)
        out = torch.full((N if reduction == 0 else 1, 2), SENTINEL, dtype=dtype)  # s_out = 2
        total = torch.full((1,), SENTINEL, dtype=dtype)
        inputs = [x, target] + ([weight] if weighted else [])
        run_both("nll_loss_forward", inputs, [out, total],
                 lambda i, o: [CODE[dtype], i[0].data_ptr(), N, C, i[0].stride(0), i[0].stride(1), i[1].data_ptr(),
                               i[1].stride(0), ptr(i[2]) if weighted else 0, reduction, IGNORE,
                               o[0].data_ptr(), 2, o[1].data_ptr()])


@pytest.mark.parametrize("dtype", DTYPES)
def test_nll_loss_forward_all_ignored(dtype):
    # total_weight 0: 'mean' gives 0 / 0.
    N, C = 50, 4
    x = random_input((N, C), dtype, seed=1)
    target = torch.full((N,), IGNORE, dtype=torch.int64)
    for reduction in (1, 2):
        run_both("nll_loss_forward", [x, target], [torch.full((1,), SENTINEL, dtype=dtype),
                                                   torch.full((1,), SENTINEL, dtype=dtype)],
                 lambda i, o: [CODE[dtype], i[0].data_ptr(), N, C, C, 1, i[1].data_ptr(), 1, 0, reduction, IGNORE,
                               o[0].data_ptr(), 1, o[1].data_ptr()])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C", [(1, 1), (1, 5), (33, 4), (4097, 2), (4096 * 3 + 1, 7)])
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_backward(dtype, N, C, reduction, weighted):
    _, target, weight = nll_inputs(N, C, dtype, seed=N * C, transposed=False, weighted=weighted)
    grad = random_input((2 * N if reduction == 0 else 1,), dtype, seed=N)  # s_grad = 2 for 'none'
    total_weight = torch.tensor([3.0 if N > 1 else 0.0], dtype=dtype)
    inputs = [grad, target, total_weight] + ([weight] if weighted else [])
    run_both("nll_loss_backward", inputs, [torch.zeros((N, C), dtype=dtype)],
             lambda i, o: [CODE[dtype], o[0].data_ptr(), N, C, i[0].data_ptr(), 2, i[1].data_ptr(), i[1].stride(0),
                           ptr(i[3]) if weighted else 0, reduction, IGNORE, i[2].data_ptr()])

"""The fast paths of softmax, _safe_softmax and log_softmax over contiguous rows (the fused AVX-512
row loops: exp pass of row r beside the output pass of row r - 1 and the maximum of row r + 1, exp
lanes without table gathers) and of their backward ops (vectorized Sum order, exp arrays), bit for
bit against the plain row formula of csrc/common (the strided path, reached here through the
transposed tensor) on the scalar ISA path: every ISA path, 1 and 2 threads, row lengths around the
SIMD widths, the fused loop's group of 32 and the Sum order's chunk of 4096, special rows placed
next to ordinary ones (NaN, +-inf, rows of -inf, which _safe_softmax turns into zeros between two
rows whose passes are fused, exp's overflow and underflow ranges, subnormals, -0)."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal, available_isas, cpu_isa, num_threads

import repmode

aten = torch.ops.aten
LENGTHS = [1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 4097]
ROWS = 40  # enough rows that the 2-thread pieces hold runs of several fused rows


def _rows(n: int, dtype, rng) -> torch.Tensor:
    x = torch.randn(ROWS, n, generator=rng, dtype=torch.float64) * 8
    x[1, n // 2] = float("nan")
    x[3] = float("-inf")
    x[5, n - 1] = float("inf")
    x[6] = float("-inf")
    x[7] = float("-inf")
    x[8] *= 40  # x - max reaches exp's underflow range (and e_j / S subnormal quotients)
    x[9, : (n + 1) // 2] = float("-inf")
    x[10] = torch.finfo(torch.float32).tiny / 4 * torch.sign(x[10])
    x[11] = -0.0
    x[12, 0] = 0.0
    x[13, ::3] = -100.0  # e_j = exp(-100 - m) is subnormal in float32
    return x.to(dtype)


def _ops(x: torch.Tensor, g: torch.Tensor, ys: torch.Tensor, ly: torch.Tensor, dim: int) -> dict:
    return {
        "softmax": aten._softmax(x, dim, False),
        "safe_softmax": aten._safe_softmax(x, dim),
        "log_softmax": aten._log_softmax(x, dim, False),
        "softmax_backward": aten._softmax_backward_data(g, ys, dim, x.dtype),
        "log_softmax_backward": aten._log_softmax_backward_data(g, ly, dim, x.dtype),
    }


def _reference(x, g, ys, ly) -> dict:
    """The plain row formula: the rows as the columns of a contiguous tensor (inner > 1), scalar path."""
    t = lambda a: a.t().contiguous()  # noqa: E731
    with cpu_isa("scalar"), num_threads(1), repmode.enabled():
        out = _ops(t(x), t(g), t(ys), t(ly), 0)
    return {k: v.t() for k, v in out.items()}


def _inputs(n, dtype, rng):
    x = _rows(n, dtype, rng)
    g = (torch.randn(ROWS, n, generator=rng, dtype=torch.float64) * 2).to(dtype)
    g[2, n // 3] = float("inf")
    g[4, 0] = float("nan")
    with cpu_isa("scalar"), repmode.enabled():
        ys = aten._softmax(x, -1, False)
        ly = aten._log_softmax(x, -1, False)
    return x, g, ys, ly


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", LENGTHS)
def test_contiguous_rows_equal_the_plain_row_formula_on_every_path(rng, dtype, n):
    x, g, ys, ly = _inputs(n, dtype, rng)
    want = _reference(x, g, ys, ly)
    for isa in available_isas():
        for threads in (1, 2):
            with cpu_isa(isa), num_threads(threads), repmode.enabled():
                got = _ops(x, g, ys, ly, -1)
            for name in want:
                assert_bitwise_equal(got[name], want[name], f"{name} n={n} isa={isa} threads={threads}")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("n", [33, 1000])
def test_widened_rows_take_the_same_fast_paths(rng, dtype, n):
    x, g, ys, ly = _inputs(n, dtype, rng)
    want = _reference(x, g, ys, ly)
    for isa in available_isas():
        with cpu_isa(isa), num_threads(2), repmode.enabled():
            got = _ops(x, g, ys, ly, -1)
        for name in want:
            assert_bitwise_equal(got[name], want[name], f"{name} n={n} isa={isa}")


def test_a_row_alone_equals_that_row_in_a_fused_run(rng):
    """Fusing the passes of neighbouring rows never lets one row's values reach another's."""
    x = torch.randn(17, 300, generator=rng) * 6
    x[5] = float("-inf")
    x[9, 7] = float("nan")
    for isa in available_isas():
        with cpu_isa(isa), num_threads(1), repmode.enabled():
            full = (aten._safe_softmax(x, -1), aten._log_softmax(x, -1, False), aten._softmax(x, -1, False))
            for i in (0, 4, 5, 6, 9, 16):
                alone = (aten._safe_softmax(x[i:i + 1], -1), aten._log_softmax(x[i:i + 1], -1, False),
                         aten._softmax(x[i:i + 1], -1, False))
                for a, b in zip(full, alone):
                    assert_bitwise_equal(a[i:i + 1], b, f"row {i} isa={isa}")
